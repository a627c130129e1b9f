"""Definitions a source file holds, and what one change of that file adds, changes, removes and uses.

Names are qualified the way people cite them: `Class.method`, `Outer.Inner.field` in Python;
`ns::Class::method`, `Enum::Member`, `MACRO` in C, C++ and CUDA (as written, with `::`).
A definition's digest covers its text without comments and without the members that are
definitions of their own, so editing one method marks that method changed, not its class.
Parse results are cached by git blob id, so a second walk of the same range parses nothing.
"""

from __future__ import annotations

import bisect
import builtins
import difflib
import hashlib
import itertools
import json
import keyword
import os
import re
import sqlite3
from collections import Counter, OrderedDict
from dataclasses import dataclass, field
from functools import lru_cache, cache
from pathlib import Path
from typing import Protocol, Self
from collections.abc import Callable

from tree_sitter import Node, Query, QueryCursor

from porttrack import cache as cache_mod
from porttrack.parse import language, parser
import contextlib

# Bump when what is extracted changes, so stale cache entries are never read.

_PY_IGNORED = frozenset(dir(builtins)) | frozenset(keyword.kwlist) | {"self", "cls", "__name__", "__file__"}
_C_IGNORED = frozenset(
    [
        "std",
        "size_t",
        "ssize_t",
        "ptrdiff_t",
        "intptr_t",
        "uintptr_t",
        "nullptr_t",
        "NULL",
        "override",
        "final",
        "int8_t",
        "int16_t",
        "int32_t",
        "int64_t",
        "uint8_t",
        "uint16_t",
        "uint32_t",
        "uint64_t",
        "static_cast",
        "dynamic_cast",
        "reinterpret_cast",
        "const_cast",
    ]
)
_IDENT_QUERY = {
    "python": "(identifier) @i",
    "c": "[(identifier) (field_identifier) (type_identifier)] @i",
    "cpp": "[(identifier) (field_identifier) (type_identifier) (namespace_identifier)] @i",
}
_ROW = re.compile(rb"[^\n]*\n|[^\n]+\Z")
_PREPROC_CONTAINERS = {"preproc_if", "preproc_ifdef", "preproc_else", "preproc_elif", "preproc_elifdef"}
_CLASS_TYPES = {"class_specifier", "struct_specifier", "union_specifier"}


@dataclass
class FileDiff:
    """What one change of one file did to its definitions (names sorted)."""

    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    uses: list[str] = field(default_factory=list)  # identifiers on added lines, minus builtins and own definitions


# ---------------------------------------------------------------- tree-sitter helpers


@cache
def _query(lang: str, source: str) -> Query:
    return Query(language(lang), source)


def _captures(lang: str, source: str, node: Node) -> list[Node]:
    found = QueryCursor(_query(lang, source)).captures(node)
    return [n for nodes in found.values() for n in nodes]


def _ident_query(lang: str) -> str:
    return _IDENT_QUERY["cpp" if lang == "cuda" else lang]


def _text(node: Node | None) -> str:
    return node.text.decode("utf-8", "replace") if node is not None and node.text is not None else ""


class _Defs:
    """Collects name -> (node, excised member nodes) while walking a tree, then digests them."""

    def __init__(self, src: bytes, comments: list[tuple[int, int]]):
        self.src = src
        self.comments = sorted(comments)
        self._comment_starts = [c[0] for c in self.comments]
        self.found: dict[str, list[tuple[Node, list[Node]]]] = {}

    def add(self, name: str, node: Node, members: list[Node] | None = None) -> None:
        if name:
            self.found.setdefault(name, []).append((node, members or []))

    def digests(self) -> dict[str, str]:
        return {name: self._digest(spans) for name, spans in self.found.items()}

    def _digest(self, spans: list[tuple[Node, list[Node]]]) -> str:
        h = hashlib.blake2b(digest_size=8)
        src, comments, starts = self.src, self.comments, self._comment_starts
        for node, members in spans:
            begin, finish = node.start_byte, node.end_byte
            cut = [(m.start_byte, m.end_byte) for m in members]
            first = bisect.bisect_left(starts, begin)
            last = bisect.bisect_left(starts, finish, first)
            if first < last:
                cut += [c for c in comments[first:last] if c[1] <= finish]
            if cut:
                pos, parts = begin, []
                for start, end in sorted(cut):
                    if start >= pos:
                        parts.append(src[pos:start])
                        pos = end
                parts.append(src[pos:finish])
                text = b"".join(parts)
            else:
                text = src[begin:finish]
            # Trailing blanks and blank lines are layout, not meaning; indentation is kept (Python).
            h.update(b"\n".join(filter(None, map(bytes.rstrip, text.split(b"\n")))))
            h.update(b"\x00")
        return h.hexdigest()


