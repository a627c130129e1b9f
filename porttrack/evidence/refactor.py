"""Changed lines that carry no behaviour although they are code: moved code, reworded messages,
renamed names and removed parameters nothing read. audit's `no-op` rule counts them with the
language-only constructs (docs/audit.md, "No-op").

Each finder returns the lines it explains as (hunk index, side, line index) -> what it is, where
side is "old" or "new"; `Texts` gives the upstream file before and after the change.
"""

from __future__ import annotations

import ast
import bisect
import functools
import re
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import PurePosixPath
from typing import NamedTuple

from porttrack.gitio import Hunk
from porttrack.evidence import naming
from porttrack.evidence.hunks import QUOTED, begun_above, code_line_indices, uncommented

Line = tuple[int, str, int]  # (hunk index, "old" | "new", index in that side's lines)


Reader = tuple[str, int, str]  # (path, 1-based line, text) of a line in the tree


class Texts(NamedTuple):
    before: Callable[[str], str | None]  # path -> the file before the change (None: absent or unreadable)
    after: Callable[[str], str | None]
    # words -> the code lines of the tree before the change that name any of them; None where the
    # tree cannot be searched (no upstream checkout), and then no removed code counts as dead
    readers: Callable[[tuple[str, ...]], list[Reader] | None] | None = None


MOVED = "moved code"
MESSAGE = "message text"
RENAME = "renamed name"
UNUSED = "unused parameter"
ANNOTATION = "annotation"
COPY = "copy"
PROPERTY = "property call"
COMMENT = "trailing comment"
EXPORT = "export list"
DEAD = "dead code"
MERGED = "merged branches"
MIN_MOVED = 3  # code lines a hunk needs before its lines can count as moved: short lines recur by chance
MOVED_SHARE = 0.9  # of a hunk's code lines that must appear on the other side of the change
_TOP_DEFINITION = re.compile(r"(?:async\s+def|def|class)\s+[A-Za-z_]\w*\s*[(:]")


def explain(hunks: list[Hunk], texts: Texts, every: list[Hunk] | None = None, messages: bool = True) -> dict[Line, str]:
    """Every line of `hunks` that one of the finders explains. `every` is the change's hunks the
    finders look across (default `hunks`): code moved out of a mirrored file may land in another.
    `messages=False` leaves out the message finder, which parses every file it meets with a string
    or a call; the others parse a file only when a line they would explain calls for it."""
    out: dict[Line, str] = {}
    finders = (
        (moved, _messages, _renamed_locals, _unused_parameters, _mechanics, _exports, _merged)
        if messages
        else (moved, _renamed_locals, _unused_parameters, _mechanics, _exports, _merged)
    )
    if texts.readers is not None:
        finders = (*finders, _dead)
    for finder in finders:
        for line, what in finder(hunks, texts, every or hunks).items():
            out.setdefault(line, what)
    return out


def explain_messages(hunks: list[Hunk], texts: Texts, every: list[Hunk] | None = None) -> dict[Line, str]:
    """What `explain` adds to a run without `messages`: message text, the finders that already ran
    not run again."""
    return _messages(hunks, texts, every or hunks)


def may_be_messages(hunks: list[Hunk], texts: Texts, lines: Iterable[Line]) -> bool:
    """Could each of `lines` lie in a raise statement or a message call (`_may_be_in_message`: one
    starts on it, or it continues a statement begun above, as a call's argument line does)? Read
    without parsing, so a change with a line that cannot is not parsed for its messages at all."""
    for k, side, i in lines:
        h = hunks[k]
        text = (texts.before if side == "old" else texts.after)(h.path)
        line, start = (h.old[i], h.old_start) if side == "old" else (h.new[i], h.new_start)
        if not _may_be_in_message(text, start + i, line):
            return False
    return True


def explain_removals(hunks: list[Hunk], texts: Texts, every: list[Hunk] | None = None) -> dict[Line, str]:
    """What `explain` adds to a run without `texts.readers`: dead code. For a change whose
    unexplained lines are all removed ones (it searches the tree)."""
    return _dead(hunks, texts, every or hunks)


def _code(lines: list[str]) -> Iterable[tuple[int, str]]:
    for i in code_line_indices(lines):
        yield i, lines[i].strip()


def may_move(lines: list[str]) -> bool:
    """Whether a side of a hunk can count as moved code: it has `MIN_MOVED` code lines, or it opens
    with a module-level definition, whose name does not recur by chance however short its body."""
    code = code_line_indices(lines)
    return len(code) >= MIN_MOVED or (bool(code) and _TOP_DEFINITION.match(lines[code[0]]) is not None)


