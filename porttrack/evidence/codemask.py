"""One file's identifier index: where each identifier occurs, and whether that spot is code.

tree-sitter decides what is not code (comments, string and raw-string literals, `#if 0`
blocks), which tokens are the name being declared, and which are calls made inside a
function of the same name (delegations). The probe caches the result by blob id, so this
runs once per file version.
"""

from __future__ import annotations

import re
from array import array
from bisect import bisect_right
from dataclasses import dataclass, field
from functools import cache

from tree_sitter import Node, Query, QueryCursor, QueryError

from porttrack.parse import language, language_for, parser

# whole identifiers only: none starts inside a word or number (`0xabc`, `1e9f`) or right after `#` (`#include`);
# bytes of a UTF-8 sequence (0x80-0xff) count as letters, so `größe` is one identifier at its byte offset
IDENT = re.compile(rb"(?<![0-9A-Za-z_#\x80-\xff])[A-Za-z_\x80-\xff][A-Za-z0-9_\x80-\xff]*")
_IDENT_STR = re.compile(IDENT.pattern.decode())

# flags of one occurrence: the low three bits say why it is not code (0: it is code)
CODE, COMMENT, STRING, IF0, NO_GRAMMAR = 0, 1, 2, 3, 4
WHY = {COMMENT: "comment", STRING: "string", IF0: "#if 0", NO_GRAMMAR: "no grammar"}
NONCODE_MASK = 7
DECL = 8  # the name a declaration introduces
DELEGATION = 16  # a call inside the body of a function with the same name

# Patterns that do not exist in a grammar are dropped when the query is built.
_NONCODE = {
    "comment": ["(comment) @comment"],
    "string": [
        "(string_literal) @string",
        "(raw_string_literal) @string",
        "(char_literal) @string",
        "(system_lib_string) @string",
        "(string) @string",  # python
    ],
    "if0": [
        "(_ condition: (number_literal) @cond) @if0",
        "(_ condition: (false) @cond) @if0",
    ],
}
# C-family sources without a grammar of their own: comments and strings lex the same, which is
# all the mask needs (Objective-C++, Metal and GLSL shaders, included fragments)
_EXTRA_SUFFIX = {
    ".mm": "cpp",
    ".m": "c",
    ".metal": "cpp",
    ".inc": "cpp",
    ".comp": "c",
    ".glsl": "c",
    ".vert": "c",
    ".frag": "c",
}


def lang_for(path: str) -> str | None:
    """The grammar that masks a file: porttrack.parse's choice, then close C-family relatives."""
    dot = path.rfind(".")
    return _lang_for_suffix(path[dot:].lower() if dot > path.rfind("/") else "")


@cache
def _lang_for_suffix(suffix: str) -> str | None:
    return language_for("x" + suffix) or _EXTRA_SUFFIX.get(suffix)


# @def marks the names a good automatic control is made of (functions, classes); @decl any declared name
_DECL = [
    "(function_declarator declarator: (_) @def)",
    "(_ declarator: (identifier) @decl)",
    "(_ declarator: (field_identifier) @decl)",
    "(_ declarator: (type_identifier) @decl)",
    "(_ declarator: (qualified_identifier) @decl)",
    "(_ declarator: (destructor_name) @decl)",
    "(reference_declarator (identifier) @decl)",
    "(reference_declarator (field_identifier) @decl)",
    "(enumerator name: (_) @decl)",
    "(alias_declaration name: (_) @decl)",
    "(preproc_def name: (_) @decl)",
    "(preproc_function_def name: (_) @decl)",
    "(namespace_definition name: (_) @decl)",
    "(class_specifier name: (_) @def) @spec",
    "(struct_specifier name: (_) @def) @spec",
    "(union_specifier name: (_) @def) @spec",
    "(enum_specifier name: (_) @def) @spec",
    # python
    "(function_definition name: (identifier) @def)",
    "(class_definition name: (identifier) @def)",
    "(assignment left: (identifier) @decl)",
    "(parameters (identifier) @decl)",
    "(typed_parameter (identifier) @decl)",
    "(default_parameter name: (identifier) @decl)",
    "(typed_default_parameter name: (identifier) @decl)",
]
_CALLS = ["(call_expression function: (_) @callee)", "(call function: (_) @callee)"]
_FUNCS = [
    "(function_definition declarator: (_) @fdecl body: (_) @body)",  # C, C++, CUDA
    "(function_definition name: (_) @fdecl body: (_) @body)",  # python
]
# where a bare `struct Foo;` is a forward declaration rather than a use
_DECL_PARENTS = {
    "translation_unit",
    "declaration_list",
    "field_declaration_list",
    "template_declaration",
    "declaration",
}


