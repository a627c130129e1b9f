"""Parse only where it matters: the files that hold an asked name, classified once per blob (codemask), and hit kinds."""

from __future__ import annotations

import os
import sys
import threading
from array import array

from porttrack.evidence import codemask
from porttrack.probe import listing as L
from porttrack.probe.model import Count, Hit, Row
from porttrack.probe.store import Store
from porttrack.probe.files import Ctx, File, Files, Reader, _decode_problem


POOL_MIN_BYTES = 4_000_000  # new source to parse before a process pool pays for its start
# bytes of new files held from their first read (the listing) to the name search when the names
# could not be searched at that read (before the automatic control is known); the rest are read
# again there, and only those holding a name are kept: memory stays flat on a kernel-size tree
KEEP_READ_BYTES = 32 << 20


def _rows(
    ctx: Ctx,
    store: Store,
    reader: Reader,
    files: list[File],
    incomplete: list[str],
    first_read: _FirstRead | None = None,
) -> tuple[list[Row], list[File | None]]:
    """Cache ids of the files' versions: a version the cache has not seen is read and remembered
    (binary and undecodable ones with their problem), not parsed; a file left out could not be read.
    With `first_read` (files in path order), the scan's names are searched at that read."""
    ids = store.ids(sorted({f.key for f in files}))
    reader.preload([f for f in files if f.key not in ids], incomplete)
    problems: dict[str, str | None] = {}
    held = 0
    for f in files:
        if f.key in ids:
            if first_read is not None:
                first_read.cached(f, ids[f.key])
            continue
        if f.key in problems or not reader.load(f, incomplete):
            continue
        assert f.data is not None
        problems[f.key] = problem = _decode_problem(f.data)
        held += len(f.data)
        if first_read is not None and problem is None:
            first_read.read(f)
        if f.disk and (f.searched is not None or held > KEEP_READ_BYTES) and not f.found:
            f.data = None
    if problems:
        ids.update(store.add(problems))
    if first_read is not None:
        first_read.record(store, ids)
    rows: list[Row] = []
    kept: list[File | None] = []
    for f in files:
        if f.key not in ids:
            continue  # unreadable: already listed as incomplete
        f.scoped, f.test = L.under(f.path, ctx.scope), L.under(f.path, ctx.tests)
        bid, fd, fl, problem, masked = ids[f.key]
        rows.append(Row(f.path, f.sha, f.lang, bid, fd, fl, problem, f.scoped, f.test, masked))
        kept.append(f)
    return rows, kept


class _FirstRead:
    """The name search done at a new file's first read (its encoding check), so that a file of a
    big tree is not read a second time for it. It must search what `_search` will: the asked names
    and the automatic control, the first definition of the scope, which is found here first, as
    `_first_def` finds it (the scope's files in path order, parsed until one defines something).
    Until the control is known, files are not searched here; where the control cannot be known
    this way (an earlier file the cache knows but never parsed), nothing is."""

    def __init__(self, ctx: Ctx):
        self.ctx = ctx
        self.walking = True  # still looking for the control
        self.first_defs: dict[str, tuple[str, int] | None] = {}  # file key -> its first definition
        self.words: codemask.Words | None = None
        self.idents: tuple[str, ...] = ()

    def _found(self, name: str | None) -> None:
        self.walking = False
        if name is None:
            return
        ctx = self.ctx
        self.idents = tuple(sorted({v for s in ctx.symbols for v in ctx.names[s]} | {name}))
        self.words = codemask.Words(list(self.idents))

    def cached(self, f: File, known: tuple) -> None:
        _, fd, _, problem, masked = known
        if not self.walking or problem is not None or not L.under(f.path, self.ctx.scope):
            return
        if not masked:
            self.walking = False  # `_first_def` parses it, later: no search here
        elif fd:
            self._found(fd)

    def read(self, f: File) -> None:
        assert f.data is not None
        if self.walking and L.under(f.path, self.ctx.scope):
            fd = self.first_defs[f.key] = codemask.first_definition(f.data, f.lang)
            if fd:
                self._found(fd[0])
        if self.words is not None:
            f.searched, f.found = self.idents, self.words.find(f.data)

    def record(self, store: Store, ids: dict) -> None:
        """The first definitions parsed here, stored as `_first_def` stores them."""
        done = {k: fd for k, fd in self.first_defs.items() if k in ids}
        if not done:
            return
        store.set_first_defs({ids[k][0]: fd for k, fd in done.items()})
        for k, fd in done.items():
            bid, _, _, problem, _ = ids[k]
            ids[k] = (bid, fd[0] if fd else None, fd[1] if fd else None, problem, True)
        self.ctx.parsed += len(done)