def moved(hunks: list[Hunk], texts: Texts, every: list[Hunk]) -> dict[Line, str]:
    """Lines of hunks whose code lines (nearly all) appear on the other side of the change, stripped
    of their indent: the code moved, within a file or to another."""
    removed = Counter(x for h in every for _, x in _code(h.old))
    added = Counter(x for h in every for _, x in _code(h.new))
    out: dict[Line, str] = {}
    for k, h in enumerate(hunks):
        for side, lines, other in (("old", h.old, added), ("new", h.new, removed)):
            code = list(_code(lines))
            found = [i for i, x in code if other[x] > 0]
            # the lines not found (an import the new home needs) are left for the other finders; a
            # short definition counts only when moved whole
            share = MOVED_SHARE if len(code) >= MIN_MOVED else 1.0
            if may_move(lines) and len(found) >= share * len(code):
                out.update(((k, side, i), MOVED) for i in found)
    return out


def _parse(text: str | None) -> ast.Module | None:
    """The upstream file's syntax tree, or None for a file that does not parse: not Python, or
    nested past what the parser can hold (it raises RecursionError or MemoryError then)."""
    if text is None:
        return None
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


@functools.lru_cache(maxsize=32)  # one file's text recurs: after one change, before the next
def _message_lines(text: str | None) -> tuple[frozenset[int], dict[int, str]]:
    """1-based lines inside a `raise` statement or a logging, `warnings.warn` or `print` call, and
    the first line of each `raise` with what it raises (`ValueError`; "" for a bare `raise`)."""
    tree = _parse(text)
    if tree is None:
        return frozenset(), {}
    out: set[int] = set()
    raises: dict[int, str] = {}
    # statements only (a message is a statement of its own): walking every expression node of a
    # long file costs more than the parse
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        call = node.value if isinstance(node, ast.Expr) else None
        if isinstance(node, ast.Raise) or (isinstance(call, ast.Call) and _is_message_call(call.func)):
            out.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))  # type: ignore[attr-defined]
            if isinstance(node, ast.Raise):
                exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
                raises[node.lineno] = ast.unparse(exc) if exc is not None else ""
            continue
        for name in ("body", "orelse", "finalbody", "handlers", "cases"):
            stack.extend(x for x in getattr(node, name, []) or [] if isinstance(x, ast.AST))
    return frozenset(out), raises


# the text that starts a log, warning or print call (`logger.info(`), as `_is_message_call` reads one
# (`trace_structured` is PyTorch's structured trace log: what it writes is for a person reading a trace)
MESSAGE_CALL = r"(?:print|warnings\.warn|logging\.\w+|\w*logger\.\w+|(?:(?<![\w.])[\w.]+\.|(?<!\w))trace_structured)\("


def _is_message_call(func: ast.expr) -> bool:
    if isinstance(func, ast.Name):
        return func.id in ("print", _TRACE)
    if isinstance(func, ast.Attribute) and func.attr == _TRACE:
        return True
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        return func.value.id in ("logging", "warnings") or naming.is_logger(func.value.id)
    return False


_TRACE = "trace_structured"
_MAYBE_MESSAGE = re.compile(r"[\"']|^raise\b|\b(logger|logging|warnings|print|trace_structured)\b")


# a word that starts a raise or a message call (`logger.info(`, `warnings.warn(`, `print(`)
_MESSAGE_START = re.compile(r"\b(?:raise|logging|warnings|print|trace_structured)\b|(?i:logger)\b")


def _may_be_in_message(text: str | None, number: int, line: str) -> bool:
    """Could line `number` (1-based) of `text`, whose code is `line`, lie in a raise statement or a
    message call? Only if one starts on it, or it continues a statement begun above. Otherwise the
    file need not be parsed to know it does not: parsing a long file costs more than the rest of
    the reading."""
    return text is not None and bool(_MESSAGE_START.search(line) or begun_above(text, number))


