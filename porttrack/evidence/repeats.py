"""Assignments a change removes because the code makes them again: `x = f(a)` removed where the same
block assigns `x = f(a)` again further down and nothing between reads `x`. The value the removed
line gave was never read, and the same expression is computed where it is, so the lines carry no
behaviour. A no-op finder beside those of porttrack/evidence/refactor.py, which audit's `no-op`
rule asks where they leave lines unexplained.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable

from porttrack.evidence.refactor import Line, Texts, _parse, _same
from porttrack.gitio import Hunk

REPEATED = "repeated assignment"
_OPENS = re.compile(r"[A-Za-z_]\w*\s*(?::[^=]*)?=(?!=)")


def explain(hunks: list[Hunk], texts: Texts, lines: Iterable[Line]) -> dict[Line, str]:
    """The removed `lines` that make up whole assignments the same block repeats unread (see the
    module's docstring), read in each file before the change."""
    wanted = {(k, i) for k, side, i in lines if side == "old"}
    out: dict[Line, str] = {}
    for path in sorted({hunks[k].path for k, _ in wanted}):
        mine = [(k, h) for k, h in enumerate(hunks) if h.path == path]
        rows = {h.old_start + i: (k, i) for k, h in mine for i in range(len(h.old))}
        text = texts.before(path) or ""
        # parsed only where a removed line that opens an assignment is written twice in the file
        starts = {
            x for k, h in mine for i, line in enumerate(h.old) if (k, i) in wanted and _OPENS.match(x := line.strip())
        }
        if not any(text.count(x) > 1 for x in starts) or (tree := _parse(text)) is None:
            continue
        removed = set(rows)
        for node in ast.walk(tree):
            for body in _bodies(node):
                for first in _repeated(body, removed):
                    span = [rows[r] for r in range(first.lineno, (first.end_lineno or first.lineno) + 1)]
                    out.update(((k, "old", i), REPEATED) for k, i in span if (k, i) in wanted)
    return out


def _bodies(node: ast.AST) -> list[list[ast.stmt]]:
    """The statement lists a node holds: a body, an `else`, a `finally`, a handler's body."""
    return [x for f in ("body", "orelse", "finalbody") if isinstance(x := getattr(node, f, None), list) and x]


def _target(node: ast.stmt) -> tuple[str, ast.expr] | None:
    """The one name a plain assignment binds and its value (`x = v`, `x: T = v`), else None."""
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
        return node.targets[0].id, node.value
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
        return node.target.id, node.value
    return None


def _repeated(body: list[ast.stmt], removed: set[int]) -> Iterable[ast.stmt]:
    """The statements of `body` the change removes whole, whose name and value (one that does not
    read the name) a later statement of `body` the change keeps assigns again, with nothing between
    that names it, returns or raises."""
    for j, node in enumerate(body):
        bound = _target(node)
        end = node.end_lineno or node.lineno
        if bound is None or not all(r in removed for r in range(node.lineno, end + 1)):
            continue
        name, value = bound
        if any(isinstance(x, ast.Name) and x.id == name for x in ast.walk(value)):
            continue  # `x = f(x)` twice applies f twice: the repeat reads what the first made
        for later in body[j + 1 :]:
            again = _target(later)
            if again is not None and again[0] == name and _same([[ast.Expr(again[1])], [ast.Expr(value)]]):
                if later.lineno not in removed:
                    yield node
                break
            if any(_stops(x, name) for x in ast.walk(later)):
                break


def _stops(node: ast.AST, name: str) -> bool:
    """A node that reads or binds `name`, or leaves the block before the repeat could run."""
    return (isinstance(node, ast.Name) and node.id == name) or isinstance(
        node, (ast.Return, ast.Raise, ast.Yield, ast.YieldFrom, ast.Break, ast.Continue, ast.Global, ast.Nonlocal)
    )