@cache
def _query(lang: str, patterns: tuple[str, ...]) -> Query | None:
    lang_obj = language(lang)
    ok = []
    for p in patterns:
        try:
            Query(lang_obj, p)
            ok.append(p)
        except QueryError:  # the node type does not exist in this grammar
            pass
    return Query(lang_obj, "\n".join(ok)) if ok else None


def _captures(lang: str, patterns, root: Node) -> dict[str, list[Node]]:
    q = _query(lang, tuple(patterns))
    return QueryCursor(q).captures(root) if q else {}


def _matches(lang: str, patterns, root: Node):
    q = _query(lang, tuple(patterns))
    return QueryCursor(q).matches(root) if q else []


@dataclass
class FileIndex:
    lang: str | None
    occurrences: dict[str, array]  # identifier -> flat array [line, col, flags, byte offset, line, ...]
    noncode: list[tuple[int, int, int]] = field(default_factory=list)  # merged (start, end, why) byte ranges
    decl_starts: list[int] = field(default_factory=list)  # byte offsets of declared names, sorted
    first_def: tuple[str, int] | None = None  # (name, line) of the first code declaration: a control candidate

    def flags_at(self, offset: int) -> int:
        """Flags for a regex match starting at `offset` (no delegation check for regexes)."""
        flags = _why_at(self.noncode, offset) if self.lang else NO_GRAMMAR
        i = bisect_right(self.decl_starts, offset) - 1
        if i >= 0 and self.decl_starts[i] == offset:
            flags |= DECL
        return flags


def _why_at(ranges: list[tuple[int, int, int]], offset: int, starts: list[int] | None = None) -> int:
    i = bisect_right(starts if starts is not None else [r[0] for r in ranges], offset) - 1
    if i >= 0 and offset < ranges[i][1]:
        return ranges[i][2]
    return CODE


def _merge(ranges: list[tuple[int, int, int]]) -> list[tuple[int, int, int]]:
    """Sort and merge overlapping ranges; an enclosing range (an `#if 0` block) wins."""
    out: list[tuple[int, int, int]] = []
    for s, e, why in sorted(ranges, key=lambda r: (r[0], -r[1])):
        if out and s < out[-1][1]:
            ps, pe, pwhy = out[-1]
            if e > pe:
                out[-1] = (ps, e, pwhy)
            continue
        out.append((s, e, why))
    return out


def _callee_name(node: Node) -> Node:
    """The identifier a call names: `a.b->f`, `ns::f`, `f<T>` and `obj.f` all name `f`."""
    while True:
        nxt = (
            node.child_by_field_name("field")
            or node.child_by_field_name("name")
            or node.child_by_field_name("attribute")
        )
        if nxt is None or nxt == node:
            return node
        node = nxt


def _function_name(node: Node, src: bytes) -> bytes | None:
    """Unqualified name of a function definition's declarator (through pointers, references, scopes)."""
    for _ in range(16):
        if node.type in ("identifier", "field_identifier", "type_identifier"):
            return src[node.start_byte : node.end_byte]
        nxt = node.child_by_field_name("declarator") or node.child_by_field_name("name")
        if nxt is None and node.named_child_count:
            nxt = node.named_children[-1]
        if nxt is None:
            return None
        node = nxt
    return None