def _messages(hunks: list[Hunk], texts: Texts, every: list[Hunk]) -> dict[Line, str]:
    """Lines inside a raise statement or a log call: the upstream's wording, not its behaviour. What
    is raised is behaviour, though: the first line of a `raise` counts only where the other side of
    the change raises the same thing in that file (a `raise` that became a warning is behaviour)."""
    out: dict[Line, str] = {}
    parsed: dict[tuple[str, str], tuple[frozenset[int], dict[int, str]]] = {}
    heads: dict[tuple[str, str], set[str]] = {}  # (side, path) -> what the changed `raise` lines raise
    firsts: list[tuple[Line, str, str, str]] = []  # (line, side, path, what it raises)
    for k, h in enumerate(hunks):
        for side, lines, start, text in (
            ("old", h.old, h.old_start, texts.before),
            ("new", h.new, h.new_start, texts.after),
        ):
            # only a line with a string, a raise or a call can be part of a message: parse for those
            if not any(_MAYBE_MESSAGE.search(x) for _, x in _code(lines)):
                continue
            body = text(h.path)
            if not any(_may_be_in_message(body, start + i, x) for i, x in _code(lines)):
                continue
            if (side, h.path) not in parsed:
                parsed[(side, h.path)] = _message_lines(body)
            inside, raises = parsed[(side, h.path)]
            for i, _ in _code(lines):
                if start + i in raises:
                    heads.setdefault((side, h.path), set()).add(raises[start + i])
                    firsts.append(((k, side, i), side, h.path, raises[start + i]))
                elif start + i in inside:
                    out[(k, side, i)] = MESSAGE
    for line, side, path, raised in firsts:
        if raised in heads.get(("new" if side == "old" else "old", path), set()):
            out[line] = MESSAGE
    return out


# a string is one token: two lines that differ in a string differ in behaviour here (a message
# inside a raise or a log call is `_messages`' to explain)
_TOKEN = re.compile(r"[rRbBfFuU]{0,2}(?:\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*')|[A-Za-z_]\w*|\S")


def _shape(line: str) -> list[str]:
    return _TOKEN.findall(line)


def _assigned(name: str, lines: Iterable[str]) -> bool:
    n = re.escape(name)
    rx = re.compile(rf"^\s*{n}\s*(?::[^=]*)?=[^=]|^\s*for\s+(?:\w+\s*,\s*)*{n}\b")
    return any(rx.search(x) for x in lines)


_DEFINES = re.compile(r"^\s*(?:async\s+def|def|class)\s+([A-Za-z_]\w*)")


def _renamed_here(a: str, b: str, hunks: list[Hunk], texts: Texts, every: list[Hunk]) -> bool:
    """The change itself renames `a` to `b`: a local assigned on the lines `hunks` remove, or a
    definition the change renames (a `def` or `class` line of `a` removed and one of `b` added, or
    a module's file `a.py` gone and `b.py` new). An imported name alone may now name other code."""
    if _assigned(a, [x for h in hunks for x in h.old]):
        return True

    def defines(name: str, side: str) -> bool:
        return any((m := _DEFINES.match(x)) is not None and m.group(1) == name for h in every for x in getattr(h, side))

    if defines(a, "old") and defines(b, "new"):
        return True
    gone = {PurePosixPath(h.path).stem for h in every if texts.after(h.path) is None}
    came = {PurePosixPath(h.path).stem for h in every if texts.before(h.path) is None}
    return a in gone and b in came


def _words(text: str | None) -> set[str]:
    return set(re.findall(r"[A-Za-z_]\w*", text or ""))


_NAME = re.compile(r"[A-Za-z_]\w*")


def _pairs(old: list[str], new: list[str], known: dict[str, str]) -> dict[str, str] | None:
    """The renames that turn `old` into `new` line for line (consistent with `known`), or None
    when something else differs."""
    if not old or len(old) != len(new):
        return None
    mine: dict[str, str] = {}
    texts: list[tuple[str, str]] = []  # string literals that differ: they must differ by the renames alone
    for a, b in zip(old, new, strict=True):
        sa, sb = _shape(a), _shape(b)
        if len(sa) != len(sb):
            return None
        for x, y in zip(sa, sb, strict=True):
            if x == y:
                continue
            if x[-1:] in "'\"" and y[-1:] in "'\"":
                texts.append((x, y))
                continue
            if not (_NAME.fullmatch(x) and _NAME.fullmatch(y)) or {**known, **mine}.setdefault(x, y) != y:
                return None
            mine[x] = y
    names = {**known, **mine}
    if any(_NAME.sub(lambda m: names.get(m.group(), m.group()), x) != y for x, y in texts):
        return None
    return mine


