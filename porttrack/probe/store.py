"""The probe's tables in porttrack's cache (porttrack/cache.py): file versions and their parse
facts, occurrences per (identifier, file version), listings and classified file sets.

The cache is filled lazily. A file version is parsed only when a scan needs it (it holds an asked
name or a regex match, or it comes first in the scope, for the automatic control), and an
identifier's occurrences are stored when a scan first asks for it. `searched` remembers which
identifiers were looked for in every file of a stored file set, so a warm scan of those names is
one SQL query with no file read."""

from __future__ import annotations

import json
import sqlite3
from array import array
from collections.abc import Callable
from pathlib import Path

from porttrack import cache as cache_mod
from porttrack.evidence import codemask
from porttrack.probe.model import Row

KEEP_SETS = 16  # classified file sets (and listings) kept; older ones are dropped


class CacheDamaged(Exception):
    """A row failed its check while being read."""


def _table(pred) -> bytes:
    return bytes(1 if f < 32 and pred(f) else 0 for f in range(256))


_CODE_T = _table(lambda f: not f & codemask.NONCODE_MASK)
_DECL_T = _table(lambda f: not f & codemask.NONCODE_MASK and bool(f & codemask.DECL))
_DELEG_T = _table(lambda f: not f & codemask.NONCODE_MASK and not f & codemask.DECL and bool(f & codemask.DELEGATION))


def occ_row(word: str, bid: int, a: array) -> tuple:
    """One occ row: the flat hits and their totals (raw, code, declarations, delegations), which a
    warm count sums without looking at single hits. The kinds follow scan's `KINDS`."""
    flags = bytes(a[2::4].tolist())  # flags are below 32
    return (
        word,
        bid,
        a.tobytes(),
        len(flags),
        flags.translate(_CODE_T).count(1),
        flags.translate(_DECL_T).count(1),
        flags.translate(_DELEG_T).count(1),
    )


