"""Call sites a change points at code that does what the old target did: the change removes a
subclass that adds nothing to its base (`class A(B)` whose methods only call `super()`'s of the
same name) or an alias (`A = B`), and replaces `A` with `B`; or it adds a function that only
forwards its parameters to an existing callable (`def f(x, y): return A.g(x, y)`) and replaces
`A.g` with `f`; or it calls a library function (from outside the tree) by the public path the
library now offers for its private one (`torch._C._cpu.f()` -> `torch.cpu.f()`); or it writes an
expression as the call of a function that only returns it (`x.startswith("a")` -> `is_a(x)`, where
`def is_a(s): return s.startswith("a")`), or the other way round. Each way the same code runs, so
the rewritten lines carry no behaviour. A no-op finder beside those of
porttrack/evidence/refactor.py, which audit's `no-op` rule asks where they leave lines unexplained. The definitions often lie outside the queue's paths: each name is looked
up where the changed file imports it from, before and after the change.
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Callable, Iterable
from pathlib import PurePosixPath

from porttrack.evidence import hunks as hunks_mod
from porttrack.evidence.refactor import Line, Texts, _code, _parse, _shape
from porttrack.gitio import Hunk

EQUIVALENT = "equivalent call"
INLINED = "call of what it returns"


Span = tuple[tuple[str, ...], tuple[str, ...]]  # the tokens a line pair differs in: old side, new side


def explain(hunks: list[Hunk], texts: Texts, lines: Iterable[Line] | None = None) -> dict[Line, str]:
    """The lines of `hunks` rewritten one for one, the same but for names the change makes
    equivalent: each old line turns into its new line when every equivalent name is replaced.
    Only the hunks of `lines` (default: all) are looked at."""
    keys = {k for k, _, _ in lines} if lines is not None else set(range(len(hunks)))
    out: dict[Line, str] = {}
    for k in sorted(keys):
        old, new = list(_code(hunks[k].old)), list(_code(hunks[k].new))
        if not old or len(old) != len(new):
            continue
        shapes = [(_shape(a), _shape(b)) for (_, a), (_, b) in zip(old, new, strict=True)]
        runs = [_span(a, b) for a, b in shapes]
        if None in runs:  # a pair differs in more than names
            continue
        found = {x for x in runs if x is not None}
        after = texts.after(hunks[k].path) or ""
        if any(_left_in(x[0], after) for x in found):  # the old spelling still used: the two may differ
            continue
        pairs = _equivalences(texts, hunks[k].path, found)
        roots = _libraries(hunks[k].path, texts) if any(_requalified(a, b, None) for a, b in shapes) else set()
        if (pairs or roots) and all(_replaced(a, pairs) == b or _requalified(a, b, roots) for a, b in shapes):
            out.update(((k, "old", i), EQUIVALENT) for i, _ in old)
            out.update(((k, "new", i), EQUIVALENT) for i, _ in new)
    return out


def explain_inlined(hunks: list[Hunk], texts: Texts, lines: Iterable[Line]) -> dict[Line, str]:
    """The `lines` of a hunk that only swap an expression for the call of a function whose whole
    body returns that expression, its parameters put in: the change writes the call where the old
    code spelled the expression out (the function read after the change), or spells out what a
    call it removes returned (the function read before it)."""
    by_hunk: dict[int, list[Line]] = {}
    for line in lines:
        by_hunk.setdefault(line[0], []).append(line)
    out: dict[Line, str] = {}
    for k, mine in sorted(by_hunk.items()):
        h = hunks[k]
        old = [t for _, side, i in sorted(mine) if side == "old" for t in _uncommented(h.old[i])]
        new = [t for _, side, i in sorted(mine) if side == "new" for t in _uncommented(h.new[i])]
        if (
            old
            and new
            and (_spelled_out(new, old, h.path, texts.after) or _spelled_out(old, new, h.path, texts.before))
        ):
            out.update((line, INLINED) for line in mine)
    return out


def _uncommented(line: str) -> list[str]:
    return _shape(hunks_mod.uncommented(line))


_OPERATORS = frozenset("+-*/%@&|^~<>=!") | {"and", "or", "not", "in", "is", "if", "else", "lambda", ":"}


def _spelled_out(calls: list[str], plain: list[str], path: str, side: Callable[[str], str | None]) -> bool:
    """Does `plain` read as `calls` with at least one call of a one-expression function (read on
    `side`, where `path` takes it from) replaced by the expression it returns?"""
    at = {
        i
        for i, x in enumerate(calls)
        if x.isidentifier() and calls[i + 1 : i + 2] == ["("] and (i == 0 or calls[i - 1] != ".")
    }  # where a plain name is called
    # a function put in for its calls is gone from `plain`, and so is any name only `calls` holds:
    # those must all be called, and only they are looked up (most hunks that change behaviour
    # fail this before any file is read)
    gone = {x for x in calls if x.isidentifier()} - set(plain)
    if not gone or not gone <= {calls[i] for i in at}:
        return False
    bodies = {name: _returns(name, path, side) for name in gone}
    out: list[str] = []
    i = swapped = 0
    while i < len(calls):
        name = calls[i]
        body = bodies.get(name) if i in at else None
        args = _arguments(calls, i + 1) if body is not None else None
        if body is None or args is None or len(args[0]) != len(body[0]):
            out.append(name)
            i += 1
            continue
        out.extend(_put_in(body[1], dict(zip(body[0], args[0], strict=True))))
        swapped += 1
        i = args[1]
    return swapped > 0 and out == plain


def _arguments(tokens: list[str], start: int) -> tuple[list[list[str]], int] | None:
    """The positional arguments of the call whose `(` is at `start`, and the index past its `)`;
    None for a keyword or starred argument, or one with an operator outside brackets, which
    could bind otherwise once put into the body."""
    args: list[list[str]] = [[]]
    depth = 1
    for j in range(start + 1, len(tokens)):
        x = tokens[j]
        if x in ("(", "[", "{"):
            depth += 1
        elif x in (")", "]", "}"):
            depth -= 1
            if depth == 0:
                if len(args) > 1 and not args[-1]:
                    args.pop()  # a trailing comma
                if args == [[]]:
                    return [], j + 1
                return (args, j + 1) if all(args) else None
        elif depth == 1 and x == ",":
            args.append([])
            continue
        elif depth == 1 and x in _OPERATORS:
            return None
        args[-1].append(x)
    return None


def _put_in(body: list[str], given: dict[str, list[str]]) -> list[str]:
    """`body` with each parameter replaced by its argument (an attribute `.p` or a keyword `p=`
    of the same name aside)."""
    out: list[str] = []
    for j, token in enumerate(body):
        attribute = j > 0 and body[j - 1] == "."
        keyword = body[j + 1 : j + 2] == ["="] and j > 0 and body[j - 1] in ("(", ",")
        out.extend(given[token] if token in given and not attribute and not keyword else [token])
    return out


def _returns(name: str, path: str, side: Callable[[str], str | None]) -> tuple[list[str], list[str]] | None:
    """The parameters of module-level function `name` and the tokens of the expression its whole
    body returns, where that expression is a name, an attribute, a subscript or a call: put in
    for the call, it binds as the call did."""
    margin = re.compile(rf"^def\s+{re.escape(name)}\s*\(", re.M)
    for home in homes(name, path, side):
        text = side(home)
        # a file is parsed only where a line at its margin defines the name
        node = next((x for x in _top(text) if _name(x) == name), None) if text and margin.search(text) else None
        if node is None:
            continue
        if not isinstance(node, ast.FunctionDef) or node.decorator_list:
            return None
        a = node.args
        body = _body(node)
        if a.vararg or a.kwarg or a.kwonlyargs or a.posonlyargs or a.defaults or len(body) != 1:
            return None
        value = body[0].value if isinstance(body[0], ast.Return) else None
        if not isinstance(value, (ast.Name, ast.Attribute, ast.Subscript, ast.Call)):
            return None
        segment = ast.get_source_segment(text or "", value)
        return ([p.arg for p in a.args], _uncommented(segment)) if segment else None
    return None


def _ends(a: list[str], b: list[str]) -> tuple[int, int]:
    """How many tokens two lines share at the head, and then at the tail."""
    head = 0
    while head < min(len(a), len(b)) and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < min(len(a), len(b)) - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    return head, tail


def _span(a: list[str], b: list[str]) -> Span | None:
    head, tail = _ends(a, b)
    mid_a, mid_b = tuple(a[head : len(a) - tail]), tuple(b[head : len(b) - tail])
    if mid_a and mid_b and all(x == "." or x.isidentifier() for x in [*mid_a, *mid_b]):
        return mid_a, mid_b
    return None


def _requalified(a: list[str], b: list[str], roots: set[str] | None) -> bool:
    """Do two lines differ only in the middle of one dotted name that starts at a library module in
    `roots` (None: at any name) and ends at the same attribute, where the old middle goes through a
    private module and the new one through public ones (`torch._C._cpu.f()` / `torch.cpu.f()`)?
    The same library function, reached by the path the library now offers."""
    head, tail = _ends(a, b)
    if head < 2 or a[head - 1] != "." or tail < 2 or a[len(a) - tail] != "." or not a[len(a) - tail + 1].isidentifier():
        return False
    i = head - 1
    while i >= 1 and a[i] == "." and a[i - 1].isidentifier():
        i -= 2
    if i == head - 1 or (i >= 0 and a[i] == "."):  # no name before the run, or a chain off a call
        return False
    old, new = a[head : len(a) - tail], b[head : len(b) - tail]
    if not any(x.startswith("_") for x in old) or any(x.startswith("_") for x in new):
        return False  # a public path for another (`cuda` / `xpu`) may be another device's function
    return roots is None or a[i + 1] in roots


_IMPORT = re.compile(r"^[ \t]*import\s+([A-Za-z_]\w*)(?:\.[\w.]*)?(?:\s+as\s+([A-Za-z_]\w*))?\s*$", re.M)


def _libraries(path: str, texts: Texts) -> set[str]:
    """The names `path` binds to a module from outside the tree (`import torch`, `import numpy as
    np`), on both sides of the change: no such package lies in the upstream tree."""
    out: set[str] = set()
    for text in (texts.before(path), texts.after(path)):
        for m in _IMPORT.finditer(text or ""):
            if texts.after(f"{m[1]}/__init__.py") is None and texts.after(f"{m[1]}.py") is None:
                out.add(m[2] or m[1])
    return out


def _left_in(tokens: tuple[str, ...], text: str) -> bool:
    word = "".join(tokens)
    return word in text and re.search(rf"(?<![\w.]){re.escape(word)}(?!\w)", text) is not None


def _replaced(tokens: list[str], pairs: dict[tuple[str, ...], tuple[str, ...]]) -> list[str]:
    out: list[str] = []
    i = 0
    while i < len(tokens):
        prev = tokens[i - 1] if i else ""
        for old, new in pairs.items():
            if tuple(tokens[i : i + len(old)]) == old and prev != ".":  # `x.A` names another A
                out.extend(new)
                i += len(old)
                break
        else:
            out.append(tokens[i])
            i += 1
    return out


def _equivalences(texts: Texts, path: str, runs: set[Span]) -> dict[tuple[str, ...], tuple[str, ...]]:
    """old name's tokens -> new name's tokens, for the runs of a hunk in `path`: a removed subclass
    or alias -> its base; an existing callable -> a function the change adds that only forwards to
    it. Each name is read in `path` and where `path` imports it from."""
    pairs: dict[tuple[str, ...], tuple[str, ...]] = {}
    for old, new in runs:
        if len(old) == 1:
            node = _defined(old[0], homes(old[0], path, texts.before), texts.before, texts.after)
            if node is not None and (base := _stands_for(node)) is not None:
                pairs[old] = tuple(_shape(base))
        if len(new) == 1:
            node = _defined(new[0], homes(new[0], path, texts.after), texts.after, texts.before)
            if node is not None and (target := _forwards_to(node)) is not None:
                pairs[tuple(_shape(target))] = new
    return pairs


def _defined(
    name: str, paths: list[str], side: Callable[[str], str | None], other: Callable[[str], str | None]
) -> ast.stmt | None:
    """The module-level definition of `name` in the first of `paths` that holds one on `side` of
    the change and none on the other: the change removes it (or adds it). A file is parsed only
    where a line of it, at the margin, defines the name on that side and none does on the other."""
    n = re.escape(name)
    rx = re.compile(rf"^(?:(?:async\s+)?def|class)\s+{n}\b|^{n}\s*(?::[^=\n]*)?=(?!=)", re.M)
    for path in paths:
        text = side(path)
        if text is None or not rx.search(text):
            continue
        if rx.search(other(path) or ""):
            return None
        return next((x for x in _top(text) if _name(x) == name), None)
    return None


_HOPS = 3  # imports followed from the changed file: through a package's __init__ to the module behind it


def homes(name: str, path: str, side: Callable[[str], str | None]) -> list[str]:
    """`path`, then the files it takes `name` from (`from a.b import name`, relative imports too),
    through re-exports, read on `side` of the change."""
    out = [path]
    while len(out) <= _HOPS:
        source = _imported_from(name, out[-1], side(out[-1]))
        found = next((p for p in source if side(p) is not None and p not in out), None)
        if found is None:
            break
        out.append(found)
    return out


# `from a.b import x, y` or `from .b import (\n x,\n y,\n)`, at the margin or inside a function
_FROM = re.compile(r"^[ \t]*from\s+(\.*)([\w.]*)\s+import\s+(\([^)]*\)|[^\n]*)", re.M)


def _imported_from(name: str, path: str, text: str | None) -> list[str]:
    """The files `path` takes `name` from, read from its `from ... import` lines (a function's own too)."""
    for m in _FROM.finditer(text or ""):
        names = {w.split(" as ")[-1].strip() for w in re.sub(r"#[^\n]*", "", m[3]).strip("()").split(",")}
        if name not in names:
            continue
        parents = PurePosixPath(path).parents
        if len(m[1]) > len(parents):  # `from .... import x` above the tree's root names nothing here
            return []
        base = parents[len(m[1]) - 1] if m[1] else PurePosixPath()
        module = base / m[2].replace(".", "/")
        return [f"{module}.py", f"{module}/__init__.py"]
    return []


@functools.lru_cache(maxsize=16)  # a module is read for each name and hunk that leads to it
def _top(text: str | None) -> list[ast.stmt]:
    tree = _parse(text)
    return list(tree.body) if tree is not None else []


def _name(node: ast.stmt) -> str:
    if isinstance(node, (ast.ClassDef, ast.FunctionDef)):
        return node.name
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
        return node.targets[0].id
    return ""


def _body(node: ast.ClassDef | ast.FunctionDef) -> list[ast.stmt]:
    """The statements less a docstring and `pass`."""
    body = node.body[1:] if ast.get_docstring(node, clean=False) is not None else node.body
    return [x for x in body if not isinstance(x, ast.Pass)]


def _stands_for(node: ast.stmt) -> str | None:
    """The base a class adds nothing to (one base; each method only returns `super()`'s of its
    name with its own parameters), or the name an alias binds; None for anything else."""
    if isinstance(node, ast.Assign) and isinstance(node.value, (ast.Name, ast.Attribute)):
        return ast.unparse(node.value)
    if not isinstance(node, ast.ClassDef) or len(node.bases) != 1 or node.keywords or node.decorator_list:
        return None
    for x in _body(node):
        if not isinstance(x, ast.FunctionDef) or x.decorator_list:
            return None
        call = _returned_call(x)
        if not (
            call is not None
            and isinstance(call.func, ast.Attribute)
            and call.func.attr == x.name
            and isinstance(call.func.value, ast.Call)
            and ast.unparse(call.func.value) == "super()"
            and _forwards(x, call, skip_self=True)
        ):
            return None
    return ast.unparse(node.bases[0])


def _forwards_to(node: ast.stmt) -> str | None:
    """The callable a module-level function only returns the call of, with its own parameters."""
    if not isinstance(node, ast.FunctionDef) or node.decorator_list:
        return None
    call = _returned_call(node)
    if call is None or not isinstance(call.func, (ast.Name, ast.Attribute)) or not _forwards(node, call):
        return None
    return ast.unparse(call.func)


def _returned_call(fn: ast.FunctionDef) -> ast.Call | None:
    body = _body(fn)
    if len(body) == 1 and isinstance(body[0], ast.Return) and isinstance(body[0].value, ast.Call):
        return body[0].value
    return None


def _forwards(fn: ast.FunctionDef, call: ast.Call, skip_self: bool = False) -> bool:
    """Does `call` pass `fn`'s parameters on, each once and in order (positionally, or as
    `name=name`), and nothing else?"""
    a = fn.args
    if a.vararg or a.kwarg or a.posonlyargs:
        return False
    params = [p.arg for p in [*a.args, *a.kwonlyargs]][1 if skip_self else 0 :]
    given = [x.id if isinstance(x, ast.Name) else "" for x in call.args]
    for kw in call.keywords:
        if kw.arg is None or not isinstance(kw.value, ast.Name) or kw.value.id != kw.arg:
            return False
        given.append(kw.arg)
    return given == params