def _renamed_locals(hunks: list[Hunk], texts: Texts, every: list[Hunk]) -> dict[Line, str]:
    """Hunks that rewrite lines one for one, the same but for names renamed throughout: the change
    renames the old name (`_renamed_here`), and in each file where it is renamed it is gone after
    the change and the new name unknown before it."""
    pairs: dict[str, str] = {}
    where: dict[str, set[str]] = {}  # old name -> the files it is renamed in
    candidates: list[tuple[int, list[int], list[int]]] = []
    for k, h in enumerate(hunks):
        old, new = list(_code(h.old)), list(_code(h.new))
        mine = _pairs([x for _, x in old], [x for _, x in new], pairs)
        if mine is not None:
            pairs.update(mine)
            for a in mine:
                where.setdefault(a, set()).add(h.path)
            candidates.append((k, [i for i, _ in old], [i for i, _ in new]))
    if not pairs:
        return {}
    for a, b in pairs.items():
        if not _renamed_here(a, b, hunks, texts, every):
            return {}
        if any(a in _words(texts.after(p)) or b in _words(texts.before(p)) for p in where[a]):
            return {}
    out: dict[Line, str] = {}
    for k, olds, news in candidates:
        out.update(((k, "old", i), RENAME) for i in olds)
        out.update(((k, "new", i), RENAME) for i in news)
    return out


_PARAM = re.compile(r"^\s*\*{0,2}([A-Za-z_]\w*)\s*(?::[^=]+)?(?:=.+)?,?$")


def _unused_parameters(hunks: list[Hunk], texts: Texts, every: list[Hunk]) -> dict[Line, str]:
    """Removed lines that declare a parameter (`name: type = default,`) in a `def` signature, or
    forward it (`name=name,`), whose name no other code line of the file before the change mentions
    (comments and docstrings aside): nothing read it."""
    out: dict[Line, str] = {}
    declared: dict[tuple[str, str], set[int]] = {}  # (path, name) -> 1-based old lines removed that declare it
    for h in every:
        for i, line in _code(h.old):
            m = _PARAM.match(line)
            if m is not None:
                declared.setdefault((h.path, m.group(1)), set()).add(h.old_start + i)
    wanted: dict[str, list[tuple[int, int, str]]] = {}  # path -> (hunk, line, name) of each removed declaration
    for k, h in enumerate(hunks):
        if any(True for _ in _code(h.new)):
            continue
        for i, line in _code(h.old):
            if (m := _PARAM.match(line)) is not None:
                wanted.setdefault(h.path, []).append((k, i, m.group(1)))
    for path, found in wanted.items():
        before = texts.before(path)
        if before is None:
            continue
        code_rows = {i + 1 for i in code_line_indices(before.splitlines())}
        starts = [0, *(m.end() for m in re.finditer("\n", before))]
        # each name's rows, from one pass over the file for all of them
        names = "|".join(sorted({re.escape(name) for _, _, name in found}))
        rows: dict[str, set[int]] = {}
        for w in re.finditer(rf"\b(?:{names})\b", before):
            rows.setdefault(w.group(0), set()).add(bisect.bisect_right(starts, w.start()))
        for k, i, name in found:
            own = declared.get((path, name), set())
            # unused unless some code row other than the removed declarations mentions the name
            if any(row in code_rows and row not in own for row in rows.get(name, ())):
                continue
            # a parameter a signature declares (its `name=name,` forwards go with it); `LIMIT = 4` is none
            if any(_in_signature(before, starts, row) for row in own):
                out[(k, "old", i)] = UNUSED
    return dict(sorted(out.items()))


_DEF_OPEN = re.compile(r"^\s*(?:async\s+)?def\s+[A-Za-z_]\w*\s*(?:\[[^\]]*\])?\s*$")
_SIGNATURE_LINES = 200  # a signature longer than this is not looked for: the line counts as no parameter


def _in_signature(text: str, starts: list[int], row: int) -> bool:
    """Does 1-based `row` of `text` lie inside a `def` signature's parentheses? The brackets above it
    are matched back to the one left open (strings and comments aside), which must follow `def name`.
    A scan of the lines above, not a parse: a long file's parse costs more than the finder."""
    depth = 0
    for r in range(row - 1, max(0, row - _SIGNATURE_LINES), -1):
        line = uncommented(text[starts[r - 1] : starts[r] - 1] if r < len(starts) else text[starts[r - 1] :])
        line = QUOTED.sub("x", line)
        for at in range(len(line) - 1, -1, -1):
            c = line[at]
            if c in ")]}":
                depth += 1
            elif c in "([{":
                if depth == 0:
                    return c == "(" and bool(_DEF_OPEN.match(line[:at]))
                depth -= 1
    return False