# ---------------------------------------------------------------- Python


def _py_walk(body: Node | None, prefix: str, out: _Defs) -> list[Node]:
    """Record the definitions directly in `body`; return the nodes recorded (for the parent to excise)."""
    recorded: list[Node] = []
    if body is None:  # a class the parser recovered without a body
        return recorded
    for node in body.named_children:
        inner = node.child_by_field_name("definition") if node.type == "decorated_definition" else node
        if inner is None:
            continue
        if inner.type == "function_definition":
            out.add(prefix + _text(inner.child_by_field_name("name")), node)
            recorded.append(node)
        elif inner.type == "class_definition":
            name = prefix + _text(inner.child_by_field_name("name"))
            members = _py_walk(inner.child_by_field_name("body"), name + ".", out)
            out.add(name, node, members)
            recorded.append(node)
        elif node.type == "expression_statement" and node.named_children:
            assign = node.named_children[0]
            if assign.type == "assignment":
                left = assign.child_by_field_name("left")
                if left is not None and left.type == "identifier":
                    out.add(prefix + _text(left), node)
                    recorded.append(node)
        elif node.type in ("if_statement", "try_statement", "with_statement"):
            # `if TYPE_CHECKING:`, `try: import x except: ...`: definitions inside still count.
            for part in node.named_children:
                blocks = [part] if part.type == "block" else [c for c in part.named_children if c.type == "block"]
                for block in blocks:
                    recorded += _py_walk(block, prefix, out)
    return recorded


# ---------------------------------------------------------------- C, C++, CUDA


def _function_name(declarator: Node | None) -> str | None:
    """The name inside a (possibly pointer/reference-wrapped) function declarator, or None."""
    while declarator is not None:
        if declarator.type == "function_declarator":
            inner = declarator.child_by_field_name("declarator")
            return "".join(_text(inner).split()) or None
        declarator = declarator.child_by_field_name("declarator")
    return None


def _c_walk(body: Node, prefix: str, out: _Defs) -> list[Node]:
    recorded: list[Node] = []
    for node in body.named_children:
        recorded += _c_item(node, node, prefix, out)
    return recorded


def _c_item(node: Node, outer: Node, prefix: str, out: _Defs) -> list[Node]:
    """Record one top-level or member item; `outer` is the span to digest (a template wraps its item)."""
    t = node.type
    if t == "template_declaration":
        for child in node.named_children:
            if child.type != "template_parameter_list" and _c_item(child, outer, prefix, out):
                return [outer]
        return []
    if t == "function_definition":
        name = _function_name(node.child_by_field_name("declarator"))
        if name:
            out.add(prefix + name, outer)
            return [outer]
        return []
    if t in ("declaration", "field_declaration", "friend_declaration"):
        recorded: list[Node] = []
        spec = node.child_by_field_name("type")
        if spec is not None and spec.type in _CLASS_TYPES | {"enum_specifier"}:
            recorded += [outer] if _c_type(spec, outer, prefix, out) else []
        for decl in node.children_by_field_name("declarator"):
            name = _function_name(decl)
            if name:
                out.add(prefix + name, outer)
                recorded = [outer]
        return recorded
    if t in _CLASS_TYPES or t == "enum_specifier":
        return [outer] if _c_type(node, outer, prefix, out) else []
    if t == "type_definition":
        spec = node.child_by_field_name("type")
        names = ["".join(_text(d).split()) for d in node.children_by_field_name("declarator")]
        if spec is not None and spec.type in _CLASS_TYPES | {"enum_specifier"}:
            # typedef struct { ... } Foo;  names the anonymous struct Foo.
            _c_type(spec, spec, prefix, out, fallback=names[0] if names else "")
        for name in names:
            if name.isidentifier():
                out.add(prefix + name, outer)
        return [outer]
    if t == "alias_declaration":
        out.add(prefix + _text(node.child_by_field_name("name")), outer)
        return [outer]
    if t == "namespace_definition":
        name = "".join(_text(node.child_by_field_name("name")).split())
        body = node.child_by_field_name("body")
        if body is not None:
            _c_walk(body, prefix + name + "::" if name else prefix, out)
        return [outer]
    if t == "linkage_specification":
        body = node.child_by_field_name("body")
        if body is not None:
            if body.type == "declaration_list":
                _c_walk(body, prefix, out)
            else:
                _c_item(body, body, prefix, out)
        return [outer]
    if t in _PREPROC_CONTAINERS:
        # Items under #if/#ifdef are still this scope's definitions; the guard itself is not one.
        recorded = []
        for child in node.named_children:
            recorded += _c_item(child, child, prefix, out)
        return recorded
    if t in ("preproc_def", "preproc_function_def"):
        out.add(_text(node.child_by_field_name("name")), outer)  # macros have no scope
        return [outer]
    return []


