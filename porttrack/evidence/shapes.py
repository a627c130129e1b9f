"""The shape of a code line: its names, literals and operators in order, spelled one way for a
Python upstream and a C-family port.

Token sets (porttrack/evidence/compare.py) cannot see a change that rewrites a line in place with
names the file already had: `==` to `<=`, `a - b` to `b - a`, `and` to `or`. The port holds every
token either way. Shapes can: the port's counterpart either holds the new line's shape or the old's.

A shape keeps what a port must spell the same to do the same thing: names in `naming.norm`'s one
spelling, literals, and the operators between them. It drops what each language spells its own
way: brackets and separators, `self.` and `this->`, casts, the length call (`len(x)` against
`x.size()`), type names and `return`. Python's word operators and constants become C's (`and`
`&&`, `not` `!`, `is not None` `!= null`, `nullptr` and `std::nullopt` `null`).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable

from porttrack.evidence.naming import norm

Shape = tuple[str, ...]

_CAST = re.compile(r"\b(?:static|reinterpret|const|dynamic)_cast\s*<[^<>;]*>")
_C_CAST = re.compile(
    r"\((?:const\s+)?(?:unsigned\s+)?(?:int|long|size_t|int64_t|int32_t|uint32_t|uint64_t|float|double|bool)\)"
)
_TOKEN = re.compile(
    r"[A-Za-z_]\w*|\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*'|\d+(?:\.\d+)?"
    r"|->|::|==|!=|<=|>=|&&|\|\||//|\*\*|<<|>>|\+=|-=|\*=|/=|[-+*/%<>!=&|^~?]"
)
_WORDS = {
    "and": "&&",
    "or": "||",
    "not": "!",
    "None": "null",
    "nullptr": "null",
    "nullopt": "null",
    "NULL": "null",
    "True": "true",
    "False": "false",
    "elif": "if",
}
_DROP = frozenset(
    [
        "self",
        "this",
        "cls",
        "len",
        "size",
        "std",
        "auto",
        "const",
        "constexpr",
        "static",
        "inline",
        "int",
        "long",
        "float",
        "double",
        "bool",
        "str",
        "size_t",
        "int64_t",
        "int32_t",
        "uint32_t",
        "uint64_t",
        "int8_t",
        "uint8_t",
        "unsigned",
        "void",
        "return",
        "->",
        "::",
    ]
)
# words both languages write, which name nothing of the program's own
_KEYWORDS = frozenset(
    ["if", "else", "for", "while", "in", "null", "true", "false", "del", "assert", "raise", "break", "continue"]
)
MIN_TOKENS = 4  # a shape of fewer tokens (`x = y`) recurs by chance
MIN_NAMES = 2


def shape(line: str) -> Shape:
    """The shape of one line of code, its comment already dropped."""
    out: list[str] = []
    for t in _TOKEN.findall(_C_CAST.sub(" ", _CAST.sub(" ", line))):
        t = _WORDS.get(t, t)
        if t == "is":
            out.append("==")  # `is not` is `== !` until the `!` below folds it into `!=`
        elif t == "!" and out and out[-1] == "==":
            out[-1] = "!="
        elif t in _DROP:
            continue
        elif t[0] == "'":
            out.append('"' + t[1:-1] + '"')
        elif t[0].isalpha() or t[0] == "_":
            if name := norm(t):  # `_` alone has no spelling
                out.append(name)
        else:
            out.append(t)
    return tuple(out)


def of_text(text: str) -> list[Shape]:
    """The shape of each line of a port file whose comments are blanked (index + 1 is the line)."""
    return [shape(x) for x in text.splitlines()]


def names(s: Shape) -> Counter[str]:
    """The names of a shape, with how often each stands in it."""
    return Counter(t for t in s if (t[0].isalpha() or t[0] == "_") and t not in _KEYWORDS)


def telling(s: Shape) -> bool:
    """A shape long enough, with names enough, not to recur by chance."""
    return len(s) >= MIN_TOKENS and sum(names(s).values()) >= MIN_NAMES


def rewritten(old: Iterable[str], new: Iterable[str]) -> tuple[list[Shape], list[Shape]] | None:
    """(new shapes, old shapes) of code lines rewritten in place: each telling shape only one side
    has names what a telling shape of the other side names, with other operators, order or
    literals. None where a side has none, or a line gains or loses a name: a line whose shape the
    port holds elsewhere in the file may be another line of the same kind, not this one."""
    a, b = Counter(shape(x) for x in old), Counter(shape(x) for x in new)
    added, removed = [s for s in b - a if telling(s)], [s for s in a - b if telling(s)]
    have, want = [names(s) for s in removed], [names(s) for s in added]
    if not added or not removed or any(n not in have for n in want) or any(o not in want for o in have):
        return None
    return added, removed


def holds(line: Shape, want: Shape) -> bool:
    """`want` runs, token for token, somewhere in `line`."""
    n = len(want)
    return any(line[i : i + n] == want for i in range(len(line) - n + 1) if line[i] == want[0])


def found(
    pair: tuple[list[Shape], list[Shape]], files: list[str], shapes_of: Callable[[str], list[Shape]]
) -> list[tuple[Shape, tuple[str, int]]]:
    """Each new shape of `pair` with the place in the port's `files` (`shapes_of`: `of_text` of
    one) that holds it, as (path, 1-based line); empty unless they hold every new shape and none
    of the old ones."""
    rows = [(pf, n + 1, x) for pf in files for n, x in enumerate(shapes_of(pf)) if x]

    def at(want: Shape) -> tuple[str, int] | None:
        return next(((pf, n) for pf, n, x in rows if holds(x, want)), None)

    new, old = pair
    if any(at(x) for x in old):
        return []
    out = []
    for x in new:
        if (where := at(x)) is None:
            return []
        out.append((x, where))
    return out
