"""Count many symbols (and regexes) over a scope in one pass: grep first, parse only where it matters.

A scan lists the files of a scope (working tree, or any revision through `git cat-file --batch`
without a checkout) and finds, in one multi-pattern pass over their bytes (RE2, no backtracking),
the files that hold an asked identifier. Only those files are parsed (tree-sitter: code or
comment or string, declaration, delegation; see codemask), plus the first files of the scope
until one defines something (the automatic control). Parse facts are cached by blob id and
occurrences by (identifier, blob), so the same file version is never parsed twice.

A warm run learns blob ids from git (the index for clean files, hashing only modified and
untracked ones; `git ls-tree` for a revision). The classified file set of a clean tree is
remembered under the index checksum (or the commit) and the scope, with the identifiers already
searched in all its files: a warm scan of those names is one `git status` and one GROUP BY
query, with no file read and no parse. A count's Hit objects (and line texts) are built only
when `Count.hits` is first read.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from porttrack import cache as cache_mod
from porttrack import gitio
from porttrack.evidence import codemask
from porttrack.errors import UserError
from porttrack.probe import listing as L
from porttrack.probe.model import Row, Scan, Tree, variants
from porttrack.probe.store import CacheDamaged, Store
from porttrack.probe.files import Ctx, File, Files, Reader, _read_file, _summary, compile_regex
from porttrack.probe.classify import _FirstRead, _first_def, _rows
from porttrack.probe.counts import _finish, _lazy_of, _prepare_index, _release


def config_options(cfg) -> dict:
    """The scan options a porttrack.toml sets: tests scope, excludes, naming and cache.

    The code and tests scopes are checked here, so a bad one names its file and key."""
    for name in ("code", "tests"):
        for rel in cfg.scopes.get(name) or []:
            try:
                L.check_scope(Path(cfg.port_root).resolve(), rel, "scope")
            except UserError as e:
                raise UserError(f"{cfg.path or 'porttrack.toml'}: [port].scopes.{name}: {e}") from None
    return dict(
        tests_scope=cfg.tests_scope,
        exclude=cfg.exclude,
        renames=cfg.renames,
        strip_leading_underscore=cfg.strip_leading_underscore,
        cache_dir=cfg.cache_dir or None,
    )


def scan(
    root: Path,
    symbols: Iterable[str] = (),
    *,
    regexes: Iterable[str] = (),
    scope: list[str],
    tests_scope: Iterable[str] = (),
    exclude: Iterable[str] = (),
    rev: str | None = None,
    renames: dict[str, str] | None = None,
    strip_leading_underscore: bool = True,
    cache_dir: Path | None = None,
    texts: bool = True,
    progress: Callable[[int, int], None] | None = None,
) -> Scan:
    """Count every symbol and regex over scope (+ tests scope) in one pass over the files.

    `cache_dir` is porttrack's cache folder as configured (`[cache] dir`; None: $PORTTRACK_CACHE_DIR or
    the user cache). `texts=False` leaves Hit.text empty, so a warm scan reads no file at all (for
    gates). `progress(done, total)` hears about files being parsed, the only long part (a first scan).
    A cache found damaged mid-scan is rebuilt, with one warning, and the scan runs again."""
    root = Path(root).resolve()
    if not root.is_dir():
        raise UserError(f"port root {root} is not a directory.")
    symbols, regexes = list(dict.fromkeys(symbols)), list(dict.fromkeys(regexes))
    compiled = {rx: compile_regex(rx) for rx in regexes}
    names = {s: variants(s, renames=renames, strip_leading_underscore=strip_leading_underscore) for s in symbols}
    scope_paths = list(dict.fromkeys(L.check_scope(root, s, "scope") for s in scope))
    test_paths = list(dict.fromkeys(L.check_scope(root, s, "tests scope") for s in tests_scope))
    ctx = Ctx(root, symbols, names, regexes, compiled, scope_paths, test_paths, texts, rev is None, cache_dir, progress)
    try:
        return _scan(ctx, rev, list(exclude))
    except (CacheDamaged, sqlite3.DatabaseError) as e:
        # a run is never stopped by its cache: the scan runs again on a fresh file, or in memory
        if isinstance(e, CacheDamaged) or cache_mod.is_damage(e):
            cache_mod.rebuild(cache_mod.db_path(cache_dir), f"{e}")
        elif isinstance(e, sqlite3.OperationalError):  # full, an I/O error, locked past the wait
            cache_mod.failed(cache_mod.db_path(cache_dir), e)
        else:
            raise
        return _scan(ctx, rev, list(exclude))


def _scan(ctx: Ctx, rev: str | None, exclude: list[str]) -> Scan:
    root = ctx.root
    wanted = list(dict.fromkeys(ctx.scope + ctx.tests))
    spec = [p or "." for p in wanted]
    what = repr((spec, ctx.scope, ctx.tests, exclude))  # with the index or commit, names a prepared file set
    store: Store | None = None
    try:
        if rev is not None:
            tree = L.tree_of(root, rev)
            if not wanted:
                return _classify(ctx, None, tree, {}, exclude, [], None, {})
            store = Store(ctx.cache_dir)
            prep_key = f"commit {tree.commit}\0{what}"
            prep = store.prepared(prep_key) if not ctx.compiled else None
            if prep is not None:  # this commit's files in this scope were classified before
                missing = [s for s in prep[1]["unlisted"] if not L.exists(root, s, tree)]
                return _from_prepared(ctx, store, prep, missing, tree)
            assert tree.commit is not None
            shas: dict[str, str | None] = dict(gitio.ls_tree_blobs(root, tree.commit, wanted))
            return _classify(ctx, store, tree, shas, exclude, wanted, prep_key, {})
        if wanted and os.path.isdir(os.path.join(root, ".git")):
            store = Store(ctx.cache_dir)
            return _from_index(ctx, store, spec, wanted, what, exclude)
        with ThreadPoolExecutor(1) as pool:
            tree_job = pool.submit(L.tree_of, root, None, wanted)
            in_git = (root / ".git").exists() or gitio.is_git_repo(root)
            shas = L.list_worktree(root, wanted, in_git) if wanted else {}
            tree = tree_job.result()
        if wanted:
            store = Store(ctx.cache_dir)
        return _classify(ctx, store, tree, shas, exclude, wanted, None, {})
    except BaseException:
        if store is not None:
            store.close()
        raise


def _from_index(ctx: Ctx, store: Store, spec: list[str], wanted: list[str], what: str, exclude: list[str]) -> Scan:
    """A top level: one `git status` says HEAD, dirty and what changed; the index listing is cached."""
    root = ctx.root
    checksum = L.index_checksum(root)
    status = gitio.start(root, "status", "--porcelain=v2", "-z", "--branch", "--untracked-files=all", "--", *spec)
    try:
        prep_key = f"index {checksum.hex()}\0{what}" if checksum else None
        prep = store.prepared(prep_key) if prep_key and not ctx.compiled else None
        result = None
        if prep is not None and not prep[1].get("pending", ()):
            # the files of this index and scope were classified before: count while git status runs
            missing = [s for s in prep[1]["unlisted"] if not (root / s).exists()]
            result = _from_prepared(ctx, store, prep, missing, None, keep_store=True)
        head, dirty, changed = L.status_changes(b"\0".join(gitio.records(status)))
    except BaseException:
        if status.returncode is None:
            status.kill()
            status.communicate()
        raise
    tree = Tree(str(root), head, dirty)
    if checksum and L.index_checksum(root) != checksum:
        checksum = prep_key = None  # the index changed meanwhile: nothing is taken from or given to the cache by it
    if result is not None:
        if not changed and checksum:  # the working tree is that index here: the counts stand
            result.tree = tree
            if _lazy_of(result) is None:
                store.close()
            return result
        _release(result)
    if (
        prep is not None
        and changed
        and checksum
        and "left_out" in prep[1]
        and set(prep[1]["pending"]) <= {p for p, _ in changed}
    ):  # a few paths differ from the index: patch its set
        result = _patched(ctx, store, *prep, changed, [L.glob_re(g) for g in exclude], wanted)
        result.tree = tree
        return result
    list_key = checksum.hex() + "\0" + "\0".join(spec) if checksum else None
    shas = store.listing(list_key) if list_key else None
    if shas is None:
        shas = L.parse_staged(gitio.records(gitio.start(root, "ls-files", "-s", "-z", "--", *spec)))
        if list_key and L.index_checksum(root) == checksum:
            store.store_listing(list_key, shas)
        else:
            prep_key = None
    index_shas = {p: shas.get(p, "") for p, _ in changed}  # "": not in the index
    for p, _ in changed:
        shas[p] = None
    return _classify(ctx, store, tree, shas, exclude, wanted, prep_key, index_shas)


def _from_prepared(
    ctx: Ctx, store: Store, prep: tuple, missing: list[str], tree: Tree | None, keep_store: bool = False
) -> Scan:
    """A scan of a stored file set (classified before): its rows, summary and searched names."""
    lst, info, rows = prep
    left_out = (info["excluded"], info["hidden"])
    return _finish(
        ctx,
        store,
        rows,
        None,
        lst,
        [],
        missing,
        *left_out,
        tree,
        keep_store=keep_store,
        summary=info["summary"],
        covered=lst,
    )


def _classify(
    ctx: Ctx,
    store: Store | None,
    tree: Tree,
    shas: dict[str, str | None],
    exclude: list[str],
    wanted: list[str],
    prep_key: str | None,
    index_shas: dict[str, str | None],
) -> Scan:
    """Sort the listed files into scanned, excluded and hidden, learn their cache ids, remember the
    classified set when the tree is clean, and count."""
    root, excl = ctx.root, [L.glob_re(g) for g in exclude]
    all_paths = sorted(shas)
    listed = {d for p in all_paths for d in L.prefixes(p)}
    unlisted = [s for s in ctx.scope if s and s not in listed]
    missing = [s for s in unlisted if not L.exists(root, s, tree)]
    if store is None:  # no scope at all: nothing to read or count
        store = Store(ctx.cache_dir)
    scanned: list[str] = []
    left_out: list[tuple[str, bool]] = []  # (path, excluded rather than hidden)
    for p in all_paths:
        if excl and any(r.fullmatch(p) for r in excl):
            left_out.append((p, True))
        elif L.hidden(p, wanted):
            left_out.append((p, False))
        else:
            scanned.append(p)
    excluded = sum(1 for _, ex in left_out if ex)
    files: list[File] = []
    incomplete: list[str] = []
    reader = Reader(root)
    for p in scanned:
        sha = shas[p]
        if sha is not None:
            files.append(File(p, sha, codemask.lang_for(p), disk=tree.rev is None))
        else:
            f = _read_file(reader.tree, p, incomplete)
            if f is not None:
                files.append(f)
    try:
        rows, kept = _rows(ctx, store, reader, files, incomplete, _FirstRead(ctx))
        files_ = Files(rows, [i for i, r in enumerate(rows) if r.problem is None], kept, ctx.disk)
        _first_def(ctx, store, reader, rows, files_, incomplete)
    except BaseException:
        reader.close()
        raise
    lst = 0
    if (
        prep_key and not index_shas and not incomplete and len(rows) == len(files)
    ):  # a clean tree: its rows are the index's
        info = {
            "unlisted": unlisted,
            "excluded": excluded,
            "hidden": len(left_out) - excluded,
            "left_out": [p for p, _ in left_out],
            "pending": [],
            "summary": _summary(rows),
        }
        lst = store.store_prepared(prep_key, info, rows)
    elif prep_key and index_shas:
        _prepare_index(store, prep_key, rows, scanned, left_out, index_shas, ctx.scope, ctx.tests)
    return _finish(
        ctx,
        store,
        rows,
        kept,
        lst,
        incomplete,
        missing,
        excluded,
        len(left_out) - excluded,
        tree,
        reader=reader,
        covered=lst,
    )


def _patched(
    ctx: Ctx,
    store: Store,
    lst: int,
    info: dict,
    old: list[Row],
    changed: list[tuple[str, bool]],
    excl: list,
    wanted: list[str],
) -> Scan:
    """A scan of a working tree whose index has a prepared file set, with the few paths git status
    reports (modified, deleted, untracked) read from disk in place of their index versions."""
    at = {r.path: n for n, r in enumerate(old)}
    excluded, hidden = info["excluded"], info["hidden"]
    known = set(info["left_out"])  # index paths already counted as excluded or hidden
    incomplete: list[str] = []
    drop: set[int] = set()
    files: list[File] = []
    reader = Reader(ctx.root)
    for p, _ in changed:
        if p in at:
            drop.add(at[p])
        elif p in known:
            continue
        elif excl and any(r.fullmatch(p) for r in excl):
            excluded += 1
            continue
        elif L.hidden(p, wanted):
            hidden += 1
            continue
        f = _read_file(reader.tree, p, incomplete)
        if f is not None:
            files.append(f)
    try:
        new_rows, new_kept = _rows(ctx, store, reader, files, incomplete)
        rows = [r for n, r in enumerate(old) if n not in drop] + new_rows
        kept: list[File | None] = [*([None] * (len(rows) - len(new_rows))), *new_kept]
        order = sorted(range(len(rows)), key=lambda n: rows[n].path)
        rows, kept = [rows[n] for n in order], [kept[n] for n in order]
        _first_def(
            ctx,
            store,
            reader,
            rows,
            Files(rows, [i for i, r in enumerate(rows) if r.problem is None], kept, True),
            incomplete,
        )
    except BaseException:
        reader.close()
        raise
    listed = {d for p, _ in changed for d in L.prefixes(p)}
    missing = [s for s in info["unlisted"] if s not in listed and not (ctx.root / s).exists()]
    return _finish(ctx, store, rows, kept, 0, incomplete, missing, excluded, hidden, None, reader=reader, covered=lst)
