"""go-yaml v3's scalar analysis and style choice, and its mapping-key order (gopkg.in/yaml.v3 v3.0.1 emitterc.go,
sorter.go): which style (plain, single-, double-quoted, literal) a string gets, and how keys sort; plus Go's
`strconv.FormatFloat(v, 'g', -1, 64)` for numbers. The writers are in butane/go_yaml.py.
"""

from __future__ import annotations

import decimal
import functools
import math
import re

_OLD_BOOL = {"y", "Y", "yes", "Yes", "YES", "on", "On", "ON", "n", "N", "no", "No", "NO", "off", "Off", "OFF"}
_BASE60 = re.compile(r"^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$")


def _wrap64(n: int) -> int:
    """Go int64 arithmetic wraps around."""
    n &= (1 << 64) - 1
    return n - (1 << 64) if n >= 1 << 63 else n


def key_less(a: str, b: str) -> bool:
    """go-yaml v3's keyList.Less (sorter.go): natural order, digit runs compare as numbers, letters before
    others. Digits are unicode.IsDigit (category Nd, Python's isdecimal) and a run's value is the int64
    sum of `rune - '0'`, as Go computes it, so a non-ASCII digit counts as its code point minus 48."""
    ar, br = a, b
    digits = False
    for i in range(min(len(ar), len(br))):
        if ar[i] == br[i]:
            digits = ar[i].isdecimal()
            continue
        al, bl = ar[i].isalpha(), br[i].isalpha()
        if al and bl:
            return ar[i] < br[i]
        if al or bl:
            return al if digits else bl
        an = bn = 0
        if ar[i] == "0" or br[i] == "0":
            j = i - 1
            while j >= 0 and ar[j].isdecimal():
                if ar[j] != "0":
                    an = bn = 1
                    break
                j -= 1
        ai = i
        while ai < len(ar) and ar[ai].isdecimal():
            an = _wrap64(an * 10 + ord(ar[ai]) - 48)
            ai += 1
        bi = i
        while bi < len(br) and br[bi].isdecimal():
            bn = _wrap64(bn * 10 + ord(br[bi]) - 48)
            bi += 1
        if an != bn:
            return an < bn
        if ai != bi:
            return ai < bi
        return ar[i] < br[i]
    return len(ar) < len(br)


def _compare_keys(x: str, y: str) -> int:
    return -1 if key_less(x, y) else (1 if key_less(y, x) else 0)


def sorted_keys(keys: list[str]) -> list[str]:
    return sorted(keys, key=functools.cmp_to_key(_compare_keys))


# Character classes of yamlprivateh.go, on code points (Go works on UTF-8 bytes; the classes are the same).
# is_printable: LF, 0x20-0x7E, 0xA0-0xD7FF, 0xE000-0xFFFD but not the BOM; so TAB, CR, NEL, C1 controls,
# U+FEFF and everything above U+FFFF (emoji) are *not* printable.
BREAKS = "\r\n\x85\u2028\u2029"
# analyze_scalar's special_characters: not printable (TAB is counted separately as tab_characters).
_SPECIAL = re.compile(r"[^\t\n\x20-\x7e\xa0-\ud7ff\ue000-\ufefe\uff00-\ufffd]")
# write_double_quoted_scalar escapes: not printable, a break, `"` or `\`.
DQ_ESCAPED = re.compile(r"[^\x20\x21\x23-\x5b\x5d-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd]")
_ANY_BREAK = re.compile(r"[\r\n\x85\u2028\u2029]")
_BREAK_SPACE = re.compile(r"[\r\n\x85\u2028\u2029] ")
_SPACE_BREAK = re.compile(r" [\r\n\x85\u2028\u2029]")
# Block indicators after the first character: `:` followed by a blank or the end, `#` after is_blankz.
_INNER_BLOCK_IND = re.compile(r"(?s).:(?:[ \t]|\Z)|[ \t\r\n\x85\u2028\u2029\x00]#")
_FIRST_BLOCK_IND = "#,[]{}&*!|>'\"%@`"
SURROGATE = re.compile(r"[\ud800-\udfff]")
LITERAL_SPLIT = re.compile(r"([\r\n\x85\u2028\u2029])")

PLAIN, SINGLE, DOUBLE, _LITERAL = "plain", "single", "double", "literal"


