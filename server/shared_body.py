"""A machine's answer bytes sharing their pool's: the common head and tail are the pool's own bytes.

A machine's config is its pool's merged with a small overlay (a hostname, a keyfile), so its served body
differs from the pool's served body in a few kilobytes. Kept as a whole copy, each of a fleet's machine
bodies is read from main memory on every answer (200 bodies of 270 KB are 54 MB, beyond the caches; one hot
pool body stays in them): serving 200 machines' configs cost ~25% more CPU per request than the pool's, all of
it in the copy of the body (bench/README.md, machine_bench.py). Kept as (the pool's head, its own middle, the
pool's tail), an answer reads the same hot bytes the pool's answers read, and a machine's variant holds only
its own middle.

`SharedBody` is an aiohttp payload (its public `Payload` API): written part by part, the head coalesced
with the response head by aiohttp's writer as a plain body is, so no part is joined into a new buffer; the parts
are queued without waiting for the socket between them (a wait after the head cost an event-loop round per
answer, as much as the sharing saved), and the response's end waits once, as for a plain body.
"""

from __future__ import annotations

from typing import Any

from aiohttp.abc import AbstractStreamWriter
from aiohttp.http_writer import StreamWriter
from aiohttp.payload import Payload

JSON = "application/json"
MIN_SHARED = 64 * 1024  # below this, sharing saves less than the parts cost: a plain body
MIN_PART = 16 * 1024  # a shared head or tail shorter than this is not worth a write of its own


def common_prefix(a: bytes, b: bytes) -> int:
    """How many leading bytes `a` and `b` share (a binary search of slice comparisons: memcmp, not a loop)."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def common_suffix(a: bytes, b: bytes, limit: int) -> int:
    """How many trailing bytes `a` and `b` share, at most `limit`."""
    lo, hi = 0, min(len(a), len(b), limit)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[len(a) - mid:] == b[len(b) - mid:]:
            lo = mid
        else:
            hi = mid - 1
    return lo


class SharedBody(Payload):
    """An answer body made of parts (the pool's bytes where they are the same, its own between); reusable: every
    answer writes the same immutable parts."""

    _autoclose = True

    def __init__(self, parts: tuple[memoryview | bytes, ...]) -> None:
        super().__init__(parts, content_type=JSON)
        self._parts = parts
        self._size = sum(len(p) for p in parts)

    def __len__(self) -> int:
        return self._size or 0

    def __bytes__(self) -> bytes:
        return b"".join(self._parts)

    def decode(self, encoding: str = "utf-8", errors: str = "strict") -> str:
        return bytes(self).decode(encoding, errors)

    async def write(self, writer: AbstractStreamWriter) -> None:
        if isinstance(writer, StreamWriter):  # the parts queued at once; the response's end drains once, as for bytes
            for part in self._parts:
                await writer.write(part, drain=False)
            return
        for part in self._parts:
            await writer.write(part)

    async def write_with_length(self, writer: AbstractStreamWriter, content_length: int | None) -> None:
        await self.write(writer)  # (the length is the parts' sum: aiohttp sends it as Content-Length)


def shared(body: bytes, base: bytes) -> bytes | SharedBody:
    """`body` as parts sharing `base`'s head and tail where at least MIN_SHARED bytes are the same, else `body`."""
    head = common_prefix(body, base)
    tail = common_suffix(body, base, min(len(body), len(base)) - head)
    if head + tail < MIN_SHARED:
        return body
    if tail < MIN_PART:
        tail = 0  # a short tail is copied with the middle: one write less per answer
    if head < MIN_PART:
        head = 0
    view = memoryview(base)
    parts: list[Any] = [view[:head], body[head:len(body) - tail], view[len(base) - tail:]]
    return SharedBody(tuple(p for p in parts if len(p)))
