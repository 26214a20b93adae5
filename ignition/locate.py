"""Where a JSON path sits in the source text, found lazily: only entries that are reported get located.

Parsing stays on the C `json` decoder for speed; a `Locator` re-walks just the containers on the way to a path,
skipping sibling values with the C scanner, and caches each container's member offsets. Positions follow
Ignition (vcontext): 1-based line, 1-based *byte* column; a string or number is at its first character, an
object or array just after its opening bracket, an unknown key at the key itself. A path that does not exist
in the text (a missing field) is reported at its deepest existing ancestor.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_right
from json.decoder import scanstring  # type: ignore[attr-defined]

from ignition.report import Path

_WS = re.compile(r"[ \t\n\r]*")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
_scan_once = json.decoder.JSONDecoder().scan_once  # type: ignore[attr-defined]


class Locator:
    """Finds offsets of JSON paths in one document's text."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._ascii = text.isascii()
        self._lines: list[int] | None = None
        self._objects: dict[int, dict[str, tuple[int, int]]] = {}
        self._arrays: dict[int, list[int]] = {}
        # Keys decoded as Go does (U+FFFD for unpaired escapes and, via surrogateescape, for invalid bytes).
        self._surrogates = bool(_SURROGATE_ESCAPE.search(text)) or (not self._ascii and bool(_LONE_SURROGATE.search(text)))

    def _skip_ws(self, pos: int) -> int:
        m = _WS.match(self.text, pos)
        return m.end() if m else pos

    def _value_end(self, pos: int) -> int:
        try:
            _, end = _scan_once(self.text, pos)
        except (StopIteration, ValueError):
            return pos
        return int(end)

    def _members(self, pos: int) -> dict[str, tuple[int, int]]:
        """Object at `pos` ('{'): key -> (key offset, value offset); the last duplicate wins, as in Go."""
        cached = self._objects.get(pos)
        if cached is not None:
            return cached
        text = self.text
        out: dict[str, tuple[int, int]] = {}
        i = self._skip_ws(pos + 1)
        try:
            while i < len(text) and text[i] == '"':
                key, end = scanstring(text, i + 1)
                if self._surrogates:
                    key = _LONE_SURROGATE.sub("\ufffd", key)
                j = self._skip_ws(end)
                if text[j] != ":":
                    break
                v = self._skip_ws(j + 1)
                out[key] = (i, v)
                i = self._skip_ws(self._value_end(v))
                if i < len(text) and text[i] == ",":
                    i = self._skip_ws(i + 1)
                    continue
                break
        except (ValueError, IndexError):
            pass
        self._objects[pos] = out
        return out

    def _items(self, pos: int) -> list[int]:
        """Array at `pos` ('['): the offset of each element."""
        cached = self._arrays.get(pos)
        if cached is not None:
            return cached
        text = self.text
        out: list[int] = []
        i = self._skip_ws(pos + 1)
        while i < len(text) and text[i] != "]":
            out.append(i)
            end = self._value_end(i)
            if end == i:
                break
            i = self._skip_ws(end)
            if i < len(text) and text[i] == ",":
                i = self._skip_ws(i + 1)
                continue
            break
        self._arrays[pos] = out
        return out

    def offset(self, path: Path, *, key: bool = False) -> int | None:
        """Offset Ignition reports for `path` (its key's offset when `key`), or its deepest ancestor's."""
        pos = self._skip_ws(0)
        if pos >= len(self.text):
            return None
        found = self._container_pos(pos)
        for n, step in enumerate(path):
            ch = self.text[pos] if pos < len(self.text) else ""
            if isinstance(step, str) and ch == "{":
                hit = self._members(pos).get(step)
                if hit is None:
                    return found
                if key and n == len(path) - 1:
                    return hit[0]
                pos = hit[1]
            elif isinstance(step, int) and ch == "[":
                items = self._items(pos)
                if step >= len(items):
                    return found
                pos = items[step]
            else:
                return found
            found = self._container_pos(pos)
        return found

    def _container_pos(self, pos: int) -> int:
        return pos + 1 if pos < len(self.text) and self.text[pos] in "{[" else pos

    def value_span(self, path: Path) -> tuple[int, int] | None:
        """(start, end) of the value at exactly `path`, or None if the text has no such value."""
        pos = self._skip_ws(0)
        for step in path:
            ch = self.text[pos] if pos < len(self.text) else ""
            if isinstance(step, str) and ch == "{":
                hit = self._members(pos).get(step)
                if hit is None:
                    return None
                pos = hit[1]
            elif isinstance(step, int) and ch == "[":
                items = self._items(pos)
                if step >= len(items):
                    return None
                pos = items[step]
            else:
                return None
        return pos, self._value_end(pos)

    def line_col(self, offset: int) -> tuple[int, int]:
        """1-based line and 1-based byte column of a character offset."""
        if self._lines is None:
            self._lines = [m.start() for m in re.finditer("\n", self.text)]
        idx = bisect_right(self._lines, offset - 1)
        start = self._lines[idx - 1] + 1 if idx else 0
        if self._ascii:
            col = offset - start + 1
        else:
            chunk = self.text[start:offset]
            try:
                col = len(chunk.encode("utf-8", "surrogateescape")) + 1
            except UnicodeEncodeError:
                col = len(chunk.encode("utf-8", "surrogatepass")) + 1
        return idx + 1, col

    def locate(self, path: Path, *, key: bool = False) -> tuple[int, int] | None:
        """(line, col) for a report entry at `path`."""
        off = self.offset(path, key=key)
        return None if off is None else self.line_col(off)
