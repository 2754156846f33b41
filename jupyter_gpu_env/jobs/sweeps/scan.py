"""A JSON document read in chunks, handing over only the values asked for, piece by piece.

A run's output notebook is written by the user's code: it may hold one value of 20 MB, or be 60 MB of
plots. :func:`scan` walks the document's skeleton (the objects and arrays ``want`` descends into), gives
the JSON text of the values ``want`` asks for to their sinks as it reads it (:class:`Keep` keeps the
first characters and counts the rest; :class:`Strings` decodes a string or a list of strings), and
passes over everything else with ``str.find`` and regular expressions of one character class (a
repeated group would cost memory in proportion to the text). Memory is one chunk plus what the sinks
keep, whatever the file holds.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any, Protocol, TextIO

DESCEND, SKIP = "descend", "skip"
Where = tuple[str | int, ...]  # a value's place: object keys and array indexes from the root

CHUNK = 1 << 20
_KEY_BOUND = 4096  # the skeleton's keys are short; a longer one is kept cut

_WS = re.compile(r"[ \t\n\r]*")
# What a nested value holds between its brackets: other characters, and strings without escapes, at
# once (possessive: no backtracking, so no memory that grows with the text).
_BETWEEN = re.compile(r'(?:[^"\[\]{}]++|"[^"\\]*+")*+')
_PLAIN_KEY = re.compile(r'"([^"\\]{0,256}+)"[ \t\n\r]*+:')  # a key without escapes, and its colon
_ATOM = re.compile(r"[^\s,\]}:]*")  # a number, true, false or null
_CUT_ESCAPE = re.compile(r"\\(?:u[0-9a-fA-F]{0,3}|u[dD][89abAB][0-9a-fA-F]{2})?\Z")


class Malformed(ValueError):
    """The text is not the JSON document it should be (or ends early)."""


class Sink(Protocol):
    def add(self, text: str) -> None:
        """The next piece of the value's JSON text."""

    def end(self) -> None:
        """The value's text has all been given."""


def scan(f: TextIO, want: Callable[[Where], str | Sink]) -> None:
    """Read the JSON document in ``f`` once. ``want(where)`` answers DESCEND (walk into this object or
    array), SKIP, or a sink given the value's JSON text; it is asked as the reading reaches each value,
    so it may decide from what it has seen. :class:`Malformed` when the document is not JSON."""
    _walk(_Reader(f), (), want)


def walk(value: Any, want: Callable[[Where], str | Sink], where: Where = ()) -> None:
    """What :func:`scan` does, over a document already parsed (a small one, parsed whole by the C
    parser at once): the values asked for are given to their sinks as JSON text."""
    what = want(where)
    if what == DESCEND and isinstance(value, dict):
        for key, member in value.items():
            walk(member, want, (*where, key))
    elif what == DESCEND and isinstance(value, list):
        for i, member in enumerate(value):
            walk(member, want, (*where, i))
    elif not isinstance(what, str):
        what.add(json.dumps(value, ensure_ascii=False))
        what.end()


class Keep:
    """A sink that keeps the first ``bound`` characters of a value's text and counts the rest."""

    def __init__(self, bound: int) -> None:
        self.parts: list[str] = []
        self.room = bound
        self.size = 0

    def add(self, text: str) -> None:
        self.size += len(text)
        if self.room > 0:
            self.parts.append(text[: self.room])
            self.room -= len(self.parts[-1])

    def end(self) -> None:
        pass

    @property
    def text(self) -> str:
        return "".join(self.parts)

    @property
    def cut(self) -> bool:
        return self.size > sum(len(p) for p in self.parts)


class Strings:
    """A sink for a JSON string, or an array of strings (a notebook's lines): their text, decoded, goes
    to ``feed`` as it comes, and ``end`` is called after the last."""

    def __init__(self, feed: Callable[[str], None], end: Callable[[], None]) -> None:
        self.feed = feed
        self.end = end
        self.inside = False
        self.odd = False  # does the string's text read so far end in an escaping backslash?
        self.carry = ""  # an escape cut by the piece's end, decoded with the next piece

    def add(self, text: str) -> None:
        pos = 0
        while pos < len(text):
            if not self.inside:
                pos = text.find('"', pos)
                if pos < 0:
                    return
                self.inside, self.odd, pos = True, False, pos + 1
                continue
            end, self.odd = closing_quote(text, pos, '"', self.odd)
            piece = self.carry + text[pos : len(text) if end < 0 else end]
            self.carry = ""
            if end < 0:  # the piece ends inside the string: an escape it cuts waits for the rest
                cut = _cut_escape(piece)
                piece, self.carry = piece[:cut], piece[cut:]
                self.feed(_decoded(piece))
                return
            self.feed(_decoded(piece))
            self.inside, pos = False, end + 1


def closing_quote(text: str, pos: int, quote: str, odd: bool) -> tuple[int, bool]:
    """Where in ``text``, from ``pos``, the string that is open there ends (the index of its closing
    ``quote``), or -1; with whether the text read ends in an escaping backslash (``odd``: whether the
    text before ``pos`` did)."""
    while True:
        q = text.find(quote, pos)
        end = len(text) if q < 0 else q
        i = end
        while i > pos and text[i - 1] == "\\":
            i -= 1
        escaping = (end - i) % 2 == 1 if i > pos else ((end - i) + odd) % 2 == 1
        if q < 0:
            return -1, escaping
        if not escaping:
            return q, False
        pos, odd = q + 1, False


