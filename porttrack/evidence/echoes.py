"""Text an upstream change adds that the port repeats word for word: comments and messages.

A port that copies an upstream fix often copies its explanation with it. The words of each
comment block a change adds (a run of added whole-line comments, links left out) are looked
for, WINDOW words at a time, in the port's comments. Whether a window is new text upstream
(audit asks git whether the lines it spans stood in the folder before the change) is the
caller's question: `echo` takes it as a function.

A port that carries an upstream check often carries its wording too: `raise ValueError(f"budget
must be positive, got {b}")` becomes `throw std::invalid_argument("budget must be positive, got "
+ ...)`. `added_messages` gives the sentences of the string literals a change's code lines add,
cut where a value is put in; the caller looks for them in the port's code.
"""

from __future__ import annotations

import json
import re
from array import array
from bisect import bisect_right
from collections.abc import Callable, Iterable
from pathlib import PurePosixPath
from typing import NamedTuple

from porttrack.evidence.headers import comment_lines

WINDOW = 8  # words in a row that must match: fewer are common phrases ("if there are no")
_WORD = re.compile(r"[a-z0-9_]+")
_LINK = re.compile(r"(?<!\w)\w+://\S+")
_HASH = re.compile(r"^\s*#(?!!)\s?(.*)$")  # a Python comment line (not a shebang)
_SLASH = re.compile(r"^\s*(?://+|/\*+|\*+(?!/))\s?(.*?)(?:\*/)?\s*$")  # a C-family comment line


# a message is a sentence of the change's own, not a key, a path or a format fragment
MESSAGE_WORDS, MESSAGE_CHARS = 4, 24
# a string literal (any prefix), or the comment that ends a line's code
_LITERAL = re.compile(r"""(?P<comment>#|//)|[rRbBuUfF]{0,2}(?P<q>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')""")
# where a value is put into the text: `{x}`, `%s`, `%(name)d`, an escape
_CUT = re.compile(r"\{[^{}]*\}|%(?:\([^)]*\))?[-#0 +]*\d*(?:\.\d+)?[sdifrxXeEgGc]|\\.")
_LETTERS = re.compile(r"[A-Za-z]")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def words(text: str) -> list[str]:
    """The lower-case words of comment text, links left out."""
    return _WORD.findall(_LINK.sub(" ", text.lower()))


class Block(NamedTuple):
    path: str  # the upstream file
    line: int  # its first line on the new side
    words: tuple[str, ...]
    lines: tuple[tuple[int, str], ...] = ()  # (index of its first word, the line as written, stripped)

    def spanned(self, start: int, n: int = WINDOW) -> list[str]:
        """The lines, as written, that the words start..start+n stand on."""
        return [text for k, (at, text) in enumerate(self.lines) if at < start + n and self._end(k) > max(at, start)]

    def _end(self, k: int) -> int:
        return self.lines[k + 1][0] if k + 1 < len(self.lines) else len(self.words)


def added_blocks(hunks: Iterable, min_words: int = WINDOW) -> list[Block]:
    """The comment blocks the hunks add (consecutive added comment lines), with at least `min_words`
    words. `hunks` are gitio.Hunk with their comments intact."""
    out: list[Block] = []
    for h in hunks:
        style = _HASH if h.path.endswith((".py", ".pyi")) else _SLASH
        run: list[str] = []
        lines: list[tuple[int, str]] = []
        start = h.new_start
        for i, line in enumerate([*h.new, ""]):
            m = style.match(line) if i < len(h.new) else None
            if m is not None:
                if not run:
                    start = h.new_start + i
                lines.append((len(run), line.strip()))
                run.extend(words(m.group(1)))
                continue
            if len(run) >= min_words:
                out.append(Block(h.path, start, tuple(run), tuple(lines)))
            run, lines = [], []
    return out


