"""What an upstream change's hunks say, line by line: language-only mechanics, and the tokens
that tell its new side from its old side (for content evidence against the port)."""

from __future__ import annotations

import bisect
import builtins
import functools
import itertools
import keyword
import re
import sys
from collections.abc import Iterator
from typing import NamedTuple

from porttrack.gitio import Hunk

# How many file versions the whole-file readings that recur across entries keep, keyed by the
# text: the version one entry leaves is often met again by a later entry (on a real 876-entry
# cycle, 3,518 reads are 1,933 texts; keeping 64 served 702 repeats, 128 serve 1,041, 256 serve
# 1,292 for no less CPU and ~15 MB more peak memory: each version costs its text and its tokens).
FILE_VERSIONS = 128

_COMMENT = re.compile(r"^(#|$)")
_STRING_ONLY = re.compile(r"^[rRbBfFuU]{0,2}(\"\"\"|'''|\"|').*$|^.*(\"\"\"|''')$")
_CONTINUATION = re.compile(r"^[\w.]+(\s+as\s+\w+)?,?$|^\)$")
_IMPORT_OPEN = re.compile(r"^from\s+[\w.]+\s+import\s+\($")
QUOTED = re.compile(r"\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*'")  # a one-line string literal


def uncommented(line: str) -> str:
    """`line` without its trailing comment (a `#` outside strings)."""
    at = QUOTED.sub(lambda m: "x" * len(m.group(0)), line).find("#") if "#" in line else -1
    return line[:at].rstrip() if at >= 0 else line


class LanguageOnly(NamedTuple):
    only: bool  # every changed line is a comment, a docstring, blank, or a listed construct
    constructs: list[str]  # the constructs met, by name, in first-seen order
    behaviour: list[str]  # the first few lines that are none of those (when not `only`)
    added: bool = False  # one of those lines is on the new side: the change adds behaviour
    unexplained: tuple[tuple[int, str, int], ...] = ()  # all of them: (hunk index, side, line index)


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


def language_only(
    hunks: list[Hunk],
    constructs: dict[str, str],
    explained: dict[tuple[int, str, int], str] | None = None,
    strings: frozenset[tuple[int, str, int]] = frozenset(),
) -> LanguageOnly:
    """Is the change made of comments, docstrings and the named constructs alone? Lines in
    `explained` ((hunk index, "old" | "new", line index) -> a name, see porttrack/evidence/refactor.py)
    count as constructs of that name; lines in `strings` (the same keys: inside a docstring that
    opens above the hunk, see `string_lines`) count as docstring."""
    compiled = [(name, re.compile(rx)) for name, rx in constructs.items()]
    explained = explained or {}
    met: list[str] = []
    behaviour: list[str] = []
    unexplained: list[tuple[int, str, int]] = []
    added = False
    for k, h in enumerate(hunks):
        for side_name, side in (("old", h.old), ("new", h.new)):
            doc = _docstring_lines(side)
            in_import = False
            for i, raw in enumerate(side):
                line = uncommented(raw.strip())  # a construct is one whatever comment trails it (a lint pragma)
                if _IMPORT_OPEN.match(line):
                    in_import = True
                    met.append("import") if "import" not in met else None
                    continue
                if in_import and _CONTINUATION.match(line):
                    in_import = line != ")"
                    continue
                in_import = False
                if _COMMENT.match(line) or i in doc or (k, side_name, i) in strings:
                    continue
                name = next((n for n, rx in compiled if rx.search(line)), None) or explained.get((k, side_name, i))
                if name is None:
                    added = added or side_name == "new"
                    unexplained.append((k, side_name, i))
                    if len(behaviour) < 3:
                        behaviour.append(line)
                    continue
                if name not in met:
                    met.append(name)
    return LanguageOnly(not behaviour and bool(hunks), met, behaviour, added, tuple(unexplained))


def code_line_indices(lines: list[str]) -> list[int]:
    """Indices of the code lines: comments, blank lines and docstrings left out."""
    doc = _docstring_lines(lines)
    return [i for i, x in enumerate(lines) if i not in doc and not _COMMENT.match(x.strip())]


