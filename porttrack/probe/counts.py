"""Counting in SQL: each asked name's code, comment and test hits, lazily built Hit objects, the automatic control."""

from __future__ import annotations

import threading
import weakref
from functools import partial

from porttrack.evidence import codemask
from porttrack.probe import listing as L
from porttrack.probe.model import Count, Hit, Row, Scan, Tree
from porttrack.probe.store import Store
from porttrack.probe.files import Ctx, File, Files, Reader, _first_unknown, _summary, compile_regex
from porttrack.probe.classify import count
from porttrack.probe.search import _regex_hits, _search


def _prepare_index(
    store: Store,
    key: str,
    rows: list[Row],
    paths: list[str],
    left_out: list[tuple[str, bool]],
    index_shas: dict[str, str | None],
    scope: list[str],
    tests: list[str],
) -> None:
    """Remember the file set of a dirty tree's index: this scan's rows for the paths git status did
    not report, the index versions of those it did (when the cache knows them; else they are
    `pending`, and the set serves only while git status reports them)."""
    kept = [r for r in rows if r.path not in index_shas]
    if len(kept) != sum(1 for p in paths if p not in index_shas):
        return  # an unchanged file could not be read: nothing to remember
    left = {p for p, _ in left_out}
    theirs = {p: (sha, codemask.lang_for(p)) for p, sha in index_shas.items() if sha != "" and p not in left}
    ids = store.ids(sorted({f"{sha}:{lang or '-'}" for sha, lang in theirs.values() if sha}))
    pending = []
    for p, (sha, lang) in theirs.items():
        got = ids.get(f"{sha}:{lang or '-'}") if sha else None
        if got is None:
            pending.append(p)
        else:
            bid, fd, fl, problem, masked = got
            kept.append(Row(p, sha, lang, bid, fd, fl, problem, L.under(p, scope), L.under(p, tests), masked))  # type: ignore[arg-type]
    kept.sort(key=lambda r: r.path)
    summary = _summary(kept)
    if summary[-1] is None and _first_unknown(kept):
        return  # an unparsed index version comes first in the scope: its first definition is not known
    in_index = [(p, ex) for p, ex in left_out if index_shas.get(p) != ""]
    listed = (
        {d for r in kept for d in L.prefixes(r.path)}
        | {d for p in pending for d in L.prefixes(p)}
        | {d for p, _ in in_index for d in L.prefixes(p)}
    )
    info = {
        "unlisted": [s for s in scope if s and s not in listed],
        "excluded": sum(1 for _, ex in in_index if ex),
        "hidden": sum(1 for _, ex in in_index if not ex),
        "left_out": [p for p, _ in in_index],
        "pending": sorted(pending),
        "summary": summary,
    }
    store.store_prepared(key, info, kept)


def _lazy_of(result: Scan) -> LazyHits | None:
    for c in list(result.counts.values()) + list(result.control_counts.values()):
        if c.loader is not None:
            return c.loader.func.__self__  # type: ignore[attr-defined]
    return None


def _release(result: Scan) -> None:
    """Let go of a discarded scan's lazy hits, leaving the cache connection open for the scan that goes on."""
    lazy = _lazy_of(result)
    if lazy is not None:
        lazy.closer.detach()
        lazy.reader.close()


def _finish(
    ctx: Ctx,
    store: Store,
    rows: list[Row],
    kept: list[File | None] | None,
    lst: int,
    incomplete: list[str],
    missing: list[str],
    excluded: int,
    hidden: int,
    tree: Tree | None,
    reader: Reader | None = None,
    keep_store: bool = False,
    summary: list | None = None,
    covered: int = 0,
) -> Scan:
    """Counts and the scan, from the classified files; `kept` the matching File objects (None: clean
    working-tree files, made when needed); `lst` the stored file set (0: none), which comes with its
    `summary`; `covered` a stored set whose searched identifiers need no search in its files."""
    if reader is None:
        reader = Reader(ctx.root)
    owned = False
    try:
        live, binary, problems, scope_files, no_grammar, first = summary or _summary(rows)
        incomplete = incomplete + problems
        auto, auto_how = _auto_control(ctx, first)
        files = Files(rows, live, kept, ctx.disk)
        counts = _word_counts(ctx, store, reader, files, lst, covered, auto, incomplete)
        owned = bool(counts)
        counts.update(_regex_counts(ctx, store, reader, files, auto, incomplete))
    finally:
        if not owned:
            reader.close()
            if not keep_store:
                store.close()
    asked = {**{s: counts[s] for s in ctx.symbols}, **{r: counts[r] for r in ctx.regexes}}
    return Scan(
        tree=tree,  # type: ignore[arg-type]  # None: set by the caller
        scope=ctx.scope,
        tests_scope=ctx.tests,
        files_scanned=len(live),
        incomplete=incomplete,
        counts=asked,
        scope_files=scope_files,
        missing_scopes=missing,
        excluded=excluded,
        hidden=hidden,
        binary=binary,
        no_grammar=no_grammar,
        auto_control=auto,
        auto_control_how=auto_how,
        control_counts={auto[form]: counts[auto[form]] for form in auto},
        parsed=ctx.parsed,
    )


