"""imagebuild/oci.py's blobs go in through fleet/atomic.py: a copy that does not match its descriptor never
appears under the blob's name, and leaves no temp file."""

from __future__ import annotations

import hashlib
import io
from pathlib import Path

import pytest

from fleet.atomic import TEMP_MARK
from imagebuild.errors import OCIError
from imagebuild.oci import Descriptor, Layout


def test_a_blob_that_does_not_match_its_descriptor_never_appears(tmp_path: Path) -> None:
    layout = Layout(tmp_path / "layout")
    data = b"layer bytes" * 1000
    good = Descriptor("", "sha256:" + hashlib.sha256(data).hexdigest(), len(data))
    with pytest.raises(OCIError, match="does not match its descriptor"):
        layout.put_blob_stream(good, io.BytesIO(data[:-1]))
    assert not layout.has_blob(good.digest)
    assert [p.name for p in layout.blob_path(good.digest).parent.iterdir() if TEMP_MARK in p.name] == []
    layout.put_blob_stream(good, io.BytesIO(data))
    assert layout.blob_path(good.digest).read_bytes() == data
