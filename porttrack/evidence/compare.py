"""A hunk against the port: the port's tokens and literals, and where each hunk stands there
(`ported`, `gap`, `absent`), which audit's content evidence is built from."""

from __future__ import annotations

import re
from collections.abc import Callable, Set
from typing import NamedTuple

from porttrack import parse
from porttrack.gitio import Hunk
from porttrack.evidence.hunks import code_lines, distinctive, tokens
from porttrack.evidence.naming import norm, words


_C_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)


# what a comment span leaves of a C-family line: a block comment opened above the hunk, or
# closed below it, shows as `/* ...` or as continuation lines (`* ...`, `*/`); `*ptr = 0;` has
# no space after its star
_C_COMMENT_LEFT = re.compile(r"^\s*(?:/\*|\*(?:\s|/|$))")


def without_c_comments(hunk: Hunk) -> Hunk:
    """A C, C++ or CUDA hunk with its comments blanked, as the port's files are read (`_C_COMMENT`):
    what Python's `#` is to the rest of this module. Other hunks come back as they are, since `//`
    is Python's floor division."""
    if parse.language_for(hunk.path) not in ("c", "cpp", "cuda"):
        return hunk
    return hunk._replace(old=_blank_c_comments(hunk.old), new=_blank_c_comments(hunk.new))


def _blank_c_comments(lines: list[str]) -> list[str]:
    if not lines:  # a side with no lines stays without any (joined, it would split into one)
        return lines
    text = _C_COMMENT.sub(lambda m: "\n" * m.group().count("\n"), "\n".join(lines))
    return ["" if _C_COMMENT_LEFT.match(x) else x.rstrip() for x in text.split("\n")]


def port_tokens(text: str) -> set[str]:
    """What a port file can be compared on: its identifiers in one spelling (see `norm`), its numbers
    and its string literals' contents; its comments are left out (a comment naming a thing is no code)."""
    text = _C_COMMENT.sub(" ", text)
    out = {norm(t) for t in set(re.findall(r"[A-Za-z_]\w*", text))}
    out.update(re.findall(r"\b\d+(?:\.\d+)?(?:e-?\d+)?\b", text))
    out.update('"' + t + '"' for t in re.findall(r'"((?:[^"\\]|\\.)*)"', text))
    return out


# a string literal's contents, or a number (a version or a size, not a 0, 1 or 2 that any line has)
_LITERAL = re.compile(r"\"((?:[^\"\\]|\\.)*)\"|'((?:[^'\\]|\\.)*)'|(?<![\w.])(\d+(?:\.\d+)*)(?![\w.])")
MIN_ROW = 2  # literals a line needs before finding them together on one port line tells anything


def literals(line: str) -> frozenset[str]:
    """The string contents (in double quotes, as `port_form` writes them) and the numbers of one line."""
    out = set()
    for m in _LITERAL.finditer(line):
        if m.group(3) is not None:
            if m.group(3) not in ("0", "1", "2"):
                out.add(m.group(3))
        elif text := m.group(1) if m.group(1) is not None else m.group(2):
            out.add('"' + text + '"')
    return frozenset(out)


def without_comments(text: str) -> str:
    """A port file's text with its comments blanked, each line where it was."""
    return _C_COMMENT.sub(lambda m: "\n" * m.group().count("\n"), text)


def literal_rows(text: str) -> list[frozenset[str]]:
    """`literals` of each line of a port file, comments left out (line numbers kept: index + 1)."""
    code = without_comments(text)
    return [literals(x) if ('"' in x or any(c.isdigit() for c in x)) else frozenset() for x in code.splitlines()]


def row_lines(lines: list[str], constructs: dict[str, str] | None = None) -> list[frozenset[str]] | None:
    """The literals of each code line of one side of a hunk, when every line that carries a token
    is a row of at least MIN_ROW literals, one a string of four characters or more
    (`"OldNetForLM": "1.4.0",`); None otherwise. Numbers alone (`(0, 3, 4, 5)`) recur by chance."""
    out = []
    for line in code_lines(lines, constructs):
        if not tokens([line]):
            continue  # brackets and commas alone
        row = literals(line)
        if len(row) < MIN_ROW or not any(x[0] == '"' and len(x) >= 6 for x in row):
            return None
        out.append(row)
    return out


