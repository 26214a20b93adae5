"""gzip at BestCompression exactly as Go's compress/gzip + compress/flate write it (Butane's compressor).

Butane decides between a plain and a gzipped data URL by length, and prints the gzip bytes in base64, so
matching its output byte for byte needs Go's DEFLATE encoder, not zlib's: Go matches 4-byte minimum
strings through a 17-bit hash of 4 bytes, emits blocks of at most 16384 tokens, picks the smallest of
stored / fixed / dynamic Huffman per block with its own length-limited code builder, and closes the stream
with an empty final stored block. This module reimplements that algorithm (level 9 only: good 32,
lazy 258, nice 258, chain 4096) and the gzip framing (no name, mtime 0, XFL 2, OS 255). It is verified
against Go itself in tests/ignition/butane/test_goflate.py.
"""

from __future__ import annotations

import struct
import zlib

_WINDOW = 1 << 15
_WINDOW_MASK = _WINDOW - 1
_MIN_MATCH, _MAX_MATCH, _BASE_MATCH = 4, 258, 3
_MAX_TOKENS = 1 << 14
_MAX_STORE = 65535
_HASH_BITS = 17
_HASH_MASK = (1 << _HASH_BITS) - 1
_MAX_HASH_OFFSET = 1 << 24
_GOOD, _LAZY, _NICE, _CHAIN = 32, 258, 258, 4096
_HASHMUL = 0x1E35A7BD
_MATCH_TYPE = 1 << 30
_LENGTH_SHIFT = 22
_OFFSET_MASK = (1 << _LENGTH_SHIFT) - 1
_MAX_I32 = (1 << 31) - 1
_MAX_NUM_LIT = 286
_END_BLOCK = 256
_LENGTH_CODES_START = 257
_BAD_CODE = 255

_LENGTH_EXTRA = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0]
_LENGTH_BASE = [0, 1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 14, 16, 20, 24, 28, 32, 40, 48, 56, 64, 80, 96, 112, 128,
                160, 192, 224, 255]  # fmt: skip
_OFFSET_EXTRA = [
    0,
    0,
    0,
    0,
    1,
    1,
    2,
    2,
    3,
    3,
    4,
    4,
    5,
    5,
    6,
    6,
    7,
    7,
    8,
    8,
    9,
    9,
    10,
    10,
    11,
    11,
    12,
    12,
    13,
    13,
]
_OFFSET_BASE = [0x0, 0x1, 0x2, 0x3, 0x4, 0x6, 0x8, 0xC, 0x10, 0x18, 0x20, 0x30, 0x40, 0x60, 0x80, 0xC0, 0x100,
                0x180, 0x200, 0x300, 0x400, 0x600, 0x800, 0xC00, 0x1000, 0x1800, 0x2000, 0x3000, 0x4000,
                0x6000]  # fmt: skip
_CODEGEN_ORDER = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15]


def _build_length_codes() -> list[int]:
    codes = [0] * 256
    for code in range(len(_LENGTH_BASE) - 1):
        for xlen in range(_LENGTH_BASE[code], _LENGTH_BASE[code + 1]):
            codes[xlen] = code
    codes[255] = 28
    return codes


def _build_offset_codes() -> list[int]:
    codes = [0] * 256
    for code, base in enumerate(_OFFSET_BASE[:16]):
        end = _OFFSET_BASE[code + 1] if code + 1 < 16 else 256
        for off in range(base, min(end, 256)):
            codes[off] = code
    return codes


_LENGTH_CODES = _build_length_codes()
_OFFSET_CODES = _build_offset_codes()


def _offset_code(off: int) -> int:
    if off < 256:
        return _OFFSET_CODES[off]
    if off >> 7 < 256:
        return _OFFSET_CODES[off >> 7] + 14
    return _OFFSET_CODES[off >> 14] + 28


def _reverse(code: int, length: int) -> int:
    out = 0
    for _ in range(length):
        out = (out << 1) | (code & 1)
        code >>= 1
    return out