class Store:
    """One connection to the cache; an unwritable cache is one in memory (cache.open_db)."""

    def __init__(self, cache_dir: Path | None):
        self.db = cache_mod.open_db(cache_mod.db_path(cache_dir))

    # ------------------------------------------------------------ file versions

    def ids(self, keys: list[str]) -> dict[str, tuple[int, str | None, int | None, str | None, bool]]:
        """key -> (id, first defined name, its line, why it cannot be read, parsed) for versions seen."""
        out: dict[str, tuple[int, str | None, int | None, str | None, bool]] = {}
        for i in range(0, len(keys), 500):
            chunk = keys[i : i + 500]
            q = f"SELECT key, id, first_def, first_line, problem, masked FROM blob WHERE key IN ({','.join('?' * len(chunk))})"
            out.update((k, (bid, fd, fl, pr, bool(m))) for k, bid, fd, fl, pr, m in self.db.execute(q, chunk))
        return out

    def add(self, problems: dict[str, str | None]) -> dict[str, tuple[int, str | None, int | None, str | None, bool]]:
        """Remember new file versions, unparsed (a problem: binary or undecodable); returns their ids
        (another process may have stored them first)."""
        with self._write():
            self.db.executemany("INSERT OR IGNORE INTO blob (key, problem) VALUES (?, ?)", problems.items())
        return self.ids(list(problems))

    def set_first_defs(self, defs: dict[int, tuple[str, int] | None]) -> None:
        """Record the first definition (or none) of parsed file versions."""
        with self._write():
            self.db.executemany(
                "UPDATE blob SET masked = 1, first_def = ?, first_line = ? WHERE id = ?",
                ((*(fd or (None, None)), bid) for bid, fd in defs.items()),
            )

    # ------------------------------------------------------------ occurrences

    def add_occurrences(self, rows: list[tuple]) -> None:
        if rows:
            with self._write():
                self.db.executemany("INSERT OR IGNORE INTO occ VALUES (?, ?, ?, ?, ?, ?, ?)", rows)

    def stored(self, idents: list[str], bids: set[int]) -> set[tuple[str, int]]:
        """(identifier, cache id) pairs among these whose occurrences are already stored."""
        out: set[tuple[str, int]] = set()
        for i in range(0, len(idents), 500):
            chunk = idents[i : i + 500]
            q = f"SELECT ident, blob FROM occ WHERE ident IN ({','.join('?' * len(chunk))})"
            out.update(r for r in self.db.execute(q, chunk) if r[1] in bids)
        return out

    def searched(self, lst: int, idents: list[str]) -> set[str]:
        """Of `idents`, those already looked for in every file of stored file set `lst`."""
        out: set[str] = set()
        for i in range(0, len(idents), 500):
            chunk = idents[i : i + 500]
            q = f"SELECT ident FROM searched WHERE lst = ? AND ident IN ({','.join('?' * len(chunk))})"
            out.update(r[0] for r in self.db.execute(q, (lst, *chunk)))
        return out

    def mark_searched(self, lst: int, idents: list[str]) -> None:
        with self._write():
            if self._kept(lst):  # a set another run dropped meanwhile: its rows would outlive it
                self.db.executemany("INSERT OR IGNORE INTO searched VALUES (?, ?)", ((lst, i) for i in idents))

    def _kept(self, lst: int) -> bool:
        """Is stored file set `lst` still in the cache? Another run may drop it (KEEP_SETS)."""
        return bool(lst) and self.db.execute("SELECT 1 FROM prepared WHERE id = ?", (lst,)).fetchone() is not None

    def fileset_blobs(self, lst: int) -> set[int]:
        return {r[0] for r in self.db.execute("SELECT blob FROM fileset WHERE lst = ?", (lst,))}

    def occurrences(self, idents: list[str], ids) -> list[tuple[str, int, array]]:
        out = []
        for i in range(0, len(idents), 500):
            chunk = idents[i : i + 500]
            q = f"SELECT ident, blob, data, raw FROM occ WHERE ident IN ({','.join('?' * len(chunk))}) ORDER BY ident, blob"
            for ident, bid, data, raw in self.db.execute(q, chunk):
                if bid in ids:
                    if len(data) != raw * 16:
                        raise CacheDamaged(f"occurrences of {ident}")
                    a = array("i")
                    a.frombytes(data)
                    out.append((ident, bid, a))
        return out

    # ------------------------------------------------------------ listings and file sets

    def listing(self, key: str) -> dict[str, str | None] | None:
        row = self.db.execute("SELECT data FROM listing WHERE key = ?", (key,)).fetchone()
        return self._json(row[0]) if row else None

    def store_listing(self, key: str, listing: dict[str, str | None]) -> None:
        try:
            with self._write():
                self.db.execute("INSERT OR REPLACE INTO listing VALUES (?, ?)", (key, json.dumps(listing)))
                self.db.execute(
                    f"DELETE FROM listing WHERE rowid NOT IN (SELECT rowid FROM listing ORDER BY rowid DESC LIMIT {KEEP_SETS})"
                )
        except sqlite3.Error:  # busy: the listing is only a shortcut
            pass

    def prepared(self, key: str) -> tuple[int, dict, list[Row]] | None:
        """A file set classified before (this index or commit, scope and excludes): (its number, its
        info, its rows)."""
        row = self.db.execute("SELECT id, data, rows FROM prepared WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        info, rows = self._json(row[1]), self._json(row[2])
        try:
            return row[0], info, [Row(*r) for r in rows]
        except TypeError:
            raise CacheDamaged("a file set") from None

    def store_prepared(self, key: str, info: dict, rows: list[Row]) -> int:
        """Remember a classified file set; returns its number, or 0 when it cannot be stored (then
        counts use a temporary table)."""
        db = self.db
        try:
            with self._write():
                got = db.execute("SELECT id FROM prepared WHERE key = ?", (key,)).fetchone()
                if got is not None:
                    return got[0]
                lst = db.execute(
                    "INSERT INTO prepared (key, data, rows) VALUES (?, ?, ?)", (key, json.dumps(info), json.dumps(rows))
                ).lastrowid
                if lst is None:  # (an INSERT always sets it)
                    return 0
                db.executemany(
                    "INSERT INTO fileset VALUES (?, ?, ?, ?, ?)",
                    ((lst, r.bid, i, r.scoped, r.test) for i, r in enumerate(rows) if r.problem is None),
                )
                for (old,) in db.execute(
                    f"SELECT id FROM prepared ORDER BY id DESC LIMIT -1 OFFSET {KEEP_SETS}"
                ).fetchall():
                    for table, col in (("fileset", "lst"), ("searched", "lst"), ("prepared", "id")):
                        db.execute(f"DELETE FROM {table} WHERE {col} = ?", (old,))
                return lst
        except sqlite3.OperationalError:  # busy past the timeout: count without a stored set
            return 0

    def tally(
        self,
        lst: int,
        files: Callable[[], list[tuple[int, int, bool, bool]]],
        want: list[tuple[int, str, int]],
    ) -> dict[int, tuple[int, ...]]:
        """Counts per asked symbol, summed in SQL from the per-(identifier, file version) totals.

        The scan's files are the stored file set `lst`, or else those `files()` lists: (cache id,
        file number, in scope, in tests scope). A set another run dropped since (the cache keeps
        the newest KEEP_SETS) counts from the list too. `want`: (symbol number, identifier, number
        of identifiers of that symbol). Returns symbol number -> (raw, code, files, definitions,
        tests, consumers, delegations), as scan's `count` tallies the hits."""
        db = self.db
        db.execute("BEGIN")
        try:
            listed = None
            if not self._kept(lst):
                listed, lst = files(), 0
            db.execute(
                "CREATE TEMP TABLE IF NOT EXISTS want (sym INTEGER NOT NULL, ident TEXT NOT NULL, n INTEGER NOT NULL,"
                " PRIMARY KEY (sym, ident)) WITHOUT ROWID"
            )  # read in symbol order: GROUP BY needs no sort
            db.execute(
                "CREATE TEMP TABLE IF NOT EXISTS cur (lst INTEGER NOT NULL, blob INTEGER NOT NULL, fi INTEGER NOT NULL,"
                " scoped INTEGER NOT NULL, test INTEGER NOT NULL, PRIMARY KEY (lst, blob, fi)) WITHOUT ROWID"
            )
            db.execute("DELETE FROM temp.want")
            db.executemany("INSERT INTO temp.want VALUES (?, ?, ?)", want)
            if listed is not None:
                db.execute("DELETE FROM temp.cur")
                db.executemany("INSERT INTO temp.cur VALUES (0, ?, ?, ?, ?)", listed)
            table = "temp.cur" if listed is not None else "main.fileset"
            # every file in the scope and none in the tests scope (no tests scope): plain sums do
            plain = (
                db.execute(f"SELECT 1 FROM {table} WHERE lst = ? AND (test OR NOT scoped) LIMIT 1", (lst,)).fetchone()
                is None
            )
            rows = []
            for multi in (False, True):
                if multi and not any(n > 1 for _, _, n in want):
                    continue
                rows += db.execute(_tally_sql(table, plain, multi), (lst,)).fetchall()
        finally:
            db.execute("COMMIT")
        out: dict[int, tuple[int, ...]] = {}
        for sym, raw, code, nfiles, decl, tests, cons, deleg, sound in rows:
            if not sound:  # the hits stored do not add up to the totals beside them
                raise CacheDamaged("occurrence totals")
            out[sym] = (raw, code, nfiles, decl, tests, code - decl - deleg if cons is None else cons, deleg)
        return out

    # ------------------------------------------------------------ plumbing

    def _json(self, text: str):
        try:
            return json.loads(text)
        except ValueError:
            raise CacheDamaged("a JSON row") from None

    def _write(self):
        return _Txn(self.db)

    def close(self) -> None:
        self.db.close()


class _Txn:
    """BEGIN IMMEDIATE ... COMMIT, rolled back on any error."""

    def __init__(self, db: sqlite3.Connection):
        self.db = db

    def __enter__(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")

    def __exit__(self, kind, *exc) -> None:
        self.db.execute("ROLLBACK" if kind else "COMMIT")


def _tally_sql(table: str, plain: bool, multi: bool) -> str:
    # a file counts once per symbol: DISTINCT only where two identifiers may share it
    files_with_code = (
        "count(DISTINCT CASE WHEN c.scoped AND o.code > 0 THEN c.fi END)"
        if multi
        else "count(CASE WHEN c.scoped AND o.code > 0 THEN 1 END)"
    )
    if plain:  # consumers are code - definitions - delegations: summed here below, one aggregate less
        sums = (
            "sum(o.raw), sum(o.code), "
            + (files_with_code if multi else "sum(o.code > 0)")
            + ", sum(o.decl), 0, NULL, sum(o.deleg)"
        )
    else:
        sums = (
            "sum(CASE WHEN c.scoped THEN o.raw ELSE 0 END),"
            " sum(CASE WHEN c.scoped THEN o.code ELSE 0 END),"
            f" {files_with_code},"
            " sum(CASE WHEN c.scoped AND NOT c.test THEN o.decl ELSE 0 END),"
            " sum(CASE WHEN c.test THEN o.code ELSE 0 END),"
            " sum(CASE WHEN c.scoped AND NOT c.test THEN o.code - o.decl - o.deleg ELSE 0 END),"
            " sum(CASE WHEN c.scoped AND NOT c.test THEN o.deleg ELSE 0 END)"
        )
    # CROSS JOIN fixes the order: the few wanted identifiers first, then their files
    return (
        f"SELECT w.sym, {sums}, sum(length(o.data)) = 16 * sum(o.raw)"
        f" FROM temp.want w CROSS JOIN occ o ON o.ident = w.ident CROSS JOIN {table} c ON c.lst = ? AND c.blob = o.blob"
        f" WHERE w.n {'>' if multi else '='} 1 GROUP BY w.sym"
    )
