"""gzip at BestCompression exactly as Go's compress/gzip + compress/flate write it (Butane's compressor).

Butane decides between a plain and a gzipped data URL by length, and prints the gzip bytes in base64, so
matching its output byte for byte needs Go's DEFLATE encoder, not zlib's: Go matches 4-byte minimum
strings through a 17-bit hash of 4 bytes, emits blocks of at most 16384 tokens, picks the smallest of
stored / fixed / dynamic Huffman per block with its own length-limited code builder, and closes the stream
with an empty final stored block. This module reimplements that algorithm (level 9 only: good 32,
lazy 258, nice 258, chain 4096) and the gzip framing (no name, mtime 0, XFL 2, OS 255). It is verified
against Go itself in tests/butane/test_goflate.py.
"""

from __future__ import annotations

import struct
import zlib

from butane.goflate_huffman import LENGTH_SHIFT, MATCH_TYPE, MAX_I32, BitWriter

_WINDOW = 1 << 15
_WINDOW_MASK = _WINDOW - 1
_MIN_MATCH, _MAX_MATCH, _BASE_MATCH = 4, 258, 3
_MAX_TOKENS = 1 << 14
_HASH_BITS = 17
_MAX_HASH_OFFSET = 1 << 24
_GOOD, _LAZY, _NICE, _CHAIN = 32, 258, 258, 4096
_HASHMUL = 0x1E35A7BD  # Go's hash4: the top _HASH_BITS of the 4 bytes (big-endian) times this