def _c_type(spec: Node, outer: Node, prefix: str, out: _Defs, fallback: str = "") -> bool:
    """Record a class/struct/union/enum that has a body; True when something was recorded."""
    body = spec.child_by_field_name("body")
    if body is None:
        return False  # a forward declaration or a use, not a definition
    name = "".join(_text(spec.child_by_field_name("name")).split()) or fallback
    qual = prefix + name if name else ""
    if spec.type == "enum_specifier":
        member_prefix = qual + "::" if qual else prefix
        for member in body.named_children:
            if member.type == "enumerator":
                out.add(member_prefix + _text(member.child_by_field_name("name")), member)
        if qual:
            out.add(qual, outer, [m for m in body.named_children if m.type == "comment"])
        return True
    members = _c_walk(body, qual + "::" if qual else prefix, out)
    if qual:
        out.add(qual, outer, members)
    return True


# ---------------------------------------------------------------- public functions


def parse(data: bytes, lang: str):
    return parser(lang).parse(data)


def definitions(data: bytes, lang: str, tree=None) -> dict[str, str]:
    """Qualified name -> digest of every definition in one file's bytes."""
    tree = tree or parse(data, lang)
    root = tree.root_node
    out = _Defs(data, comment_spans(root, data, lang))
    if lang == "python":
        _py_walk(root, "", out)
    else:
        _c_walk(root, "", out)
    return out.digests()


def definition_lines(data: bytes, lang: str) -> dict[str, int]:
    """Qualified name -> the 1-based line of its first definition (a decorated one at its `def`/`class`)."""
    root = parse(data, lang).root_node
    out = _Defs(data, [])
    if lang == "python":
        _py_walk(root, "", out)
    else:
        _c_walk(root, "", out)
    lines = {}
    for name, spans in out.found.items():
        node = spans[0][0]
        if node.type == "decorated_definition":
            node = node.child_by_field_name("definition") or node
        lines[name] = node.start_point[0] + 1
    return lines


_COMMENT_START = {"python": re.compile(rb"#")}
_C_COMMENT_START = re.compile(rb"/[/*]")


def comment_spans(root: Node, data: bytes, lang: str) -> list[tuple[int, int]]:
    """(start, end) bytes of every comment node, in order: what a `(comment)` query captures.

    Every comment token starts with `#` (Python) or `//`, `/*` (C, C++, CUDA), so only those
    places are asked about: a lookup of the token there, instead of a query visiting every node.
    """
    pattern = _COMMENT_START.get(lang, _C_COMMENT_START)
    spans: list[tuple[int, int]] = []
    find = pattern.search
    pos, size = 0, len(data)
    while pos < size:
        m = find(data, pos)
        if m is None:
            break
        at = m.start()
        node = root.descendant_for_byte_range(at, at + 1)
        if node is not None and node.type == "comment" and node.end_byte > at:
            if node.start_byte == at:
                spans.append((at, node.end_byte))
            pos = node.end_byte
        else:
            pos = at + 1
    return spans


@lru_cache(maxsize=8)  # the diff and the incremental reparse of one change split the same blobs
def _rows(data: bytes) -> list[bytes]:
    """Lines with their "\\n" (tree-sitter's rows); a last line without one differs from one with."""
    if b"\r" in data:  # splitlines would also split at a lone "\r"
        return _ROW.findall(data)
    return data.splitlines(True)


def line_edits(old: bytes, new: bytes) -> list[tuple[int, int, int, int]]:
    """The differing line blocks `(i1, i2, j1, j2)`: old rows i1:i2 became new rows j1:j2, in order."""
    edits: list[tuple[int, int, int, int]] = []
    _patience(_rows(old), _rows(new), 0, 0, edits)
    return edits


