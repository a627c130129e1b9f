"""Grep first: one multi-pattern pass over the scope's bytes; regex hits by line."""

from __future__ import annotations

from bisect import bisect_right

from porttrack.evidence import codemask
from porttrack.probe.store import Store, occ_row
from porttrack.probe.files import Ctx, File, Files, Reader
from porttrack.probe.classify import _classify_all


def _search(
    ctx: Ctx,
    store: Store,
    reader: Reader,
    files: Files,
    idents: list[str],
    lst: int,
    covered: int,
    incomplete: list[str],
) -> None:
    """Put every asked identifier's occurrences in every readable file of the scan into the cache.

    Identifiers already searched in the stored file set `covered` need nothing for its files;
    the rest are found in one RE2 pass per file, and only files that hold one are parsed, and
    only those tokens classed."""
    todo_covered, covered_blobs = idents, set()
    if covered:
        done = store.searched(covered, idents)
        todo_covered = [i for i in idents if i not in done]
        if not todo_covered and (covered == lst or not files.live):
            return
        covered_blobs = store.fileset_blobs(covered) if done else set()
    jobs: dict[int, tuple[File, tuple[str, ...]]] = {}
    for i in files.live:
        bid = files.rows[i].bid
        need = tuple(todo_covered if bid in covered_blobs else idents)
        if need and bid not in jobs:
            jobs[bid] = (files.get(i), need)
    failed = len(incomplete)
    patterns = {need: codemask.Words(list(need)) for need in {n for _, n in jobs.values()}}
    reader.preload([f for f, _ in jobs.values()], incomplete)
    found: dict[int, tuple[File, dict[str, list[int]]]] = {}
    for bid, (f, need) in jobs.items():
        fresh = f.data is None
        if f.searched == need:  # searched at its first read, its bytes kept where it holds a name
            hits = f.found or {}
        elif not reader.load(f, incomplete):
            continue
        else:
            hits = patterns[need].find(f.data)  # type: ignore[arg-type]
        if hits:
            found[bid] = (f, hits)
        elif fresh and f.disk:
            f.data = None  # not needed again: keep memory flat on a big tree
    # a name found in a file always has a row once classed there: skip what another scan (another
    # file set, another clone with this cache restored) already classed
    have = store.stored(sorted({w for _, hits in found.values() for w in hits}), set(found))
    for bid, (f, hits) in list(found.items()):
        hits = {w: offs for w, offs in hits.items() if (w, bid) not in have}
        if hits:
            found[bid] = (f, hits)
        else:
            del found[bid]
    classed = _classify_all([(f.data, f.lang, hits) for f, hits in found.values()], ctx.progress)  # type: ignore[misc]
    ctx.parsed += sum(1 for f, _ in found.values() if f.lang)
    store.add_occurrences(
        [occ_row(w, bid, a) for bid, got in zip(found, classed, strict=False) for w, a in got.items()]
    )
    if lst and len(incomplete) == failed:
        store.mark_searched(lst, idents)


def _regex_hits(data: bytes, fm: codemask.Regions, ms: list) -> tuple[list[int], list[str]]:
    nl = list(_newlines(data))
    flat: list[int] = []
    matched: list[str] = []
    for m in ms:
        s = m.start()
        line = bisect_right(nl, s - 1) + 1
        col = s - (nl[line - 2] + 1 if line > 1 else 0) + 1
        flat += (line, col, fm.flags_at(s), s)
        matched.append(m.group().decode("utf-8", "replace"))
    return flat, matched


def _newlines(data: bytes):
    i = data.find(b"\n")
    while i >= 0:
        yield i
        i = data.find(b"\n", i + 1)
