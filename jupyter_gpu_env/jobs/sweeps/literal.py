"""A dict's Python literal (what a results cell shows as ``text/plain``) read piece by piece: its items
one at a time, each kept up to a bound, so that one value of 20 MB costs its first characters, and the
values around it are read whole.

IPython writes a dict as ``{'loss': 0.25, 'curve': [...]}`` (across lines when long): items split by
the commas at the dict's own level, outside strings and brackets. An item that is whole is read with
``ast.literal_eval``; one longer than the bound is cut, and given as the beginning of its text.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from typing import Any

from .scan import closing_quote

KEY_ROOM = 1024  # an item is kept up to its value's bound and this much for its key

_SPACE = re.compile(r"\s*")
_LEVEL = re.compile(r"[^'\"()\[\]{},:]*")  # at the dict's own level: up to what may end an item or key
_NESTED = re.compile(r"[^'\"()\[\]{}]*")  # inside a value's brackets: only strings and brackets matter
_NOT_LITERAL = object()


def literal(text: str) -> Any:
    """``text`` read as a Python literal; ``_NOT_LITERAL`` when it is none."""
    try:
        return ast.literal_eval(text)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return _NOT_LITERAL


def is_literal(value: Any) -> bool:
    return value is not _NOT_LITERAL


class DictItems:
    """Fed a dict's literal in pieces, calls ``put(key, value, cut)`` for each item as it ends: the
    value read (its text when it is no literal, an array's repr say) or, cut, its text's beginning.
    Anything but a dict gives nothing."""

    def __init__(self, bound: int, put: Callable[[str, Any, bool], None]) -> None:
        self.put = put
        self.bound = bound + KEY_ROOM
        self.started = self.done = False
        self.depth = 0  # brackets open inside the item
        self.quote = ""  # the quote of the string open in the item, if one is
        self.odd = False  # whether that string's text so far ends in an escaping backslash
        self._new_item()

    def _new_item(self) -> None:
        self.parts: list[str] = []
        self.room = self.bound
        self.size = 0
        self.colon = -1  # where, in the item's text, its key ends

    def _keep(self, text: str) -> None:
        self.size += len(text)
        if self.room > 0 and text:
            self.parts.append(text[: self.room])
            self.room -= len(self.parts[-1])

    def feed(self, text: str) -> None:
        pos = 0
        while pos < len(text) and not self.done:
            if not self.started:
                pos = _SPACE.match(text, pos).end()  # type: ignore[union-attr]
                if pos < len(text):
                    self.started, self.done = True, text[pos] != "{"
                    pos += 1
            elif self.quote:
                end, self.odd = closing_quote(text, pos, self.quote, self.odd)
                self._keep(text[pos : len(text) if end < 0 else end + 1])
                pos = len(text) if end < 0 else end + 1
                self.quote = "" if end >= 0 else self.quote
            else:
                end = (_NESTED if self.depth else _LEVEL).match(text, pos).end()  # type: ignore[union-attr]
                self._keep(text[pos:end])
                if end < len(text):
                    self._mark(text[end])
                pos = end + 1

    def _mark(self, ch: str) -> None:
        if ch in "'\"":
            self.quote, self.odd = ch, False
        elif ch in "([{":
            self.depth += 1
        elif ch in ")]}" and self.depth:
            self.depth -= 1
        elif ch == "}" or ch == ",":  # the dict's own end, or its item's
            self._item(cut=False)
            self.done = ch == "}"
            return
        elif ch == ":" and not self.depth and self.colon < 0:
            self.colon = self.size
        self._keep(ch)

    def close(self) -> None:
        """The text has ended: an item it did not end was cut."""
        if self.started and not self.done:
            self._item(cut=True)
        self.done = True

    def _item(self, *, cut: bool) -> None:
        text = "".join(self.parts)
        cut = cut or self.size > len(text)
        colon = self.colon
        self._new_item()
        if colon < 0 or colon >= len(text):
            return  # no key (a set's literal, a trailing comma), or a key beyond reason
        key = literal(text[:colon].strip())
        if not is_literal(key):
            return
        value = text[colon + 1 :].strip()
        if not cut:
            found = literal(value)
            self.put(str(key), found if is_literal(found) else value, False)
        else:
            self.put(str(key), _string_start(value), True)


def _string_start(text: str) -> str:
    """The beginning of a cut value's text: a string's own characters when it is one."""
    quote = text[:1]
    if quote not in ("'", '"'):
        return text
    for end in range(len(text), max(len(text) - 10, 1) - 1, -1):  # an escape may be cut in two
        found = literal(text[:end] + quote)
        if isinstance(found, str):
            return found
    return text[1:]