class Index:
    """The words of the port's comments, by file, with where each word stands: built once per audit."""

    def __init__(self, files: Iterable[tuple[str, str]]):
        self._ids: dict[str, int] = {}
        self._stream = array("I")  # word ids; 0 ends a comment block, so no window spans two
        self._lines = array("I")  # the line of each word
        self._starts: list[int] = []  # where each file begins in the stream
        self._paths: list[str] = []
        self._at: dict[int, array] = {}  # word id -> its positions
        for path, text in files:
            self._starts.append(len(self._stream))
            self._paths.append(path)
            last = -1
            for line, c in comment_lines(text, PurePosixPath(path).suffix, None):
                if line != last + 1:
                    self._push(0, line)
                last = line
                for w in words(c):
                    self._push(self._ids.setdefault(w, len(self._ids) + 1), line)
            self._push(0, 0)

    def _push(self, wid: int, line: int) -> None:
        if wid:
            self._at.setdefault(wid, array("I")).append(len(self._stream))
        self._stream.append(wid)
        self._lines.append(line)

    def dump(self) -> bytes:
        """The index as bytes `load` reads back (kept in the cache for a clean tree)."""
        wids = sorted(self._at)
        at = array("I")
        for w in wids:
            at.extend(self._at[w])
        head = {
            "words": sorted(self._ids, key=self._ids.__getitem__),
            "starts": self._starts,
            "paths": self._paths,
            "wids": wids,
            "counts": [len(self._at[w]) for w in wids],
        }
        return json.dumps(head).encode() + b"\n" + self._stream.tobytes() + self._lines.tobytes() + at.tobytes()

    @classmethod
    def load(cls, data: bytes) -> Index | None:
        """An index `dump` wrote; None for bytes that do not hold one (a damaged or planted row)."""
        try:
            return cls._load(data)
        except (ValueError, TypeError, KeyError, IndexError, OverflowError, AttributeError):
            return None

    @classmethod
    def _load(cls, data: bytes) -> Index | None:
        head_raw, _, rest = data.partition(b"\n")
        head = json.loads(head_raw)
        words, starts, paths, wids, counts = (list(head[k]) for k in ("words", "starts", "paths", "wids", "counts"))
        if len(rest) % 4 or not all(isinstance(w, str) for w in [*words, *paths]):
            return None
        if not all(type(x) is int and x >= 0 for x in [*starts, *wids, *counts]):
            return None
        arrays = array("I", rest)
        n = (len(arrays) - sum(counts)) // 2
        ok = (
            n >= 0
            and len(arrays) == 2 * n + sum(counts)
            and len(starts) == len(paths)
            and all(x < max(n, 1) for x in starts)
            and sorted(wids) == list(range(1, len(words) + 1))  # every word has its positions
            and len(counts) == len(wids)
            and all(counts)
        )
        if not ok:
            return None
        out = cls([])
        out._ids = {w: i + 1 for i, w in enumerate(words)}
        out._stream, out._lines = arrays[:n], arrays[n : 2 * n]
        out._starts, out._paths = starts, paths
        at, k = arrays[2 * n :], 0
        for w, c in zip(wids, counts, strict=True):
            out._at[w] = at[k : k + c]
            k += c
        if max(at, default=0) >= max(n, 1) or max(out._stream, default=0) > len(words):
            return None
        return out

    def find(self, window: tuple[str, ...]) -> tuple[str, int] | None:
        """(port path, line) where the window's first word stands, or None when no comment holds it."""
        ids = [self._ids.get(w, 0) for w in window]
        if 0 in ids:
            return None
        rare = min(range(len(ids)), key=lambda k: len(self._at[ids[k]]))
        want = array("I", ids)
        for pos in self._at[ids[rare]]:
            at = pos - rare
            if at >= 0 and self._stream[at : at + len(want)] == want:
                f = bisect_right(self._starts, at) - 1
                return self._paths[f], self._lines[at]
        return None


def echo(block: Block, index: Index, new: Callable[[list[str]], bool]) -> tuple[tuple[str, ...], str, int] | None:
    """The first window of the block that the port's comments hold and that is new text upstream
    (`new(lines)`: does one of the lines it spans, as written, stand nowhere upstream before the
    change): (window, port path, line); else None."""
    for i in range(len(block.words) - WINDOW + 1):
        window = block.words[i : i + WINDOW]
        found = index.find(window)
        if found is not None and new(block.spanned(i)):
            return window, *found
    return None


class Message(NamedTuple):
    path: str  # the upstream file
    line: int  # its line on the new side
    text: str


def added_messages(hunks: Iterable) -> list[Message]:
    """The distinct sentences (MESSAGE_WORDS words and MESSAGE_CHARS characters at least) of the
    string literals on the lines the hunks add, in order. A line that opens or closes a docstring
    is left out: a docstring explains, as a comment does, and `echo` reads comments."""
    out: list[Message] = []
    seen: set[str] = set()
    for h in hunks:
        for i, line in enumerate(h.new):
            if '"""' in line or "'''" in line:
                continue
            for text in _sentences(line):
                if text not in seen:
                    seen.add(text)
                    out.append(Message(h.path, h.new_start + i, text))
    return out


def _sentences(line: str) -> list[str]:
    out = []
    for m in _LITERAL.finditer(line):
        if m.group("comment"):
            break
        for part in _CUT.split(m.group("q")[1:-1]):
            part = part.strip()
            if _CONTROL.search(part):
                continue  # no message of a person's, and no argument git can take
            if len(part) >= MESSAGE_CHARS and sum(bool(_LETTERS.search(w)) for w in part.split()) >= MESSAGE_WORDS:
                out.append(part)
    return out
