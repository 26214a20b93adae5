"""Go's compress/flate Huffman side (huffman_code.go, huffman_bit_writer.go), for butane/goflate.py:
the length/offset code tables, the length-limited code builder and the block writer that picks stored, fixed
or dynamic Huffman per block, exactly as Go writes them.
"""

from __future__ import annotations

_MAX_STORE = 65535
MATCH_TYPE = 1 << 30
LENGTH_SHIFT = 22
_OFFSET_MASK = (1 << LENGTH_SHIFT) - 1
MAX_I32 = (1 << 31) - 1
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
    f = freqs + [MAX_I32]
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
            next_pair[level] = MAX_I32
    needed[max_bits] = 2 * n - 4
    level = max_bits
    while True:
        if next_pair[level] == MAX_I32 and next_char[level] == MAX_I32:
            needed[level] = 0
            next_pair[level + 1] = MAX_I32
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


class BitWriter:
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
            if t < MATCH_TYPE:
                self.literal_freq[t] += 1
                continue
            length = (t - MATCH_TYPE) >> LENGTH_SHIFT
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
            if t < MATCH_TYPE:
                self.write_code(literal.codes[t])
                continue
            length = (t - MATCH_TYPE) >> LENGTH_SHIFT
            lcode = _LENGTH_CODES[length]
            self.write_code(literal.codes[lcode + _LENGTH_CODES_START])
            if _LENGTH_EXTRA[lcode]:
                self.write_bits(length - _LENGTH_BASE[lcode], _LENGTH_EXTRA[lcode])
            off = t & _OFFSET_MASK
            ocode = _offset_code(off)
            self.write_code(offset.codes[ocode])
            if _OFFSET_EXTRA[ocode]:
                self.write_bits(off - _OFFSET_BASE[ocode], _OFFSET_EXTRA[ocode])
