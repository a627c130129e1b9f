"""Which line of a TOML text holds each table and key: one map, built once per text.

Neither tomllib nor tomlkit keeps line numbers, yet every error message and every citation into a
config or queue file names a line. This module answers all those questions from one pass over the
text: the config's keys, a queue's entries, parts, gates, citations, rules and acks, and the
line a tomllib error points at.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

_HEADER = re.compile(r"^\s*\[(\[)?\s*([A-Za-z0-9_.\s-]+?)\s*\]")
_KEYLINE = re.compile(r"^\s*([\"']?)([A-Za-z0-9_.-]+)\1\s*=\s*(.*)")
_ERROR_LINE = re.compile(r"\(at line (\d+), column \d+\)")


@dataclass(eq=False)
class Table:
    """One `[name]` or `[[name]]` element (the root table has the name "" and line 0)."""

    name: str  # as the header writes it, spaces removed: "entry.gate"
    array: bool
    line: int
    parent: Table | None = None  # the element a `[a.b]` or `[[a.b]]` belongs to: the last `a` above it
    keys: dict[str, int] = field(default_factory=dict)  # key -> line of its first `key =`
    raw: dict[str, str] = field(default_factory=dict)  # key -> the text after its `=` on that line
    children: list[Table] = field(default_factory=list)

    def value(self, key: str) -> Any:
        """A one-line scalar value (a string, a number), or None when it is absent or spans lines."""
        if key not in self.raw:
            return None
        if self.raw[key].strip().isdigit():  # `n = 12`, on every entry: no parser for it
            return int(self.raw[key].strip())
        try:
            return tomllib.loads(f"v = {self.raw[key]}")["v"]
        except tomllib.TOMLDecodeError:
            return None

    def find(self, key: str) -> int | None:
        """The line of `key` in this element or, failing that, in the first of its sub-tables holding it."""
        if key in self.keys:
            return self.keys[key]
        return next((line for c in self.children if (line := c.find(key)) is not None), None)

    def named(self, name: str) -> list[Table]:
        """Its sub-tables called `name` (the part after this element's own name)."""
        return [c for c in self.children if c.name == f"{self.name}.{name}"]


class SourceMap:
    """Every table of a TOML text in order, each with the lines of its keys."""

    def __init__(self, text: str):
        self.root = Table("", False, 0)
        self.tables: list[Table] = []
        self._by_name: dict[str, list[Table]] = {}
        last: dict[str, Table] = {}
        current = self.root
        self.lines = text.count("\n")
        for i, line in enumerate(text.splitlines(), 1):
            m = _HEADER.match(line)
            if m:
                name = re.sub(r"\s+", "", m.group(2))
                parent = last.get(name.rsplit(".", 1)[0]) if "." in name else None
                current = Table(name, bool(m.group(1)), i, parent)
                if parent is not None:
                    parent.children.append(current)
                self.tables.append(current)
                self._by_name.setdefault(name, []).append(current)
                last[name] = current
                continue
            k = _KEYLINE.match(line)
            if k and k.group(2) not in current.keys:
                current.keys[k.group(2)] = i
                current.raw[k.group(2)] = k.group(3)

    def named(self, name: str) -> list[Table]:
        """The elements called `name`, in order (an array of tables' elements, or one table)."""
        return self._by_name.get(name, [])

    def spans(self, name: str) -> list[tuple[int, int]]:
        """[first, end) lines of each element called `name`, its sub-tables included: up to the next
        header that is not one of them. One pass, from the last table up."""
        out = []
        end = self.lines + 2
        for t in reversed(self.tables):
            if t.name == name:
                out.append((t.line, end))
            if not t.name.startswith(name + "."):
                end = t.line
        return out[::-1]

    def key_line(self, table: str | None, key: str, occurrence: int = 0) -> int | None:
        """The line of `key` in `[table]` (the `occurrence`-th `[[table]]`), or at the top when None;
        also `table.key = …` written as a dotted key above."""
        if table is None:
            return self.root.keys.get(key)
        found = self.named(table)
        if occurrence < len(found) and key in found[occurrence].keys:
            return found[occurrence].keys[key]
        head, _, tail = table.rpartition(".")
        for t in [self.root, *self.tables]:
            if t.name == head and f"{tail}.{key}" in t.keys:
                return t.keys[f"{tail}.{key}"]
        return None


@lru_cache(maxsize=4)
def source_map(text: str) -> SourceMap:
    """The map of `text`, built once however many lines are asked of the same text."""
    return SourceMap(text)


def error_line(error: tomllib.TOMLDecodeError) -> int | None:
    """The line a tomllib error points at, None when it names none (the end of the document)."""
    m = _ERROR_LINE.search(str(error))
    return int(m.group(1)) if m else None
