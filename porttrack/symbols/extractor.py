"""What one change of a file adds, changes, removes and uses, for a whole walk at once.

Parse results are cached by git blob id in the one cache store (`porttrack.cache`), so a second
walk of the same range parses nothing. Within a run a file's before-blob is reparsed incrementally
from its after-blob's tree, and a cold walk may split its changes over forked processes.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import sqlite3
from collections import Counter, OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Protocol, Self

from porttrack import cache as cache_mod
from porttrack.parse import parser
from porttrack.symbols.defs import (
    defined_words,
    definition_lines,
    definitions,
    diff_definitions,
    identifiers_on,
    is_binary,
    parse,
)
from porttrack.symbols.textdiff import rows, added_lines, line_edits


@dataclass
class FileDiff:
    """What one change of one file did to its definitions (names sorted)."""

    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    uses: list[str] = field(default_factory=list)  # identifiers on added lines, minus builtins and own definitions


def pair_key(lang: str, old: str | None, new: str | None) -> str:
    return f"{lang}:{old or '-'}:{new or '-'}"


def reparse(tree, src: bytes, dst: bytes, edits: list[tuple[int, int, int, int]], lang: str):
    """Parse `dst` reusing `tree` (the parse of `src`), given the line edits from src to dst.

    tree-sitter then reparses only what the edits touch: about ten times faster than a full parse.
    Each edit is narrowed to the bytes that differ inside its lines: an edit that spans a whole
    `def` line, its newline included, would make tree-sitter rebuild the whole function body
    (the block's indentation token follows that newline), one within the name does not.
    """
    tree = tree.copy()
    s_at, d_at = _offsets(src), _offsets(dst)
    # Back to front, so that the rows and bytes of the edits still to apply have not moved.
    for i1, i2, j1, j2 in reversed(edits):
        start = s_at[i1]
        old, new = src[start : s_at[i2]], dst[d_at[j1] : d_at[j2]]
        same = min(len(old), len(new))
        head = _common_bytes(old, new, same, True)
        tail = _common_bytes(old, new, same - head, False)
        if head + tail == len(old) == len(new):
            continue  # nothing differs (not produced by line_edits, but harmless)
        base = _point(src, s_at, i1)  # rows before the edit are the same on both sides
        tree.edit(
            start_byte=start + head,
            old_end_byte=start + len(old) - tail,
            new_end_byte=start + len(new) - tail,
            start_point=_advance(base, old, head),
            old_end_point=_advance(base, old, len(old) - tail),
            new_end_point=_advance(base, new, len(new) - tail),
        )
    return parser(lang).parse(dst, tree)


def _common_bytes(a: bytes, b: bytes, limit: int, front: bool) -> int:
    """Length of the common prefix (front) or suffix of `a` and `b`, at most `limit`."""
    lo, hi = 0, max(limit, 0)
    while lo < hi:  # binary search on slice equality: memcmp in C, no loop per byte
        mid = (lo + hi + 1) // 2
        if (a[:mid] == b[:mid]) if front else (a[len(a) - mid :] == b[len(b) - mid :]):
            lo = mid
        else:
            hi = mid - 1
    return lo


def _advance(base: tuple[int, int], chunk: bytes, n: int) -> tuple[int, int]:
    """tree-sitter's (row, column) after the first `n` bytes of `chunk`, which starts at `base`."""
    newlines = chunk.count(b"\n", 0, n)
    if not newlines:
        return (base[0], base[1] + n)
    return (base[0] + newlines, n - chunk.rfind(b"\n", 0, n) - 1)


@lru_cache(maxsize=8)
def _offsets(data: bytes) -> list[int]:
    """Byte offset where each row starts, then the length of the data."""
    return [0, *itertools.accumulate(map(len, rows(data)))]


def _point(data: bytes, offsets: list[int], row: int) -> tuple[int, int]:
    """tree-sitter's (row, column) of the start of `row`, or of the end of the data."""
    if row < len(offsets) - 1 or not data or data.endswith(b"\n"):
        return (row, 0)
    return (row - 1, offsets[-1] - offsets[-2])


class Extractor:
    """Diffs file changes into symbols, caching parse results by blob id.

    `read(sha)` returns a blob's bytes (the walk passes a cat-file reader that refuses missing
    objects). Within a run each blob is parsed once (a file's after-blob is the next older
    commit's before-blob); across runs results live in one SQLite file under the cache root:
    definitions per blob, and the diff per (before, after) blob pair. `parsed` counts blobs given
    to tree-sitter in this run, `cached` the file changes answered from the cache.

    `extract` takes a whole walk's changes at once: knowing every later use of a blob, it keeps
    each parse tree exactly as long as a later change still needs it, and with `jobs` > 1 it
    splits the work, by chains of changes sharing blobs, over forked processes.
    """

    def __init__(
        self,
        read: Callable[[str], bytes],
        cache_dir: str | os.PathLike | None = None,
        read_many: Callable[[list[str]], dict[str, bytes]] | None = None,
        *,
        _db_path: Path | None = None,
    ):
        self.read = read
        self.read_many = read_many
        self._fetched: dict[str, bytes] = {}
        self.path = _db_path or cache_mod.db_path(cache_dir)
        self.db: sqlite3.Connection | None = cache_mod.open_db(self.path, autocommit=False)
        self.parsed = 0
        self.cached = 0
        self.skipped = 0  # binary (or too deeply nested) blobs of source files: recorded as touched, no symbols
        # sha -> (tree, definitions, bytes) of blobs parsed in this run and still wanted.
        self._recent: OrderedDict[str, tuple[object, dict[str, str], bytes]] = OrderedDict()
        self._uses: Counter[str] | None = None  # set by `extract`: the uses of each blob still to come
        self._kept_bytes = 0
        self._puts: list[tuple[str, str, object]] | None = None  # a worker hands its results back instead

    def extract(
        self,
        changes: list[tuple[str, str | None, str | None]],
        *,
        jobs: int = 1,
        open_reader: Callable[[], _Reader] | None = None,
        sizes: Callable[[list[str]], dict[str, int]] | None = None,
        progress: Callable[[int, int], None] | None = None,
    ) -> dict[str, FileDiff]:
        """The FileDiff of every change (walk order: newest first), keyed by `pair_key`.

        Same answers as `file_change` on each change in turn. Changes already in the cache are
        read from it; the rest are computed here, or with `jobs` > 1 and `open_reader` (a
        callable giving a fresh blob reader with `one`, `many` and `close`) in forked processes.
        """
        out: dict[str, FileDiff] = {}
        todo: list[tuple[str, str | None, str | None]] = []
        seen: set[str] = set()
        for change in changes:
            key = pair_key(*change)
            if key in seen:
                self.cached += 1  # a pair met again: answered from what this run just stored
                continue
            seen.add(key)
            hit = self._get("pair", key)
            if hit is not None:
                self.cached += 1
                out[key] = FileDiff(**hit)
            else:
                todo.append(change)
        if not todo:
            return out
        buckets = (
            _buckets(todo, jobs, sizes) if jobs > 1 and open_reader is not None and len(todo) >= _POOL_MIN else None
        )
        if buckets is not None and len(buckets) > 1:
            done = self._extract_forked(todo, buckets, jobs, open_reader, progress)
            if done is not None:
                out.update(done)
                return out
        total = len(todo)
        for n, diff in enumerate(self._run(todo), 1):
            out[pair_key(*todo[n - 1])] = diff
            if progress and (n % 64 == 0 or n == total):
                progress(n, total)
        return out

    def _run(self, todo: list[tuple[str, str | None, str | None]]):
        """Yield the FileDiff of each change of `todo`, keeping trees only while still needed."""
        self._uses = Counter(sha for _, old, new in todo for sha in (old, new) if sha)
        try:
            for start in range(0, len(todo), _BATCH):
                batch = todo[start : start + _BATCH]
                if self.read_many is not None:
                    need = {sha for _, old, new in batch for sha in (old, new) if sha and sha not in self._recent}
                    self._fetched = self.read_many(sorted(need)) if need else {}
                for change in batch:
                    yield self.file_change(*change)
                self._fetched = {}
        finally:
            self._uses = None
            self._fetched = {}

    def _extract_forked(self, todo, buckets, jobs, open_reader, progress) -> dict[str, FileDiff] | None:
        """Run the buckets in `jobs` forked processes; None when processes cannot be had.

        Only from a process with no other thread (a thread holding a lock at the fork would
        leave the child stuck on it) and not from a daemonic process (which may have none).
        """
        global _FORKED
        import multiprocessing
        import threading
        from concurrent.futures import ProcessPoolExecutor, as_completed
        from concurrent.futures.process import BrokenProcessPool

        if threading.active_count() > 1 or multiprocessing.current_process().daemon:
            return None
        try:
            ctx = multiprocessing.get_context("fork")
        except ValueError:  # no fork on this platform
            return None
        # A worker never opens the cache file: SQLite's per-process lock state is copied by the fork,
        # so a second connection in the child can read and write without the locks it believes it
        # holds (sqlite.org/howtocorrupt.html, 2.6). The definitions it may reuse go with the fork.
        known = self._stored("blob", sorted({f"{lang}:{old}" for lang, old, _ in todo if old}))
        _FORKED = (todo, open_reader, known)
        out: dict[str, FileDiff] = {}
        total, finished = len(todo), 0
        pool = None
        try:
            pool = ProcessPoolExecutor(max_workers=min(jobs, len(buckets)), mp_context=ctx)
            futures = {pool.submit(_work, bucket): len(bucket) for bucket in buckets}
            for future in as_completed(futures):
                pairs, blobs, parsed, skipped = future.result()
                self.parsed += parsed
                self.skipped += skipped
                for key, value in blobs:
                    self._put("blob", key, value)
                for key, value in pairs:
                    self._put("pair", key, value)
                    out[key] = FileDiff(**value)
                finished += futures[future]
                if progress:
                    progress(finished, total)
        except (BrokenProcessPool, OSError):
            return None  # e.g. no process could be started: the caller does the work itself
        finally:
            _FORKED = None
            if pool is not None:
                pool.shutdown(wait=True, cancel_futures=True)
        return out

    def file_change(self, lang: str, old: str | None, new: str | None) -> FileDiff:
        """Symbols of one change from blob `old` to blob `new` (None: file absent on that side)."""
        key = pair_key(lang, old, new)
        hit = self._get("pair", key)
        if hit is not None:
            self.cached += 1
            self._release(old, new)
            return FileDiff(**hit)
        old_data = self._blob(old) if old else b""
        new_data = self._blob(new) if new else b""
        if is_binary(old_data) or is_binary(new_data):
            self.skipped += 1
            result = FileDiff()
        else:
            try:
                edits = line_edits(old_data, new_data)
                new_defs, uses = {}, set()
                if new:
                    tree, new_defs = self._tree(lang, new, new_data, old, old_data, edits)
                    uses = identifiers_on(tree, lang, added_lines(old_data, new_data, edits))
                old_defs = {}
                if old:
                    back = [(j1, j2, i1, i2) for i1, i2, j1, j2 in edits]
                    old_defs = self._tree(lang, old, old_data, new, new_data, back, need_tree=self._wanted(old))[1]
                    if self._uses is None and new:
                        # Walking newest first, `old` is the next older commit's after-blob: keep its tree,
                        # while `new` is done with on a first-parent line; that keeps the chains in memory.
                        self._drop(new)
                added, changed, removed = diff_definitions(old_defs, new_defs)
                uses -= defined_words(added + changed)
                result = FileDiff(added, changed, removed, sorted(uses))
            except RecursionError:  # scopes nested hundreds deep: recorded as touched, no symbols
                self._drop(old or "")
                self._drop(new or "")
                self.skipped += 1
                result = FileDiff()
        self._put("pair", key, result.__dict__)
        self._release(old, new)
        return result

    def definition_lines(self, lang: str, sha: str) -> dict[str, int]:
        """`definition_lines` of blob `sha`, from the cache when this blob was read before."""
        key = f"{lang}:{sha}"
        hit = self._get("lines", key)
        if hit is not None:
            self.cached += 1
            return hit
        data = self._blob(sha)
        try:
            lines = {} if is_binary(data) else definition_lines(data, lang)
        except RecursionError:  # scopes nested hundreds deep: no definitions, as in a walk
            lines = {}
        self.parsed += 1
        self._put("lines", key, lines)
        return lines

    def _wanted(self, sha: str) -> bool:
        """Whether a later change of this run will read blob `sha` again (unknown: no)."""
        return self._uses is not None and self._uses[sha] > 1

    def _release(self, old: str | None, new: str | None) -> None:
        """After a change: forget the trees no later change needs (known only within `extract`)."""
        if self._uses is None:
            return
        for sha in (old, new):
            if sha:
                self._uses[sha] -= 1
                if self._uses[sha] <= 0:
                    self._drop(sha)

    def _drop(self, sha: str) -> None:
        entry = self._recent.pop(sha, None)
        if entry is not None:
            self._kept_bytes -= len(entry[2])

    def _blob(self, sha: str) -> bytes:
        entry = self._recent.get(sha)
        if entry is not None:
            return entry[2]
        data = self._fetched.get(sha)
        return data if data is not None else self.read(sha)

    def close(self) -> None:
        if self.db is not None:
            try:
                self.db.commit()
                self.db.close()
            except sqlite3.Error:
                pass  # a cache that cannot be written only costs a reparse next time
            self.db = None

    def _tree(self, lang, sha, data, other, other_data, edits, need_tree=True):
        """(tree or None, definitions) of blob `sha`, parsed at most once per run.

        When the other side of the change was parsed recently, its tree is edited into this one
        (incremental parsing): a file's before-blob is the after-blob of the next older commit.
        """
        if sha in self._recent:
            self._recent.move_to_end(sha)
            return self._recent[sha][:2]
        if not need_tree:
            hit = self._get("blob", f"{lang}:{sha}")
            if hit is not None:
                return None, hit
        if other in self._recent:
            tree = reparse(self._recent[other][0], other_data, data, edits, lang)  # edits: other -> this
        else:
            tree = parse(data, lang)
        self.parsed += 1
        defs = definitions(data, lang, tree)
        self._put("blob", f"{lang}:{sha}", defs)
        self._recent[sha] = (tree, defs, data)
        self._kept_bytes += len(data)
        if self._uses is None:
            if len(self._recent) > 128:
                self._drop(next(iter(self._recent)))
        else:
            # Trees take ~15 bytes per source byte: past the budget the least recently used go.
            while self._kept_bytes > _KEEP_BYTES and len(self._recent) > 2:
                self._drop(next(iter(self._recent)))
        return tree, defs

    def _get(self, table: str, key: str):
        if self.db is None:
            return None
        try:
            row = self.db.execute(f"SELECT value FROM sym_{table} WHERE key = ?", (key,)).fetchone()
            return json.loads(row[0]) if row else None
        except (sqlite3.Error, ValueError):
            return None

    def _stored(self, table: str, keys: list[str]) -> dict[str, str]:
        """The stored rows (JSON text) of these keys; none when the cache cannot be read."""
        out: dict[str, str] = {}
        if self.db is None:
            return out
        try:
            for i in range(0, len(keys), 500):
                chunk = keys[i : i + 500]
                q = f"SELECT key, value FROM sym_{table} WHERE key IN ({','.join('?' * len(chunk))})"
                out.update(self.db.execute(q, chunk))
        except sqlite3.Error:
            return {}
        return out

    def _put(self, table: str, key: str, value) -> None:
        if self._puts is not None:
            self._puts.append((table, key, value))
            return
        if self.db is None:
            return
        with contextlib.suppress(sqlite3.Error):
            self.db.execute(
                f"INSERT OR REPLACE INTO sym_{table} (key, value) VALUES (?, ?)",
                (key, json.dumps(value, separators=(",", ":"))),
            )

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class _Reader(Protocol):
    """What `Extractor.extract` wants from `open_reader()` (the walk's cat-file reader)."""

    def one(self, sha: str) -> bytes: ...

    def many(self, shas: list[str]) -> dict[str, bytes]: ...

    def close(self) -> None: ...


_BATCH = 64  # changes whose blobs are asked for in one cat-file round trip


_KEEP_BYTES = 24 << 20  # source bytes whose parse trees one process keeps (~15x that in memory)


_POOL_MIN = 48  # fewer changes to compute than this: not worth starting processes


_FORKED: tuple | None = None  # (changes, open_reader, stored definitions by key), inherited by forked workers


def _buckets(todo, jobs: int, sizes) -> list[list[int]] | None:
    """Indices of `todo` split into balanced groups; changes that share a blob stay together.

    A blob shared by two changes is one file's state between them: keeping the chain in one
    process lets that process parse the blob once and reparse the next incrementally.
    """
    parent = list(range(len(todo)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    owner: dict[str, int] = {}
    for i, (_, old, new) in enumerate(todo):
        for sha in (old, new):
            if sha:
                j = owner.setdefault(sha, i)
                a, b = find(i), find(j)
                if a != b:
                    parent[b] = a
    groups: dict[int, list[int]] = {}
    for i in range(len(todo)):
        groups.setdefault(find(i), []).append(i)
    size = sizes(sorted(owner)) if sizes is not None else {}

    def cost(members: list[int]) -> float:
        # One full parse of the newest blob, then incremental reparses and diffs (~1/3 each).
        blobs = [size.get(s, 4096) for i in members for s in todo[i][1:] if s]
        return max(blobs, default=0) + sum(blobs) / 3

    ordered = sorted(groups.values(), key=cost, reverse=True)
    n = min(len(ordered), jobs * 4)  # several per process, so a slow one does not hold the rest up
    if n < 2:
        return None
    bins: list[list[int]] = [[] for _ in range(n)]
    load = [0.0] * n
    for members in ordered:  # largest first into the lightest bin
        k = load.index(min(load))
        bins[k] += members
        load[k] += cost(members)
    order = sorted(range(n), key=lambda k: -load[k])
    return [sorted(bins[k]) for k in order if bins[k]]


def _work(bucket: list[int]):
    """In a forked worker: compute one bucket of changes, return the results to store."""
    assert _FORKED is not None, "set by the parent before it forks"
    todo, open_reader, known = _FORKED
    reader = open_reader()
    try:
        ex = Extractor(reader.one, None, reader.many, _db_path=Path(cache_mod.MEMORY))
        assert ex.db is not None, "an in-memory cache always opens"
        ex.db.executemany("INSERT INTO sym_blob (key, value) VALUES (?, ?)", known.items())
        ex._puts = []
        try:
            changes = [todo[i] for i in bucket]
            for _ in ex._run(changes):
                pass
        finally:
            if ex.db is not None:
                ex.db.close()
                ex.db = None
        pairs = [(k, v) for t, k, v in ex._puts if t == "pair"]
        blobs = [(k, v) for t, k, v in ex._puts if t == "blob"]
        return pairs, blobs, ex.parsed, ex.skipped
    finally:
        reader.close()