# `y = list(x)`, `y = tuple(x)`, `y = x.copy()`, `y = copy.copy(x)`: a copy of a collection
_COPY_BIND = re.compile(r"^([A-Za-z_]\w*)\s*=\s*(?:(?:list|tuple|copy\.copy)\(([\w.]+)\)|([\w.]+)\.copy\(\))$")
_COPY_CALL = re.compile(r"\.copy\(\)|\b(?:list|tuple)\(([\w.]+)\)")
_ZERO_ARG = re.compile(r"\.([A-Za-z_]\w*)\(\)")
_RETURNS = re.compile(r"\)\s*->.*:$")


def _uncopied(line: str) -> str:
    return _COPY_CALL.sub(lambda m: m.group(1) or "", line)


def _unannotated(line: str) -> str:
    """`line` without parameter and return annotations, read as (part of) a `def` signature:
    `keys: Sequence[int] = (),` -> `keys = (),`; `) -> int:` -> `):`."""
    line = _RETURNS.sub("):", line)
    base = 1 if line.startswith(("def ", "async def ")) else 0
    out: list[str] = []
    depth, skipping = 0, False
    for tok in _TOKEN.findall(line):
        if tok in "([{":
            depth += 1
        elif tok in ")]}":
            depth -= 1
        at_base = depth == base or (tok == ")" and depth == base - 1)
        if skipping and at_base and tok in (",", "=", ")"):
            skipping = False
        if skipping:
            continue
        if tok == ":" and depth == base and out and _NAME.fullmatch(out[-1]):
            skipping = True
            continue
        out.append(tok)
    return " ".join(out)


@functools.lru_cache(maxsize=32)
def _export_rows(text: str | None) -> frozenset[int]:
    """1-based lines of the module's `__all__` statements: `__all__ = [...]`, `__all__ += [...]`,
    `__all__.extend(...)` and the like."""
    if text is None or "__all__" not in text:
        return frozenset()
    tree = _parse(text)
    if tree is None:
        return frozenset()
    rows: set[int] = set()
    for node in ast.walk(tree):  # also under `if` and `try`: `__all__ += [...]` where an import may fail
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            targets = [getattr(node.value.func, "value", node.value.func)]
        else:
            continue
        if any(isinstance(x, ast.Name) and x.id == "__all__" for x in targets):
            rows.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    return frozenset(rows)


def _exports(hunks: list[Hunk], texts: Texts, every: list[Hunk]) -> dict[Line, str]:
    """Lines of a module's `__all__`: it names what `from module import *` takes, which a port
    spells as its own headers, so editing it carries no behaviour."""
    out: dict[Line, str] = {}
    for k, h in enumerate(hunks):
        sides = (("old", h.old, h.old_start, texts.before), ("new", h.new, h.new_start, texts.after))
        for side, lines, start, text_of in sides:
            if not any("__all__" in x or x.strip().startswith(("'", '"')) for x in lines):
                continue  # an `__all__` edit names `__all__` or lists quoted names: skip the parse otherwise
            rows = _export_rows(text_of(h.path))
            out.update(((k, side, i), EXPORT) for i, _ in _code(lines) if start + i in rows)
    return out


@functools.lru_cache(maxsize=32)
def _signatures(text: str | None) -> tuple[frozenset[int], frozenset[str]]:
    """1-based lines of the `def` signatures in `text`, and the names it defines as plain functions
    or methods (not properties)."""
    tree = _parse(text)
    if tree is None:
        return frozenset(), frozenset()
    rows: set[int] = set()
    plain: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            rows.update(range(node.lineno, node.body[0].lineno))
            if not {_last_name(d) for d in node.decorator_list} & {"property", "cached_property"}:
                plain.add(node.name)
    return frozenset(rows), frozenset(plain)


def _last_name(node: ast.expr) -> str:
    """`functools.cached_property` -> `cached_property`; `property` -> `property`; else ""."""
    return node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else ""


def _copy_renames(hunks: list[Hunk], side: str, text: Callable[[str], str | None]) -> dict[str, dict[str, str]]:
    """Per file, the renames that copies bound to a name on `side` imply: `y = list(x)` removed,
    with `y` gone from the file on the other side (`text`), reads as y -> x."""
    out: dict[str, dict[str, str]] = {}
    for h in hunks:
        for _, x in _code(getattr(h, side)):
            m = _COPY_BIND.match(x)
            if m is not None and m.group(1) != (m.group(2) or m.group(3)) and m.group(1) not in _words(text(h.path)):
                out.setdefault(h.path, {})[m.group(1)] = m.group(2) or m.group(3)
    return out


