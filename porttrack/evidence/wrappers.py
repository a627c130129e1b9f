"""Values wrapped in a call that only adds a message. A *message wrapper* is a module-level function
that hands back one of its arguments, or a function that calls it, after code that only logs, warns
or prints: `deprecated(name, getter)` that warns when a setting is used, then reads it. A change
that wraps values in such a function, or unwraps them, changes what is printed, not what the program
computes. A no-op finder beside those of porttrack/evidence/refactor.py, which audit's `no-op` rule
asks where they leave lines unexplained.

A changed file counts when its two sides are the same syntax tree once every call of a wrapper is
replaced by the argument it hands back, and the wrapper's definition and the imports are taken out.
"""

from __future__ import annotations

import ast
import copy
import re
from collections.abc import Iterable

from porttrack.evidence import naming
from porttrack.evidence.refactor import MESSAGE_CALL, Line, Texts, _is_message_call, _last_name, _parse
from porttrack.gitio import Hunk

WRAPPER = "message wrapper"

Function = ast.FunctionDef | ast.AsyncFunctionDef

# calls a message's condition may make without doing anything
_READS = frozenset({"isinstance", "len", "getattr", "hasattr", "get", "getenv", "callable"})
# a changed line that defines a function, and one that calls a message function: the change may add a wrapper
_DEF = re.compile(r"^\s*def\s+(\w+)\s*\(")
_MESSAGE = re.compile(rf"\b{MESSAGE_CALL}", re.I)


def explain(hunks: list[Hunk], texts: Texts, lines: Iterable[Line] | None = None) -> dict[Line, str]:
    """The changed lines of files whose two sides differ only in message wrappers. Only the hunks
    of `lines` (default: all) are looked at, and only files where the change adds or removes a
    function definition, a call of it and a message call (most changes do not, and parse nothing
    here)."""
    keys = {k for k, _, _ in lines} if lines is not None else set(range(len(hunks)))
    out: dict[Line, str] = {}
    for path in sorted({hunks[k].path for k in keys}):
        mine = [k for k, h in enumerate(hunks) if h.path == path]
        changed = [x for k in mine for x in (*hunks[k].old, *hunks[k].new)]
        if not _may_wrap(changed):
            continue
        if _same_unwrapped(_parse(texts.before(path)), _parse(texts.after(path))):
            out.update(
                {
                    (k, side, i): WRAPPER
                    for k in mine
                    for side in ("old", "new")
                    for i in range(len(getattr(hunks[k], side)))
                }
            )
    return out


def _may_wrap(changed: list[str]) -> bool:
    """Do the changed lines define a function that other changed lines call, and call a message
    function? A wrapper that comes or goes is called where values are wrapped or unwrapped."""
    defined = {m[1] for x in changed if (m := _DEF.match(x))}
    if not defined or not any(_MESSAGE.search(x) for x in changed):
        return False
    calls = re.compile(rf"(?<![\w.])(?:{'|'.join(map(re.escape, sorted(defined)))})\(")
    return any(calls.search(x) and not _DEF.match(x) for x in changed)


def _same_unwrapped(old: ast.Module | None, new: ast.Module | None) -> bool:
    """Are the two modules one syntax tree once message wrappers are unwrapped, and not before?"""
    if old is None or new is None:
        return False
    sides = [(tree, _wrappers(tree)) for tree in (old, new)]
    found = {**sides[0][1], **sides[1][1]}
    if not found or not all(_holds(name, spec, *side) for name, spec in found.items() for side in sides):
        return False
    try:
        plain = [ast.dump(_Unwrap({}).visit(copy.deepcopy(t))) for t in (old, new)]
        a, b = _Unwrap(found).visit(old), _Unwrap(found).visit(new)
        return ast.dump(a) == ast.dump(b) and plain[0] != plain[1]
    except RecursionError:  # an expression nested past what the visitor can follow
        return False


