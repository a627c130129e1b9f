"""Line diff of two versions of a file: a patience diff, in C-speed comparisons where it can.

The edits it gives drive both what a change added (its new rows) and the incremental reparse
(`extractor.reparse`), so both read the same rows.
"""

from __future__ import annotations

import bisect
import difflib
import re
from collections import Counter
from functools import lru_cache

_ROW = re.compile(rb"[^\n]*\n|[^\n]+\Z")


@lru_cache(maxsize=8)  # the diff and the incremental reparse of one change split the same blobs
def rows(data: bytes) -> list[bytes]:
    """Lines with their "\\n" (tree-sitter's rows); a last line without one differs from one with."""
    if b"\r" in data:  # splitlines would also split at a lone "\r"
        return _ROW.findall(data)
    return data.splitlines(True)


def line_edits(old: bytes, new: bytes) -> list[tuple[int, int, int, int]]:
    """The differing line blocks `(i1, i2, j1, j2)`: old rows i1:i2 became new rows j1:j2, in order."""
    edits: list[tuple[int, int, int, int]] = []
    _patience(rows(old), rows(new), 0, 0, edits)
    return edits


def _patience(a: list[bytes], b: list[bytes], a0: int, b0: int, out: list) -> None:
    """Patience diff: anchor on lines that occur once on each side, recurse between the anchors.

    Hash lookups and C-speed comparisons only; difflib's pure-Python matcher serves just the
    small gaps that hold no unique line.
    """
    n = min(len(a), len(b))
    head = _common_run(a, b, 0, 1, n) if n and a[0] == b[0] else 0
    tail = _common_run(a, b, -1, -1, n - head) if n > head and a[-1] == b[-1] else 0
    a, b, a0, b0 = a[head : len(a) - tail], b[head : len(b) - tail], a0 + head, b0 + head
    if not a or not b:
        if a or b:
            out.append((a0, a0 + len(a), b0, b0 + len(b)))
        return
    count_a, count_b = Counter(a), Counter(b)
    where_b = {line: j for j, line in enumerate(b) if count_b[line] == 1}
    pairs = [(i, where_b[line]) for i, line in enumerate(a) if count_a[line] == 1 and line in where_b]
    anchors = _increasing(pairs)
    if not anchors:
        if len(a) * len(b) <= 40_000:
            ops = difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
            out.extend((a0 + i1, a0 + i2, b0 + j1, b0 + j2) for tag, i1, i2, j1, j2 in ops if tag != "equal")
        else:
            out.append((a0, a0 + len(a), b0, b0 + len(b)))  # a rewrite: one block is exact enough
        return
    i_prev = j_prev = 0
    for i, j in anchors:
        if i > i_prev or j > j_prev:  # most anchors follow each other: nothing between them
            _patience(a[i_prev:i], b[j_prev:j], a0 + i_prev, b0 + j_prev, out)
        i_prev, j_prev = i + 1, j + 1
    _patience(a[i_prev:], b[j_prev:], a0 + i_prev, b0 + j_prev, out)


def _common_run(a: list[bytes], b: list[bytes], start: int, step: int, limit: int) -> int:
    """How many lines from `start` on (step 1: forwards; -1: backwards) are equal, at most `limit`.

    Galloping over list slices, so that long equal runs are compared in C, not line by line.
    """
    if limit <= 0 or a[start] != b[start]:
        return 0

    def same(lo: int, n: int) -> bool:  # the n lines after the first lo are equal
        if step == 1:
            return a[lo : lo + n] == b[lo : lo + n]
        return a[len(a) - lo - n : len(a) - lo] == b[len(b) - lo - n : len(b) - lo]

    done, n = 1, 1
    while done + n <= limit and same(done, n):
        done += n
        n *= 2
    while n > 1:
        n //= 2
        if done + n <= limit and same(done, n):
            done += n
    return done


def _increasing(pairs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The longest run of `pairs` (sorted by i) whose j also increases (patience sorting)."""
    js = [j for _, j in pairs]
    if js == sorted(js):  # the usual case, no line moved: every pair is on the one run
        return pairs
    tops: list[int] = []  # j at the top of each pile
    top_at: list[int] = []  # index into pairs of each pile's top
    back = [-1] * len(pairs)
    for k, (_, j) in enumerate(pairs):
        pile = bisect.bisect_left(tops, j)
        back[k] = top_at[pile - 1] if pile else -1
        if pile == len(tops):
            tops.append(j)
            top_at.append(k)
        else:
            tops[pile], top_at[pile] = j, k
    run, k = [], top_at[-1] if top_at else -1
    while k != -1:
        run.append(pairs[k])
        k = back[k]
    return run[::-1]


def added_lines(old: bytes, new: bytes, edits=None) -> set[int]:
    """0-based rows of `new` that are not matched in `old`."""
    edits = line_edits(old, new) if edits is None else edits
    return {j for _, _, j1, j2 in edits for j in range(j1, j2)}
