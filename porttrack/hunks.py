"""What an upstream change's hunks say, line by line: language-only mechanics, and the tokens
that tell its new side from its old side (for content evidence against the port)."""

from __future__ import annotations

import re
from typing import NamedTuple

from porttrack.gitio import Hunk
from porttrack.naming import norm

_COMMENT = re.compile(r"^(#|$)")
_STRING_ONLY = re.compile(r"^[rRbBfFuU]{0,2}(\"\"\"|'''|\"|').*$|^.*(\"\"\"|''')$")
_CONTINUATION = re.compile(r"^[\w.]+(\s+as\s+\w+)?,?$|^\)$")
_IMPORT_OPEN = re.compile(r"^from\s+[\w.]+\s+import\s+\($")


class LanguageOnly(NamedTuple):
    only: bool  # every changed line is a comment, a docstring, blank, or a listed construct
    constructs: list[str]  # the constructs met, by name, in first-seen order
    behaviour: list[str]  # the first few lines that are none of those (when not `only`)


def _docstring_lines(lines: list[str]) -> set[int]:
    """Indices of lines inside a triple-quoted block that this side opens and closes."""
    out: set[int] = set()
    inside = False
    for i, raw in enumerate(lines):
        line = raw.strip()
        quotes = line.count('"""') + line.count("'''")
        if inside or (quotes and line.startswith(('"""', "'''", 'r"""', "r'''"))):
            out.add(i)
        if quotes % 2 == 1:
            inside = not inside
    return out


def language_only(hunks: list[Hunk], constructs: dict[str, str]) -> LanguageOnly:
    """Is the change made of comments, docstrings and the named constructs alone?"""
    compiled = [(name, re.compile(rx)) for name, rx in constructs.items()]
    met: list[str] = []
    behaviour: list[str] = []
    for h in hunks:
        for side in (h.old, h.new):
            doc = _docstring_lines(side)
            in_import = False
            for i, raw in enumerate(side):
                line = raw.strip()
                if _IMPORT_OPEN.match(line):
                    in_import = True
                    met.append("import") if "import" not in met else None
                    continue
                if in_import and _CONTINUATION.match(line):
                    in_import = line != ")"
                    continue
                in_import = False
                if _COMMENT.match(line) or i in doc:
                    continue
                name = next((n for n, rx in compiled if rx.search(line)), None)
                if name is None:
                    if len(behaviour) < 3:
                        behaviour.append(line)
                    continue
                if name not in met:
                    met.append(name)
    return LanguageOnly(not behaviour and bool(hunks), met, behaviour)


_TOKEN = re.compile(
    r"\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*'|\b\d+(?:\.\d+)?(?:e-?\d+)?\b|[A-Za-z_]\w*|==|!=|<=|>=|//|\*\*|[-+*/%<>]"
)
_PY_WORDS = frozenset(
    [
        "and",
        "or",
        "not",
        "in",
        "is",
        "if",
        "else",
        "elif",
        "for",
        "while",
        "return",
        "def",
        "class",
        "self",
        "cls",
        "None",
        "True",
        "False",
        "pass",
        "lambda",
        "with",
        "as",
        "try",
        "except",
        "finally",
        "raise",
        "yield",
        "from",
        "import",
        "assert",
        "del",
        "global",
        "nonlocal",
        "async",
        "await",
        "break",
        "continue",
        "int",
        "float",
        "str",
        "bool",
        "list",
        "dict",
        "tuple",
        "set",
        "len",
        "range",
        "isinstance",
        "print",
        "super",
    ]
)


def tokens(lines: list[str]) -> set[str]:
    """Identifiers, literals and operators of code lines (comments dropped), minus Python's own words."""
    out: set[str] = set()
    for raw in lines:
        code = raw.split("#", 1)[0] if "#" in raw and '"' not in raw and "'" not in raw else raw
        out.update(t for t in _TOKEN.findall(code) if t not in _PY_WORDS)
    return out


def _code_lines(lines: list[str]) -> list[str]:
    """The lines that are code: comments, blank lines and docstrings dropped."""
    doc = _docstring_lines(lines)
    return [x for i, x in enumerate(lines) if i not in doc and not _COMMENT.match(x.strip())]


def distinctive(hunk: Hunk) -> tuple[set[str], set[str]]:
    """(tokens only the new side has, tokens only the old side has), for identifiers, numbers and
    strings a port could spell the same way; bare operators and one-letter names tell nothing alone.
    Comments and docstrings are left out: they are no behaviour."""
    new, old = tokens(_code_lines(hunk.new)), tokens(_code_lines(hunk.old))

    def telling(t: str) -> bool:
        if t[0] in "\"'":
            return len(t) > 4
        if t[0].isdigit():
            return t not in ("0", "1", "2")
        return (len(t) >= 4 and t[0].isalpha()) or (t.startswith("_") and len(t) > 4)

    return {t for t in new - old if telling(t)}, {t for t in old - new if telling(t)}


_C_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)


def port_tokens(text: str) -> set[str]:
    """What a port file can be compared on: its identifiers in one spelling (see `norm`), its numbers
    and its string literals' contents; its comments are left out (a comment naming a thing is no code)."""
    text = _C_COMMENT.sub(" ", text)
    out = {norm(t) for t in re.findall(r"[A-Za-z_]\w*", text)}
    out.update(re.findall(r"\b\d+(?:\.\d+)?(?:e-?\d+)?\b", text))
    out.update('"' + t + '"' for t in re.findall(r'"((?:[^"\\]|\\.)*)"', text))
    return out


def _port_form(t: str) -> str:
    if t[0] in "\"'":
        return '"' + t[1:-1] + '"'
    return t if t[0].isdigit() else norm(t)


class HunkState(NamedTuple):
    state: str  # "ported" | "gap" | "absent" | "neutral"
    new_found: list[str]
    new_missing: list[str]
    old_found: list[str]
    old_missing: list[str]


PORTED_SHARE = 0.75  # of the new side's telling tokens the port must have, with the old side's gone
GONE_SHARE = 0.25
MIN_TELLING = 2  # telling tokens (new ones found plus old ones gone) a hunk needs before it counts as ported  # of the old side's telling tokens the port may still have for it to count as gone


def compare(hunk: Hunk, port: set[str]) -> HunkState:
    """Where one hunk stands in the port: new side present and old side gone is `ported`; neither
    side present is `absent` (the port lacks the code it edits); anything else is `gap`."""
    new, old = distinctive(hunk)
    nf = sorted(t for t in new if _port_form(t) in port)
    nm = sorted(t for t in new if _port_form(t) not in port)
    of = sorted(t for t in old if _port_form(t) in port)
    om = sorted(t for t in old if _port_form(t) not in port)
    if not new and not old:
        return HunkState("neutral", nf, nm, of, om)
    new_share = len(nf) / len(new) if new else 1.0
    old_share = len(of) / len(old) if old else 0.0
    if new and old and not nf and not of:
        state = "absent"
    elif new_share >= PORTED_SHARE and old_share <= GONE_SHARE and len(nf) + len(om) >= MIN_TELLING:
        state = "ported"
    else:
        state = "gap"
    return HunkState(state, nf, nm, of, om)
