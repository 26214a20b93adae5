"""Pushing to a registry that wants credentials (docker-registry with htpasswd), read from an auth file."""

from __future__ import annotations

import base64
import json
import warnings
from pathlib import Path

import pytest

from imagebuild.errors import RegistryError
from imagebuild.pipeline import BuildRequest, build_image
from imagebuild.refs import parse_registry_ref
from imagebuild.registry import RegistrySettings
from tests.imagebuild.conftest import run, running_registry
from tests.imagebuild.images import rendered
from tests.tools import real_tool

pytestmark = pytest.mark.realtool


def bcrypt_line(user: str, password: str) -> str:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        import crypt
        salt = crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=16)   # bcrypt cost 4: the registry checks every request
        return f"{user}:{crypt.crypt(password, salt)}\n"


def test_push_with_credentials_from_the_auth_file(base_layout: Path, tmp_path: Path) -> None:
    (tmp_path / "htpasswd").write_text(bcrypt_line("ci", "s3cret"))
    with running_registry(tmp_path, f"auth: {{htpasswd: {{realm: test, path: {tmp_path / 'htpasswd'}}}}}\n") as host:
        def push(auth_file: Path | None) -> str | None:
            return build_image(BuildRequest(
                rendered=rendered(), base=f"oci:{base_layout}:v1", mode="oci",
                push=parse_registry_ref(f"docker://{host}/private/os:v1"),
                registry=RegistrySettings(tls_verify=False, auth_file=auth_file))).reference

        with pytest.raises(RegistryError, match="HTTP 401"):
            push(tmp_path / "no-such-auth.json")
        auth = tmp_path / "auth.json"
        auth.write_text(json.dumps({"auths": {host: {"auth": base64.b64encode(b"ci:s3cret").decode()}}}))
        reference = push(auth)
        info = json.loads(run(real_tool("skopeo"), "inspect", "--tls-verify=false", "--creds", "ci:s3cret",
                              f"docker://{host}/private/os:v1"))
        assert reference == f"{host}/private/os@{info['Digest']}"
