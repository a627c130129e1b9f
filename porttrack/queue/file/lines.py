"""Which line of a queue file holds a key, for error messages and citations: questions for the text's
source map (porttrack/tomlmap.py), asked only when a message or a citation needs the line."""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

from porttrack.tomlmap import source_map

if TYPE_CHECKING:  # the document module imports this one
    from porttrack.queue.file.document import QueueFile


@lru_cache(maxsize=8)
def _lines(text: str) -> list[str]:
    # memoised: locating keys calls this once per gate, and a 300-entry queue has 600 gates
    return text.splitlines()


@lru_cache(maxsize=2)
def _kept_lines(text: str) -> list[str]:
    # memoised: audit --write cuts every entry's chunk out of the same text
    return text.splitlines(keepends=True)


@lru_cache(maxsize=8)
def _spans(text: str, name: str) -> list[tuple[int, int]]:
    """[start, end) line spans of each `[[name]]` element, children included."""
    return source_map(text).spans(name)


def position(qf: QueueFile, n: int) -> int | None:
    """Where entry `n` stands among the file's `[[entry]]` tables (0-based), None when none has it.
    The index is built once per decoded data: audit asks for every entry, and for every gate."""
    if qf._index is None or qf._index[0] is not qf.data:
        entries = qf.data.get("entry", [])
        index = {e["n"]: i for i, e in enumerate(entries) if isinstance(e, dict) and isinstance(e.get("n"), int)}
        qf._index = (qf.data, index)
    return qf._index[1].get(n)


def line_of(qf: QueueFile, n: int, key: str | None = None, part: str | None = None) -> int:
    """1-based line of entry `n`'s header, or of `key` inside it (or inside its part named `part`)."""
    index = position(qf, n)
    elements = source_map(qf.text).named("entry")
    if index is None or index >= len(elements):
        return 1
    t = elements[index]
    if part is not None:
        t = next((p for p in t.named("part") if part in str(p.value("name") or "")), t)
    if key is None:
        return t.line
    return t.find(key) or t.line


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

    def child(self, table: str, index: int, child: str, k: int, key: str):
        return _Lazy(lambda: self._child(table, index, child, k, key))

    def at(self, table: str, index: int, key: str | None = None):
        return _Lazy(lambda: self._at(table, index, key))

    def _element(self, table: str, index: int):
        elements = source_map(self.qf.text).named(table)
        return elements[index] if index < len(elements) else None

    def _child(self, table: str, index: int, child: str, k: int, key: str) -> str:
        """Where `key` is inside the k-th `[[table.child]]` of the index-th `[[table]]`."""
        t = self._element(table, index)
        if t is None:
            return str(self.qf.path)
        kids = t.named(child)
        if k >= len(kids):
            return self._at(table, index, child)
        return f"{self.qf.path}:{kids[k].keys.get(key) or kids[k].line}"

    def _at(self, table: str, index: int, key: str | None = None) -> str:
        t = self._element(table, index)
        if t is None:
            return str(self.qf.path)
        return f"{self.qf.path}:{(t.find(key) if key else None) or t.line}"