class _Encoder:
    """A Huffman code table built as Go's huffmanEncoder builds it."""

    def __init__(self, size: int) -> None:
        self.codes: list[tuple[int, int]] = [(0, 0)] * size  # (code, length)

    def bit_length(self, freq: list[int]) -> int:
        return sum(f * self.codes[i][1] for i, f in enumerate(freq) if f)

    def generate(self, freq: list[int], max_bits: int) -> None:
        nodes = []
        for i, f in enumerate(freq):
            if f:
                nodes.append((i, f))
            else:
                self.codes[i] = (self.codes[i][0], 0)
        if len(nodes) <= 2:
            for i, (lit, _) in enumerate(nodes):
                self.codes[lit] = (i, 1)
            return
        nodes.sort(key=lambda n: (n[1], n[0]))
        counts = _bit_counts([f for _, f in nodes], max_bits)
        code = 0
        rest = nodes
        for n, bits in enumerate(counts):
            code <<= 1
            if n == 0 or bits == 0:
                continue
            chunk = sorted(rest[len(rest) - bits :])
            for lit, _ in chunk:
                self.codes[lit] = (_reverse(code, n), n)
                code += 1
            rest = rest[: len(rest) - bits]


def _bit_counts(freqs: list[int], max_bits: int) -> list[int]:
    """Go's bitCounts: how many literals get each code length (length-limited, package-merge style)."""
    n = len(freqs)
    f = freqs + [_MAX_I32]
    if max_bits > n - 1:
        max_bits = n - 1
    last = [0] * 16
    next_char = [0] * 16
    next_pair = [0] * 16
    needed = [0] * 16
    leaf = [[0] * 16 for _ in range(16)]
    for level in range(1, max_bits + 1):
        last[level], next_char[level], next_pair[level] = f[1], f[2], f[0] + f[1]
        leaf[level][level] = 2
        if level == 1:
            next_pair[level] = _MAX_I32
    needed[max_bits] = 2 * n - 4
    level = max_bits
    while True:
        if next_pair[level] == _MAX_I32 and next_char[level] == _MAX_I32:
            needed[level] = 0
            next_pair[level + 1] = _MAX_I32
            level += 1
            continue
        prev = last[level]
        if next_char[level] < next_pair[level]:
            count = leaf[level][level] + 1
            last[level] = next_char[level]
            leaf[level][level] = count
            next_char[level] = f[count]
        else:
            last[level] = next_pair[level]
            leaf[level][:level] = leaf[level - 1][:level]
            needed[level - 1] = 2
        needed[level] -= 1
        if needed[level] == 0:
            if level == max_bits:
                break
            next_pair[level + 1] = prev + last[level]
            level += 1
        else:
            while needed[level - 1] > 0:
                level -= 1
    counts = [0] * (max_bits + 1)
    bits = 1
    row = leaf[max_bits]
    for level in range(max_bits, 0, -1):
        counts[bits] = row[level] - row[level - 1]
        bits += 1
    return counts


def _fixed_literal() -> _Encoder:
    enc = _Encoder(_MAX_NUM_LIT)
    for ch in range(_MAX_NUM_LIT):
        if ch < 144:
            bits, size = ch + 48, 8
        elif ch < 256:
            bits, size = ch + 400 - 144, 9
        elif ch < 280:
            bits, size = ch - 256, 7
        else:
            bits, size = ch + 192 - 280, 8
        enc.codes[ch] = (_reverse(bits, size), size)
    return enc


def _fixed_offset() -> _Encoder:
    enc = _Encoder(30)
    for ch in range(30):
        enc.codes[ch] = (_reverse(ch, 5), 5)
    return enc


_FIXED_LITERAL = _fixed_literal()
_FIXED_OFFSET = _fixed_offset()