def _unbound(lines: list[tuple[int, str]], renames: dict[str, str]) -> list[tuple[int, str]]:
    """`lines` less the copies bound to a name that `renames` reads back, or bound to their own
    name (`x = list(x)`); the rest with the renames applied."""
    out = []
    for i, x in lines:
        m = _COPY_BIND.match(x)
        if m is not None and (m.group(1) in renames or m.group(1) == (m.group(2) or m.group(3))):
            continue
        out.append((i, _NAME.sub(lambda w: renames.get(w.group(0), w.group(0)), x) if renames else x))
    return out


def _pair_kind(a: str, b: str) -> str | None:
    """How the old line `a` and the new line `b` differ by Python mechanics only; None if otherwise.
    Trailing comments (`# type: ignore[...]`, `# noqa`) are no code, and are read past."""
    if a != b and uncommented(a) == uncommented(b):
        return COMMENT
    a, b = uncommented(a), uncommented(b)
    if _uncopied(a) == _uncopied(b):
        return COPY
    if _ZERO_ARG.sub(r".\1", a) == _ZERO_ARG.sub(r".\1", b):
        return PROPERTY
    if _unannotated(a) == _unannotated(b):
        return ANNOTATION
    return None


def _mechanics(hunks: list[Hunk], texts: Texts, every: list[Hunk]) -> dict[Line, str]:
    """Hunks whose old and new code lines pair one for one and differ only by Python mechanics a
    port spells otherwise or not at all: a collection copied or not (`.copy()`, `list(x)`, a copy
    bound to a name), an attribute read that became a call or back (`.n` / `.n()`: a property
    became a method), or the annotations of a `def` signature."""
    removed, added = _copy_renames(every, "old", texts.after), _copy_renames(every, "new", texts.before)
    out: dict[Line, str] = {}
    for k, h in enumerate(hunks):
        olds, news = list(_code(h.old)), list(_code(h.new))
        old, new = _unbound(olds, removed.get(h.path, {})), _unbound(news, added.get(h.path, {}))
        kept = {("old", i) for i, _ in old} | {("new", j) for j, _ in new}
        bound = [x for x in [*(("old", i) for i, _ in olds), *(("new", j) for j, _ in news)] if x not in kept]
        if len(old) != len(new) or not (old or bound):
            if old and new and not bound and _reflowed_annotations(h, old, new, texts):
                out.update(((k, "old", i), ANNOTATION) for i, _ in old)
                out.update(((k, "new", j), ANNOTATION) for j, _ in new)
            continue
        # lines equal as written differ in indent alone, and indent in Python moves a line in or out of a block
        raw_old, raw_new = dict(olds), dict(news)
        moved = {
            (i, j)
            for (i, _), (j, _) in zip(old, new, strict=True)
            if raw_old[i] == raw_new[j] or _indent(h.old[i]) != _indent(h.new[j])
        }
        pairs = [
            _Pair(i, a, j, b, None if (i, j) in moved else _pair_kind(a, b))
            for (i, a), (j, b) in zip(old, new, strict=True)
        ]
        if any(x.kind is None for x in pairs) or not _mechanics_hold(h, pairs, texts):
            continue
        out.update(((k, side, i), COPY) for side, i in bound)
        for x in pairs:
            out[(k, "old", x.i)] = out[(k, "new", x.j)] = x.kind or COPY
    return out


def _reflowed_annotations(h: Hunk, old: list[tuple[int, str]], new: list[tuple[int, str]], texts: Texts) -> bool:
    """A `def` signature whose annotations changed as it was broken over other lines (a formatter
    splits a line the new annotation made too long): every code line lies in a signature, and the
    two sides, each joined into one line, are the same without their annotations and with no
    trailing comma, but not the same as written."""
    a, b = (" ".join(uncommented(x).strip() for _, x in side) for side in (old, new))
    if _untrailed(_unannotated(a).split()) != _untrailed(_unannotated(b).split()):
        return False
    if _untrailed(_TOKEN.findall(a)) == _untrailed(_TOKEN.findall(b)):
        return False  # the same code over other lines: the reflow finder's
    # the files are parsed only now, for the few hunks the text alone could not rule out
    rows_before, _ = _signatures(texts.before(h.path))
    rows_after, _ = _signatures(texts.after(h.path))
    return all(h.old_start + i in rows_before for i, _ in old) and all(h.new_start + j in rows_after for j, _ in new)


