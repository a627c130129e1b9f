"""Which line of a queue file holds a key: found from the text, without a parse, for error messages and citations."""

from __future__ import annotations

from typing import TYPE_CHECKING

import bisect
import re
from functools import lru_cache


if TYPE_CHECKING:  # the document module imports this one
    from porttrack.queue.file.document import QueueFile


_HEADER = re.compile(r"^\s*\[\[\s*([A-Za-z0-9_.\s]+?)\s*\]\]")
_KEY = r"^\s*[\"']?{}[\"']?\s*="


@lru_cache(maxsize=8)
def _lines(text: str) -> list[str]:
    # memoised: locating keys calls this once per gate, and a 300-entry queue has 600 gates
    return text.splitlines()


@lru_cache(maxsize=8)
def _header_lines(text: str) -> list[tuple[int, str]]:
    """(line, name) of every `[[array.of.tables]]` header, in order."""
    out = []
    for i, line in enumerate(_lines(text), 1):
        m = _HEADER.match(line)
        if m:
            out.append((i, re.sub(r"\s+", "", m.group(1))))
    return out


def _spans(text: str, name: str) -> list[tuple[int, int]]:
    """[start, end) line spans of each `[[name]]` element, children included."""
    heads = _header_lines(text)
    nlines = text.count("\n") + 2
    tops = [ln for ln, nm in heads if nm == name]
    others = [ln for ln, nm in heads if "." not in nm and nm != name]
    # a plain [table] header also ends an element; one pass finds them all, a bisect each span's end
    plain = [
        j
        for j, line in enumerate(_lines(text), 1)
        if re.match(r"^\s*\[[^\[]", line) and not re.match(r"^\s*\[\s*" + re.escape(name) + r"\.", line)
    ]
    enders = sorted(set(tops + others + plain))
    spans = []
    for start in tops:
        k = bisect.bisect_right(enders, start)
        spans.append((start, enders[k] if k < len(enders) else nlines))
    return spans


def _key_in(text: str, span: tuple[int, int], key: str) -> int | None:
    lines = _lines(text)
    pat = re.compile(_KEY.format(re.escape(key)))
    for i in range(span[0], min(span[1] - 1, len(lines))):
        if pat.match(lines[i]):
            return i + 1
    return None


def line_of(qf: QueueFile, n: int, key: str | None = None, part: str | None = None) -> int:
    """1-based line of entry `n`'s header, or of `key` inside it (or inside its part named `part`)."""
    entries = qf.data.get("entry", [])
    index = next((i for i, e in enumerate(entries) if e.get("n") == n), None)
    spans = _spans(qf.text, "entry")
    if index is None or index >= len(spans):
        return 1
    span = spans[index]
    if part is not None:
        for ln, nm in _header_lines(qf.text):
            if nm == "entry.part" and span[0] < ln < span[1]:
                name_line = _key_in(qf.text, (ln, span[1]), "name")
                if name_line and part in qf.text.splitlines()[name_line - 1]:
                    span = (ln, span[1])
                    break
    if key is None:
        return span[0]
    return _key_in(qf.text, span, key) or span[0]


class _Lazy:
    """A `file:line` worked out only when a message is formatted: locating a key scans the text,
    and a valid queue (thousands of keys, most of them checked) never needs one."""

    __slots__ = ("fn",)

    def __init__(self, fn):
        self.fn = fn

    def __str__(self) -> str:
        return self.fn()

    def __format__(self, spec: str) -> str:
        return format(self.fn(), spec)


class _Where:
    """Builds `file:line: entry N: ...` sentences while converting the document to the model."""

    def __init__(self, qf: QueueFile):
        self.qf = qf
        self._spans: dict | None = None

    @property
    def spans(self) -> dict:
        if self._spans is None:
            text = self.qf.text
            self._spans = {"entry": _spans(text, "entry"), "rule": _spans(text, "rule"), "ack": _spans(text, "ack")}
        return self._spans

    def child(self, table: str, index: int, child: str, k: int, key: str):
        return _Lazy(lambda: self._child(table, index, child, k, key))

    def at(self, table: str, index: int, key: str | None = None):
        return _Lazy(lambda: self._at(table, index, key))

    def _child(self, table: str, index: int, child: str, k: int, key: str) -> str:
        """Where `key` is inside the k-th `[[table.child]]` of the index-th `[[table]]`."""
        spans = self.spans.get(table, [])
        if index >= len(spans):
            return str(self.qf.path)
        start, end = spans[index]
        heads = [ln for ln, nm in _header_lines(self.qf.text) if nm == f"{table}.{child}" and start < ln < end]
        if k >= len(heads):
            return self._at(table, index, child)
        stop = min([ln for ln, _ in _header_lines(self.qf.text) if ln > heads[k]] + [end])
        line = _key_in(self.qf.text, (heads[k], stop), key)
        return f"{self.qf.path}:{line or heads[k]}"

    def _at(self, table: str, index: int, key: str | None = None) -> str:
        spans = self.spans.get(table, [])
        if index >= len(spans):
            return str(self.qf.path)
        line = _key_in(self.qf.text, spans[index], key) if key else None
        return f"{self.qf.path}:{line or spans[index][0]}"
