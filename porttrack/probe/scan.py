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
import sys
import threading
import weakref
from array import array
from bisect import bisect_right
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from porttrack import cache as cache_mod
from porttrack import codemask, gitio, paths
from porttrack.errors import UserError
from porttrack.probe import listing as L
from porttrack.probe.model import Count, Hit, Row, Scan, Tree, variants
from porttrack.probe.store import CacheDamaged, Store, occ_row

POOL_MIN_BYTES = 4_000_000  # new source to parse before a process pool pays for its start
# bytes of new files held from their first read (the listing) to the name search when the names
# could not be searched at that read (before the automatic control is known); the rest are read
# again there, and only those holding a name are kept: memory stays flat on a kernel-size tree
KEEP_READ_BYTES = 32 << 20


# ---------------------------------------------------------------- regexes


def compile_regex(rx: str, *, text: bool = False):
    """A user's regex, compiled by RE2: over bytes (Latin-1: one byte, one character), or over str
    with `text`; `^`/`$` at every line. RE2 never backtracks, so no pattern can hang a scan; it
    has no backreferences and no lookaround (docs/probe.md, "Regex syntax")."""
    import re2

    if not rx:
        raise UserError("regex '' is empty; give a pattern to count.")
    opts = re2.Options()
    opts.log_errors = False
    try:
        if text:
            return re2.compile("(?m)" + rx, options=opts)
        opts.encoding = re2.Options.Encoding.LATIN1
        # surrogateescape: bytes of a non-UTF-8 argument are matched as those bytes
        return re2.compile(b"(?m)" + rx.encode("utf-8", "surrogateescape"), options=opts)
    except re2.error as e:
        raise UserError(
            f"regex {rx!r} does not compile with RE2 ({e}); backreferences and lookaround are not accepted."
        ) from None


# ---------------------------------------------------------------- files


@dataclass
class File:
    path: str
    sha: str  # git blob id
    lang: str | None
    data: bytes | None = None  # read lazily: from disk when `disk`, else through cat-file
    disk: bool = False
    scoped: bool = False  # under the scope
    missing: bool = False  # its object could not be read
    test: bool = False  # under the tests scope
    searched: tuple[str, ...] | None = None  # the names searched in it at its first read (_FirstRead)
    found: dict[str, list[int]] | None = None  # and their offsets there

    @property
    def key(self) -> str:
        return f"{self.sha}:{self.lang or '-'}"


def _decode_problem(data: bytes) -> str | None:
    if b"\0" in data[:8000]:
        return "binary"
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as e:
        return f"not UTF-8 text (byte {e.start})"
    return None


def _read_file(tree: paths.Tree, p: str, incomplete: list[str]) -> File | None:
    """A working-tree file git does not vouch for: read and hashed (None: gone, a link or unreadable)."""
    try:
        data = L.read_worktree(tree, p)
    except paths.Outside:
        incomplete.append(f"{p}: not read, a folder on its path leads outside the port root")
        return None
    except FileNotFoundError:
        return None  # deleted in the working tree
    except OSError as e:
        incomplete.append(f"{p}: unreadable ({e.strerror})")
        return None
    if data is None:
        return None
    return File(p, L.blob_id(data), codemask.lang_for(p), data)