def _first_def(ctx: Ctx, store: Store, reader: Reader, rows: list[Row], files: Files, incomplete: list[str]) -> None:
    """Parse the scope's files in path order until one defines something: the automatic control
    is the first definition in the scope, so every file before it must be known to have none."""
    for i, r in enumerate(rows):
        if r.problem is not None or not r.scoped:
            continue
        if not r.masked:
            f = files.get(i)
            if not reader.load(f, incomplete):
                continue  # unreadable now: listed as incomplete
            fd = codemask.first_definition(f.data, f.lang)  # type: ignore[arg-type]
            ctx.parsed += 1
            store.set_first_defs({r.bid: fd})
            for j in range(i, len(rows)):  # every file of this version learns it
                if rows[j].bid == r.bid:
                    rows[j] = rows[j]._replace(
                        masked=True, first_def=fd[0] if fd else None, first_line=fd[1] if fd else None
                    )
            r = rows[i]
        if r.first_def:
            return


def _classify_one(job: tuple[bytes, str | None, dict[str, list[int]]]) -> dict[str, array]:
    return codemask.classify(*job)


def _classify_all(jobs: list[tuple[bytes, str | None, dict[str, list[int]]]], progress=None) -> list[dict[str, array]]:
    """Parse the files that hold an asked name and class those names' tokens; many bytes of them
    spread over the CPUs (parsing is most of a cold scan)."""
    workers = min(os.cpu_count() or 1, 8)

    def counted(results) -> list[dict[str, array]]:
        out = []
        for r in results:
            out.append(r)
            if progress and (len(out) % 50 == 0 or len(out) == len(jobs)):
                progress(len(out), len(jobs))
        return out

    if (
        workers > 1
        and sys.platform.startswith("linux")
        and threading.active_count() == 1
        and sum(len(d) for d, _, _ in jobs) > POOL_MIN_BYTES
    ):
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        # fork, not spawn or forkserver: those re-run the caller's main script in every worker.
        # Forking is safe only while this process runs one thread; otherwise, and where fork is
        # missing or unsafe (Windows, macOS), the parsing stays in this process.
        mp = multiprocessing.get_context("fork")
        try:
            with ProcessPoolExecutor(workers, mp_context=mp) as pool:
                return counted(pool.map(_classify_one, jobs, chunksize=4))
        except (OSError, RuntimeError):  # no processes allowed here: do it in this one
            pass
    return counted(map(_classify_one, jobs))


def _kinds(is_test: bool) -> list[tuple[str, str]]:
    """(kind, why) for every flags value, so the per-hit loop is one lookup."""
    out = []
    for flags in range(32):
        why = codemask.WHY.get(flags & codemask.NONCODE_MASK, "")
        if why:
            kind = "comment"
        elif is_test:
            kind = "test"
        elif flags & codemask.DECL:
            kind = "definition"
        elif flags & codemask.DELEGATION:
            kind = "delegation"
        else:
            kind = "consumer"
        out.append((kind, why))
    return out


KINDS = {False: _kinds(False), True: _kinds(True)}


def count(symbol: str, form: str, vs: list[str], groups: list[tuple], where: list[tuple]) -> Count:
    """Class and tally hits given per file as (path, name, flat [line, col, flags, offset, ...], file).

    `name` is one string, or a list with one per hit (a regex's matched texts). `where` gets
    (file, offset) for each hit, for the source lines."""
    c = Count(symbol, form, vs, hits=[])
    hits, files = c.hits, set()
    groups.sort(key=lambda g: g[0])
    n = 0
    while n < len(groups):
        path, name, a, f = groups[n]
        n += 1
        if n < len(groups) and groups[n][0] == path:  # several variants in one file: merge by position
            merged = []
            while True:
                merged += [
                    (a[i], a[i + 1], a[i + 2], a[i + 3], name if isinstance(name, str) else name[i // 4])
                    for i in range(0, len(a), 4)
                ]
                if n == len(groups) or groups[n][0] != path:
                    break
                _, name, a, _ = groups[n]
                n += 1
            merged.sort()
            a = [x for r in merged for x in r[:4]]
            name = [r[4] for r in merged]
        kinds, scoped, test = KINDS[f.test], f.scoped, f.test
        before = len(hits)
        for i in range(0, len(a), 4):
            kind, why = kinds[a[i + 2] & 31]
            hits.append(Hit(path, a[i], kind, "", a[i + 1], name if isinstance(name, str) else name[i // 4], why))
            where.append((f, a[i + 3]))
        for h in hits[before:]:
            if h.why:
                if scoped:
                    c.raw += 1
                continue
            if test:
                c.tests += 1
            if scoped:
                c.raw += 1
                c.code += 1
                files.add(path)
                if h.kind == "consumer":
                    c.consumers += 1
                elif h.kind == "definition":
                    c.definitions += 1
                elif h.kind == "delegation":
                    c.delegations += 1
    c.files = len(files)
    return c