# The same rules as the queries above, read off one token's ancestors instead of matched over the
# whole tree: a scan that parses only files holding an asked name looks only at those names'
# tokens, and compiles no query (compiling them costs seconds for the C++ and CUDA grammars).
_COMMENT_TYPES = {"comment"}
_STRING_TYPES = {"string_literal", "raw_string_literal", "char_literal", "system_lib_string", "string"}
_DECLARATOR_LEAVES = {"identifier", "field_identifier", "type_identifier", "qualified_identifier", "destructor_name"}
_NAME_DECL_PARENTS = {"enumerator", "alias_declaration", "preproc_def", "preproc_function_def", "namespace_definition"}
_SPECS = {"class_specifier", "struct_specifier", "union_specifier", "enum_specifier"}
_CALL_TYPES = {"call_expression", "call"}
_WORD_BYTE = frozenset(
    b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_" + bytes(range(0x80, 0x100))
)  # as IDENT
_TOKEN_START = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_" + bytes(range(0x80, 0x100)))


class _Chains:
    """`at(s)`: (node, its field in the parent) from the root down to the smallest node holding
    byte `s`. Offsets in order make one walk forward: the cursor stays where the last offset left it
    and steps to later siblings, so each node's children are passed over once a file. A descent from
    the root for every offset scanned the root's children up to it each time, and a file of 100,000
    top-level lines cost the square of that. An offset before the last starts a new walk."""

    def __init__(self, root: Node):
        self.root = root
        self._reset()

    def _reset(self) -> None:
        self.cur = self.root.walk()
        self.path: list[tuple[Node, str | None]] = [(self.root, None)]  # the cursor's node last
        self.last = -1

    def at(self, s: int) -> list[tuple[Node, str | None]]:
        if s < self.last:
            self._reset()
        self.last = s
        cur, path = self.cur, self.path
        while len(path) > 1 and path[-1][0].end_byte <= s:  # ends before s: a later sibling, or up
            if cur.goto_next_sibling():
                path[-1] = (cur.node, cur.field_name)  # type: ignore[assignment]
            else:
                cur.goto_parent()
                path.pop()
        # the path's last node may start after s (s lies between children): it is no ancestor yet
        if len(path) == 1 or path[-1][0].start_byte <= s:
            while cur.goto_first_child_for_byte(s) is not None:
                node = cur.node
                assert node is not None  # a cursor stands on a node
                path.append((node, cur.field_name))
                if node.start_byte > s:
                    break
        return path[:-1] if len(path) > 1 and path[-1][0].start_byte > s else list(path)


def _noncode_at(chain: list[tuple[Node, str | None]], s: int, data: bytes) -> int:
    """Why byte `s` is not code (0: it is): the outermost comment, string or `#if 0` range holding
    it, as `_merge` keeps the enclosing range."""
    best: tuple[int, int, int] | None = None
    for node, _ in chain:
        if not node.is_named:
            continue
        t = node.type
        if t in _COMMENT_TYPES:
            r = (node.start_byte, node.end_byte, COMMENT)
        elif t in _STRING_TYPES:
            r = (node.start_byte, node.end_byte, STRING)
        elif t.startswith(("preproc_if", "preproc_elif")):
            cond = node.child_by_field_name("condition")
            if cond is None or not (
                cond.type == "false"
                or (cond.type == "number_literal" and data[cond.start_byte : cond.end_byte].strip() in (b"0", b"0L"))
            ):
                continue
            alt = node.child_by_field_name("alternative")
            r = (cond.end_byte, alt.start_byte if alt else node.end_byte, IF0)
        else:
            continue
        if r[0] <= s < r[1] and (best is None or (r[0], -r[1]) < (best[0], -best[1])):
            best = r
    return best[2] if best else CODE


def _spec_declares(spec: Node) -> bool:
    """`struct Foo* p` uses Foo; only `struct Foo;` or `struct Foo {}` declare it."""
    if spec.child_by_field_name("body") is not None:
        return True
    parent = spec.parent
    if parent is None or parent.type not in _DECL_PARENTS:
        return False
    return not (parent.type == "declaration" and parent.child_by_field_name("declarator") is not None)