# Names first: the alternatives start with different characters (a letter, a quote, a digit, an
# operator), so the order changes no match, and names are most of a file.
_TOKEN = re.compile(
    r"[A-Za-z_]\w*|\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*'|\b\d+(?:\.\d+)?(?:e-?\d+)?\b|==|!=|<=|>=|//|\*\*|[-+*/%<>]"
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
        # the cheap cut, which leaves a line with quotes its comment: `file_tokens` reads whole files
        # through here, and what a file already had decides which tokens are news (`distinctive`)
        code = raw.split("#", 1)[0] if "#" in raw and '"' not in raw and "'" not in raw else raw
        out.update(_TOKEN.findall(code))
    out.difference_update(_PY_WORDS)
    return out


def code_lines(lines: list[str], constructs: dict[str, str] | None = None) -> list[str]:
    """The lines that carry behaviour a port could spell: comments, blank lines, docstrings, the
    lines of `raise` statements (an exception's class and message are the upstream's wording, not
    its behaviour; the condition that raises stays) and language-only constructs dropped."""
    doc = _docstring_lines(lines)
    compiled = [re.compile("|".join(f"(?:{rx})" for rx in constructs.values()))] if constructs else []
    out: list[str] = []
    depth = 0  # open brackets of a raise statement still running
    for i, raw in enumerate(lines):
        line = uncommented(raw.strip())
        if depth > 0 or line.startswith("raise ") or line == "raise":
            depth = max(0, depth + _brackets(line)) if depth > 0 else max(0, _brackets(line))
            continue
        if i in doc or _COMMENT.match(line) or any(rx.search(line) for rx in compiled):
            continue
        out.append(raw)
    return out


def _brackets(line: str) -> int:
    """Opened minus closed brackets on a line, strings left out."""
    code = QUOTED.sub("", line) if '"' in line or "'" in line else line
    return code.count("(") + code.count("[") + code.count("{") - code.count(")") - code.count("]") - code.count("}")


# Modules of Python's standard library: `math.isnan` is spelled `std::isnan` in a port, so
# the module's name tells nothing about the port.
_STDLIB = frozenset(getattr(sys, "stdlib_module_names", ()))
_BUILTINS = frozenset(dir(builtins)) | frozenset(keyword.kwlist)  # min, len, None, `if (`: the language's words


_IMPORT = re.compile(r"^[ \t]*(?:from[ \t]+([\w.]+)[ \t]+)?import[ \t]+(\([^)]*\)|[^#\n]+)", re.M)


def _imported(text: str) -> Iterator[tuple[str, str]]:
    """(module, name bound) for each name a Python file's import statements bind."""
    for src, names in _import_statements(text):
        for part in names.strip("() \t").replace("\n", " ").split(","):
            bits = part.split()
            if bits:
                yield src or bits[0], bits[-1] if len(bits) == 3 and bits[1] == "as" else bits[0].split(".")[0]


def _import_statements(text: str) -> Iterator[tuple[str | None, str]]:
    """`_IMPORT`'s groups for each import statement of `text`, tried only at the lines that hold the
    word: a line-anchored pattern searched over a whole file tries every position of it, ten times
    the cost of finding the word."""
    at = text.find("import")
    while at != -1:
        m = _IMPORT.match(text, text.rfind("\n", 0, at) + 1)
        if m:
            yield m.group(1), m.group(2)
        # a statement starts a line, so the search goes on from the next line: past the statement
        # read (a parenthesised list may span lines), or past this line; each line is read once
        resume = text.find("\n", m.end() if m else at)
        at = text.find("import", resume) if resume != -1 else -1


@functools.lru_cache(maxsize=FILE_VERSIONS)  # asked once per hunk of a file; the file's text is the key
def outside_names(text: str, package: str) -> frozenset[str]:
    """The names a Python file binds by importing from outside `package` (the standard library, torch,
    typing...): the language's and the libraries' words, which a port in another language spells its
    own way, never a feature it lacks."""
    return frozenset(
        name for module, name in _imported(text) if not module.startswith(".") and module.split(".")[0] != package
    )


@functools.lru_cache(maxsize=FILE_VERSIONS)
def stdlib_names(text: str) -> frozenset[str]:
    """The names a Python file imports from the standard library (`cast`, `Collection`, `dataclass`):
    the language's own words, which no port in another language spells as Python does."""
    return frozenset(name for module, name in _imported(text) if module.split(".")[0] in _STDLIB)


@functools.lru_cache(maxsize=64)  # a line table per version, cheap to rebuild: only the last few kept
def _line_ends(text: str) -> list[int]:
    """The offset just past each line of `text` (keeping its newline), in order."""
    return list(itertools.accumulate(map(len, text.splitlines(keepends=True))))


# A Python file's strings and comments, in order, in one C-speed scan: a quote inside a comment or
# inside another string opens nothing, which counting quotes line by line gets wrong. A backslash
# is read one way only (`\\.`, never also as a plain character): a run of them in an unclosed string
# would otherwise cost time exponential in its length.
_STRINGS_AND_COMMENTS = re.compile(
    r"""(\"\"\"|''')(?:\\.|[^\\])*?\1|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'|#[^\n]*""", re.S
)
# what `str.splitlines` splits on besides "\n": Python's tokenizer and git number lines by "\n"
# (a lone "\r" aside), so where one of these occurs the two count lines differently
_OTHER_BREAKS = "\r\x0b\x0c\x1c-\x1e\x85\u2028\u2029"
_ODD_BREAKS = re.compile(f"[{_OTHER_BREAKS}]")
_LINE_BREAKS = re.compile(f"[^\n{_OTHER_BREAKS}]")  # what splitlines() splits on stays
_ONE_BRACKET = str.maketrans("[{]}", "(())")


class _Strings(NamedTuple):
    inside: tuple[bool, ...]  # per line (0-based): it starts inside a triple-quoted string
    opens: tuple[int, ...]  # per line: the column where a string that runs past the line opens, else -1
    depths: tuple[int, ...]  # per line: the brackets still open where it starts (see `_open_at`)
    odd_breaks: bool  # a line break Python's tokenizer and git do not count (see `begun_above`)


@functools.lru_cache(maxsize=64)  # a line table per version, cheap to rebuild: only the last few kept
def _strings(text: str) -> _Strings:
    """Where a Python file's triple-quoted strings that span lines lie, line by line, and the
    brackets open at each line with strings and comments left out: one scan serves both."""
    starts = [0, *_line_ends(text)]
    inside, opens = [False] * (len(starts) - 1), [-1] * (len(starts) - 1)
    code, last = [], 0  # the text without its strings and comments; a string's line breaks kept
    for m in _STRINGS_AND_COMMENTS.finditer(text):
        code.append(text[last : m.start()])
        last = m.end()
        if m.group(1) is None:
            # a one-quote string, or a comment: its line breaks (a string continued by a backslash)
            # are kept, looked for only where some character is not printable, as a break is not
            if not m.group(0).isprintable():
                code.append(_LINE_BREAKS.sub("", m.group(0)))
            continue
        code.append(_LINE_BREAKS.sub("", m.group(0)))
        first = bisect.bisect_right(starts, m.start())  # the line after the one that opens it
        if first < len(starts) and starts[first] < m.end():  # it runs past its first line
            opens[first - 1] = m.start() - starts[first - 1]
        for k in range(first, len(inside)):
            if starts[k] >= m.end():
                break
            inside[k] = True
    code.append(text[last:])
    depths, depth = [], 0
    # the strings are gone, so no string pass (`_brackets`'): each kind of bracket is folded into one
    for line in "".join(code).translate(_ONE_BRACKET).splitlines():
        depths.append(depth)
        if "(" in line or ")" in line:
            depth = max(0, depth + line.count("(") - line.count(")"))
    depths += [depth] * (len(inside) - len(depths))  # a last line that was all comment or string
    return _Strings(tuple(inside), tuple(opens), tuple(depths), bool(_ODD_BREAKS.search(text)))


def string_lines(lines: list[str], start: int, text: str) -> set[int]:
    """Indices of `lines` (one side of a hunk, its first line at `start` in `text`) that sit inside a
    docstring or another triple-quoted string which opens above the line: read alone, such lines
    look like code and their words like names."""
    if not _odd_quotes_before(text, start):
        return set()
    inside = _strings(text).inside
    return {i for i in range(len(lines)) if 0 <= start + i - 1 < len(inside) and inside[start + i - 1]}


def import_lines(lines: list[str], start: int, text: str) -> set[int]:
    """Indices of `lines` (one side of a hunk, its first line at `start` in `text`) that continue a
    parenthesised `from m import (` opened above the line: read alone, `Name,` looks like code."""
    if not text or "import (" not in text:
        return set()
    inside = _import_rows(text)
    return {i for i in range(len(lines)) if start + i - 1 in inside}


def decorator_lines(lines: list[str], start: int, text: str) -> set[int]:
    """Indices of `lines` (one side of a hunk, its first line at `start` in `text`) that lie in a
    decorator written over several lines (`@register(` ... `)`): read alone, its
    arguments look like code. The opening line is one of them."""
    if not lines or not text or "@" not in text:
        return set()
    first, last = start - 1, start - 2 + len(lines)
    # most files have no such decorator where the hunk lies: only then is the file scanned for its brackets
    if not any(a <= last and first <= b for a, b in _decorator_spans(text)):
        return set()
    inside = _decorator_rows(text)
    return {i for i in range(len(lines)) if start + i - 1 in inside}


# a line that starts with a decorator and opens a bracket; what follows it up to the next `def` or
# `class` line may be its arguments
_DECORATOR_OPEN = re.compile(r"^[ \t]*@[\w.]+[ \t]*\(", re.M)
_DEF_OR_CLASS_LINE = re.compile(r"^[ \t]*(?:async[ \t]+)?(?:def|class)\b", re.M)


@functools.lru_cache(maxsize=FILE_VERSIONS)
def _decorator_spans(text: str) -> tuple[tuple[int, int], ...]:
    """(first, last) 0-based rows that may hold a decorator's arguments: from each line that opens a
    decorator's bracket to the next `def` or `class` line, found at C speed. A superset of
    `_decorator_rows`' rows, to tell cheaply where no hunk line can be one."""
    if _DECORATOR_OPEN.search(text) is None:  # three files in four
        return ()
    ends = _line_ends(text)
    defs = [bisect.bisect_right(ends, m.start()) for m in _DEF_OR_CLASS_LINE.finditer(text)]
    out = []
    for m in _DECORATOR_OPEN.finditer(text):
        row = bisect.bisect_right(ends, m.start())
        k = bisect.bisect_right(defs, row)
        out.append((row, defs[k] if k < len(defs) else len(ends)))
    return tuple(out)


@functools.lru_cache(maxsize=FILE_VERSIONS)
def _decorator_rows(text: str) -> frozenset[int]:
    """The 0-based rows of `text` in a decorator whose brackets stay open past its first row."""
    found = _strings(text)
    if found.odd_breaks:  # rows here and git's lines would not line up
        return frozenset()
    out: set[int] = set()
    opener = None  # the row of the decorator whose brackets are open
    for r, raw in enumerate(_rows(text)):
        if r >= len(found.depths):
            break
        if opener is not None and found.depths[r] > 0:
            out.update((opener, r))
            continue
        opener = r if found.depths[r] == 0 and not found.inside[r] and raw.lstrip().startswith("@") else None
    return frozenset(out)


@functools.lru_cache(maxsize=FILE_VERSIONS)
def _import_rows(text: str) -> frozenset[int]:
    """The 0-based rows of `text` that continue a parenthesised import opened on an earlier row, in
    one pass over the file (a row's own walk back to its opener would cost the run's length each)."""
    out: set[int] = set()
    opened = False
    for r, raw in enumerate(_rows(text)):
        x = uncommented(raw.strip())
        if opened and not x:
            continue  # a blank line or a comment inside the list
        if opened and _CONTINUATION.match(x):
            out.add(r)
            opened = x != ")"
        else:
            opened = _IMPORT_OPEN.match(x) is not None
    return frozenset(out)


def _odd_quotes_before(text: str, number: int) -> bool:
    """Are the triple quotes before line `number` (1-based) odd in number (counted at C speed)? Only
    then can the line start inside a triple-quoted string, and `_strings` scans the file to be sure.
    A string that opens on a line of the hunk itself is the hunk's own to read (`_docstring_lines`)."""
    if not text or number < 2:
        return False
    ends = _line_ends(text)
    at = ends[min(number, len(ends)) - 2] if len(ends) >= 2 else 0
    double, single = _triple_quote_ends(text)
    return (bisect.bisect_right(double, at) + bisect.bisect_right(single, at)) % 2 == 1


@functools.lru_cache(maxsize=64)
def _triple_quote_ends(text: str) -> tuple[list[int], list[int]]:
    """Where each triple double quote and each triple single quote of `text` ends, as `str.count`
    finds them (left to right, no overlap): those before an offset are the ones that end by it,
    found by bisection, where counting the file's prefix again for each line asked cost a pass over
    the file each time."""
    return [m.end() for m in re.finditer('"""', text)], [m.end() for m in re.finditer("'''", text)]


def without_string_lines(hunk: Hunk, before: str, after: str) -> Hunk:
    """The hunk's code alone, each side read against the whole file it comes from: lines inside a
    string that spans lines are dropped, and a line that opens one keeps only what precedes it (so
    no quote is left open for the lines that follow)."""

    def code(lines: list[str], start: int, text: str) -> list[str]:
        if not _odd_quotes_before(text, start):
            return lines
        found = _strings(text)
        out = []
        for i, line in enumerate(lines):
            at = start + i - 1
            if 0 <= at < len(found.inside):
                if found.inside[at]:
                    continue
                if found.opens[at] >= 0:
                    line = line[: found.opens[at]]
            out.append(line)
        return out

    return hunk._replace(old=code(hunk.old, hunk.old_start, before), new=code(hunk.new, hunk.new_start, after))


def is_code_line(text: str, number: int) -> bool:
    """Does line `number` (1-based) of a Python file carry code: not blank, not a comment, not a
    line that starts a string, and not inside a triple-quoted string (by the parity of the triple
    quotes before it, counted at C speed rather than line by line)?"""
    ends = _line_ends(text)
    if not 0 < number <= len(ends):
        return False
    start = ends[number - 2] if number > 1 else 0
    line = text[start : ends[number - 1]].strip()
    if not line or _COMMENT.match(line) or _STRING_ONLY.match(line):
        return False
    return not _odd_quotes_before(text, number)


def _open_at(text: str) -> tuple[int, ...]:
    """Per line (0-based), the brackets still open where it starts (strings and comments left out,
    read in one scan: a quote in a comment, or a bracket in a docstring, opens nothing)."""
    return _strings(text).depths


def continues_statement(text: str, number: int) -> bool:
    """Does line `number` (1-based) sit inside brackets a line before it opened (an argument of a
    call that spans lines), so that it is part of a statement and not one of its own?"""
    depths = _open_at(text)
    return 0 < number <= len(depths) and depths[number - 1] > 0


def begun_above(text: str, number: int) -> bool:
    """Is line `number` (1-based) of a Python file part of a statement begun on a line above: inside
    brackets or a triple-quoted string opened there, or after a line that ends in a backslash? Also
    True where that cannot be told: a line past the end, or a file with line breaks git and Python
    count differently."""
    found, k = _strings(text), number - 1
    if not 0 <= k < len(found.depths) or found.odd_breaks:
        return True
    if found.depths[k] > 0 or found.inside[k]:
        return True
    ends = _line_ends(text)  # kept for `_strings`: the line above is read without a copy of every line
    return k > 0 and text[ends[k - 2] if k > 1 else 0 : ends[k - 1]].rstrip().endswith("\\")


# what a line names that a port has, in some spelling, when it has the feature: attributes, calls
# and capitalised names; a bare lowercase name is a local, which a port may call anything
_FEATURE_NAME = re.compile(r"(?<=\.)[A-Za-z_]\w*|\b[A-Za-z_]\w*(?=\s*\()|\b[A-Z]\w*")


def feature_code(line: str) -> str:
    """A code line with its strings emptied and its trailing comment dropped."""
    return QUOTED.sub('""', uncommented(line))


def feature_names(line: str, outside: frozenset[str] = frozenset()) -> list[str]:
    """The feature names of one code line (strings and a trailing comment left out), less the
    language's words and the names in `outside` (see `outside_names`)."""
    code = feature_code(line)
    return [n for n in dict.fromkeys(_FEATURE_NAME.findall(code)) if not language_word(n, outside)]


def spelled_names(tokens) -> list[str]:
    """The snake_case names that string tokens spell (`"attach_hook"` in `hasattr(x, "attach_hook")`,
    `getattr(self, "spare_cache")`): a string that names an attribute reads or tests that attribute."""
    return [q for t in tokens if t[:1] in "\"'" and (q := t[1:-1]).isidentifier() and "_" in q.strip("_")]


def language_word(name: str, outside: frozenset[str] = frozenset()) -> bool:
    """Is `name` Python's own (a builtin, a keyword, a standard-library module) or one of `outside`
    (what the file imports from outside its package)? A port in another language spells those its
    own way, so their absence there says nothing."""
    return name in outside or name in _STDLIB or name in _BUILTINS


_CLASS = re.compile(r"^(\s*)class\s+(\w+)")
_MEMBER = re.compile(r"^\s*(?:async\s+)?def\s+(\w+)|^\s*(\w+)\s*(?::[^=]|=[^=])")
_SELF_ATTR = re.compile(r"\bself\.(\w+)\s*(?::[^=]*)?=[^=]")


# keyed by the text: a file unchanged between the revisions one entry reads is parsed once; its
# versions seldom recur past that entry, so only the last few are kept
@functools.lru_cache(maxsize=64)
def class_members(text: str) -> dict[str, set[str]]:
    """Member name -> the classes of a Python file that define it (methods, class-level fields and
    `self.x = ...` attributes), read by indentation: enough to tell whose `shutdown` a port has.
    The answer is shared between callers: read it, never change it."""
    out: dict[str, set[str]] = {}
    stack: list[tuple[int, str]] = []  # (indent of the class line, class name)
    depths = _open_at(text)  # brackets still open: the line continues a statement, its indent says nothing
    for i, line in enumerate(text.splitlines()):
        stripped = line.lstrip()
        if not stripped or stripped[0] == "#" or depths[i]:
            continue
        indent = len(line) - len(stripped)
        while stack and indent <= stack[-1][0]:
            stack.pop()
        m = _CLASS.match(line) if stripped.startswith("class") else None
        if m:
            stack.append((len(m.group(1)), m.group(2)))
            continue
        if not stack:
            continue
        cls = stack[-1][1]
        m = _MEMBER.match(line)
        if m and (m.group(1) or indent <= stack[-1][0] + 4):
            out.setdefault(m.group(1) or m.group(2), set()).add(cls)
        if "self." in line:
            for attr in _SELF_ATTR.findall(line):
                out.setdefault(attr, set()).add(cls)
    return out


@functools.lru_cache(maxsize=FILE_VERSIONS)
def file_tokens(text: str) -> frozenset[str]:
    """The tokens of a whole upstream file, docstrings and raise statements included: a name the
    file already had anywhere is no news (and reading it this way costs a tenth of `_code_lines`)."""
    return frozenset(tokens(text.splitlines()))


def distinctive(
    hunk: Hunk,
    constructs: dict[str, str] | None = None,
    before: frozenset[str] | None = None,
    after: frozenset[str] | None = None,
    language: frozenset[str] = frozenset(),
) -> tuple[set[str], set[str]]:
    """(tokens only the new side has, tokens only the old side has), for identifiers, numbers and
    strings a port could spell the same way; bare operators and one-letter names tell nothing alone.
    Comments, docstrings, raise statements and language-only constructs are left out: they are no
    behaviour a port spells the upstream's way. So are the language's own words (builtins such as
    `getattr` or `AttributeError`, standard-library modules, and the names in `language`: what the
    file imports from the standard library), which a port in another language spells its own way.

    With the whole file's tokens `before` and `after` the change, a new token must be new to the
    file and an old one gone from it: a name the file already used is in any port of that file, so
    finding it proves nothing about this change."""
    new = tokens(code_lines(hunk.new, constructs))
    old = tokens(code_lines(hunk.old, constructs))
    if before is not None:
        new -= before
    if after is not None:
        old -= after

    def telling(t: str) -> bool:
        if t[0] in "\"'":
            return len(t) > 4
        if t[0].isdigit():
            return t not in ("0", "1", "2")
        if language_word(t, language):
            return False
        return (len(t) >= 4 and t[0].isalpha()) or (t.startswith("_") and len(t) > 4)

    return {t for t in new - old if telling(t)}, {t for t in old - new if telling(t)}


_IF = re.compile(r"^(\s*)(?:if|elif)\s+(.+)$")


def _statements(lines: list[str]) -> list[str]:
    """The lines that are neither blank nor a whole-line comment, as they stand."""
    return [x for x in lines if not _COMMENT.match(x.strip())]


def _if_block_names(lines: list[str], otherwise: list[str] | None = None) -> set[str] | None:
    """The names the condition of an `if` block reads, when these lines are one such block (the
    condition, then a body indented deeper); None for any other shape. With `otherwise`, the block
    must instead end in an `else:` whose body is those lines, re-indented: code wrapped so that it
    still runs unless the condition holds."""
    code = _statements(lines)
    m = _IF.match(code[0]) if code else None
    if m is None:
        return None
    indent, cond, depth, i = len(m.group(1)), [m.group(2)], _brackets(m.group(2)), 1
    while (depth > 0 or not cond[-1].rstrip().endswith(":")) and i < len(code):
        cond.append(code[i])
        depth += _brackets(code[i])
        i += 1
    body = code[i:]
    if otherwise is not None:
        ends = [k for k, x in enumerate(body) if len(x) - len(x.lstrip()) == indent and x.strip() == "else:"]
        kept = [x.strip() for x in _statements(otherwise)]
        if len(ends) != 1 or not kept or [x.strip() for x in body[ends[0] + 1 :]] != kept:
            return None
        body = body[: ends[0]] + body[ends[0] + 1 :]
    if not body or any(len(x) - len(x.lstrip()) <= indent for x in body):
        return None
    return _switches(" ".join(x.strip() for x in cond).rstrip().removesuffix(":"))


def _switches(cond: str) -> set[str]:
    """The names a condition holds only when they exist: the operands of its top-level `and`s that
    do not negate them. `if not X:` and `if X is None:` hold where X is missing, and an `or` can
    hold through its other side, so none of those names guards the block."""
    operands, depth, start = [], 0, 0
    for m in re.finditer(r"[()\[\]{}]|\b(?:and|or)\b", cond):
        word = m.group()
        if word in "([{":
            depth += 1
        elif word in ")]}":
            depth -= 1
        elif depth == 0:
            if word == "or":
                return set()
            operands.append(cond[start : m.start()])
            start = m.end()
    out: set[str] = set()
    for operand in [*operands, cond[start:]]:
        if re.match(r"\s*(?:\(\s*)?not\b", operand) or re.search(r"\bis\s+None\b|==\s*None\b", operand):
            continue
        # the leaves of attribute chains: in `config.uses_canvas` the switch is `uses_canvas`,
        # and the object that carries it is plumbing
        leaves = set(re.findall(r"(?<![\w.])(?:\w+\.)*(\w+)", operand))
        out |= {
            t
            for t in tokens([operand]) & leaves
            if (t[0].isalpha() or t[0] == "_") and len(t) >= 4 and t not in _STDLIB
        }
    return out


def guard_names(hunk: Hunk) -> list[str]:
    """The names that guard a hunk: the condition of the one `if` block it adds, or, when it
    rewrites such a block, what the conditions before and after share, or, when it wraps the old
    lines in that block's `else:`, the condition's. If the port has none of one of them, the block
    can never run there (and the old lines run as before). Empty for any other shape of hunk."""
    new = _if_block_names(hunk.new)
    if new is None:
        wrapped = _if_block_names(hunk.new, otherwise=hunk.old)
        return sorted(wrapped) if wrapped is not None else []
    if not code_lines(hunk.old):
        return sorted(new)
    old = _if_block_names(hunk.old)
    return sorted(new & old) if old is not None else []


def forget() -> None:
    """Drop the whole-file readings kept above: one audit's file versions are of no use to the next,
    and what runs after it (the queue's write-back) needs the memory."""
    for cached in (
        outside_names,
        _line_ends,
        _triple_quote_ends,
        _strings,
        _rows,
        _import_rows,
        _decorator_rows,
        _decorator_spans,
        class_members,
        file_tokens,
    ):
        cached.cache_clear()


_DEF_OR_CLASS = re.compile(r"^\s*(?:async\s+)?(def|class)\s+(\w+)")


@functools.lru_cache(maxsize=64)
def _rows(text: str) -> tuple[str, ...]:
    return tuple(text.splitlines())


def def_above(text: str, row: int) -> str | None:
    """The qualified name (`Class.method`, `function`) of the outermost function whose body holds
    0-based `row` of a Python file (its own `def` line included), read from the indentation of the
    lines above: each line less indented than the last one kept is the block it sits in. Blank
    lines, comments and closing brackets (`) -> int:`) are skipped. None at module or class level,
    and None when the walk ends on a line at column 0 that is no `class` or `def` (text of a string,
    an argument of a call): there indentation says nothing, and no function is claimed."""
    lines = _rows(text)
    while 0 <= row < len(lines) and not lines[row].strip():
        row += 1  # a blank line has no indent of its own: the next line's says where it is
    if not 0 <= row < len(lines):
        return None
    indent, name, classes = len(lines[row]) - len(lines[row].lstrip()), None, list[str]()
    m = _DEF_OR_CLASS.match(lines[row])
    if m and m.group(1) == "def":
        name = m.group(2)
    for i in range(row - 1, -1, -1):
        line = lines[i]
        stripped = line.lstrip()
        if not stripped or stripped[0] in "#)]}" or len(line) - len(stripped) >= indent:
            continue
        indent = len(line) - len(stripped)
        m = _DEF_OR_CLASS.match(line)
        if m and m.group(1) == "def":
            name, classes = m.group(2), []
        elif m and name is not None:
            classes.insert(0, m.group(2))
        if indent == 0:
            return ".".join([*classes, name]) if m and name is not None else None
    return None


def switches_above(text: str, row: int) -> set[str]:
    """The switches (see `_switches`) of the `if`/`elif` header whose body holds 0-based `row` of a
    Python file directly: the nearest line above it indented less. Empty when that line is any
    other header (`for`, `else:`, a `def`), or a header over several lines: an outer block's
    condition says less of a line than the block that holds it."""
    lines = _rows(text)
    if not 0 <= row < len(lines) or not lines[row].strip():
        return set()
    indent = len(lines[row]) - len(lines[row].lstrip())
    for i in range(row - 1, -1, -1):
        line = lines[i]
        stripped = line.lstrip()
        if not stripped or stripped[0] in "#)]}" or len(line) - len(stripped) >= indent:
            continue
        m = _IF.match(line)
        if m is None or not m.group(2).rstrip().endswith(":"):
            return set()
        return _switches(m.group(2).rstrip().removesuffix(":"))
    return set()


def assigned_above(text: str, row: int, name: str) -> str | None:
    """The nearest line above 0-based `row` of a Python file that binds the bare name `name`
    (`name = ...`, `name: T = ...`), within the function that holds `row`: where a local a changed
    line reads comes from. None when the walk meets the function's `def` (or a column-0 line) first."""
    lines = _rows(text)
    bind = re.compile(rf"^\s*{re.escape(name)}\s*(?::[^=]*)?=[^=]")
    for i in range(min(row, len(lines)) - 1, -1, -1):
        line = lines[i]
        if bind.match(line):
            return line
        if _DEF_OR_CLASS.match(line) or (line[:1].strip() and line[0] not in "#)]}"):
            return None
    return None


def defines(lines: list[str], name: str) -> bool:
    """Do these (added) lines define `name`: a def, a class, a field or an attribute assignment?"""
    n = re.escape(name)
    rx = re.compile(rf"^\s*(?:async\s+)?(?:def|class)\s+{n}\b|^\s*(?:self\.)?{n}\s*(?::[^=]|=[^=])")
    return any(rx.search(x) for x in lines)