class _BitWriter:
    """Go's huffmanBitWriter (LSB-first bits; the 48-bit batching does not change the bytes)."""

    def __init__(self) -> None:
        self.out = bytearray()
        self.bits = 0
        self.nbits = 0
        self.literal_freq = [0] * _MAX_NUM_LIT
        self.offset_freq = [0] * 30
        self.codegen: list[int] = []
        self.codegen_freq = [0] * 19
        self.literal = _Encoder(_MAX_NUM_LIT)
        self.offset = _Encoder(30)
        self.codegen_enc = _Encoder(19)

    def write_bits(self, value: int, nbits: int) -> None:
        self.bits |= value << self.nbits
        self.nbits += nbits
        while self.nbits >= 8:
            self.out.append(self.bits & 0xFF)
            self.bits >>= 8
            self.nbits -= 8

    def write_code(self, code: tuple[int, int]) -> None:
        self.write_bits(code[0], code[1])

    def flush(self) -> None:
        if self.nbits:
            self.out.append(self.bits & 0xFF)
        self.bits = self.nbits = 0

    def stored_header(self, length: int, eof: bool) -> None:
        self.write_bits(1 if eof else 0, 3)
        self.flush()
        self.write_bits(length, 16)
        self.write_bits(~length & 0xFFFF, 16)

    def index_tokens(self, tokens: list[int]) -> tuple[int, int]:
        self.literal_freq = [0] * _MAX_NUM_LIT
        self.offset_freq = [0] * 30
        for t in tokens:
            if t < _MATCH_TYPE:
                self.literal_freq[t] += 1
                continue
            length = (t - _MATCH_TYPE) >> _LENGTH_SHIFT
            self.literal_freq[_LENGTH_CODES_START + _LENGTH_CODES[length]] += 1
            self.offset_freq[_offset_code(t & _OFFSET_MASK)] += 1
        num_literals = _MAX_NUM_LIT
        while self.literal_freq[num_literals - 1] == 0:
            num_literals -= 1
        num_offsets = 30
        while num_offsets > 0 and self.offset_freq[num_offsets - 1] == 0:
            num_offsets -= 1
        if num_offsets == 0:
            self.offset_freq[0] = 1
            num_offsets = 1
        self.literal.generate(self.literal_freq, 15)
        self.offset.generate(self.offset_freq, 15)
        return num_literals, num_offsets

    def generate_codegen(self, num_literals: int, num_offsets: int) -> None:
        self.codegen_freq = [0] * 19
        sizes = [self.literal.codes[i][1] for i in range(num_literals)]
        sizes += [self.offset.codes[i][1] for i in range(num_offsets)]
        sizes.append(_BAD_CODE)
        out: list[int] = []
        size = sizes[0]
        count = 1
        index = 1
        while size != _BAD_CODE:
            next_size = sizes[index]
            index += 1
            if next_size == size:
                count += 1
                continue
            if size != 0:
                out.append(size)
                self.codegen_freq[size] += 1
                count -= 1
                while count >= 3:
                    n = min(6, count)
                    out += [16, n - 3]
                    self.codegen_freq[16] += 1
                    count -= n
            else:
                while count >= 11:
                    n = min(138, count)
                    out += [18, n - 11]
                    self.codegen_freq[18] += 1
                    count -= n
                if count >= 3:
                    out += [17, count - 3]
                    self.codegen_freq[17] += 1
                    count = 0
            count -= 1
            while count >= 0:
                out.append(size)
                self.codegen_freq[size] += 1
                count -= 1
            size = next_size
            count = 1
        out.append(_BAD_CODE)
        self.codegen = out

    def dynamic_size(self, extra_bits: int) -> tuple[int, int]:
        num_codegens = 19
        while num_codegens > 4 and self.codegen_freq[_CODEGEN_ORDER[num_codegens - 1]] == 0:
            num_codegens -= 1
        header = (
            3 + 5 + 5 + 4 + 3 * num_codegens + self.codegen_enc.bit_length(self.codegen_freq)
            + self.codegen_freq[16] * 2 + self.codegen_freq[17] * 3 + self.codegen_freq[18] * 7
        )  # fmt: skip
        size = header + self.literal.bit_length(self.literal_freq) + self.offset.bit_length(self.offset_freq)
        return size + extra_bits, num_codegens

    def write_block(self, tokens: list[int], eof: bool, data: bytes | None) -> None:
        tokens = tokens + [_END_BLOCK]
        num_literals, num_offsets = self.index_tokens(tokens)
        extra = 0
        storable = data is not None and len(data) <= _MAX_STORE
        stored_size = (len(data) + 5) * 8 if data is not None and storable else 0
        if storable:
            for code in range(_LENGTH_CODES_START + 8, num_literals):
                extra += self.literal_freq[code] * _LENGTH_EXTRA[code - _LENGTH_CODES_START]
            for code in range(4, num_offsets):
                extra += self.offset_freq[code] * _OFFSET_EXTRA[code]
        literal, offset = _FIXED_LITERAL, _FIXED_OFFSET
        size = (
            3
            + _FIXED_LITERAL.bit_length(self.literal_freq)
            + _FIXED_OFFSET.bit_length(self.offset_freq)
            + extra
        )
        self.generate_codegen(num_literals, num_offsets)
        self.codegen_enc.generate(self.codegen_freq, 7)
        dynamic, num_codegens = self.dynamic_size(extra)
        if dynamic < size:
            size = dynamic
            literal, offset = self.literal, self.offset
        if storable and stored_size < size:
            assert data is not None
            self.stored_header(len(data), eof)
            self.flush()
            self.out += data
            return
        if literal is _FIXED_LITERAL:
            self.write_bits(3 if eof else 2, 3)
        else:
            self.write_bits(5 if eof else 4, 3)
            self.write_bits(num_literals - 257, 5)
            self.write_bits(num_offsets - 1, 5)
            self.write_bits(num_codegens - 4, 4)
            for i in range(num_codegens):
                self.write_bits(self.codegen_enc.codes[_CODEGEN_ORDER[i]][1], 3)
            i = 0
            while True:
                word = self.codegen[i]
                i += 1
                if word == _BAD_CODE:
                    break
                self.write_code(self.codegen_enc.codes[word])
                if word in (16, 17, 18):
                    self.write_bits(self.codegen[i], {16: 2, 17: 3, 18: 7}[word])
                    i += 1
        for t in tokens:
            if t < _MATCH_TYPE:
                self.write_code(literal.codes[t])
                continue
            length = (t - _MATCH_TYPE) >> _LENGTH_SHIFT
            lcode = _LENGTH_CODES[length]
            self.write_code(literal.codes[lcode + _LENGTH_CODES_START])
            if _LENGTH_EXTRA[lcode]:
                self.write_bits(length - _LENGTH_BASE[lcode], _LENGTH_EXTRA[lcode])
            off = t & _OFFSET_MASK
            ocode = _offset_code(off)
            self.write_code(offset.codes[ocode])
            if _OFFSET_EXTRA[ocode]:
                self.write_bits(off - _OFFSET_BASE[ocode], _OFFSET_EXTRA[ocode])