def _declares(parent: Node, node: Node, field: str | None) -> int:
    """0, or DECL for a node the declaration rules capture, DECL | 32 for a defining one (@def)."""
    if not node.is_named:
        return 0
    pt, t = parent.type, node.type
    if field == "declarator":
        if pt == "function_declarator":
            return DECL | 32
        if t in _DECLARATOR_LEAVES:
            return DECL
    if pt == "reference_declarator" and t in ("identifier", "field_identifier"):
        return DECL
    if field == "name":
        if pt in _NAME_DECL_PARENTS:
            return DECL
        if pt in _SPECS:
            return DECL | 32 if _spec_declares(parent) else 0
        if pt in ("function_definition", "class_definition") and t == "identifier":
            return DECL | 32
        if pt in ("default_parameter", "typed_default_parameter") and t == "identifier":
            return DECL
    if t == "identifier" and ((pt == "assignment" and field == "left") or pt in ("parameters", "typed_parameter")):
        return DECL
    return 0


def _seg_token_start(data: bytes, node: Node, s: int) -> bool:
    """Whether `s` starts an identifier token of the node's own text (as IDENT finds them in it)."""
    if data[s] not in _TOKEN_START:
        return False
    return s == node.start_byte or (data[s - 1] not in _WORD_BYTE and data[s - 1] != 35)  # 35: '#'


def _flags(chain: list[tuple[Node, str | None]], data: bytes, s: int, word: str | None) -> int:
    """Flags of the token (or regex match, `word` None: no delegation) starting at `s`."""
    flags = _noncode_at(chain, s, data)
    for i in range(1, len(chain)):
        node, field = chain[i]
        if _declares(chain[i - 1][0], node, field) and (word is not None or _seg_token_start(data, node, s)):
            flags |= DECL
            break
    if word is not None and _delegates(chain, data, s, word):
        flags |= DELEGATION
    return flags


def _delegates(chain: list[tuple[Node, str | None]], data: bytes, s: int, word: str) -> bool:
    """A call naming `word` at `s`, inside the body of a function named `word`."""
    if not any(
        n.type in _CALL_TYPES
        and (f := n.child_by_field_name("function")) is not None
        and _callee_name(f).start_byte == s
        for n, _ in chain
    ):
        return False
    for n, _ in chain:
        if n.type != "function_definition":
            continue
        body = n.child_by_field_name("body")
        decl = n.child_by_field_name("declarator") or n.child_by_field_name("name")
        if body is None or decl is None or not body.start_byte <= s < body.end_byte:
            continue
        name = _function_name(decl, data)
        if name is not None and name.decode("utf-8", "replace") == word:
            return True
    return False


class Words:
    """Whole identifier tokens among a set of names, found fast: one RE2 pass (no backtracking,
    Latin-1 so every byte is one character as for IDENT) over the names themselves, each match
    kept where it is a whole token. That is every token IDENT would find among the names: a name
    is word bytes only, so a match that is not a whole token ends or starts inside a word, and no
    whole token can begin inside it (it would follow a word byte); and at a token's start the
    longest name that matches is tried first, which is the token itself where it is a name."""

    def __init__(self, names: list[str]):
        import re2

        self.names = frozenset(n.encode() for n in names)
        tokens = sorted((w for w in self.names if IDENT.fullmatch(w)), key=lambda w: (-len(w), w))
        opts = re2.Options()
        opts.encoding = re2.Options.Encoding.LATIN1
        opts.max_mem = 256 << 20  # thousands of names fit
        self.alt = re2.compile(b"|".join(re.escape(w) for w in tokens), options=opts) if tokens else None

    def find(self, data: bytes) -> dict[str, list[int]]:
        """Byte offsets of every token of `data` that is one of the names, by name."""
        if self.alt is None:
            return {}
        found: dict[bytes, list[int]] = {}
        end = len(data)
        for m in self.alt.finditer(data):
            i, e = m.span()
            if (i == 0 or (data[i - 1] not in _WORD_BYTE and data[i - 1] != 35)) and (
                e == end or data[e] not in _WORD_BYTE
            ):
                found.setdefault(data[i:e], []).append(i)
        return {w.decode("utf-8", "replace"): found[w] for w in sorted(found)}


