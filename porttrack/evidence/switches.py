"""Parameters that only turn messages on or off. A *message switch* is a parameter with a default
that a function reads only as the whole test of an `if` (`if not quiet:`) whose body only logs,
warns or prints, or passes on, as a keyword, to a message switch of the function it calls. A change
that adds such a switch, removes it, or passes it at a call site changes what is printed, not what
the program does. A no-op finder beside those of porttrack/evidence/refactor.py, which audit's
`no-op` rule asks where they leave lines unexplained.

A changed function counts when its two sides are the same syntax tree once every switch is taken
out: the parameter, its guards (their body stays) and the keywords that pass it. The callee of a
call site is looked up in the changed file and where it imports the name from, on the side of the
change where it has the switch.
"""

from __future__ import annotations

import ast
import copy
import functools
import itertools
import re
from collections import Counter
from collections.abc import Callable, Iterable

from porttrack.evidence.equivalents import homes
from porttrack.evidence.refactor import MESSAGE_CALL, Line, Texts, _is_message_call, _last_name, _parse
from porttrack.gitio import Hunk

SWITCH = "message switch"

Function = ast.FunctionDef | ast.AsyncFunctionDef
Switches = dict[str, frozenset[str]]  # function name -> its message switches

# where a line may pass, declare or test a switch: `f(x, quiet=True)`, `quiet: bool = False,`,
# `if not quiet:` (a keyword has no space before its `=`, an assignment has)
_MAY_SWITCH = re.compile(
    r"(?<![\w.])([A-Za-z_]\w*)(?:=(?!=)|\s*:\s*[\w\[\]., |]+\s=\s)|^\s*if\s+(?:not\s+)?([A-Za-z_]\w*)\s*:\s*$"
)


def explain(
    hunks: list[Hunk],
    texts: Texts,
    lines: Iterable[Line] | None = None,
    every: list[Hunk] | None = None,
    whole: Callable[[], list[Hunk] | None] | None = None,
) -> dict[Line, str]:
    """The changed lines of functions whose two sides differ only in message switches. Only the
    hunks of `lines` (default: all) are looked at, and only switches whose guard the change adds or
    removes in `every` (default `hunks`), the change's hunks, or in `whole` (the change's hunks in
    every source file: a callee outside the queue's paths may lose its switch). `whole` is asked
    for only where all a changed line does is add or drop a keyword passed a constant
    (`quiet=True`) that `every` has no guard of. A call site that starts passing a switch the
    change leaves alone is not recognised."""
    keys = {k for k, _, _ in lines} if lines is not None else set(range(len(hunks)))
    guarded = _guarded(every or hunks)
    passed = _passed([hunks[k] for k in keys]) if whole is not None else set()
    out: dict[Line, str] = {}
    if not guarded and not passed:  # most changes: no switch comes or goes
        return out
    paths = sorted({hunks[k].path for k in keys})
    by_path = {p: [k for k in sorted(keys) if hunks[k].path == p] for p in paths}
    candidates = {p: _candidates([hunks[k] for k in by_path[p]]) for p in paths}
    if whole is not None and passed & {n for c in candidates.values() for n in c - guarded}:
        guarded |= _guarded(whole() or [])  # a callee outside the queue's paths may lose its switch
    for path in paths:
        mine = by_path[path]
        names = candidates[path] & guarded
        if not names:  # parse only where a switch comes or goes
            continue
        before, after = _Side(path, texts.before, names), _Side(path, texts.after, names)
        if before.tree is None or after.tree is None:
            continue
        for k in mine:
            out.update(_hunk(k, hunks[k], before, after))
    return out


def _candidates(hunks: list[Hunk]) -> frozenset[str]:
    """The names the hunks add or remove as a keyword, a defaulted parameter or a guard's test: one
    side of them names each fewer times than the other. Only these can be switches that come or go."""
    old = Counter(w for h in hunks for x in h.old for w in _NAME.findall(x))
    new = Counter(w for h in hunks for x in h.new for w in _NAME.findall(x))
    found = {m[1] or m[2] for h in hunks for x in [*h.old, *h.new] for m in _MAY_SWITCH.finditer(x)}
    return frozenset(w for w in found if old[w] != new[w])


_NAME = re.compile(r"[A-Za-z_]\w*")
_GUARD = re.compile(r"^\s*if\s+(?:not\s+)?([A-Za-z_]\w*)\s*:\s*$")
_MESSAGE = re.compile(rf"^\s*{MESSAGE_CALL}", re.I)


# a keyword a call site passes as a switch: a constant (`quiet=True`); leading spaces are taken
# from the start of their run only, so a long run of spaces is not read again from each
_PASSED = re.compile(r",?(?:(?<!\s)\s+)?(?<![\w.])([A-Za-z_]\w*)=(?:True|False|None)(?!\w)\s*,?")


