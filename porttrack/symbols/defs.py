"""Definitions a source file holds, and the identifiers on given lines of it.

Names are qualified the way people cite them: `Class.method`, `Outer.Inner.field` in Python;
`ns::Class::method`, `Enum::Member`, `MACRO` in C, C++ and CUDA (as written, with `::`).
A definition's digest covers its text without comments and without the members that are
definitions of their own, so editing one method marks that method changed, not its class.
"""

from __future__ import annotations

import bisect
import builtins
import hashlib
import keyword
import re
from functools import cache

from tree_sitter import Node, Query, QueryCursor

from porttrack.parse import language, parser


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


_PREPROC_CONTAINERS = {"preproc_if", "preproc_ifdef", "preproc_else", "preproc_elif", "preproc_elifdef"}


_CLASS_TYPES = {"class_specifier", "struct_specifier", "union_specifier"}


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


_TEMPLATE_ARGS = re.compile(r"<[^<>]*>")
_QUALIFIED = re.compile(r"[^\W\d]\w*(?:(?:\.|::)[^\W\d]\w*)*")  # identifiers joined by `.` or `::`


def probe_name(name: str) -> str:
    """A C++ name as a probe can look for it: template arguments dropped (`Impl<ISA::AMX, T>::run`
    is `Impl::run`); "" for what no identifier spells (`operator()`, `~Impl`, a specialisation
    left unbalanced), which stays part of its class's text rather than a definition of its own."""
    while "<" in name:
        shorter = _TEMPLATE_ARGS.sub("", name)
        if shorter == name:
            return ""
        name = shorter
    return name if _QUALIFIED.fullmatch(name) else ""


class _Defs:
    """Collects name -> (node, excised member nodes) while walking a tree, then digests them."""

    def __init__(self, src: bytes, comments: list[tuple[int, int]]):
        self.src = src
        self.comments = sorted(comments)
        self._comment_starts = [c[0] for c in self.comments]
        self.found: dict[str, list[tuple[Node, list[Node]]]] = {}

    def add(self, name: str, node: Node, members: list[Node] | None = None) -> bool:
        """Record one definition; False for a name no probe can look for, which stays in its
        enclosing definition's text."""
        name = probe_name(name)
        if name:
            self.found.setdefault(name, []).append((node, members or []))
        return bool(name)

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
        return [outer] if name and out.add(prefix + name, outer) else []
    if t in ("declaration", "field_declaration", "friend_declaration"):
        recorded: list[Node] = []
        spec = node.child_by_field_name("type")
        if spec is not None and spec.type in _CLASS_TYPES | {"enum_specifier"}:
            recorded += [outer] if _c_type(spec, outer, prefix, out) else []
        for decl in node.children_by_field_name("declarator"):
            name = _function_name(decl)
            if name and out.add(prefix + name, outer):
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