class Reader:
    """File contents on demand: the working tree from disk, a revision through cat-file.

    A working-tree file known by its index entry is checked against its blob id when read, so
    what is cached under that id is that content (a file changed mid-scan is listed, not counted)."""

    def __init__(self, root: Path):
        self.root = root
        self.tree = paths.Tree(root)
        self.cat: gitio.CatFile | None = None

    def preload(self, files: list[File], incomplete: list[str]) -> None:
        """Read the blobs of many revision files in one batch; a missing object is listed as incomplete."""
        want = [f for f in files if f.data is None and not f.disk and not f.missing]
        if not want:
            return
        got = gitio.cat_batch(self.root, list(dict.fromkeys(f.sha for f in want)))
        for f in want:
            f.data = got.get(f.sha)
            if f.data is None:
                incomplete.append(f"{f.path}: missing object {f.sha}")
                f.missing = True

    def load(self, f: File, incomplete: list[str]) -> bool:
        if f.missing:
            return False
        if f.data is not None:
            return True
        if f.disk:
            try:
                data = L.read_worktree(self.tree, f.path)
            except paths.Outside:
                data, why = None, "not read, a folder on its path leads outside the port root"
            except OSError as e:
                data, why = None, f"unreadable ({e.strerror})"
            else:
                why = "not a regular file" if data is None else "changed while being read"
            if data is None or L.blob_id(data) != f.sha:
                incomplete.append(f"{f.path}: {why}")
                f.missing = True
                return False
            f.data = data
            return True
        if self.cat is None:
            self.cat = gitio.CatFile(self.root)
        f.data = self.cat.read(f.sha)
        if f.data is None:
            incomplete.append(f"{f.path}: missing object {f.sha}")
            f.missing = True
            return False
        return True

    def line(self, f: File, offset: int, col: int) -> str:
        """The stripped source line of a hit, found from its byte offset."""
        if f.data is None and not self.load(f, []):
            return ""
        assert f.data is not None
        start = offset - (col - 1)
        end = f.data.find(b"\n", offset)
        return f.data[start : end if end >= 0 else len(f.data)].decode("utf-8", "replace").strip()

    def close(self) -> None:
        if self.cat is not None:
            self.cat.close()


class Files:
    """The readable files of a scan; File objects of clean working-tree files are made on first use."""

    def __init__(self, rows: list[Row], live: list[int], kept: list[File | None] | None, disk: bool):
        self.rows, self.live, self.kept, self.disk = rows, live, kept, disk
        self.preloaded = False
        self.made: dict[int, File] = {}
        self._by_id: dict[int, list[File]] | None = None

    def get(self, i: int) -> File:
        if self.kept is not None and self.kept[i] is not None:
            return self.kept[i]  # type: ignore[return-value]
        f = self.made.get(i)
        if f is None:
            r = self.rows[i]
            f = self.made[i] = File(r.path, r.sha, r.lang, disk=self.disk, scoped=r.scoped, test=r.test)
        return f

    def by_id(self) -> dict[int, list[File]]:
        if self._by_id is None:
            self._by_id = {}
            for i in self.live:
                self._by_id.setdefault(self.rows[i].bid, []).append(self.get(i))
        return self._by_id


# ---------------------------------------------------------------- the scan


@dataclass
class Ctx:
    root: Path
    symbols: list[str]
    names: dict[str, list[str]]
    regexes: list[str]
    compiled: dict[str, object]
    scope: list[str]
    tests: list[str]
    texts: bool
    disk: bool  # the working tree (files read from disk), not a revision
    cache_dir: Path | None = None
    progress: Callable[[int, int], None] | None = None
    parsed: int = 0  # files parsed by this scan


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
        if not isinstance(e, CacheDamaged) and not cache_mod.is_damage(e):
            raise
        cache_mod.rebuild(cache_mod.db_path(cache_dir), f"{e}")
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


def _first_unknown(rows: list[Row]) -> bool:
    """Whether an unparsed readable file of the scope comes before any file known to define something."""
    for r in rows:
        if r.problem is None and r.scoped:
            if not r.masked:
                return True
            if r.first_def:
                return False
    return False


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
    fileset = None if lst else [(rows[i].bid, i, rows[i].scoped, rows[i].test) for i in files.live]
    totals = store.tally(
        lst, fileset, [(n, v, len(word_names[sym])) for n, sym in enumerate(order) for v in word_names[sym]]
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


def _summary(rows: list[Row]) -> list:
    """What a scan reports of its files: [readable row numbers, binary paths, "path: problem" lines,
    files in the scope, paths read raw for want of a grammar, [path, name, line] of the first
    definition in the scope or None]."""
    live, binary, problems, no_grammar, first = [], [], [], [], None
    scope_files = 0
    for i, r in enumerate(rows):
        if r.problem is None:
            live.append(i)
            if r.scoped:
                scope_files += 1
                if r.first_def and first is None:
                    first = [r.path, r.first_def, r.first_line]
            if r.lang is None:
                no_grammar.append(r.path)
        elif r.problem == "binary":
            binary.append(r.path)
        else:
            problems.append(f"{r.path}: {r.problem}")
    return [live, binary, problems, scope_files, no_grammar, first]


# ---------------------------------------------------------------- hits


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