def string_prefix(text: str) -> str:
    """What the text of a JSON string says (its opening quote included, its end perhaps cut)."""
    body = text[1:]
    if body.endswith('"') and not _odd_escape(body, len(body) - 1):
        body = body[:-1]  # whole
    else:
        body = body[: _cut_escape(body)]
    return _decoded(body)


def _cut_escape(body: str) -> int:
    """Where an escape that ``body`` ends in the middle of begins (or a pair's first half, which waits
    for its second); ``len(body)`` when it ends with whole characters."""
    base = max(len(body) - 8, 0)
    cut = _CUT_ESCAPE.search(body, base)
    if cut is not None and _odd_escape(body, cut.start() + 1):
        return cut.start()
    return len(body)


def _decoded(body: str) -> str:
    try:
        text: str = json.loads(f'"{body}"')
    except ValueError:
        return body
    return text


def _odd_escape(body: str, end: int) -> bool:
    """Does ``body[:end]`` end in a backslash that escapes what would follow?"""
    i = end
    while i > 0 and body[i - 1] == "\\":
        i -= 1
    return (end - i) % 2 == 1


class _Reader:
    def __init__(self, f: TextIO) -> None:
        self.f = f
        self.buf = ""
        self.pos = 0

    def more(self) -> bool:
        """Read on (what was consumed is dropped); False at the end of the file."""
        data = self.f.read(CHUNK)
        if not data:
            return False
        self.buf = self.buf[self.pos :] + data
        self.pos = 0
        return True

    def peek(self) -> str:
        """The next character after whitespace ('' at the end)."""
        if self.pos < len(self.buf) and self.buf[self.pos] not in " \t\n\r":
            return self.buf[self.pos]
        while True:
            match = _WS.match(self.buf, self.pos)
            self.pos = match.end() if match else self.pos
            if self.pos < len(self.buf):
                return self.buf[self.pos]
            if not self.more():
                return ""


def _walk(r: _Reader, where: Where, want: Callable[[Where], str | Sink]) -> None:
    what = want(where)
    first = r.peek()
    if what == DESCEND and first == "{":
        r.pos += 1
        if r.peek() == "}":
            r.pos += 1
            return
        while True:
            if r.peek() != '"':
                raise Malformed("an object's key is not a string")
            plain = _PLAIN_KEY.match(r.buf, r.pos)
            if plain is not None:  # the usual key, at once
                name, r.pos = plain.group(1), plain.end()
            else:
                key = Keep(_KEY_BOUND)
                _string(r, key)
                _expect(r, ":")
                name = string_prefix(key.text)
            _walk(r, (*where, name), want)
            if _end_of(r, "}"):
                return
    elif what == DESCEND and first == "[":
        r.pos += 1
        if r.peek() == "]":
            r.pos += 1
            return
        i = 0
        while True:
            _walk(r, (*where, i), want)
            i += 1
            if _end_of(r, "]"):
                return
    elif isinstance(what, str):
        _value(r, None)
    else:
        _value(r, what)
        what.end()


def _expect(r: _Reader, ch: str) -> None:
    if r.peek() != ch:
        raise Malformed(f"expected {ch!r}")
    r.pos += 1


def _end_of(r: _Reader, closing: str) -> bool:
    """Past the ',' before the next member (False) or the ``closing`` bracket (True)."""
    ch = r.peek()
    if ch not in (",", closing):
        raise Malformed(f"expected ',' or {closing!r}")
    r.pos += 1
    return ch == closing


def _value(r: _Reader, sink: Sink | None) -> None:
    """Pass over one value, its text given to ``sink`` when there is one."""
    ch = r.peek()
    if ch == '"':
        _string(r, sink)
    elif ch in ("{", "["):
        _nested(r, sink)
    elif ch:
        _atom(r, sink)
    else:
        raise Malformed("the document ends where a value should be")


def _string(r: _Reader, sink: Sink | None) -> None:
    start, odd = r.pos, False
    r.pos += 1
    while True:
        end, odd = closing_quote(r.buf, r.pos, '"', odd)
        if end >= 0:
            if sink is not None:
                sink.add(r.buf[start : end + 1])
            r.pos = end + 1
            return
        if sink is not None:
            sink.add(r.buf[start:])
        r.pos = len(r.buf)
        if not r.more():
            raise Malformed("the document ends inside a string")
        start = r.pos


def _nested(r: _Reader, sink: Sink | None) -> None:
    depth = 0
    while True:
        if r.pos >= len(r.buf) and not r.more():
            raise Malformed("the document ends inside an object or array")
        ch = r.buf[r.pos]
        if ch in "[{]}":
            depth += 1 if ch in "[{" else -1
            end = r.pos + 1
        else:
            match = _BETWEEN.match(r.buf, r.pos)
            end = match.end() if match else r.pos
            if end == r.pos:  # a string with escapes, or one the chunk cuts
                _string(r, sink)
                continue
        if sink is not None:
            sink.add(r.buf[r.pos : end])
        r.pos = end
        if depth == 0:
            return


def _atom(r: _Reader, sink: Sink | None) -> None:
    while True:
        match = _ATOM.match(r.buf, r.pos)
        end = match.end() if match else r.pos
        if sink is not None:
            sink.add(r.buf[r.pos : end])
        r.pos = end
        if end < len(r.buf) or not r.more():
            return
