"""Removed deprecation shims: code that kept an old spelling working for the upstream's own users
while they moved (an old import path, an old argument, an old alias), and warned them that it
was deprecated. A port never offered that spelling, so removing it leaves nothing to port. A
no-op finder beside those of porttrack/evidence/refactor.py, which audit's `no-op` rule asks with
them.
"""

from __future__ import annotations

import ast
import functools
import re

from porttrack.evidence.refactor import Line, Texts, _code, _is_message_call, _last_name, _parse, _removed_rows
from porttrack.gitio import Hunk

DEPRECATED = "deprecation shim"


# what a deprecation warning says, the warning classes that say it, and either (a line worth a parse)
_DEPRECATION_TEXT = re.compile(r"deprecat|will be removed", re.I)
_DEPRECATION_CLASS = re.compile(r"(?<!\w)\w*DeprecationWarning|FutureWarning")
_DEPRECATION = re.compile(f"{_DEPRECATION_TEXT.pattern}|{_DEPRECATION_CLASS.pattern}", re.I)


def explain(hunks: list[Hunk], texts: Texts, every: list[Hunk] | None = None) -> dict[Line, str]:
    """Removed deprecation shims: a function, class or `if` branch that warns its caller that what
    it serves is deprecated, every line of it removed. It kept an old spelling working for the
    upstream's own users (an old import path, an old argument) while they moved; a port never
    offered that spelling, so removing it leaves nothing to port."""
    removed = _removed_rows(every or hunks)
    out: dict[Line, str] = {}
    for k, h in enumerate(hunks):
        # the warning lies inside the removed shim: a hunk whose removed lines never say so needs no parse
        if not any(_DEPRECATION.search(x) for _, x in _code(h.old)):
            continue
        gone = removed.get(h.path, set())
        spans = [(a, b) for a, b in _deprecation_spans(texts.before(h.path)) if all(r in gone for r in range(a, b + 1))]
        for i, _ in _code(h.old):
            if any(a <= h.old_start + i <= b for a, b in spans):
                out[(k, "old", i)] = DEPRECATED
    return {**_made_required(hunks, texts, removed), **out}


# a parameter line with an annotation and a `None` default, and the same line without the default
_OPTIONAL = re.compile(r"^\s*(\w+)\s*:\s*(.+?)\s*=\s*None\s*,?\s*$")
_REQUIRED = re.compile(r"^\s*(\w+)\s*:\s*(.+?)\s*,?\s*$")


def _made_required(hunks: list[Hunk], texts: Texts, removed: dict[str, set[int]]) -> dict[Line, str]:
    """Signature lines where a parameter loses its `None` default (and `None` from its annotation)
    while the change removes, whole, the deprecation shim of its function that served the `None`
    case: an `if` that tests the parameter, or the attribute that keeps it, `is None`. A caller that
    left the argument out used the old spelling that the shim kept working."""
    out: dict[Line, str] = {}
    for k, h in enumerate(hunks):
        if len(h.old) != len(h.new):
            continue
        for i, (a, b) in enumerate(zip(h.old, h.new, strict=True)):
            if (name := _dropped_none(a, b)) is None:
                continue
            row, gone = h.old_start + i, removed.get(h.path, set())
            for first, last, start, end, tested in _none_shims(texts.before(h.path)):
                if first <= row <= last and tested == name and all(r in gone for r in range(start, end + 1)):
                    out[(k, "old", i)] = out[(k, "new", i)] = DEPRECATED
    return out


def _dropped_none(old: str, new: str) -> str | None:
    """The parameter's name, without leading underscores, when `new` is `old` with its `= None`
    default and the `None` of its annotation taken out."""
    a, b = _OPTIONAL.match(old), _REQUIRED.match(new)
    if a is None or b is None or a[1] != b[1] or "=" in b[2]:
        return None
    bare = re.sub(r"(?:(?<!\s)\s+)?\|\s*None\b|\bNone\s*\|\s*", "", a[2])
    bare = re.sub(r"^([\"']?)Optional\[(.*)\]\1$", r"\1\2\1", bare)
    return a[1].lstrip("_") if bare.strip("\"'") == b[2].strip("\"'") and bare != a[2] else None


@functools.lru_cache(maxsize=32)
def _none_shims(text: str | None) -> tuple[tuple[int, int, int, int, str], ...]:
    """(signature's first and last line, the shim's first and last line, the name it tests, without
    leading underscores) of each deprecation `if` of `text` that tests a name `is None`, by the
    function that holds it."""
    tree = _parse(text) if text and "None" in text else None
    out: list[tuple[int, int, int, int, str]] = []
    for fn in (x for x in ast.walk(tree) if isinstance(x, (ast.FunctionDef, ast.AsyncFunctionDef))) if tree else ():
        for node in ast.walk(fn):
            if not isinstance(node, ast.If) or not isinstance(t := node.test, ast.Compare) or len(t.ops) != 1:
                continue
            if not isinstance(t.ops[0], ast.Is):
                continue
            if not (isinstance(t.comparators[0], ast.Constant) and t.comparators[0].value is None):
                continue
            if any(isinstance(c, ast.Call) and _warns_deprecation(c) for c in ast.walk(node)):
                name = _last_name(t.left).lstrip("_")
                out.append((fn.lineno, fn.body[0].lineno - 1, node.lineno, node.end_lineno or node.lineno, name))
    return tuple(out)


@functools.lru_cache(maxsize=32)
def _deprecation_spans(text: str | None) -> tuple[tuple[int, int], ...]:
    """(first, last) 1-based lines, decorators included, of each function, class and `if` statement
    of `text` that holds a deprecation warning (`_warns_deprecation`)."""
    tree = _parse(text)
    if tree is None:
        return ()
    nodes = list(ast.walk(tree))
    warnings = [x.lineno for x in nodes if isinstance(x, ast.Call) and _warns_deprecation(x)]
    if not warnings:
        return ()
    out = []
    for node in nodes:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.If)):
            first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
            last = node.end_lineno or node.lineno
            if any(first <= w <= last for w in warnings):
                out.append((first, last))
    return tuple(out)


def _warns_deprecation(call: ast.Call) -> bool:
    """A `warnings`, `logging` or logger call, or a `deprecated(...)` decorator, whose text says
    `deprecat…` or `will be removed`, or that passes a deprecation warning class."""
    func = call.func
    named = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
    if not (_is_message_call(func) or named == "deprecated"):
        return False
    for arg in [*call.args, *(kw.value for kw in call.keywords)]:
        for x in ast.walk(arg):
            if isinstance(x, ast.Constant) and isinstance(x.value, str) and _DEPRECATION_TEXT.search(x.value):
                return True
            if isinstance(x, (ast.Name, ast.Attribute)) and _DEPRECATION_CLASS.fullmatch(_last_name(x)):
                return True
    return False