def _passed(hunks: list[Hunk]) -> set[str]:
    """The keywords passed as a switch would be whose coming or going is all a changed line does:
    a line pair equal once the keyword is taken out of one side, or a hunk that only adds or only
    removes lines that pass such keywords."""
    out: set[str] = set()
    for h in hunks:
        if len(h.old) == len(h.new):
            for a, b in zip(h.old, h.new, strict=True):
                for x, y in ((a, b), (b, a)):
                    found = {m[1] for m in _PASSED.finditer(x)}
                    if found and _squeezed(_PASSED.sub("", x)) == _squeezed(y):
                        out |= found
        elif not h.old or not h.new:
            lines = [x for x in (*h.old, *h.new) if x.strip()]
            if lines and all(_PASSED.fullmatch(x.strip()) for x in lines):
                out |= {m[1] for x in lines for m in _PASSED.finditer(x)}
    return out


def _squeezed(line: str) -> str:
    return re.sub(r"[\s,]", "", line)


def _guarded(hunks: list[Hunk]) -> set[str]:
    return {name for h in hunks for side in (h.old, h.new) for name in _guards(side)}


def _guards(lines: list[str]) -> set[str]:
    """The names tested by `if name:` or `if not name:` lines whose next line starts a message call."""
    return {m[1] for x, y in itertools.pairwise(lines) if (m := _GUARD.match(x)) and _MESSAGE.match(y)}


class _Side:
    """One side of the change in one file: its functions, and the switches of what it calls."""

    def __init__(self, path: str, read: Callable[[str], str | None], names: frozenset[str]) -> None:
        self.path, self.read, self.names = path, read, names
        text = read(path)
        self.tree, self.functions = _read(text)
        self.switches = _switches(text, names)
        self.local = {q.rsplit(".", 1)[-1] for q in self.functions}
        self.seen: dict[str, frozenset[str]] = {}

    def of(self, name: str) -> frozenset[str]:
        """The switches among the candidate names of the callable `name` as this file sees it:
        defined here or imported."""
        if name in self.local:
            return self.switches.get(name, frozenset())
        if name not in self.seen:
            found = (_switches(self.read(h), self.names) for h in homes(name, self.path, self.read)[1:])
            self.seen[name] = next((f[name] for f in found if name in f), frozenset())
        return self.seen[name]

    def innermost(self, row: int) -> str | None:
        """The qualified name of the innermost function that holds 1-based line `row`."""
        best: tuple[int, str] | None = None
        for q, fn in self.functions.items():
            start = fn.decorator_list[0].lineno if fn.decorator_list else fn.lineno
            if start <= row <= (fn.end_lineno or fn.lineno) and (best is None or start >= best[0]):
                best = (start, q)
        return best[1] if best else None


def _hunk(k: int, h: Hunk, before: _Side, after: _Side) -> dict[Line, str]:
    rows = [("old", i, before.innermost(h.old_start + i)) for i in range(len(h.old))]
    rows += [("new", i, after.innermost(h.new_start + i)) for i in range(len(h.new))]
    names = {q for _, _, q in rows}
    if None in names:  # a line outside any function: not this finder's to explain
        return {}
    same = {q for q in names if q in before.functions and q in after.functions and _same(q, before, after)}
    return {(k, side, i): SWITCH for side, i, q in rows if q in same}


def _same(q: str, before: _Side, after: _Side) -> bool:
    """Are function `q`'s two sides one syntax tree once switches are taken out, and not before?"""
    old, new = before.functions[q], after.functions[q]
    try:
        a, b = _without_switches(old, q, before), _without_switches(new, q, after)
        return ast.dump(a) == ast.dump(b) and ast.dump(_bare(old)) != ast.dump(_bare(new))
    except RecursionError:  # an expression nested past what copying and comparing can follow
        return False


def _bare(fn: Function) -> Function:
    """`fn` without its docstring and nested functions, whose own lines are judged on their own."""
    fn = copy.copy(fn)
    fn.body = fn.body[1:] if ast.get_docstring(fn, clean=False) is not None else fn.body
    fn.body = [x for x in fn.body if not isinstance(x, (ast.FunctionDef, ast.AsyncFunctionDef))] or [ast.Pass()]
    return fn


def _without_switches(fn: Function, q: str, side: _Side) -> ast.AST:
    name = q.rsplit(".", 1)[-1]
    own = side.switches.get(name, frozenset())
    fn = copy.deepcopy(_bare(fn))
    _drop_parameters(fn.args, own)
    return _Unswitch(own, side).visit(fn)


def _drop_parameters(a: ast.arguments, names: frozenset[str]) -> None:
    lead = len(a.args) - len(a.defaults)
    keep = [i for i, p in enumerate(a.args) if p.arg not in names]
    a.defaults = [a.defaults[i - lead] for i in keep if i >= lead]
    a.args = [a.args[i] for i in keep]
    kept = [(p, d) for p, d in zip(a.kwonlyargs, a.kw_defaults, strict=True) if p.arg not in names]
    a.kwonlyargs, a.kw_defaults = [p for p, _ in kept], [d for _, d in kept]