def _untrailed(tokens: list[str]) -> list[str]:
    """`tokens` less each comma that closes a list (`a, b,)`): a formatter adds one when it breaks the list."""
    return [t for k, t in enumerate(tokens) if not (t == "," and k + 1 < len(tokens) and tokens[k + 1] in ")]}")]


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


class _Pair(NamedTuple):
    i: int  # the old line's index in the hunk
    a: str  # the old line, renames applied
    j: int
    b: str
    kind: str | None  # what `_pair_kind` found the two differ by


def _mechanics_hold(h: Hunk, pairs: list[_Pair], texts: Texts) -> bool:
    """The facts `_pair_kind` leaves to the file: annotated lines lie in `def` signatures on both
    sides, and a name read that became a call (or back) is no plain function of the file on both
    sides (then the change adds or drops a call, which is behaviour). Copies alone need no parse."""
    if all(x.kind in (COPY, COMMENT) for x in pairs):
        return True
    rows_before, plain_before = _signatures(texts.before(h.path))
    rows_after, plain_after = _signatures(texts.after(h.path))
    for x in pairs:
        if x.kind == ANNOTATION and not (h.old_start + x.i in rows_before and h.new_start + x.j in rows_after):
            return False
        switched = set(_ZERO_ARG.findall(x.a)) ^ set(_ZERO_ARG.findall(x.b))
        if x.kind == PROPERTY and switched & plain_before & plain_after:
            return False
    return True


class _Definition(NamedTuple):
    name: str
    first: int  # 1-based, decorators included
    last: int


@functools.lru_cache(maxsize=32)
def _definitions(text: str | None) -> tuple[_Definition, ...]:
    """The names `text` defines at module or class level (also under a module-level `if` or `try`),
    with their lines: functions and classes without a registering decorator (`@register(...)` makes
    the definition reachable by something other than its name), assignments to a name whose value
    runs no code (a call may register something; a lambda's body runs only when called), and the
    string keys of a module-level dict literal (a table of settings such as environment variables).
    Dunder names are left out: Python calls them for the class."""
    tree = _parse(text)
    if tree is None:
        return ()
    out: list[_Definition] = []
    stack: list[tuple[ast.stmt, bool]] = [(x, True) for x in tree.body]
    while stack:
        node, top = stack.pop()
        if isinstance(node, (ast.If, ast.Try)) and top:
            inner = [*node.body, *node.orelse, *getattr(node, "finalbody", [])]
            inner += [y for h in getattr(node, "handlers", []) for y in h.body]
            stack.extend((x, True) for x in inner)
            continue
        out.extend(_defined_by(node, top))
        if isinstance(node, ast.ClassDef):
            stack.extend((x, False) for x in node.body)
    return tuple(x for x in out if not (x.name.startswith("__") and x.name.endswith("__")))


def _defined_by(node: ast.stmt, top: bool) -> list[_Definition]:
    last = node.end_lineno or node.lineno
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        if any(isinstance(d, ast.Call) for d in node.decorator_list):
            return []
        return [_Definition(node.name, min([node.lineno, *(d.lineno for d in node.decorator_list)]), last)]
    target, value = (
        (node.targets[0] if len(node.targets) == 1 else None, node.value)
        if isinstance(node, ast.Assign)
        else (node.target, node.value)
        if isinstance(node, ast.AnnAssign)
        else (None, None)
    )
    if not isinstance(target, ast.Name):
        return []
    if top and isinstance(value, ast.Dict):
        return [
            _Definition(k.value, k.lineno, v.end_lineno or v.lineno)
            for k, v in zip(value.keys, value.values, strict=True)
            if isinstance(k, ast.Constant)
            and isinstance(k.value, str)
            and _NAME.fullmatch(k.value)
            and _runs_nothing(v)
        ]
    return [_Definition(target.id, node.lineno, last)] if value is None or _runs_nothing(value) else []


def _runs_nothing(node: ast.expr) -> bool:
    """Does evaluating `node` call nothing (a lambda's body aside)?"""
    stack: list[ast.AST] = [node]
    while stack:
        x = stack.pop()
        if isinstance(x, (ast.Call, ast.Await, ast.Yield, ast.YieldFrom, ast.NamedExpr)):
            return False
        if not isinstance(x, ast.Lambda):
            stack.extend(ast.iter_child_nodes(x))
    return True