def _patience(a: list[bytes], b: list[bytes], a0: int, b0: int, out: list) -> None:
    """Patience diff: anchor on lines that occur once on each side, recurse between the anchors.

    Hash lookups and C-speed comparisons only; difflib's pure-Python matcher serves just the
    small gaps that hold no unique line.
    """
    n = min(len(a), len(b))
    head = _common_run(a, b, 0, 1, n) if n and a[0] == b[0] else 0
    tail = _common_run(a, b, -1, -1, n - head) if n > head and a[-1] == b[-1] else 0
    a, b, a0, b0 = a[head : len(a) - tail], b[head : len(b) - tail], a0 + head, b0 + head
    if not a or not b:
        if a or b:
            out.append((a0, a0 + len(a), b0, b0 + len(b)))
        return
    count_a, count_b = Counter(a), Counter(b)
    where_b = {line: j for j, line in enumerate(b) if count_b[line] == 1}
    pairs = [(i, where_b[line]) for i, line in enumerate(a) if count_a[line] == 1 and line in where_b]
    anchors = _increasing(pairs)
    if not anchors:
        if len(a) * len(b) <= 40_000:
            ops = difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
            out.extend((a0 + i1, a0 + i2, b0 + j1, b0 + j2) for tag, i1, i2, j1, j2 in ops if tag != "equal")
        else:
            out.append((a0, a0 + len(a), b0, b0 + len(b)))  # a rewrite: one block is exact enough
        return
    i_prev = j_prev = 0
    for i, j in anchors:
        if i > i_prev or j > j_prev:  # most anchors follow each other: nothing between them
            _patience(a[i_prev:i], b[j_prev:j], a0 + i_prev, b0 + j_prev, out)
        i_prev, j_prev = i + 1, j + 1
    _patience(a[i_prev:], b[j_prev:], a0 + i_prev, b0 + j_prev, out)


def _common_run(a: list[bytes], b: list[bytes], start: int, step: int, limit: int) -> int:
    """How many lines from `start` on (step 1: forwards; -1: backwards) are equal, at most `limit`.

    Galloping over list slices, so that long equal runs are compared in C, not line by line.
    """
    if limit <= 0 or a[start] != b[start]:
        return 0

    def same(lo: int, n: int) -> bool:  # the n lines after the first lo are equal
        if step == 1:
            return a[lo : lo + n] == b[lo : lo + n]
        return a[len(a) - lo - n : len(a) - lo] == b[len(b) - lo - n : len(b) - lo]

    done, n = 1, 1
    while done + n <= limit and same(done, n):
        done += n
        n *= 2
    while n > 1:
        n //= 2
        if done + n <= limit and same(done, n):
            done += n
    return done