def classify(data: bytes, lang: str | None, found: dict[str, list[int]]) -> dict[str, array]:
    """The flat [line, col, flags, offset, ...] arrays of the tokens `found` (word -> sorted
    offsets), equal to `index_file(data, lang).occurrences` for those words: one parse, then a
    look at each token's ancestors."""
    root = parser(lang).parse(data).root_node if lang else None
    chains = _Chains(root) if root is not None else None
    out = {word: array("i") for word in found}
    line, line_start, pos = 1, 0, 0
    # every word's tokens in file order, one walk; each word's own stay in order
    for s, word in sorted((s, word) for word, offsets in found.items() for s in offsets):
        nl = data.count(b"\n", pos, s)
        if nl:
            line += nl
            line_start = data.rindex(b"\n", pos, s) + 1
        pos = s
        flags = _flags(chains.at(s), data, s, word) if chains is not None else NO_GRAMMAR
        out[word].extend((line, s - line_start + 1, flags, s))
    return out


class Regions:
    """Flags at any byte of one parsed file, for regex matches (no delegation check for regexes)."""

    def __init__(self, data: bytes, lang: str | None):
        self.data, self.lang = data, lang
        self.root = parser(lang).parse(data).root_node if lang else None
        self.chains = _Chains(self.root) if self.root is not None else None

    def flags_at(self, offset: int) -> int:
        if self.chains is None:
            return NO_GRAMMAR
        return _flags(self.chains.at(offset), self.data, offset, None)


def first_definition(data: bytes, lang: str | None) -> tuple[str, int] | None:
    """(name, line) of the file's first code declaration, a function or class one preferred, as
    `index_file` gives it: one walk over the tree for the declared names, then each in order."""
    if not lang:
        return None
    root = parser(lang).parse(data).root_node
    decl_starts: set[int] = set()
    def_starts: set[int] = set()
    cur = root.walk()
    parents: list[Node] = []
    while True:
        node = cur.node
        assert node is not None  # a cursor from walk() always stands on a node
        if parents:
            got = _declares(parents[-1], node, cur.field_name)
            if got:
                starts = [node.start_byte + t.start() for t in IDENT.finditer(data[node.start_byte : node.end_byte])]
                decl_starts.update(starts)
                if got & 32 and starts:
                    def_starts.add(starts[-1])  # `A::f` defines f
        if cur.goto_first_child():
            parents.append(node)
            continue
        while not cur.goto_next_sibling():
            if not cur.goto_parent():
                break
            parents.pop()
        else:
            continue
        break
    first_decl = None
    chains = _Chains(root)
    for s in sorted(decl_starts):
        m = IDENT.match(data, s)
        if m is None or m.start() != s or _noncode_at(chains.at(s), s, data):
            continue
        found = (m.group().decode("utf-8", "replace"), data.count(b"\n", 0, s) + 1)
        if s in def_starts:
            return found
        if first_decl is None:
            first_decl = found
    return first_decl