def _removed_rows(every: list[Hunk]) -> dict[str, set[int]]:
    """path -> the 1-based lines of the file before the change that the change removes."""
    removed: dict[str, set[int]] = {}
    for h in every:
        removed.setdefault(h.path, set()).update(range(h.old_start, h.old_start + len(h.old)))
    return removed


def _dead(hunks: list[Hunk], texts: Texts, every: list[Hunk]) -> dict[Line, str]:
    """Removed definitions that nothing read: every line of the definition is removed, and every
    code line of the tree before the change that names it is the definition itself or a line the
    change removes. The definition's own line, found by the search, is its positive control: where
    the search cannot see it, nothing counts as dead."""
    if texts.readers is None:
        return {}
    removed = _removed_rows(every)
    candidates: list[tuple[str, _Definition]] = []
    for path in sorted({h.path for h in hunks if any(True for _ in _code(h.old))}):
        gone = removed.get(path, set())
        candidates += [
            (path, d) for d in _definitions(texts.before(path)) if all(r in gone for r in range(d.first, d.last + 1))
        ]
    found = texts.readers(tuple(sorted({d.name for _, d in candidates}))) if candidates else None
    if not found:
        return {}
    dead: list[tuple[str, _Definition]] = []
    for path, d in candidates:
        rx = re.compile(rf"(?<![\w]){re.escape(d.name)}(?![\w])")
        lines = [(p, row) for p, row, x in found if rx.search(x)]
        control = any(p == path and d.first <= row <= d.last for p, row in lines)
        if control and all(row in removed.get(p, set()) for p, row in lines):
            dead.append((path, d))
    out: dict[Line, str] = {}
    for k, h in enumerate(hunks):
        for i, _ in _code(h.old):
            if any(p == h.path and d.first <= h.old_start + i <= d.last for p, d in dead):
                out[(k, "old", i)] = DEAD
    return out


def _branches(node: ast.If) -> list[list[ast.stmt]] | None:
    """The bodies of an `if` / `elif` / `else` chain when every test runs nothing (`_runs_nothing`);
    None for a chain with a test that calls, or with no `else`."""
    out: list[list[ast.stmt]] = []
    while True:
        if not _runs_nothing(node.test):
            return None
        out.append(node.body)
        if len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If):
            node = node.orelse[0]
            continue
        if not node.orelse:
            return None
        out.append(node.orelse)
        return out


def _same(bodies: list[list[ast.stmt]]) -> bool:
    """Are the branches the same syntax tree? No, where one is nested past what the comparison can follow."""
    try:
        return len({ast.dump(ast.Module(b, [])) for b in bodies}) == 1
    except RecursionError:
        return False


def _merged(hunks: list[Hunk], texts: Texts, every: list[Hunk]) -> dict[Line, str]:
    """An `if`/`else` (or `elif` chain) whose branches are the same code, removed whole and replaced
    by that code once: every branch ran the same statements, and the tests (which call nothing)
    only chose among them. Its removed lines, and the added lines that are the one copy, carry no
    behaviour."""
    out: dict[Line, str] = {}
    for k, h in enumerate(hunks):
        stripped = {x.strip() for x in h.old}
        if (
            not h.new
            or not h.path.endswith(".py")
            or "else:" not in stripped
            or not any(x.startswith("if ") for x in stripped)
        ):
            continue  # read and parse only where an `if` and its `else` are both removed
        text = texts.before(h.path)
        tree = _parse(text)
        if text is None or tree is None:
            continue
        rows, first, last = text.splitlines(), h.old_start, h.old_start + len(h.old) - 1
        for node in ast.walk(tree):
            if not (isinstance(node, ast.If) and first <= node.lineno and (node.end_lineno or 0) <= last):
                continue
            bodies = _branches(node)
            if bodies is None or not _same(bodies):
                continue
            body = {x.strip() for x in rows[bodies[0][0].lineno - 1 : bodies[0][-1].end_lineno]}
            copy = [(j, x) for j, x in _code(h.new) if x in body]
            if {x for _, x in copy} != {x for x in body if x and not x.startswith("#")}:
                continue  # the code is not all there once more: the change does more than merge
            span = range(node.lineno - first, (node.end_lineno or 0) - first + 1)
            out.update(((k, "old", i), MERGED) for i, _ in _code(h.old) if i in span)
            out.update(((k, "new", j), MERGED) for j, _ in copy)
    return out
