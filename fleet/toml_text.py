"""A TOML basic string (TOML v1.0.0 "Basic strings"), in the escapes Go's BurntSushi/toml encoder writes (the MCO's
registries.conf): one writer for renderer/registries_toml.py and the image builder's kargs.d files
(imagebuild/kargs.py), which bootc's TOML reader reads back exactly."""

from __future__ import annotations

_SHORT = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


def toml_string(text: str) -> str:
    """`text` quoted: the short escapes, other control characters as `\\u00xx` (lower-case hex, as the encoder's
    dblQuotedReplacer), everything else as it is."""
    out = ['"']
    for c in text:
        if c in _SHORT:
            out.append(_SHORT[c])
        elif ord(c) < 0x20 or ord(c) == 0x7F:
            out.append(f"\\u{ord(c):04x}")
        else:
            out.append(c)
    out.append('"')
    return "".join(out)