def _hash4(w: bytearray | bytes, i: int) -> int:
    value = (w[i] << 24) | (w[i + 1] << 16) | (w[i + 2] << 8) | w[i + 3]
    return ((value * _HASHMUL) & 0xFFFFFFFF) >> (32 - _HASH_BITS)


class _Compressor:
    """Go's compressor at levels 4-9 (lazy matching), specialised to level 9."""

    def __init__(self) -> None:
        self.w = _BitWriter()
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
        self.max_insert_index = 0
        self.sync = False

    def fill(self, data: memoryview) -> int:
        if self.index >= 2 * _WINDOW - (_MIN_MATCH + _MAX_MATCH):
            self.window[:_WINDOW] = self.window[_WINDOW:]
            self.index -= _WINDOW
            self.window_end -= _WINDOW
            self.block_start = self.block_start - _WINDOW if self.block_start >= _WINDOW else _MAX_I32
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

    def _insert(self, i: int) -> None:
        h = _hash4(self.window, i)
        self.hash_prev[i & _WINDOW_MASK] = self.hash_head[h & _HASH_MASK]
        self.hash_head[h & _HASH_MASK] = i + self.hash_offset

    def deflate(self) -> None:
        """Go's compressor.deflate (lazy matching), with the hash insertions inlined for speed."""
        if self.window_end - self.index < _MIN_MATCH + _MAX_MATCH and not self.sync:
            return
        self.max_insert_index = max_insert = self.window_end - (_MIN_MATCH - 1)
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
                tokens.append(_MATCH_TYPE + ((prev_length - _BASE_MATCH) << _LENGTH_SHIFT) + prev_offset - 1)
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