def _holds(name: str, spec: tuple[int, str], side: ast.Module, mine: dict[str, tuple[int, str]]) -> bool:
    """Is `name` the same wrapper on this side (`mine`: its wrappers), or a name this side never
    uses? A function that did something else before the change is no wrapper there, and its calls
    there are not unwrapped."""
    if name in mine:
        return mine[name] == spec
    return not any(isinstance(x, ast.Name) and x.id == name for x in ast.walk(side)) and not any(
        isinstance(x, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and x.name == name for x in ast.walk(side)
    )


def _wrappers(tree: ast.Module) -> dict[str, tuple[int, str]]:
    """Each module-level message wrapper by name: (position, name) of the parameter it hands back."""
    out: dict[str, tuple[int, str]] = {}
    for node in tree.body:
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or node.decorator_list:
            continue
        if (handed := _handed_back(node)) is not None:
            params = [p.arg for p in (*node.args.posonlyargs, *node.args.args)]
            out[node.name] = (params.index(handed) if handed in params else -1, handed)
    return out


def _handed_back(fn: Function) -> str | None:
    """The parameter `fn` hands back after only messages: itself (`return value`), or a function
    whose body, after only messages, returns the parameter called with its own arguments."""
    params = {p.arg for p in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs)}
    body = _body(fn)
    *lead, last = body
    if isinstance(last, ast.Return) and isinstance(last.value, ast.Name) and last.value.id in params:
        return last.value.id if all(_message_only(x) for x in lead) else None
    if len(body) == 2 and isinstance(inner := body[0], ast.FunctionDef) and isinstance(last, ast.Return):
        if not (isinstance(last.value, ast.Name) and last.value.id == inner.name) or inner.decorator_list:
            return None
        *said, ret = _body(inner)
        call = ret.value if isinstance(ret, ast.Return) else None
        if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name) or call.func.id not in params:
            return None
        if _forwards(inner.args, call) and all(_message_only(x) for x in said):
            return call.func.id
    return None


def _body(fn: Function) -> list[ast.stmt]:
    return fn.body[1:] if ast.get_docstring(fn, clean=False) is not None and len(fn.body) > 1 else fn.body


def _forwards(args: ast.arguments, call: ast.Call) -> bool:
    """Does `call` pass on exactly the arguments its function takes: none, or `*args, **kwargs`?"""
    if args.args or args.posonlyargs or args.kwonlyargs:
        return False
    star = [a.value.id for a in call.args if isinstance(a, ast.Starred) and isinstance(a.value, ast.Name)]
    kw = [k.value.id for k in call.keywords if k.arg is None and isinstance(k.value, ast.Name)]
    given = (args.vararg.arg if args.vararg else None, args.kwarg.arg if args.kwarg else None)
    passed = (star[0] if star else None, kw[0] if kw else None)
    return len(call.args) == len(star) and len(call.keywords) == len(kw) and passed == given


def _message_only(node: ast.stmt) -> bool:
    """A message call, or an `if` that only messages, whose test makes no call but a read."""
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        return _is_message_call(node.value.func)
    if isinstance(node, ast.If):
        calls = [x for x in ast.walk(node.test) if isinstance(x, ast.Call)]
        reads = all(_last_name(x.func) in _READS for x in calls)
        return reads and all(_message_only(x) for x in (*node.body, *node.orelse))
    return False


class _Unwrap(ast.NodeTransformer):
    """Replaces each call of a wrapper by the argument it hands back; drops the wrappers' definitions,
    imports, docstrings and module loggers, which the other finders and `language_only` judge on their own."""

    def __init__(self, wrappers: dict[str, tuple[int, str]]) -> None:
        self.wrappers = wrappers

    def visit_Module(self, node: ast.Module) -> ast.AST:
        node.body = [x for x in node.body if not self._dropped(x)]
        return self.generic_visit(node)

    def _dropped(self, x: ast.stmt) -> bool:
        if isinstance(x, (ast.Import, ast.ImportFrom)):
            return True
        if isinstance(x, ast.Expr) and isinstance(x.value, ast.Constant) and isinstance(x.value.value, str):
            return True
        if isinstance(x, ast.Assign) and all(isinstance(t, ast.Name) and naming.is_logger(t.id) for t in x.targets):
            return True  # the logger a wrapper's message needs
        return isinstance(x, (ast.FunctionDef, ast.AsyncFunctionDef)) and x.name in self.wrappers

    def visit_Call(self, node: ast.Call) -> ast.AST:
        if isinstance(node.func, ast.Name) and (w := self.wrappers.get(node.func.id)) is not None:
            at, name = w
            if 0 <= at < len(node.args) and not any(isinstance(a, ast.Starred) for a in node.args):
                return self.visit(node.args[at])
            if (kw := next((k for k in node.keywords if k.arg == name), None)) is not None:
                return self.visit(kw.value)
        return self.generic_visit(node)