class _Unswitch(ast.NodeTransformer):
    """Takes out a function's own switch guards (keeping their body) and the keywords that pass a
    switch to a callee."""

    def __init__(self, own: frozenset[str], side: _Side) -> None:
        self.own, self.side = own, side

    def visit_If(self, node: ast.If) -> ast.AST | list[ast.stmt]:
        if _guard(node) in self.own:
            return [self.visit(x) for x in node.body]
        return self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> ast.AST:
        callee = _last_name(node.func)
        if callee and any(kw.arg in self.side.names for kw in node.keywords):
            switches = self.side.of(callee)
            node.keywords = [kw for kw in node.keywords if kw.arg not in switches]
        return self.generic_visit(node)


@functools.lru_cache(maxsize=16)  # a file's switches are asked for by each hunk and call site in it
def _switches(text: str | None, names: frozenset[str]) -> Switches:
    """Each function's message switches in `text` among `names`, by function name (a name defined
    twice keeps the switches both share). Passing a parameter on counts only to a switch of a
    function here, so the set is found by elimination: start from every parameter with a constant
    default and drop those read any other way, until none drops."""
    guards = "|".join(re.escape(n) for n in sorted(names))
    if not text or not names or not re.search(rf"^\s*if\s+(?:not\s+)?(?:{guards})\s*:", text, re.M):
        return {}
    by_name: dict[str, list[Function]] = {}
    for fn in _read(text)[1].values():
        by_name.setdefault(fn.name, []).append(fn)
    found = {
        n: functools.reduce(frozenset.intersection, (_defaulted(fn) & names for fn in fns))
        for n, fns in by_name.items()
    }
    found = {n: s for n, s in found.items() if s}
    while True:
        kept = {
            n: frozenset(p for p in s if all(_only_switches(fn, p, found) for fn in by_name[n]))
            for n, s in found.items()
        }
        kept = {n: s for n, s in kept.items() if s}
        if kept == found:
            return found
        found = kept


def _defaulted(fn: Function) -> frozenset[str]:
    a = fn.args
    out = {p.arg for p, d in zip(a.args[len(a.args) - len(a.defaults) :], a.defaults, strict=True) if _constant(d)}
    out |= {p.arg for p, d in zip(a.kwonlyargs, a.kw_defaults, strict=True) if d is not None and _constant(d)}
    return frozenset(out)


def _constant(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and (node.value is None or isinstance(node.value, bool))


def _only_switches(fn: Function, p: str, found: Switches) -> bool:
    """Is parameter `p` of `fn` read only to guard messages or to pass on to a switch in `found`?"""
    guarded: set[int] = set()
    passed: set[int] = set()
    for node in ast.walk(fn):
        if isinstance(node, ast.If) and _guard(node) == p:
            if node.orelse or not all(_is_message(x) for x in node.body):
                return False
            guarded.add(id(node.test))
            guarded.update(id(x) for x in ast.walk(node.test))
        elif isinstance(node, ast.Call):
            callee = _last_name(node.func)
            for kw in node.keywords:
                if isinstance(kw.value, ast.Name) and kw.value.id == p:
                    if kw.arg is None or kw.arg not in found.get(callee, frozenset()):
                        return False
                    passed.add(id(kw.value))
    uses = [x for x in ast.walk(fn) if isinstance(x, ast.Name) and x.id == p]
    return all(id(x) in guarded or id(x) in passed for x in uses) and bool(guarded or passed)


def _guard(node: ast.If) -> str | None:
    """The name an `if` tests, alone or negated (`if quiet:`, `if not quiet:`)."""
    test = node.test.operand if isinstance(node.test, ast.UnaryOp) and isinstance(node.test.op, ast.Not) else node.test
    return test.id if isinstance(test, ast.Name) else None


def _is_message(node: ast.stmt) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and _is_message_call(node.value.func)


@functools.lru_cache(maxsize=4)  # syntax trees are large: the two sides of a file and a callee's
def _read(text: str | None) -> tuple[ast.Module | None, dict[str, Function]]:
    """The file's syntax tree (None where it does not parse) and every function and method in it
    by qualified name (`Class.method`, `outer.inner`)."""
    tree = _parse(text)
    out: dict[str, Function] = {}
    if tree is None:
        return None, out
    stack: list[tuple[str, ast.AST]] = [("", tree)]
    while stack:
        prefix, node = stack.pop()
        for x in ast.iter_child_nodes(node):
            if isinstance(x, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                q = f"{prefix}{x.name}"
                if not isinstance(x, ast.ClassDef):
                    out.setdefault(q, x)
                stack.append((f"{q}.", x))
            elif isinstance(x, ast.stmt):
                stack.append((prefix, x))  # a definition under `if TYPE_CHECKING:` or `try:`
    return tree, out