class Analysis:
    """yaml_emitter_analyze_scalar's verdict on a scalar (emitterc.go), for the block context only: the
    encoder never puts a scalar inside a flow collection (only empty `{}`/`[]` are flow)."""

    __slots__ = ("multiline", "block_plain", "single", "block")

    def __init__(self, value: str) -> None:
        if not value:
            self.multiline, self.block_plain, self.single, self.block = False, True, True, False
            return
        first, last = value[0], value[-1]
        block_ind = value.startswith(("---", "..."))
        if first in _FIRST_BLOCK_IND:
            block_ind = True
        elif first in "?:-" and (len(value) == 1 or value[1] in " \t"):
            block_ind = True
        if not block_ind and _INNER_BLOCK_IND.search(value):
            block_ind = True
        line_breaks = _ANY_BREAK.search(value) is not None
        special = _SPECIAL.search(value) is not None
        tabs = "\t" in value
        leading = first == " " or first in BREAKS
        trailing_space = last == " "
        trailing = trailing_space or last in BREAKS
        break_space = line_breaks and _BREAK_SPACE.search(value) is not None
        space_break = line_breaks and _SPACE_BREAK.search(value) is not None
        self.multiline = line_breaks
        self.block_plain = not (leading or trailing or break_space or space_break or tabs or special)
        self.block_plain = self.block_plain and not line_breaks and not block_ind
        self.single = not (break_space or space_break or tabs or special)
        self.block = not (trailing_space or space_break or special)


def _resolves_to_str(text: str) -> bool:
    from butane.yamlsrc import STR, resolve_plain

    return resolve_plain(text)[0] == STR


_DQ = {
    "\0": "0",
    "\a": "a",
    "\b": "b",
    "\t": "t",
    "\n": "n",
    "\v": "v",
    "\f": "f",
    "\r": "r",
    "\x1b": "e",
    '"': '"',
    "\\": "\\",
    "\x85": "N",
    "\xa0": "_",
    "\u2028": "L",
    "\u2029": "P",
}


def dq_escape(ch: str) -> str:
    """One escape of write_double_quoted_scalar (hex digits upper-case, width by code point)."""
    if ch in _DQ:
        return "\\" + _DQ[ch]
    o = ord(ch)
    return f"\\x{o:02X}" if o <= 0xFF else (f"\\u{o:04X}" if o <= 0xFFFF else f"\\U{o:08X}")


def requested_style(text: str) -> str:
    """encode.go stringv: literal if the string holds a line feed, plain if it would read back as the same
    string (not a YAML 1.2 bool/int/float/null, not a timestamp, not a YAML 1.1 base-60 float or yes/no/on/off
    bool), else double-quoted."""
    if "\n" in text:
        return _LITERAL
    if (
        _resolves_to_str(text)
        and not _BASE60.match(text)
        and text not in _OLD_BOOL
    ):
        return PLAIN
    return DOUBLE


def select_style(requested: str, a: Analysis, text: str, simple_key: bool) -> str:
    """yaml_emitter_select_scalar_style in the block context (flow_level 0, implicit tags)."""
    style = requested
    if simple_key and a.multiline:
        style = DOUBLE
    if style == PLAIN and (not a.block_plain or (not text and simple_key)):
        style = SINGLE
    if style == SINGLE and not a.single:
        style = DOUBLE
    if style == _LITERAL and (not a.block or simple_key):
        style = DOUBLE
    return style


def go_format_g(value: float) -> str:
    """Go's strconv.FormatFloat(v, 'g', -1, 64): shortest digits, exponent form from 1e6 or below 1e-4."""
    if value == 0:
        return "0" if math.copysign(1, value) > 0 else "-0"
    sign = "-" if value < 0 else ""
    parts = decimal.Decimal(repr(abs(value))).as_tuple()
    digits = "".join(map(str, parts.digits)).rstrip("0") or "0"
    exponent = len(parts.digits) + int(parts.exponent) - 1
    if exponent < -4 or exponent >= 6:
        body = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{sign}{body}e{'-' if exponent < 0 else '+'}{abs(exponent):02d}"
    point = exponent + 1
    if point <= 0:
        return f"{sign}0.{'0' * -point}{digits}"
    if point >= len(digits):
        return sign + digits + "0" * (point - len(digits))
    return f"{sign}{digits[:point]}.{digits[point:]}"
