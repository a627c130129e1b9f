"""Code broken over other lines, with language-only constructs put in or taken out of it:
`torch.zeros([n, m], dtype=t)` written over three lines with `pin_memory=True` added. A no-op finder
beside those of porttrack/evidence/refactor.py, which audit's `no-op` rule asks where they leave
lines unexplained.

A run of hunks counts when the code it removes and the code it adds are the same tokens in the same
order once line breaks, trailing commas and each language-only construct are taken out. A construct is
the match of its `[audit] language_only` pattern, with the `.` before it and the call or the
`= value` after it (`.pin_memory()`, `pin_memory=True`). Comments, docstrings and the lines other
finders explain are on neither side. Nothing is parsed, so a file in any language counts.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable

from porttrack.evidence.hunks import code_line_indices, continues_statement, uncommented
from porttrack.evidence.refactor import Line, Texts
from porttrack.gitio import Hunk

REFLOWED = "reflowed code"
GAP = 3  # unchanged lines between two hunks of one run: git cuts a reflowed call around a line it kept

_TOKEN = re.compile(r"[A-Za-z_]\w*|\d[\w.]*|\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*'|\S")
_CLOSING = frozenset(")]}")
_PAIRS = {"(": ")", "[": "]", "{": "}"}


def explain(
    hunks: list[Hunk],
    constructs: dict[str, str],
    unexplained: Iterable[Line],
    texts: Texts,
    strings: frozenset[Line] = frozenset(),
) -> dict[Line, str]:
    """The `unexplained` lines of each run of hunks whose two sides are the same code once reflowed
    (see the module's docstring). A run is the hunks of one file with at most `GAP` unchanged lines
    between each and the next (git cuts a reflowed call into several hunks around a line it kept);
    those lines, read from the file after the change, are on both sides. In Python, where a line's
    indent places its statement, each line that begins a statement adds its indent as a token.
    `strings` are lines inside a docstring opened above a hunk."""
    compiled = [re.compile(rx) for name, rx in constructs.items() if name != "import"]
    left = set(unexplained)
    out: dict[Line, str] = {}
    for run in _runs(hunks, {k for k, _, _ in left}):
        path = hunks[run[0]].path
        before, after = texts.before(path), texts.after(path)
        if before is None or after is None or not _same(hunks, run, after, left, compiled, strings, None):
            continue
        # the indents only where the tokens agree: finding where statements begin scans the files
        if path.endswith((".py", ".pyi")) and not _same(
            hunks, run, after, left, compiled, strings, {"old": before, "new": after}
        ):
            continue
        out.update(dict.fromkeys((x for x in left if x[0] in run), REFLOWED))
    return out


def _same(
    hunks: list[Hunk],
    run: list[int],
    after: str,
    left: set[Line],
    compiled: list[re.Pattern],
    strings: frozenset[Line],
    python: dict[str, str] | None,
) -> bool:
    """Do the run's two sides read as the same tokens (with the indents, where `python` gives each
    side's file)?"""
    gaps = _gaps(hunks, run, after, python["new"] if python else None)
    sides = [
        [
            t
            for k, gap in zip(run, gaps, strict=True)
            for t in (*gap, *_tokens(hunks[k], k, side, left, compiled, strings, python[side] if python else None))
        ]
        for side in ("old", "new")
    ]
    return _normal(sides[0]) == _normal(sides[1])


def _runs(hunks: list[Hunk], wanted: set[int]) -> list[list[int]]:
    """The runs of hunks (indices) of one file, each hunk at most GAP lines after the one before,
    that hold a hunk of `wanted`."""
    runs: list[list[int]] = []
    for k, h in enumerate(hunks):
        if runs and hunks[runs[-1][-1]].path == h.path and _lo(h) - _hi(hunks[runs[-1][-1]]) - 1 <= GAP:
            runs[-1].append(k)
        else:
            runs.append([k])
    return [r for r in runs if wanted.intersection(r)]


def _lo(h: Hunk) -> int:
    """The first line of the hunk's new side (where it would be, for a hunk that adds nothing: git
    numbers that side by the line before it)."""
    return h.new_start if h.new else h.new_start + 1


def _hi(h: Hunk) -> int:
    return _lo(h) + len(h.new) - 1


def _gaps(hunks: list[Hunk], run: list[int], after: str, python: str | None) -> list[list[str]]:
    """Per hunk of the run, the tokens of the unchanged code lines between it and the hunk before
    (none before the first)."""
    rows = after.splitlines()
    gaps: list[list[str]] = [[]]
    for prev, k in itertools.pairwise(run):
        first = _hi(hunks[prev])  # 0-based: the line after the hunk before
        between = rows[first : _lo(hunks[k]) - 1]
        gaps.append([t for n, x in enumerate(between, first) for t in _line_tokens(x, n, python)])
    return gaps


def _line_tokens(raw: str, row: int, python: str | None, line: str | None = None) -> list[str]:
    """The tokens of one line (`line`: its text with a construct taken out), led by its indent where
    it begins a statement of `python` (its Python file; 0-based `row`)."""
    toks = _TOKEN.findall(uncommented((raw if line is None else line).strip()))
    if python is not None and toks and not continues_statement(python, row + 1):
        toks.insert(0, f"\x00{len(raw) - len(raw.lstrip())}")
    return toks


def _tokens(
    h: Hunk,
    k: int,
    side: str,
    left: set[Line],
    compiled: list[re.Pattern],
    strings: frozenset[Line],
    python: str | None,
) -> list[str]:
    """The tokens of one side's code: its unexplained lines whole, and its construct lines with the
    construct taken out."""
    lines = getattr(h, side)
    start = getattr(h, f"{side}_start") - 1  # the 0-based row of the side's first line
    code = set(code_line_indices(lines))
    toks: list[str] = []
    for i, raw in enumerate(lines):
        line = uncommented(raw.strip())
        if (k, side, i) in left:
            toks += _line_tokens(raw, start + i, python)
        elif i in code and (k, side, i) not in strings and (rx := next((r for r in compiled if r.search(line)), None)):
            toks += _line_tokens(raw, start + i, python, _without(line, rx))
    return toks


def _normal(toks: list[str]) -> tuple[str, ...]:
    """Tokens with line continuations and trailing commas (before a closing bracket, another comma
    or the end) left out."""
    toks = [t for t in toks if t != "\\"]
    return tuple(
        t for n, t in enumerate(toks) if t != "," or (n + 1 < len(toks) and toks[n + 1] not in _CLOSING | {","})
    )


def _without(line: str, rx: re.Pattern, most: int = 8) -> str:
    """`line` with each match of `rx` taken out, with the `.` before it and the bracketed call or
    `= value` after it."""
    for _ in range(most):
        m = rx.search(line)
        if m is None or m.end() == m.start():
            break
        start, end = m.start(), m.end()
        head = line[:start].rstrip()
        if head.endswith("."):
            start = len(head) - 1
        rest = line[end:]
        ahead = len(rest) - len(rest.lstrip())
        if rest[ahead : ahead + 1] in _PAIRS:
            end += ahead + _closing(rest[ahead:])
        elif rest[ahead : ahead + 1] == "=" and rest[ahead : ahead + 2] != "==":
            end += ahead + 1 + _value(rest[ahead + 1 :])
        line = line[:start] + line[end:]
    return line


def _closing(text: str) -> int:
    """The length of the bracketed group `text` opens with (all of `text` where it does not close)."""
    depth = 0
    for n, c in enumerate(text):
        if c in _PAIRS:
            depth += 1
        elif c in _CLOSING:
            depth -= 1
            if depth == 0:
                return n + 1
    return len(text)


def _value(text: str) -> int:
    """The length of the value `text` starts with: up to a comma or a closing bracket outside
    brackets."""
    depth = 0
    for n, c in enumerate(text):
        if c in _PAIRS:
            depth += 1
        elif c in _CLOSING:
            if depth == 0:
                return n
            depth -= 1
        elif c == "," and depth == 0:
            return n
    return len(text)