def rows_found(
    h: Hunk, files: list[str], rows_of: Callable[[str], list[frozenset[str]]], constructs: dict[str, str] | None = None
) -> list[tuple[frozenset[str], tuple[str, int]]]:
    """A hunk that tells nothing by its tokens (each was in the file before) may still add rows of
    a table: each added line a row of literals (`"OldNetForLM": "1.4.0",`) that one line of the
    port's `files` holds whole (`rows_of`: `literal_rows` of a port file). Each row with the port
    file and line that holds it; empty unless every added row is found, and every removed row is
    gone from those lines."""
    new, old = row_lines(h.new, constructs), row_lines(h.old, constructs)
    if not new or old is None or not files:
        return []
    rows = [(pf, n + 1, row) for pf in files for n, row in enumerate(rows_of(pf)) if len(row) >= 2]

    def holder(want: frozenset[str]) -> tuple[str, int] | None:
        return next(((pf, n) for pf, n, row in rows if want <= row), None)

    if any(holder(row) for row in old if row not in new):
        return []
    found = []
    for row in new:
        if (at := holder(row)) is None:
            return []
        found.append((row, at))
    return found


def port_form(t: str) -> str:
    """A telling token as the port's token sets hold it: a name in its one spelling, a string in
    double quotes, a number as it is."""
    if t[0] in "\"'":
        return '"' + t[1:-1] + '"'
    return t if t[0].isdigit() else norm(t)


# A Python upstream keeps host and device copies of one array side by side (`x_cpu`, `x_np`,
# `x_gpu`, a host-and-device buffer's mirrors); a port with one buffer, or its own staging, names the data once.
_MIRROR = re.compile(r"_(?:cpu|gpu|np|cpu_tensor|gpu_tensor|pinned)$")


def _mirrors(tokens: set[str], port: Set[str]) -> set[str]:
    """The names among `tokens` the port lacks that are a host or device mirror (`widget_len_cpu`)
    of an array it has (`widget_len`): the port may keep one buffer, so the name says nothing
    of whether it has the change, and it is too weak to say it has."""
    out = set()
    for t in tokens:
        bare = _MIRROR.sub("", t)  # a string or a number ends in no such suffix
        if bare != t and len(bare) >= 4 and port_form(t) not in port and port_form(bare) in port:
            out.add(t)
    return out


class HunkState(NamedTuple):
    state: str  # "ported" | "gap" | "absent" | "neutral"
    new_found: list[str]
    new_missing: list[str]
    old_found: list[str]
    old_missing: list[str]


PORTED_SHARE = 0.75  # of the new side's telling tokens the port must have, with the old side's gone
GONE_SHARE = 0.25  # of the old side's telling tokens the port may still have for it to count as gone
# Telling tokens (new ones found plus old ones gone) a change needs, over all its ported hunks,
# before it counts as ported: a small fix spread over several functions tells one token per hunk.
MIN_TELLING = 2


def weight(token: str) -> int:
    """What one telling token is worth towards MIN_TELLING: a name of three words or more
    (`max_blocks_per_request`) is specific enough to tell alone; anything else counts one."""
    return 2 if token[0].isalpha() and len(words(token)) >= 3 else 1


def compare(
    hunk: Hunk,
    port: Set[str],
    constructs: dict[str, str] | None = None,
    before: frozenset[str] | None = None,
    after: frozenset[str] | None = None,
    unspoken: frozenset[str] = frozenset(),
    language: frozenset[str] = frozenset(),
) -> HunkState:
    """Where one hunk stands in the port: new side present and old side gone is `ported`; neither
    side present is `absent` (the port lacks the code it edits); anything else is `gap`. An old
    side is "gone" only from port files that exist: with none, a deletion tells nothing. A token of
    `unspoken` (a name the upstream author chose, such as a local) tells only where the port has it;
    one of `language` (the file's imports from the standard library) tells nothing (`distinctive`)."""
    new, old = distinctive(hunk, constructs, before, after, language)
    # a new host or device mirror of an array the port has tells nothing either way (`_mirrors`)
    new -= _mirrors(new, port)
    # a port may spell an unspoken name its own way: where the port lacks it, it does not count
    # against the hunk, though it stays listed as missing for what reads the names a hunk lacks
    spoken = new - {t for t in new if t in unspoken and port_form(t) not in port}
    nf = sorted(t for t in new if port_form(t) in port)
    nm = sorted(t for t in new if port_form(t) not in port)
    # a mirror's old side is gone even where the port has the array: only a new one is its data
    of = sorted(t for t in old if port_form(t) in port)
    om = sorted(t for t in old if port_form(t) not in port)
    if not spoken and not old:
        return HunkState("neutral", nf, nm, of, om)
    if not port and not spoken:  # a deletion where the port has no file: nothing to tell
        return HunkState("neutral", nf, nm, of, om)
    new_share = len(nf) / len(spoken) if spoken else 1.0
    old_share = len(of) / len(old) if old else 0.0
    if spoken and old and not nf and not of:
        state = "absent"
    elif new_share >= PORTED_SHARE and old_share <= GONE_SHARE and nf + om:
        # numbers alone recur by chance (a 4, a 1024): found, they tell nothing the hunk did
        state = "neutral" if all(t[0].isdigit() for t in nf + om) else "ported"
    else:
        state = "gap"
    return HunkState(state, nf, nm, of, om)