def _parse_facts(data: bytes, lang: str | None):
    """(non-code ranges, declared name starts, defined name starts, call starts, function bodies by name)."""
    noncode: list[tuple[int, int, int]] = []
    decl_starts: set[int] = set()
    def_starts: set[int] = set()
    call_starts: set[int] = set()
    bodies: dict[str, list[tuple[int, int]]] = {}
    if lang:
        root = parser(lang).parse(data).root_node
        caps = _captures(lang, _NONCODE["comment"] + _NONCODE["string"], root)
        noncode += [(n.start_byte, n.end_byte, COMMENT) for n in caps.get("comment", [])]
        noncode += [(n.start_byte, n.end_byte, STRING) for n in caps.get("string", [])]
        for _, m in _matches(lang, _NONCODE["if0"], root):
            node, cond = m["if0"][0], m["cond"][0]
            if not node.type.startswith(("preproc_if", "preproc_elif")):
                continue
            if cond.type == "number_literal" and data[cond.start_byte : cond.end_byte].strip() not in (b"0", b"0L"):
                continue
            alt = node.child_by_field_name("alternative")
            noncode.append((cond.end_byte, alt.start_byte if alt else node.end_byte, IF0))
        for _, m in _matches(lang, _DECL, root):
            for n in m.get("decl", []) + m.get("def", []):
                spec = m.get("spec")
                if spec and spec[0].child_by_field_name("body") is None:
                    parent = spec[0].parent
                    if parent is None or parent.type not in _DECL_PARENTS:
                        continue  # `struct Foo* p` uses Foo; only `struct Foo;` or `struct Foo {}` declare it
                    if parent.type == "declaration" and parent.child_by_field_name("declarator") is not None:
                        continue
                seg = data[n.start_byte : n.end_byte]
                starts = [n.start_byte + t.start() for t in IDENT.finditer(seg)]
                decl_starts.update(starts)
                if "def" in m and starts:
                    def_starts.add(starts[-1])  # `A::f` defines f
        for n in _captures(lang, _CALLS, root).get("callee", []):
            call_starts.add(_callee_name(n).start_byte)
        for _, m in _matches(lang, _FUNCS, root):
            name = _function_name(m["fdecl"][0], data)
            if name:
                body = m["body"][0]
                bodies.setdefault(name.decode("utf-8", "replace"), []).append((body.start_byte, body.end_byte))
    noncode = _merge(noncode)
    if not lang:
        noncode = [(0, len(data) + 1, NO_GRAMMAR)]
    return noncode, decl_starts, def_starts, call_starts, bodies


def index_file(data: bytes, lang: str | None) -> FileIndex:
    """Index every identifier occurrence of one file with its line, column and flags: the reference
    strategy (parse and index everything) that the differential test and `benchmarks/cold.py`
    compare the grep-first scan against."""
    noncode, decl_starts, def_starts, call_starts, bodies = _parse_facts(data, lang)

    occurrences: dict[str, array] = {}
    first_def: tuple[str, int] | None = None
    first_decl: tuple[str, int] | None = None
    line, line_start, pos = 1, 0, 0
    # tokens come in order, so one pointer walks the sorted non-code ranges alongside them
    j, n_ranges = 0, len(noncode)
    r_start, r_end, r_why = noncode[0] if noncode else (len(data) + 1, 0, CODE)
    text = data.decode("ascii") if data.isascii() else None  # str tokens without a decode each
    for m in IDENT.finditer(data) if text is None else _IDENT_STR.finditer(text):
        s = m.start()
        nl = data.count(b"\n", pos, s)
        if nl:
            line += nl
            line_start = data.rindex(b"\n", pos, s) + 1
        pos = s
        while s >= r_end and j < n_ranges - 1:
            j += 1
            r_start, r_end, r_why = noncode[j]
        flags = r_why if r_start <= s < r_end else CODE
        found = m.group()
        word = found if isinstance(found, str) else found.decode("utf-8", "replace")
        if s in decl_starts:
            flags |= DECL
            if not flags & NONCODE_MASK:
                if first_def is None and s in def_starts:
                    first_def = (word, line)
                if first_decl is None:
                    first_decl = (word, line)
        if s in call_starts and word in bodies and any(b0 <= s < b1 for b0, b1 in bodies[word]):
            flags |= DELEGATION
        arr = occurrences.get(word)
        if arr is None:
            arr = occurrences[word] = array("i")
        arr.extend((line, s - line_start + 1, flags, s))
    return FileIndex(lang, occurrences, noncode, sorted(decl_starts), first_def or first_decl)