def _auto_control(ctx: Ctx, first) -> tuple[dict[str, str], dict[str, str]]:
    """The automatic control: the first function or class defined in the scope."""
    auto, auto_how = {}, {}
    if first:
        path, fd, fl = first
        auto["word"] = fd
        auto_how["word"] = f"automatic: the first definition found in the scope ({path}:{fl})"
        if ctx.compiled:
            auto["regex"] = rf"\b{fd}\b"
            auto_how["regex"] = auto_how["word"] + ", as a regex"
    return auto, auto_how


def _word_counts(
    ctx: Ctx, store: Store, reader: Reader, files: Files, lst: int, covered: int, auto: dict, incomplete: list[str]
) -> dict[str, Count]:
    """Words: searched where not yet searched, counted in SQL from per-file totals; their Hit
    objects are made on first use."""
    word_names = {s: ctx.names[s] for s in ctx.symbols}
    if "word" in auto and auto["word"] not in word_names:
        word_names[auto["word"]] = [auto["word"]]
    if not word_names:
        return {}
    rows = files.rows
    _search(ctx, store, reader, files, sorted({v for vs in word_names.values() for v in vs}), lst, covered, incomplete)
    order = list(word_names)
    totals = store.tally(
        lst,
        lambda: [(rows[i].bid, i, rows[i].scoped, rows[i].test) for i in files.live],
        [(n, v, len(word_names[sym])) for n, sym in enumerate(order) for v in word_names[sym]],
    )
    hits = LazyHits(store, reader, files, ctx.texts)
    zero = (0,) * 7
    counts = {}
    for n, sym in enumerate(order):
        raw, code, nfiles, defs, tests, cons, dele = totals.get(n, zero)
        counts[sym] = Count(
            sym,
            "word",
            word_names[sym],
            code=code,
            raw=raw,
            files=nfiles,
            definitions=defs,
            tests=tests,
            consumers=cons,
            delegations=dele,
            loader=partial(hits.load, sym, word_names[sym]),
        )
    return counts


def _regex_counts(
    ctx: Ctx, store: Store, reader: Reader, files: Files, auto: dict, incomplete: list[str]
) -> dict[str, Count]:
    """Regexes read every file; only files with a match are parsed, for their masks."""
    rx_all = dict(ctx.compiled)
    if "regex" in auto and auto["regex"] not in rx_all:
        rx_all[auto["regex"]] = compile_regex(auto["regex"])
    if not rx_all:
        return {}
    readable = [files.get(i) for i in files.live]
    reader.preload(readable, incomplete)
    matches: dict[str, list[tuple[int, File, list]]] = {rx: [] for rx in rx_all}
    for i, f in zip(files.live, readable, strict=False):
        if not reader.load(f, incomplete):
            continue
        for rx, pat in rx_all.items():
            ms = [m for m in pat.finditer(f.data) if m.end() != m.start()]  # type: ignore[attr-defined]
            if ms:
                matches[rx].append((i, f, ms))
    regions: dict[int, codemask.Regions] = {}  # one parse per file with a match
    counts: dict[str, Count] = {}
    where: dict[str, list] = {}
    for rx, found in matches.items():
        groups = []
        for i, f, ms in found:
            if i not in regions:
                regions[i] = codemask.Regions(f.data, f.lang)  # type: ignore[arg-type]
                ctx.parsed += bool(f.lang)
            flat, matched = _regex_hits(f.data, regions[i], ms)  # type: ignore[arg-type]
            groups.append((f.path, matched, flat, f))
        counts[rx] = count(rx, "regex", [rx], groups, where.setdefault(rx, []))
    if ctx.texts and where:
        for key, ws in where.items():
            for h, (f, offset) in zip(counts[key].hits, ws, strict=False):
                h.text = reader.line(f, offset, h.col)
    return counts


class LazyHits:
    """Makes the Hit objects of a scan's word counts when one is first asked for.

    Holds the scan's cache connection (the cache may be in memory) and reader, and closes them
    when the scan's counts are gone. Line texts of clean working-tree files are read from disk
    at that moment, as a scan reads them."""

    def __init__(self, store: Store, reader: Reader, files: Files, texts: bool):
        self.store, self.reader, self.files, self.texts = store, reader, files, texts
        self.lock = threading.Lock()
        self.closer = weakref.finalize(self, _close_both, store, reader)

    def load(self, sym: str, vs: list[str]) -> list[Hit]:
        with self.lock:
            by_id = self.files.by_id()
            groups = [(f.path, v, a, f) for v, bid, a in self.store.occurrences(vs, by_id) for f in by_id[bid]]
            if self.texts and not self.files.disk and not self.files.preloaded:
                # a revision's lines come through cat-file: all its files in one batch, once
                self.reader.preload([self.files.get(i) for i in self.files.live], [])
                self.files.preloaded = True
            where: list[tuple[File, int]] = []
            hits = count(sym, "word", vs, groups, where).hits
            if self.texts:
                for h, (f, offset) in zip(hits, where, strict=False):
                    h.text = self.reader.line(f, offset, h.col)
            return hits


def _close_both(store: Store, reader: Reader) -> None:
    try:
        store.close()
        reader.close()
    except Exception:  # noqa: BLE001  # at interpreter exit: nothing left to release
        pass
