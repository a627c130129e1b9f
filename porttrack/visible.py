"""Data from files, made safe to print: no control character, no line of its own (docs/security.md).

A queue, a matrix or a header comes from whoever wrote the checkout. A newline in a value would
start a line of its own, which a CI runner reads as a workflow command (`::error ...`), and an
ESC or BEL byte drives the reader's terminal. Every renderer of text, markdown, GitHub
annotations and JUnit passes data through `visible` (or a whole result through `sanitized`):
each such character is shown as an escape, `\\n` or `\\x1b`, never written raw.
"""

from __future__ import annotations

import copy
import dataclasses
import re
from typing import Any, TypeVar

# C0, DEL and C1 controls, and the two Unicode separators some viewers break lines at.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}

T = TypeVar("T")


def _escape(m: re.Match[str]) -> str:
    c = m.group()
    return _NAMED.get(c) or (f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}")


def visible(text: str) -> str:
    """`text` with every control character shown as an escape; unchanged when it holds none."""
    return _CONTROL.sub(_escape, text) if _CONTROL.search(text) else text


def sanitized(obj: T) -> T:
    """A copy of `obj` (dataclasses, lists, tuples, dicts and sets of them) with every string `visible`.

    Objects shared inside `obj` stay shared in the copy; `obj` itself is left as it was.
    """
    return _walk(obj, {})


def _walk(obj: Any, memo: dict[int, Any]) -> Any:
    if isinstance(obj, str):
        return visible(obj)
    if obj is None or isinstance(obj, (int, float, bool, bytes)):
        return obj
    key = id(obj)
    if key in memo:
        return memo[key]
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        out = copy.copy(obj)
        memo[key] = out
        for f in dataclasses.fields(obj):
            object.__setattr__(out, f.name, _walk(getattr(obj, f.name), memo))
        return out
    if isinstance(obj, list):
        lst: list[Any] = []
        memo[key] = lst
        lst.extend(_walk(v, memo) for v in obj)
        return lst
    if isinstance(obj, tuple):
        items = [_walk(v, memo) for v in obj]
        tup = type(obj)(*items) if hasattr(obj, "_fields") else tuple(items)
        memo[key] = tup
        return tup
    if isinstance(obj, dict):
        d: dict[Any, Any] = {}
        memo[key] = d
        d.update((_walk(k, memo), _walk(v, memo)) for k, v in obj.items())
        return d
    if isinstance(obj, (set, frozenset)):
        return type(obj)(_walk(v, memo) for v in obj)
    return obj
