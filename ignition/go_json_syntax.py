"""Go's `encoding/json` syntax checker (scanner.go), run only when a document fails to parse, for Go's error text.

`syntax_error(data)` returns (message, offset) like Go's SyntaxError, where offset counts the bytes read up to
and including the offending one, or None when Go would accept the bytes.
"""

from __future__ import annotations

from ignition.errors import IgnitionError

_SPACE = frozenset(b" \t\r\n")
_HEXB = frozenset(b"0123456789abcdefABCDEF")
_DIGITS = frozenset(b"0123456789")
# Go's stateBeginValue: the state a value's first byte leads to (after `{` and `[`, handled apart)
_VALUE_START = {ord('"'): "in_string", ord("-"): "neg", ord("0"): "zero", **dict.fromkeys(b"123456789", "one"),
                ord("t"): "lit:true:1", ord("f"): "lit:false:1", ord("n"): "lit:null:1"}


def quote_char(c: int) -> str:
    """Go's quoteChar: how a byte is shown in "invalid character ..." messages."""
    if c == ord("'"):
        return "'\\''"
    if c == ord('"'):
        return "'\"'"
    specials = {7: "\\a", 8: "\\b", 9: "\\t", 10: "\\n", 11: "\\v", 12: "\\f", 13: "\\r", 0x5C: "\\\\"}
    if c in specials:
        return f"'{specials[c]}'"
    if c < 0x20 or c == 0x7F:
        return f"'\\x{c:02x}'"
    if c >= 0x80:
        ch = chr(c)
        if 0x80 <= c < 0xA0 or c == 0xAD:
            return f"'\\u{c:04x}'"
        return f"'{ch}'"
    return f"'{chr(c)}'"


class _SyntaxFound(IgnitionError):
    """Go's decoder stopped: `msg` is its text (caught inside `syntax_error`)."""

    def __init__(self, msg: str) -> None:
        super().__init__(msg)
        self.msg = msg


def syntax_error(data: bytes) -> tuple[str, int] | None:
    """Go's syntax error for `data`, or None if it is valid JSON to Go."""
    stack: list[str] = []  # "key" (parseObjectKey), "value" (parseObjectValue), "array"
    state = "begin_value"
    n = 0

    def err(c: int, context: str) -> _SyntaxFound:
        return _SyntaxFound(f"invalid character {quote_char(c)} {context}")

    try:
        for n, c in enumerate(data, start=1):  # noqa: B007 (n is the offset reported)
            while True:
                redo = False
                if state == "begin_value" or state == "begin_value_or_empty" or state == "begin_string_or_empty":
                    if c in _SPACE:
                        break
                    if state == "begin_value_or_empty" and c == ord("]"):
                        state = "end_value"
                        redo = True
                    elif state == "begin_string_or_empty" and c == ord("}"):
                        stack[-1] = "value"
                        state = "end_value"
                        redo = True
                    elif state == "begin_string_or_empty":
                        state = "begin_string"
                        redo = True
                    elif c == ord("{"):
                        stack.append("key")
                        state = "begin_string_or_empty"
                    elif c == ord("["):
                        stack.append("array")
                        state = "begin_value_or_empty"
                    elif c in _VALUE_START:
                        state = _VALUE_START[c]
                    else:
                        raise err(c, "looking for beginning of value")
                elif state == "begin_string":
                    if c in _SPACE:
                        break
                    if c == ord('"'):
                        state = "in_string"
                    else:
                        raise err(c, "looking for beginning of object key string")
                elif state == "in_string":
                    if c == ord('"'):
                        state = "end_value"
                    elif c == ord("\\"):
                        state = "esc"
                    elif c < 0x20:
                        raise err(c, "in string literal")
                elif state == "esc":
                    if c in b'bfnrt\\/"':
                        state = "in_string"
                    elif c == ord("u"):
                        state = "u0"
                    else:
                        raise err(c, "in string escape code")
                elif state in ("u0", "u1", "u2", "u3"):
                    if c not in _HEXB:
                        raise err(c, "in \\u hexadecimal character escape")
                    state = "in_string" if state == "u3" else "u" + str(int(state[1]) + 1)
                elif state == "neg":
                    if c == ord("0"):
                        state = "zero"
                    elif c in b"123456789":
                        state = "one"
                    else:
                        raise err(c, "in numeric literal")
                elif state in ("one", "zero", "dot0", "e0"):
                    if state in ("one", "dot0", "e0") and c in _DIGITS:
                        break
                    if state in ("one", "zero") and c == ord("."):
                        state = "dot"
                    elif state in ("one", "zero", "dot0") and c in b"eE":
                        state = "e"
                    else:
                        state = "end_value"
                        redo = True
                elif state == "dot":
                    if c in _DIGITS:
                        state = "dot0"
                    else:
                        raise err(c, "after decimal point in numeric literal")
                elif state in ("e", "esign"):
                    if state == "e" and c in b"+-":
                        state = "esign"
                    elif c in _DIGITS:
                        state = "e0"
                    else:
                        raise err(c, "in exponent of numeric literal")
                elif state.startswith("lit:"):
                    _, word, idx = state.split(":")
                    i = int(idx)
                    if c != ord(word[i]):
                        raise err(c, f"in literal {word} (expecting {quote_char(ord(word[i]))})")
                    state = "end_value" if i + 1 == len(word) else f"lit:{word}:{i + 1}"
                elif state == "end_value":
                    if not stack:
                        state = "end_top"
                        redo = True
                    elif c in _SPACE:
                        break
                    elif stack[-1] == "key":
                        if c == ord(":"):
                            stack[-1] = "value"
                            state = "begin_value"
                        else:
                            raise err(c, "after object key")
                    elif stack[-1] == "value":
                        if c == ord(","):
                            stack[-1] = "key"
                            state = "begin_string"
                        elif c == ord("}"):
                            stack.pop()
                            state = "end_value"
                        else:
                            raise err(c, "after object key:value pair")
                    else:
                        if c == ord(","):
                            state = "begin_value"
                        elif c == ord("]"):
                            stack.pop()
                            state = "end_value"
                        else:
                            raise err(c, "after array element")
                elif state == "end_top":
                    if c not in _SPACE:
                        raise err(c, "after top-level value")
                if not redo:
                    break
    except _SyntaxFound as e:
        return e.msg, n
    if state == "end_top" or (state in ("end_value", "one", "zero", "dot0", "e0") and not stack):
        return None
    return "unexpected end of JSON input", len(data)