def _increasing(pairs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The longest run of `pairs` (sorted by i) whose j also increases (patience sorting)."""
    js = [j for _, j in pairs]
    if js == sorted(js):  # the usual case, no line moved: every pair is on the one run
        return pairs
    tops: list[int] = []  # j at the top of each pile
    top_at: list[int] = []  # index into pairs of each pile's top
    back = [-1] * len(pairs)
    for k, (_, j) in enumerate(pairs):
        pile = bisect.bisect_left(tops, j)
        back[k] = top_at[pile - 1] if pile else -1
        if pile == len(tops):
            tops.append(j)
            top_at.append(k)
        else:
            tops[pile], top_at[pile] = j, k
    run, k = [], top_at[-1] if top_at else -1
    while k != -1:
        run.append(pairs[k])
        k = back[k]
    return run[::-1]


def added_lines(old: bytes, new: bytes, edits=None) -> set[int]:
    """0-based rows of `new` that are not matched in `old`."""
    edits = line_edits(old, new) if edits is None else edits
    return {j for _, _, j1, j2 in edits for j in range(j1, j2)}


def reparse(tree, src: bytes, dst: bytes, edits: list[tuple[int, int, int, int]], lang: str):
    """Parse `dst` reusing `tree` (the parse of `src`), given the line edits from src to dst.

    tree-sitter then reparses only what the edits touch: about ten times faster than a full parse.
    Each edit is narrowed to the bytes that differ inside its lines: an edit that spans a whole
    `def` line, its newline included, would make tree-sitter rebuild the whole function body
    (the block's indentation token follows that newline), one within the name does not.
    """
    tree = tree.copy()
    s_at, d_at = _offsets(src), _offsets(dst)
    # Back to front, so that the rows and bytes of the edits still to apply have not moved.
    for i1, i2, j1, j2 in reversed(edits):
        start = s_at[i1]
        old, new = src[start : s_at[i2]], dst[d_at[j1] : d_at[j2]]
        same = min(len(old), len(new))
        head = _common_bytes(old, new, same, True)
        tail = _common_bytes(old, new, same - head, False)
        if head + tail == len(old) == len(new):
            continue  # nothing differs (not produced by line_edits, but harmless)
        base = _point(src, s_at, i1)  # rows before the edit are the same on both sides
        tree.edit(
            start_byte=start + head,
            old_end_byte=start + len(old) - tail,
            new_end_byte=start + len(new) - tail,
            start_point=_advance(base, old, head),
            old_end_point=_advance(base, old, len(old) - tail),
            new_end_point=_advance(base, new, len(new) - tail),
        )
    return parser(lang).parse(dst, tree)


def _common_bytes(a: bytes, b: bytes, limit: int, front: bool) -> int:
    """Length of the common prefix (front) or suffix of `a` and `b`, at most `limit`."""
    lo, hi = 0, max(limit, 0)
    while lo < hi:  # binary search on slice equality: memcmp in C, no loop per byte
        mid = (lo + hi + 1) // 2
        if (a[:mid] == b[:mid]) if front else (a[len(a) - mid :] == b[len(b) - mid :]):
            lo = mid
        else:
            hi = mid - 1
    return lo


def _advance(base: tuple[int, int], chunk: bytes, n: int) -> tuple[int, int]:
    """tree-sitter's (row, column) after the first `n` bytes of `chunk`, which starts at `base`."""
    newlines = chunk.count(b"\n", 0, n)
    if not newlines:
        return (base[0], base[1] + n)
    return (base[0] + newlines, n - chunk.rfind(b"\n", 0, n) - 1)


@lru_cache(maxsize=8)
def _offsets(data: bytes) -> list[int]:
    """Byte offset where each row starts, then the length of the data."""
    return [0, *itertools.accumulate(map(len, _rows(data)))]


def _point(data: bytes, offsets: list[int], row: int) -> tuple[int, int]:
    """tree-sitter's (row, column) of the start of `row`, or of the end of the data."""
    if row < len(offsets) - 1 or not data or data.endswith(b"\n"):
        return (row, 0)
    return (row - 1, offsets[-1] - offsets[-2])


def identifiers_on(tree, lang: str, rows: set[int]) -> set[str]:
    """Identifiers on the given 0-based rows, minus keywords and builtins."""
    ignored = _PY_IGNORED if lang == "python" else _C_IGNORED
    cursor = QueryCursor(_query(lang, _ident_query(lang)))
    names: set[str] = set()
    for first, last in _runs(rows):
        # Ask tree-sitter only about each run of added rows rather than the whole file.
        cursor.set_point_range((first, 0), (last + 1, 0))
        for nodes in cursor.captures(tree.root_node).values():
            names.update(_text(n) for n in nodes if n.start_point[0] in rows)
    return {n for n in names if n and n not in ignored}


def _runs(rows: set[int]) -> list[tuple[int, int]]:
    """Sorted rows as (first, last) runs of consecutive numbers."""
    runs: list[list[int]] = []
    for r in sorted(rows):
        if runs and r == runs[-1][1] + 1:
            runs[-1][1] = r
        else:
            runs.append([r, r])
    return [(a, b) for a, b in runs]


def diff_definitions(old: dict[str, str], new: dict[str, str]) -> tuple[list[str], list[str], list[str]]:
    added = sorted(n for n in new if n not in old)
    removed = sorted(n for n in old if n not in new)
    changed = sorted(n for n in new if n in old and old[n] != new[n])
    return added, changed, removed


def defined_words(names) -> set[str]:
    """The bare names that qualified names define: `A.b` and `ns::A::b` define `b`, not `A`.

    The enclosing class or namespace stays a use: adding a method to `A` still needs `A`.
    """
    return {n.replace("::", ".").rsplit(".", 1)[-1] for n in names}


def is_binary(data: bytes) -> bool:
    return b"\x00" in data[:8000]


class Extractor:
    """Diffs file changes into symbols, caching parse results by blob id.

    `read(sha)` returns a blob's bytes (the walk passes a cat-file reader that refuses missing
    objects). Within a run each blob is parsed once (a file's after-blob is the next older
    commit's before-blob); across runs results live in one SQLite file under the cache root:
    definitions per blob, and the diff per (before, after) blob pair. `parsed` counts blobs given
    to tree-sitter in this run, `cached` the file changes answered from the cache.

    `extract` takes a whole walk's changes at once: knowing every later use of a blob, it keeps
    each parse tree exactly as long as a later change still needs it, and with `jobs` > 1 it
    splits the work, by chains of changes sharing blobs, over forked processes.
    """

    def __init__(
        self,
        read: Callable[[str], bytes],
        cache_dir: str | os.PathLike | None = None,
        read_many: Callable[[list[str]], dict[str, bytes]] | None = None,
        *,
        _db_path: Path | None = None,
    ):
        self.read = read
        self.read_many = read_many
        self._fetched: dict[str, bytes] = {}
        self.path = _db_path or cache_mod.db_path(cache_dir)
        self.db: sqlite3.Connection | None = cache_mod.open_db(self.path, autocommit=False)
        self.parsed = 0
        self.cached = 0
        self.skipped = 0  # binary (or too deeply nested) blobs of source files: recorded as touched, no symbols
        # sha -> (tree, definitions, bytes) of blobs parsed in this run and still wanted.
        self._recent: OrderedDict[str, tuple[object, dict[str, str], bytes]] = OrderedDict()
        self._uses: Counter[str] | None = None  # set by `extract`: the uses of each blob still to come
        self._kept_bytes = 0
        self._puts: list[tuple[str, str, object]] | None = None  # a worker hands its results back instead

    def extract(
        self,
        changes: list[tuple[str, str | None, str | None]],
        *,
        jobs: int = 1,
        open_reader: Callable[[], _Reader] | None = None,
        sizes: Callable[[list[str]], dict[str, int]] | None = None,
        progress: Callable[[int, int], None] | None = None,
    ) -> dict[str, FileDiff]:
        """The FileDiff of every change (walk order: newest first), keyed by `pair_key`.

        Same answers as `file_change` on each change in turn. Changes already in the cache are
        read from it; the rest are computed here, or with `jobs` > 1 and `open_reader` (a
        callable giving a fresh blob reader with `one`, `many` and `close`) in forked processes.
        """
        out: dict[str, FileDiff] = {}
        todo: list[tuple[str, str | None, str | None]] = []
        seen: set[str] = set()
        for change in changes:
            key = pair_key(*change)
            if key in seen:
                self.cached += 1  # a pair met again: answered from what this run just stored
                continue
            seen.add(key)
            hit = self._get("pair", key)
            if hit is not None:
                self.cached += 1
                out[key] = FileDiff(**hit)
            else:
                todo.append(change)
        if not todo:
            return out
        buckets = (
            _buckets(todo, jobs, sizes) if jobs > 1 and open_reader is not None and len(todo) >= _POOL_MIN else None
        )
        if buckets is not None and len(buckets) > 1:
            done = self._extract_forked(todo, buckets, jobs, open_reader, progress)
            if done is not None:
                out.update(done)
                return out
        total = len(todo)
        for n, diff in enumerate(self._run(todo), 1):
            out[pair_key(*todo[n - 1])] = diff
            if progress and (n % 64 == 0 or n == total):
                progress(n, total)
        return out

    def _run(self, todo: list[tuple[str, str | None, str | None]]):
        """Yield the FileDiff of each change of `todo`, keeping trees only while still needed."""
        self._uses = Counter(sha for _, old, new in todo for sha in (old, new) if sha)
        try:
            for start in range(0, len(todo), _BATCH):
                batch = todo[start : start + _BATCH]
                if self.read_many is not None:
                    need = {sha for _, old, new in batch for sha in (old, new) if sha and sha not in self._recent}
                    self._fetched = self.read_many(sorted(need)) if need else {}
                for change in batch:
                    yield self.file_change(*change)
                self._fetched = {}
        finally:
            self._uses = None
            self._fetched = {}

    def _extract_forked(self, todo, buckets, jobs, open_reader, progress) -> dict[str, FileDiff] | None:
        """Run the buckets in `jobs` forked processes; None when processes cannot be had.

        Only from a process with no other thread (a thread holding a lock at the fork would
        leave the child stuck on it) and not from a daemonic process (which may have none).
        """
        global _FORKED
        import multiprocessing
        import threading
        from concurrent.futures import ProcessPoolExecutor, as_completed
        from concurrent.futures.process import BrokenProcessPool

        if threading.active_count() > 1 or multiprocessing.current_process().daemon:
            return None
        try:
            ctx = multiprocessing.get_context("fork")
        except ValueError:  # no fork on this platform
            return None
        self._commit()  # the workers read the cache file: let them see what is in it
        _FORKED = (todo, open_reader, self.path)
        out: dict[str, FileDiff] = {}
        total, finished = len(todo), 0
        pool = None
        try:
            pool = ProcessPoolExecutor(max_workers=min(jobs, len(buckets)), mp_context=ctx)
            futures = {pool.submit(_work, bucket): len(bucket) for bucket in buckets}
            for future in as_completed(futures):
                pairs, blobs, parsed, skipped = future.result()
                self.parsed += parsed
                self.skipped += skipped
                for key, value in blobs:
                    self._put("blob", key, value)
                for key, value in pairs:
                    self._put("pair", key, value)
                    out[key] = FileDiff(**value)
                finished += futures[future]
                if progress:
                    progress(finished, total)
        except (BrokenProcessPool, OSError):
            return None  # e.g. no process could be started: the caller does the work itself
        finally:
            _FORKED = None
            if pool is not None:
                pool.shutdown(wait=True, cancel_futures=True)
        return out

    def file_change(self, lang: str, old: str | None, new: str | None) -> FileDiff:
        """Symbols of one change from blob `old` to blob `new` (None: file absent on that side)."""
        key = pair_key(lang, old, new)
        hit = self._get("pair", key)
        if hit is not None:
            self.cached += 1
            self._release(old, new)
            return FileDiff(**hit)
        old_data = self._blob(old) if old else b""
        new_data = self._blob(new) if new else b""
        if is_binary(old_data) or is_binary(new_data):
            self.skipped += 1
            result = FileDiff()
        else:
            try:
                edits = line_edits(old_data, new_data)
                new_defs, uses = {}, set()
                if new:
                    tree, new_defs = self._tree(lang, new, new_data, old, old_data, edits)
                    uses = identifiers_on(tree, lang, added_lines(old_data, new_data, edits))
                old_defs = {}
                if old:
                    back = [(j1, j2, i1, i2) for i1, i2, j1, j2 in edits]
                    old_defs = self._tree(lang, old, old_data, new, new_data, back, need_tree=self._wanted(old))[1]
                    if self._uses is None and new:
                        # Walking newest first, `old` is the next older commit's after-blob: keep its tree,
                        # while `new` is done with on a first-parent line; that keeps the chains in memory.
                        self._drop(new)
                added, changed, removed = diff_definitions(old_defs, new_defs)
                uses -= defined_words(added + changed)
                result = FileDiff(added, changed, removed, sorted(uses))
            except RecursionError:  # scopes nested hundreds deep: recorded as touched, no symbols
                self._drop(old or "")
                self._drop(new or "")
                self.skipped += 1
                result = FileDiff()
        self._put("pair", key, result.__dict__)
        self._release(old, new)
        return result

    def definition_lines(self, lang: str, sha: str) -> dict[str, int]:
        """`definition_lines` of blob `sha`, from the cache when this blob was read before."""
        key = f"{lang}:{sha}"
        hit = self._get("lines", key)
        if hit is not None:
            self.cached += 1
            return hit
        data = self._blob(sha)
        try:
            lines = {} if is_binary(data) else definition_lines(data, lang)
        except RecursionError:  # scopes nested hundreds deep: no definitions, as in a walk
            lines = {}
        self.parsed += 1
        self._put("lines", key, lines)
        return lines

    def _wanted(self, sha: str) -> bool:
        """Whether a later change of this run will read blob `sha` again (unknown: no)."""
        return self._uses is not None and self._uses[sha] > 1

    def _release(self, old: str | None, new: str | None) -> None:
        """After a change: forget the trees no later change needs (known only within `extract`)."""
        if self._uses is None:
            return
        for sha in (old, new):
            if sha:
                self._uses[sha] -= 1
                if self._uses[sha] <= 0:
                    self._drop(sha)

    def _drop(self, sha: str) -> None:
        entry = self._recent.pop(sha, None)
        if entry is not None:
            self._kept_bytes -= len(entry[2])

    def _blob(self, sha: str) -> bytes:
        entry = self._recent.get(sha)
        if entry is not None:
            return entry[2]
        data = self._fetched.get(sha)
        return data if data is not None else self.read(sha)

    def _commit(self) -> None:
        if self.db is not None:
            with contextlib.suppress(sqlite3.Error):
                self.db.commit()

    def close(self) -> None:
        if self.db is not None:
            try:
                self.db.commit()
                self.db.close()
            except sqlite3.Error:
                pass  # a cache that cannot be written only costs a reparse next time
            self.db = None

    def _tree(self, lang, sha, data, other, other_data, edits, need_tree=True):
        """(tree or None, definitions) of blob `sha`, parsed at most once per run.

        When the other side of the change was parsed recently, its tree is edited into this one
        (incremental parsing): a file's before-blob is the after-blob of the next older commit.
        """
        if sha in self._recent:
            self._recent.move_to_end(sha)
            return self._recent[sha][:2]
        if not need_tree:
            hit = self._get("blob", f"{lang}:{sha}")
            if hit is not None:
                return None, hit
        if other in self._recent:
            tree = reparse(self._recent[other][0], other_data, data, edits, lang)  # edits: other -> this
        else:
            tree = parse(data, lang)
        self.parsed += 1
        defs = definitions(data, lang, tree)
        self._put("blob", f"{lang}:{sha}", defs)
        self._recent[sha] = (tree, defs, data)
        self._kept_bytes += len(data)
        if self._uses is None:
            if len(self._recent) > 128:
                self._drop(next(iter(self._recent)))
        else:
            # Trees take ~15 bytes per source byte: past the budget the least recently used go.
            while self._kept_bytes > _KEEP_BYTES and len(self._recent) > 2:
                self._drop(next(iter(self._recent)))
        return tree, defs

    def _get(self, table: str, key: str):
        if self.db is None:
            return None
        try:
            row = self.db.execute(f"SELECT value FROM sym_{table} WHERE key = ?", (key,)).fetchone()
            return json.loads(row[0]) if row else None
        except (sqlite3.Error, ValueError):
            return None

    def _put(self, table: str, key: str, value) -> None:
        if self._puts is not None:
            self._puts.append((table, key, value))
            return
        if self.db is None:
            return
        with contextlib.suppress(sqlite3.Error):
            self.db.execute(
                f"INSERT OR REPLACE INTO sym_{table} (key, value) VALUES (?, ?)",
                (key, json.dumps(value, separators=(",", ":"))),
            )

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class _Reader(Protocol):
    """What `Extractor.extract` wants from `open_reader()` (the walk's cat-file reader)."""

    def one(self, sha: str) -> bytes: ...

    def many(self, shas: list[str]) -> dict[str, bytes]: ...

    def close(self) -> None: ...


_BATCH = 64  # changes whose blobs are asked for in one cat-file round trip
_KEEP_BYTES = 24 << 20  # source bytes whose parse trees one process keeps (~15x that in memory)
_POOL_MIN = 48  # fewer changes to compute than this: not worth starting processes
_FORKED: tuple | None = None  # (changes, open_reader, cache path), inherited by forked workers


def _buckets(todo, jobs: int, sizes) -> list[list[int]] | None:
    """Indices of `todo` split into balanced groups; changes that share a blob stay together.

    A blob shared by two changes is one file's state between them: keeping the chain in one
    process lets that process parse the blob once and reparse the next incrementally.
    """
    parent = list(range(len(todo)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    owner: dict[str, int] = {}
    for i, (_, old, new) in enumerate(todo):
        for sha in (old, new):
            if sha:
                j = owner.setdefault(sha, i)
                a, b = find(i), find(j)
                if a != b:
                    parent[b] = a
    groups: dict[int, list[int]] = {}
    for i in range(len(todo)):
        groups.setdefault(find(i), []).append(i)
    size = sizes(sorted(owner)) if sizes is not None else {}

    def cost(members: list[int]) -> float:
        # One full parse of the newest blob, then incremental reparses and diffs (~1/3 each).
        blobs = [size.get(s, 4096) for i in members for s in todo[i][1:] if s]
        return max(blobs, default=0) + sum(blobs) / 3

    ordered = sorted(groups.values(), key=cost, reverse=True)
    n = min(len(ordered), jobs * 4)  # several per process, so a slow one does not hold the rest up
    if n < 2:
        return None
    bins: list[list[int]] = [[] for _ in range(n)]
    load = [0.0] * n
    for members in ordered:  # largest first into the lightest bin
        k = load.index(min(load))
        bins[k] += members
        load[k] += cost(members)
    order = sorted(range(n), key=lambda k: -load[k])
    return [sorted(bins[k]) for k in order if bins[k]]


def _work(bucket: list[int]):
    """In a forked worker: compute one bucket of changes, return the results to store."""
    assert _FORKED is not None, "set by the parent before it forks"
    todo, open_reader, path = _FORKED
    reader = open_reader()
    try:
        ex = Extractor(reader.one, None, reader.many, _db_path=path)
        ex._puts = []
        try:
            changes = [todo[i] for i in bucket]
            for _ in ex._run(changes):
                pass
        finally:
            if ex.db is not None:
                ex.db.close()
                ex.db = None
        pairs = [(k, v) for t, k, v in ex._puts if t == "pair"]
        blobs = [(k, v) for t, k, v in ex._puts if t == "blob"]
        return pairs, blobs, ex.parsed, ex.skipped
    finally:
        reader.close()


def pair_key(lang: str, old: str | None, new: str | None) -> str:
    return f"{lang}:{old or '-'}:{new or '-'}"