class _Compressor:
    """Go's compressor at levels 4-9 (lazy matching), specialised to level 9."""

    def __init__(self) -> None:
        self.w = BitWriter()
        self.window = bytearray(2 * _WINDOW)
        self.hash_head = [0] * (1 << _HASH_BITS)
        self.hash_prev = [0] * _WINDOW
        self.hash_offset = 1
        self.chain_head = -1
        self.index = 0
        self.window_end = 0
        self.block_start = 0
        self.byte_available = False
        self.tokens: list[int] = []
        self.length = _MIN_MATCH - 1
        self.offset = 0
        self.sync = False

    def fill(self, data: memoryview) -> int:
        if self.index >= 2 * _WINDOW - (_MIN_MATCH + _MAX_MATCH):
            self.window[:_WINDOW] = self.window[_WINDOW:]
            self.index -= _WINDOW
            self.window_end -= _WINDOW
            self.block_start = self.block_start - _WINDOW if self.block_start >= _WINDOW else MAX_I32
            self.hash_offset += _WINDOW
            if self.hash_offset > _MAX_HASH_OFFSET:
                delta = self.hash_offset - 1
                self.hash_offset -= delta
                self.chain_head -= delta
                self.hash_prev = [v - delta if v > delta else 0 for v in self.hash_prev]
                self.hash_head = [v - delta if v > delta else 0 for v in self.hash_head]
        n = min(len(data), len(self.window) - self.window_end)
        self.window[self.window_end : self.window_end + n] = data[:n]
        self.window_end += n
        return n

    def write_block(self, index: int) -> None:
        if index > 0:
            data = bytes(self.window[self.block_start : index]) if self.block_start <= index else None
            self.block_start = index
            self.w.write_block(self.tokens, False, data)

    def find_match(self, pos: int, prev_head: int, prev_length: int, lookahead: int) -> tuple[int, int, bool]:
        win = self.window
        min_look = min(_MAX_MATCH, lookahead)
        win_len = pos + min_look
        nice = min(win_len - pos, _NICE)
        tries = _CHAIN
        length = prev_length
        if length >= _GOOD:
            tries >>= 2
        w_end = win[pos + length]
        min_index = pos - _WINDOW
        offset = 0
        ok = False
        i = prev_head
        while tries > 0:
            if w_end == win[i + length]:
                n = 0
                while n < min_look and win[i + n] == win[pos + n]:
                    n += 1
                if n > length and (n > _MIN_MATCH or pos - i <= 4096):
                    length, offset, ok = n, pos - i, True
                    if n >= nice:
                        break
                    w_end = win[pos + n]
            if i == min_index:
                break
            i = self.hash_prev[i & _WINDOW_MASK] - self.hash_offset
            if i < min_index or i < 0:
                break
            tries -= 1
        return length, offset, ok

    def deflate(self) -> None:
        """Go's compressor.deflate (lazy matching), with the hash insertions inlined for speed."""
        if self.window_end - self.index < _MIN_MATCH + _MAX_MATCH and not self.sync:
            return
        max_insert = self.window_end - (_MIN_MATCH - 1)
        win = self.window
        head, prev = self.hash_head, self.hash_prev
        hash_offset = self.hash_offset
        tokens = self.tokens
        index = self.index
        window_end = self.window_end
        while True:
            lookahead = window_end - index
            if lookahead < _MIN_MATCH + _MAX_MATCH:
                if not self.sync:
                    break
                if lookahead == 0:
                    if self.byte_available:
                        tokens.append(win[index - 1])
                        self.byte_available = False
                    if tokens:
                        self.tokens = tokens
                        self.write_block(index)
                        tokens = self.tokens = []
                    break
            if index < max_insert:
                h = (((win[index] << 24 | win[index + 1] << 16 | win[index + 2] << 8 | win[index + 3]) * _HASHMUL)
                     & 0xFFFFFFFF) >> (32 - _HASH_BITS)  # fmt: skip
                self.chain_head = head[h]
                prev[index & _WINDOW_MASK] = self.chain_head
                head[h] = index + hash_offset
            prev_length, prev_offset = self.length, self.offset
            self.length, self.offset = _MIN_MATCH - 1, 0
            min_index = index - _WINDOW if index > _WINDOW else 0
            if self.chain_head - hash_offset >= min_index and lookahead > prev_length and prev_length < _LAZY:
                length, offset, ok = self.find_match(
                    index, self.chain_head - hash_offset, _MIN_MATCH - 1, lookahead
                )
                if ok:
                    self.length, self.offset = length, offset
            if prev_length >= _MIN_MATCH and self.length <= prev_length:
                tokens.append(MATCH_TYPE + ((prev_length - _BASE_MATCH) << LENGTH_SHIFT) + prev_offset - 1)
                new_index = index + prev_length - 1
                index += 1
                stop = new_index if new_index < max_insert else max_insert
                while index < stop:
                    h = (((win[index] << 24 | win[index + 1] << 16 | win[index + 2] << 8 | win[index + 3]) * _HASHMUL)
                         & 0xFFFFFFFF) >> (32 - _HASH_BITS)  # fmt: skip
                    prev[index & _WINDOW_MASK] = head[h]
                    head[h] = index + hash_offset
                    index += 1
                if index < new_index:
                    index = new_index
                self.byte_available = False
                self.length = _MIN_MATCH - 1
                if len(tokens) == _MAX_TOKENS:
                    self.tokens = tokens
                    self.write_block(index)
                    tokens = self.tokens = []
            else:
                if self.byte_available:
                    tokens.append(win[index - 1])
                    if len(tokens) == _MAX_TOKENS:
                        self.tokens = tokens
                        self.write_block(index)
                        tokens = self.tokens = []
                index += 1
                self.byte_available = True
        self.index = index
        self.tokens = tokens

    def compress(self, data: bytes) -> bytes:
        view = memoryview(data)
        while len(view):
            self.deflate()
            view = view[self.fill(view) :]
        self.sync = True
        self.deflate()
        self.w.stored_header(0, True)
        self.w.flush()
        return bytes(self.w.out)


def deflate_best(data: bytes) -> bytes:
    """Raw DEFLATE of `data` as Go's flate.NewWriter(w, BestCompression) writes it."""
    return _Compressor().compress(data)


def gzip_best(data: bytes) -> bytes:
    """gzip of `data` as Go's gzip.NewWriterLevel(w, BestCompression) writes it (no name, mtime 0)."""
    header = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff"
    trailer = struct.pack("<II", zlib.crc32(data) & 0xFFFFFFFF, len(data) & 0xFFFFFFFF)
    return header + deflate_best(data) + trailer
