"""Probe the port: count many symbols (and regexes) in one pass, judge each zero by a positive control.

A scan lists the files of a scope (working tree, or any revision through `git cat-file
--batch` without a checkout), indexes each file version once (identifier -> line, column,
code-or-not, declaration, delegation; see codemask) into a SQLite cache keyed by blob id,
then answers every symbol from that index. A warm run learns blob ids from git (the index
for clean files, hashing only modified and untracked ones; `git ls-tree` for a revision),
asks SQLite for the identifiers it needs, and never parses or tokenizes again.

The warm path in numbers: each (identifier, file version) row also carries its totals (raw,
code, declarations, delegations), so a scan's counts are one GROUP BY query joining the asked
identifiers to the scan's files; a count's Hit objects (and line texts) are built only when
`Count.hits` is first read. The classified file set of a clean tree (paths, blob ids, cache
ids, scope membership) is remembered under the index checksum (or the commit) and the scope,
so a warm scan of an unchanged tree runs one `git status` (HEAD, dirty, changed paths) and,
while it runs, that one query; any path git status reports sends the scan the long way.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import re
import sqlite3
import stat
import subprocess
import sys
import threading
import weakref
from array import array
from bisect import bisect_right
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path, PurePosixPath
from typing import Callable, Iterable

from porttrack import codemask, gitio, globs
from porttrack.cache import cache_root
from porttrack.errors import UserError

CACHE_FILE = "index-v7.sqlite"  # bump the version when codemask's output changes meaning
POOL_MIN_BYTES = 4_000_000  # new source to index before a process pool pays for its start


# ---------------------------------------------------------------- the model


@dataclass(slots=True)
class Hit:
    path: str
    line: int
    kind: str  # "definition" | "test" | "consumer" | "delegation" | "comment" (raw-only hit: comment/string/#if 0/no grammar)
    text: str = ""  # the source line, stripped
    col: int = 0
    name: str = ""  # the variant that matched (the regex's matched text for regexes)
    why: str = ""  # for kind "comment": comment, string, "#if 0" or "no grammar"

    def __str__(self) -> str:
        return f"{self.path}:{self.line}"


@dataclass
class Count:
    symbol: str  # as asked (upstream name or regex)
    form: str  # "word" or "regex"
    variants: list[str]  # the identifiers actually searched (or the regex)
    code: int  # code hits in the scope
    raw: int  # all hits in the scope, comments and strings included
    files: int  # scope files with a code hit
    definitions: int  # code hits in the scope that are the declared name
    tests: int  # code hits under the tests scope
    consumers: int  # code hits in the scope: not tests, not definitions, not delegations
    hits: list[Hit]  # every hit in scope and tests scope, by path and line (built on first use)
    delegations: int = 0


def _get_hits(c: Count) -> list[Hit]:
    load = c.__dict__.get("_load")
    if load is not None:  # a warm scan counts in SQL; the Hit objects are made only when asked for
        c.__dict__["_hits"], c.__dict__["_load"] = load(), None
    return c.__dict__["_hits"]


def _set_hits(c: Count, hits: list[Hit]) -> None:
    c.__dict__["_hits"], c.__dict__["_load"] = hits, None


def _count_state(c: Count) -> dict:
    c.hits  # a pickled or copied count carries its hits, not the loader
    return dict(c.__dict__)


Count.hits = property(_get_hits, _set_hits)  # type: ignore[assignment]
Count.__getstate__ = _count_state  # type: ignore[attr-defined]


@dataclass
class Tree:
    root: str
    commit: str | None
    dirty: bool
    rev: str | None = None  # as asked; None for the working tree
    git: bool = True

    def __str__(self) -> str:
        if self.commit is None:
            return "worktree (no commits)" if self.git else "worktree (not a git repository)"
        return self.commit[:8] + ("+dirty" if self.dirty else "")


@dataclass
class Scan:
    tree: Tree
    scope: list[str]
    tests_scope: list[str]
    files_scanned: int
    incomplete: list[str]  # "path: reason" for unreadable blobs, missing objects, undecodable files
    counts: dict[str, Count]  # keyed by the symbol (or regex) as asked
    scope_files: int = 0  # of files_scanned, those under the scope
    missing_scopes: list[str] = field(default_factory=list)  # scope paths that do not exist in the tree
    excluded: int = 0  # files left out by the exclude globs
    hidden: int = 0  # files left out because they lie in a hidden folder not named by the scope
    binary: list[str] = field(default_factory=list)  # skipped: binary content
    no_grammar: list[str] = field(default_factory=list)  # read raw only: no tree-sitter grammar
    auto_control: dict[str, str] = field(default_factory=dict)  # form -> control chosen by the scan
    auto_control_how: dict[str, str] = field(default_factory=dict)
    control_counts: dict[str, Count] = field(default_factory=dict)  # counts of auto controls


@dataclass
class Probe:
    symbol: str
    form: str
    scope: list[str]
    tree: str
    count: Count
    control: str | None
    control_count: Count | None
    control_how: str
    status: str  # "present" | "absent" | "untrusted" | "incomplete"
    reason: str
    files_scanned: int = 0
    incomplete: list[str] = field(default_factory=list)
    commit: str | None = None  # the full commit id behind `tree`
    dirty: bool = False

    def as_json(self) -> dict:
        c = self.count
        return {
            "symbol": self.symbol,
            "form": self.form,
            "status": self.status,
            "reason": self.reason,
            "tree": self.tree,
            "commit": self.commit,
            "dirty": self.dirty,
            "scope": self.scope,
            "variants": c.variants,
            "code": c.code,
            "raw": c.raw,
            "files": c.files,
            "definitions": c.definitions,
            "tests": c.tests,
            "consumers": c.consumers,
            "delegations": c.delegations,
            "files_scanned": self.files_scanned,
            "incomplete": self.incomplete,
            "control": {
                "symbol": self.control,
                "how": self.control_how,
                "code": self.control_count.code if self.control_count else None,
                "raw": self.control_count.raw if self.control_count else None,
            },
            "hits": [{"at": f"{h.path}:{h.line}", "kind": h.kind, "why": h.why, "name": h.name, "text": h.text} for h in c.hits],
        }


# ---------------------------------------------------------------- names


_IDENT = re.compile(r"(?!\d)\w+")  # Unicode, as Python and C++ identifiers are
_NEWLINE = re.compile(rb"\n")


def variants(name: str, *, renames: dict[str, str] = {}, strip_leading_underscore: bool = True) -> list[str]:
    """The identifiers an upstream name may appear as in the port (docs/design.md §6).

    `Class.method` and `Class::method` are found through the bare `method` (every qualified
    occurrence is also an occurrence of the bare name); `Class.__init__` is the constructor,
    named after the class. Renames apply to the whole name and to its last part.
    """
    if _IDENT.fullmatch(name) and name not in renames:  # a plain identifier: the common case, answered directly
        bare = name.lstrip("_") if strip_leading_underscore and not (name.startswith("__") and name.endswith("__")) else name
        if bare == name:
            return [name]
        if bare not in renames and _IDENT.fullmatch(bare):
            return [name, bare]
    parts = [p for p in re.split(r"\.|::", name.strip()) if p]
    if not parts:
        raise UserError(f"symbol {name!r} is empty.")
    last = parts[-1]
    if last == "__init__" and len(parts) > 1:
        last = parts[-2]
    out: list[str] = []

    def add(n: str) -> None:
        if n and n not in out:
            out.append(n)

    todo = [last, renames.get(name, "")]
    while todo:
        cand = re.split(r"\.|::", todo.pop(0))[-1]
        if not cand or cand in out:
            continue
        add(cand)
        if strip_leading_underscore and not (cand.startswith("__") and cand.endswith("__")):
            todo.append(cand.lstrip("_"))
        todo.append(renames.get(cand, ""))
    bad = [v for v in out if not _IDENT.fullmatch(v)]
    if bad:
        raise UserError(f"symbol {name!r} is not an identifier ({bad[0]!r}); probe it with --regex.")
    return out


# ---------------------------------------------------------------- scope and files


def _check_scope(root: Path, rel: str, what: str) -> str:
    """The scope path relative to root, symlinks resolved; refuses anything escaping the root."""
    if not rel or rel.strip() == "":
        raise UserError(f"{what} is an empty path.")
    if os.path.isabs(rel) or rel.startswith("~"):
        raise UserError(f"{what} {rel!r} is an absolute path; scopes are paths under the port root {root}.")
    if ".." in PurePosixPath(rel.replace("\\", "/")).parts:
        raise UserError(f"{what} {rel!r} climbs out with '..'; scopes are paths under the port root {root}.")
    try:
        rel.encode("utf-8")
    except UnicodeEncodeError:
        raise UserError(f"{what} {rel!r} is not valid UTF-8; name the folder in UTF-8.") from None
    full = root / rel
    try:
        real = full.resolve()
    except (RuntimeError, OSError) as e:  # a symlink loop (RuntimeError before Python 3.13)
        raise UserError(f"{what} {rel!r} cannot be resolved: {e}.") from None
    if real != root and root not in real.parents:
        raise UserError(f"{what} {rel!r} is a symlink pointing outside the port root {root}.")
    norm = real.relative_to(root).as_posix() if full.exists() else PurePosixPath(rel).as_posix()
    return "" if norm == "." else norm.rstrip("/")


def _glob_re(pattern: str) -> re.Pattern:
    """A config exclude glob: `**` spans folders, `*` and `?` stay inside one; no slash means any folder."""
    p = pattern.strip().rstrip("/")
    if "/" not in p:
        p = "**/" + p
    out = globs.translate(p)
    return re.compile(out + "(?:/.*)?")  # a pattern naming a folder excludes what lies under it


def _prefixes(path: str):
    """The path and every folder above it: a/b/c -> a/b/c, a/b, a."""
    while path:
        yield path
        path = path.rpartition("/")[0]


def _under(path: str, prefixes: list[str]) -> bool:
    return any(p == "" or path == p or path.startswith(p + "/") for p in prefixes)


def _hidden(path: str, scopes: list[str]) -> bool:
    """A file in a hidden folder counts only when a scope names that folder (or something inside it)."""
    if "/." not in path and not path.startswith("."):
        return False
    parts = path.split("/")
    for s in scopes:
        if _under(path, [s]):
            depth = len(s.split("/")) if s else 0
            if not any(d.startswith(".") for d in parts[depth:-1]):
                return False
    return True


def _git_blob_id(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


@dataclass
class _File:
    path: str
    sha: str  # git blob id
    lang: str | None
    data: bytes | None = None  # read lazily: from disk when `disk`, else through cat-file
    disk: bool = False
    scoped: bool = False  # under the scope
    missing: bool = False  # its object could not be read
    test: bool = False  # under the tests scope

    @property
    def key(self) -> str:
        return f"{self.sha}:{self.lang or '-'}"


def _list_revision(root: Path, commit: str, paths: list[str]) -> list[tuple[str, str]]:
    """(path, blob id) of the regular files under `paths` at `commit` (symlinks and submodules skipped)."""
    args = ["--literal-pathspecs", "ls-tree", "-r", "-z", commit, "--", *(p or "." for p in paths)]
    raw = gitio.git(root, *args)
    out = []
    for rec in raw.split(b"\0"):
        if not rec:
            continue
        meta, _, path = rec.partition(b"\t")
        mode, kind, sha = meta.split()
        if kind == b"blob" and mode in (b"100644", b"100755"):
            out.append((path.decode("utf-8", "surrogateescape"), sha.decode()))
    return out


def _git_lines(root: Path, *args: str) -> subprocess.Popen:
    return subprocess.Popen(["git", "-C", str(root), "--literal-pathspecs", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _wait(proc: subprocess.Popen) -> list[bytes]:
    out, err = proc.communicate()
    if proc.returncode != 0:
        raise UserError(f"git {' '.join(map(str, proc.args[4:6]))} failed: {err.decode('utf-8', 'replace').strip()}")
    return [r for r in out.split(b"\0") if r]


def _list_worktree(root: Path, paths: list[str], in_git: bool) -> dict[str, str | None]:
    """Files under `paths` -> blob id when the index vouches for the working-tree content, else None.

    Clean tracked files are known by their index entry and are never read; modified and
    untracked (not ignored) files are read and hashed. Outside git: a plain walk, all read.
    """
    if in_git:
        spec = [p or "." for p in paths]
        staged = _git_lines(root, "ls-files", "-s", "-z", "--", *spec)
        changed = _git_lines(root, "ls-files", "-z", "-m", "-o", "--exclude-standard", "--", *spec)
        out = _parse_staged(_wait(staged))
        for rec in _wait(changed):
            out[rec.decode("utf-8", "surrogateescape")] = None
        return out
    out = []
    for p in paths:
        base = root / p
        if base.is_file():
            out.append(p)
            continue
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames[:] = [d for d in dirnames if not d.startswith(".")]  # hidden only when named
            rel = Path(dirpath).relative_to(root).as_posix()
            out += [f"{rel}/{f}" if rel != "." else f for f in filenames]
    return dict.fromkeys(out)


def _index_checksum(root: Path) -> bytes | None:
    """The trailing checksum of the git index when root is a top level with a plain `.git` folder
    (it names the index content, so a `git ls-files -s` listing can be cached under it), else None."""
    if "GIT_DIR" in os.environ or "GIT_INDEX_FILE" in os.environ or "GIT_WORK_TREE" in os.environ:
        return None
    try:
        with open(os.path.join(root, ".git", "index"), "rb") as fh:
            fh.seek(-20, os.SEEK_END)
            tail = fh.read(20)
    except OSError:
        return None
    return tail if len(tail) == 20 and tail != bytes(20) else None  # all zero: index.skipHash, no checksum


def _parse_staged(records: list[bytes]) -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for rec in records:
        meta, _, path = rec.partition(b"\t")
        mode, sha, stage = meta.split()
        p = path.decode("utf-8", "surrogateescape")
        if mode in (b"100644", b"100755"):
            out[p] = sha.decode() if stage == b"0" and p not in out else None
    return out


def _status_changes(raw: bytes) -> tuple[str | None, bool, list[tuple[str, bool]]]:
    """From `git status --porcelain=v2 -z --branch`: (HEAD, dirty, (path, untracked) of the paths
    whose working-tree content differs from the index or that are untracked)."""
    head, dirty, changed = None, False, []
    recs = raw.split(b"\0")
    i = 0
    while i < len(recs):
        r = recs[i]
        i += 1
        t = r[:1]
        if not r or t == b"!":
            continue
        if t == b"#":
            if r.startswith(b"# branch.oid "):
                oid = r[13:].decode()
                head = None if oid == "(initial)" else oid
            continue
        dirty = True
        if t == b"1":
            f = r.split(b" ", 8)
        elif t == b"2":
            f = r.split(b" ", 9)
            i += 1  # the rename's original path follows
        elif t == b"u":
            changed.append((r.split(b" ", 10)[-1].decode("utf-8", "surrogateescape"), False))
            continue
        else:  # "?": untracked
            changed.append((r[2:].decode("utf-8", "surrogateescape"), True))
            continue
        if f[1][1:2] != b".":  # the working tree differs from the index (modified, deleted, type change)
            changed.append((f[-1].decode("utf-8", "surrogateescape"), False))
    return head, dirty, changed


# ---------------------------------------------------------------- the cache


def _table(pred: Callable[[int], bool]) -> bytes:
    return bytes(1 if f < 32 and pred(f) else 0 for f in range(256))


_CODE_T = _table(lambda f: not f & codemask.NONCODE_MASK)
_DECL_T = _table(lambda f: not f & codemask.NONCODE_MASK and bool(f & codemask.DECL))
_DELEG_T = _table(lambda f: not f & codemask.NONCODE_MASK and not f & codemask.DECL and bool(f & codemask.DELEGATION))


def _occ_row(word: str, bid: int, a: array) -> tuple:
    """One occ row: the flat hits and their totals (raw, code, declarations, delegations), which a
    warm count sums without looking at single hits. The kinds follow `_kinds`."""
    flags = bytes(a[2::4].tolist())  # flags are below 32
    return (word, bid, a.tobytes(), len(flags), flags.translate(_CODE_T).count(1),
            flags.translate(_DECL_T).count(1), flags.translate(_DELEG_T).count(1))


class _Cache:
    """SQLite: one row per file version (blob id + language), one row per (identifier, file version)."""

    def __init__(self, folder: Path):
        self.db = None
        try:
            folder.mkdir(parents=True, exist_ok=True)
            for old in folder.glob("index-v*.sqlite*"):  # earlier formats are never read again
                if not old.name.startswith(CACHE_FILE):
                    old.unlink(missing_ok=True)
            path = folder / CACHE_FILE
            try:
                self.db = self._open(str(path))
            except sqlite3.DatabaseError:  # corrupt (a crash mid-write, a foreign file): start it afresh
                for f in folder.glob(CACHE_FILE + "*"):
                    f.unlink(missing_ok=True)
                self.db = self._open(str(path))
        except (OSError, sqlite3.Error):
            self.db = None
        if self.db is None:  # an unwritable cache must not stop a probe; it only makes it slower
            self.db = self._open(":memory:")

    @staticmethod
    def _open(where: str) -> sqlite3.Connection:
        db = sqlite3.connect(where, timeout=60, isolation_level=None, check_same_thread=False)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=OFF")
        db.execute(
            "CREATE TABLE IF NOT EXISTS blob (id INTEGER PRIMARY KEY, key TEXT UNIQUE NOT NULL,"
            " first_def TEXT, first_line INTEGER, problem TEXT, info BLOB)"
        )
        db.execute(
            "CREATE TABLE IF NOT EXISTS occ (ident TEXT NOT NULL, blob INTEGER NOT NULL, data BLOB NOT NULL,"
            " raw INTEGER NOT NULL, code INTEGER NOT NULL, decl INTEGER NOT NULL, deleg INTEGER NOT NULL,"
            " PRIMARY KEY (ident, blob)) WITHOUT ROWID"
        )
        db.execute(
            "CREATE TABLE IF NOT EXISTS listing (key TEXT PRIMARY KEY, data BLOB NOT NULL)"
        )  # `git ls-files -s` output by index checksum and pathspec; the newest few are kept
        db.execute("SELECT count(*) FROM blob WHERE id = 0").fetchone()  # fails early on a corrupt file
        db.execute("PRAGMA temp_store=MEMORY")
        fileset = ("(lst INTEGER NOT NULL, blob INTEGER NOT NULL, fi INTEGER NOT NULL, scoped INTEGER NOT NULL,"
                   " test INTEGER NOT NULL, PRIMARY KEY (lst, blob, fi)) WITHOUT ROWID")
        db.execute("CREATE TABLE IF NOT EXISTS fileset " + fileset)  # the files of a prepared set, for counting
        db.execute("CREATE TABLE IF NOT EXISTS prepared (id INTEGER PRIMARY KEY, key TEXT UNIQUE NOT NULL, data BLOB NOT NULL,"
                   " rows BLOB NOT NULL)")
        db.execute("CREATE TEMP TABLE cur " + fileset)
        db.execute("CREATE TEMP TABLE want (sym INTEGER NOT NULL, ident TEXT NOT NULL, n INTEGER NOT NULL,"
                   " PRIMARY KEY (sym, ident)) WITHOUT ROWID")  # read in symbol order: GROUP BY needs no sort
        return db

    def ids(self, keys: list[str]) -> dict[str, tuple[int, str | None, int | None, str | None]]:
        """key -> (id, first defined name, its line, why it cannot be read) for file versions already seen."""
        out = {}
        for i in range(0, len(keys), 500):
            chunk = keys[i : i + 500]
            q = f"SELECT key, id, first_def, first_line, problem FROM blob WHERE key IN ({','.join('?' * len(chunk))})"
            out.update((k, (bid, fd, fl, pr)) for k, bid, fd, fl, pr in self.db.execute(q, chunk))
        return out

    def infos(self, ids: list[int]) -> dict[int, codemask.FileIndex]:
        out: dict[int, codemask.FileIndex] = {}
        for i in range(0, len(ids), 500):
            chunk = ids[i : i + 500]
            q = f"SELECT id, info FROM blob WHERE id IN ({','.join('?' * len(chunk))})"
            out.update((bid, pickle.loads(info)) for bid, info in self.db.execute(q, chunk))
        return out

    def add(self, indexed: dict[str, codemask.FileIndex | str]) -> dict[str, tuple[int, str | None, int | None, str | None]]:
        """Store new file indexes; returns their ids (another process may have stored them first)."""
        db = self.db
        db.execute("BEGIN IMMEDIATE")
        try:
            have = self.ids(list(indexed))
            for key, fi in indexed.items():
                if key in have:
                    continue
                if isinstance(fi, str):  # binary or undecodable: remembered, not indexed
                    bid = db.execute("INSERT INTO blob (key, problem) VALUES (?, ?)", (key, fi)).lastrowid
                    have[key] = (bid, None, None, fi)
                    continue
                occ = fi.occurrences
                fi.occurrences = {}  # kept in the occ table, not in the info
                info = pickle.dumps(fi, protocol=pickle.HIGHEST_PROTOCOL)
                fi.occurrences = occ
                fd, fl = fi.first_def or (None, None)
                bid = db.execute(
                    "INSERT INTO blob (key, first_def, first_line, info) VALUES (?, ?, ?, ?)", (key, fd, fl, info)
                ).lastrowid
                have[key] = (bid, fd, fl, None)
                db.executemany("INSERT INTO occ VALUES (?, ?, ?, ?, ?, ?, ?)", (_occ_row(w, bid, a) for w, a in occ.items()))
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        return have

    def listing(self, key: str) -> dict[str, str | None] | None:
        row = self.db.execute("SELECT data FROM listing WHERE key = ?", (key,)).fetchone()
        return pickle.loads(row[0]) if row else None

    def store_listing(self, key: str, listing: dict[str, str | None]) -> None:
        try:
            self.db.execute("INSERT OR REPLACE INTO listing VALUES (?, ?)", (key, pickle.dumps(listing, pickle.HIGHEST_PROTOCOL)))
            self.db.execute("DELETE FROM listing WHERE rowid NOT IN (SELECT rowid FROM listing ORDER BY rowid DESC LIMIT 16)")
        except sqlite3.Error:  # busy or read-only: the listing is only a shortcut
            pass

    def prepared(self, key: str) -> tuple[int, dict, list[tuple]] | None:
        """A file set classified before (this index or commit, scope and excludes): (its number, its
        info, its rows)."""
        row = self.db.execute("SELECT id, data, rows FROM prepared WHERE key = ?", (key,)).fetchone()
        return (row[0], pickle.loads(row[1]), pickle.loads(row[2])) if row else None

    def store_prepared(self, key: str, info: dict, rows: list[tuple], fileset: list[tuple[int, int, int, int]]) -> int:
        """Remember a classified file set and its (cache id, file number, in scope, in tests scope)
        rows; returns its number, or 0 when it cannot be stored (then counts use a temporary table)."""
        db = self.db
        try:
            db.execute("BEGIN IMMEDIATE")
        except sqlite3.Error:
            return 0
        try:
            row = db.execute("SELECT id FROM prepared WHERE key = ?", (key,)).fetchone()
            if row is None:
                lst = db.execute("INSERT INTO prepared (key, data, rows) VALUES (?, ?, ?)",
                                 (key, pickle.dumps(info, pickle.HIGHEST_PROTOCOL), pickle.dumps(rows, pickle.HIGHEST_PROTOCOL))).lastrowid
                db.executemany("INSERT INTO fileset VALUES (?, ?, ?, ?, ?)", ((lst, *f) for f in fileset))
                old = [r[0] for r in db.execute("SELECT id FROM prepared ORDER BY id DESC LIMIT -1 OFFSET 16")]
                for o in old:
                    db.execute("DELETE FROM fileset WHERE lst = ?", (o,))
                    db.execute("DELETE FROM prepared WHERE id = ?", (o,))
            else:
                lst = row[0]
            db.execute("COMMIT")
            return lst
        except BaseException:
            db.execute("ROLLBACK")
            if isinstance(sys.exc_info()[1], sqlite3.Error):
                return 0
            raise

    def tally(self, lst: int, files: list[tuple[int, int, int, int]] | None, want: list[tuple[int, str, int]]) -> dict[int, tuple[int, ...]]:
        """Counts per asked symbol, summed in SQL from the per-(identifier, file version) totals.

        The scan's files are the stored file set `lst`, or else `files`: (cache id, file number,
        in scope, in tests scope). `want`: (symbol number, identifier, number of identifiers of
        that symbol). Returns symbol number -> (raw, code, files, definitions, tests, consumers,
        delegations), as `_count` tallies the hits."""
        db = self.db
        db.execute("BEGIN")
        try:
            db.execute("DELETE FROM temp.want")
            db.executemany("INSERT INTO temp.want VALUES (?, ?, ?)", want)
            if files is not None:
                db.execute("DELETE FROM temp.cur")
                db.executemany("INSERT INTO temp.cur VALUES (0, ?, ?, ?, ?)", files)
            table = "temp.cur" if files is not None else "main.fileset"
            # every file in the scope and none in the tests scope (no tests scope): plain sums do
            plain = db.execute(f"SELECT 1 FROM {table} WHERE lst = ? AND (test OR NOT scoped) LIMIT 1", (lst,)).fetchone() is None
            rows = []
            for multi in (False, True):
                if multi and not any(n > 1 for _, _, n in want):
                    continue
                # a file counts once per symbol: DISTINCT only where two identifiers may share it
                files_with_code = "count(DISTINCT CASE WHEN c.scoped AND o.code > 0 THEN c.fi END)" if multi else \
                    "count(CASE WHEN c.scoped AND o.code > 0 THEN 1 END)"
                if plain:  # consumers are code - definitions - delegations: summed here below, one aggregate less
                    sums = "sum(o.raw), sum(o.code), " + (files_with_code if multi else "sum(o.code > 0)") + ", sum(o.decl), 0, NULL, sum(o.deleg)"
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
                rows += db.execute(
                    f"SELECT w.sym, {sums}"
                    # CROSS JOIN fixes the order: the few wanted identifiers first, then their files
                    f" FROM temp.want w CROSS JOIN occ o ON o.ident = w.ident CROSS JOIN {table} c ON c.lst = ? AND c.blob = o.blob"
                    f" WHERE w.n {'>' if multi else '='} 1 GROUP BY w.sym",
                    (lst,),
                ).fetchall()
        finally:
            db.execute("COMMIT")
        out = {}
        for sym, raw, code, nfiles, decl, tests, cons, deleg in rows:
            out[sym] = (raw, code, nfiles, decl, tests, code - decl - deleg if cons is None else cons, deleg)
        return out

    def occurrences(self, idents: list[str], ids) -> list[tuple[str, int, array]]:
        out = []
        for i in range(0, len(idents), 500):
            chunk = idents[i : i + 500]
            q = f"SELECT ident, blob, data FROM occ WHERE ident IN ({','.join('?' * len(chunk))}) ORDER BY ident, blob"
            for ident, bid, data in self.db.execute(q, chunk):
                if bid in ids:
                    a = array("i")
                    a.frombytes(data)
                    out.append((ident, bid, a))
        return out

    def close(self) -> None:
        self.db.close()


# ---------------------------------------------------------------- the scan


def _tree(root: Path, rev: str | None, paths: list[str] | None = None) -> Tree:
    in_git = gitio.is_git_repo(root)
    if rev is not None:
        if not in_git:
            raise UserError(f"--rev {rev} needs a git repository, and the port root {root} is not one.")
        sha = gitio.rev_parse(root, rev)
        if sha is None:
            raise UserError(f"revision {rev!r} does not name a commit in {root}.")
        return Tree(str(root), sha, False, rev=rev)
    if not in_git:
        return Tree(str(root), None, False, git=False)
    sha, dirty = gitio.head_state(root, paths)
    return Tree(str(root), sha, dirty)


def _decode_problem(data: bytes) -> str | None:
    if b"\0" in data[:8000]:
        return "binary"
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as e:
        return f"not UTF-8 text (byte {e.start})"
    return None


def config_options(cfg) -> dict:
    """The scan options a porttrack.toml sets: tests scope, excludes, naming and cache.

    The code and tests scopes are checked here, so a bad one names its file and key."""
    for name in ("code", "tests"):
        for rel in cfg.scopes.get(name) or []:
            try:
                _check_scope(Path(cfg.port_root).resolve(), rel, "scope")
            except UserError as e:
                raise UserError(f"{cfg.path or 'porttrack.toml'}: [port].scopes.{name}: {e}") from None
    return dict(tests_scope=cfg.tests_scope, exclude=cfg.exclude, renames=cfg.renames,
                strip_leading_underscore=cfg.strip_leading_underscore, cache_dir=cfg.cache_dir or None)


def scan(
    root: Path,
    symbols: Iterable[str] = (),
    *,
    regexes: Iterable[str] = (),
    scope: list[str],
    tests_scope: list[str] = (),
    exclude: list[str] = (),
    rev: str | None = None,
    renames: dict[str, str] = {},
    strip_leading_underscore: bool = True,
    cache_dir: Path | None = None,
    texts: bool = True,
    progress: Callable[[int, int], None] | None = None,
) -> Scan:
    """Count every symbol and regex over scope (+ tests scope) in one pass over the files.

    `cache_dir` is porttrack's cache folder as configured (`[cache] dir`; None: $PORTTRACK_CACHE_DIR or
    the user cache); the index lives in its `probe/` folder. `texts=False` leaves Hit.text empty, so
    a warm scan reads no file at all (for gates). `progress(done, total)` hears about files being
    indexed, the only long part (a first scan)."""
    root = Path(root).resolve()
    if not root.is_dir():
        raise UserError(f"port root {root} is not a directory.")
    symbols, regexes = list(dict.fromkeys(symbols)), list(dict.fromkeys(regexes))
    compiled: dict[str, re.Pattern] = {}
    for rx in regexes:
        if not rx:
            raise UserError("regex '' is empty; give a pattern to count.")
        try:
            # surrogateescape: bytes of a non-UTF-8 argument are matched as those bytes
            compiled[rx] = re.compile(rx.encode("utf-8", "surrogateescape"), re.MULTILINE)
        except re.error as e:
            raise UserError(f"regex {rx!r} does not compile: {e}.") from None
    names = {s: variants(s, renames=renames, strip_leading_underscore=strip_leading_underscore) for s in symbols}
    scope_paths = list(dict.fromkeys(_check_scope(root, s, "scope") for s in scope))
    test_paths = list(dict.fromkeys(_check_scope(root, s, "tests scope") for s in tests_scope))
    excl = [_glob_re(g) for g in exclude]

    # list the files (for the working tree, while git status decides whether it is dirty)
    wanted = list(dict.fromkeys(scope_paths + test_paths))
    spec = [p or "." for p in wanted]
    ctx = _Ctx(root, symbols, names, regexes, compiled, scope_paths, test_paths, texts, rev is None)
    what = repr((spec, scope_paths, test_paths, list(exclude)))  # with the index or commit, names a prepared file set
    cache: _Cache | None = None
    status: subprocess.Popen | None = None
    index_shas: dict[str, str | None] = {}  # paths git status reports -> their index blob id (None: unmerged, "": untracked)
    prep_key: str | None = None
    try:
        if rev is not None:
            tree = _tree(root, rev)
            if wanted:
                cache = _Cache(cache_root(cache_dir) / "probe")
                prep_key = f"commit {tree.commit}\0{what}"
                prep = cache.prepared(prep_key) if not compiled else None
                if prep is not None:  # this commit's files in this scope were classified before
                    lst, info, rows = prep
                    missing = [s for s in info["unlisted"] if not _exists(root, s, tree)]
                    result = _finish(ctx, cache, rows, None, lst, [], missing, info["excluded"], info["hidden"], None,
                                     summary=info["summary"])
                    result.tree = tree
                    return result
            shas = dict(_list_revision(root, tree.commit, wanted)) if wanted else {}
        elif wanted and os.path.isdir(os.path.join(root, ".git")):
            # a top level: one `git status` says HEAD, dirty and what changed; the index listing is cached
            checksum = _index_checksum(root)
            status = _git_lines(root, "status", "--porcelain=v2", "-z", "--branch", "--untracked-files=all", "--", *spec)
            cache = _Cache(cache_root(cache_dir) / "probe")
            if checksum:
                prep_key = f"index {checksum.hex()}\0{what}"
            prep = cache.prepared(prep_key) if prep_key and not compiled else None
            result = None
            if prep is not None and not prep[1].get("pending", ()):
                # the files of this index and scope were classified before: count while git status runs
                lst, info, rows = prep
                missing = [s for s in info["unlisted"] if not (root / s).exists()]
                result = _finish(ctx, cache, rows, None, lst, [], missing, info["excluded"], info["hidden"], None,
                                 keep_cache=True, summary=info["summary"])
            head, dirty, changed = _status_changes(b"\0".join(_wait(status)))
            tree = Tree(str(root), head, dirty)
            if checksum and _index_checksum(root) != checksum:
                checksum = prep_key = None  # the index changed meanwhile: nothing is taken from or given to the cache by it
            if result is not None:
                if not changed and checksum:  # the working tree is that index here: the counts stand
                    result.tree = tree
                    if _lazy_of(result) is None:
                        cache.close()
                    return result
                _release(result)
            if prep is not None and changed and checksum and "left_out" in prep[1] \
                    and set(prep[1]["pending"]) <= {p for p, _ in changed}:  # a few paths differ from the index: patch its set
                result = _patched(ctx, cache, *prep, changed, excl, wanted, progress)
                result.tree = tree
                return result
            list_key = checksum.hex() + "\0" + "\0".join(spec) if checksum else None
            shas = cache.listing(list_key) if list_key else None
            if shas is None:
                shas = _parse_staged(_wait(_git_lines(root, "ls-files", "-s", "-z", "--", *spec)))
                if list_key and _index_checksum(root) == checksum:
                    cache.store_listing(list_key, shas)
                else:
                    prep_key = None
            index_shas = {p: shas.get(p, "") for p, _ in changed}  # "": not in the index
            for p, _ in changed:
                shas[p] = None
        else:
            with ThreadPoolExecutor(1) as pool:
                tree_job = pool.submit(_tree, root, None, wanted)
                in_git = (root / ".git").exists() or gitio.is_git_repo(root)
                shas = _list_worktree(root, wanted, in_git) if wanted else {}
                tree = tree_job.result()
        all_paths = sorted(shas)
        listed = {d for p in all_paths for d in _prefixes(p)}
        unlisted = [s for s in scope_paths if s and s not in listed]
        missing = [s for s in unlisted if not _exists(root, s, tree)]
        excluded = hidden = 0
        paths: list[str] = []
        left_out: list[tuple[str, bool]] = []  # (path, excluded rather than hidden)
        for p in all_paths:
            if excl and any(r.fullmatch(p) for r in excl):
                excluded += 1
                left_out.append((p, True))
            elif _hidden(p, wanted):
                hidden += 1
                left_out.append((p, False))
            else:
                paths.append(p)

        # read (working tree) and learn blob ids
        files: list[_File] = []
        incomplete: list[str] = []
        for p in paths:
            sha = shas[p]
            if sha is not None:
                files.append(_File(p, sha, codemask.lang_for(p), disk=tree.rev is None))
            else:
                f = _read_file(root, p, incomplete)
                if f is not None:
                    files.append(f)

        if cache is None:
            cache = _Cache(cache_root(cache_dir) / "probe")
        reader = _Reader(root)
        try:
            ids = _learn(cache, reader, files, incomplete, progress)
        except BaseException:
            reader.close()
            raise
        rows: list[tuple] = []
        kept: list[_File] = []
        for f in files:
            if f.key not in ids:
                continue  # unreadable: already listed as incomplete
            f.scoped, f.test = _under(f.path, scope_paths), _under(f.path, test_paths)
            bid, fd, fl, problem = ids[f.key]
            rows.append((f.path, f.sha, f.lang, bid, fd, fl, problem, f.scoped, f.test))
            kept.append(f)
        lst = 0
        if prep_key and not index_shas and not incomplete and len(rows) == len(files):  # a clean tree: its rows are the index's
            info = {"unlisted": unlisted, "excluded": excluded, "hidden": hidden, "left_out": {p for p, _ in left_out},
                    "pending": [], "summary": _summary(rows)}
            lst = cache.store_prepared(prep_key, info, rows, [(r[3], i, r[7], r[8]) for i, r in enumerate(rows) if r[6] is None])
        elif prep_key and index_shas:
            _prepare_index(cache, prep_key, rows, paths, left_out, index_shas, scope_paths, test_paths)
        result = _finish(ctx, cache, rows, kept, lst, incomplete, missing, excluded, hidden, reader)
        result.tree = tree
        return result
    except BaseException:
        if cache is not None:
            cache.close()
        if status is not None and status.returncode is None:
            status.kill()
            status.communicate()
        raise


def _read_file(root: Path, p: str, incomplete: list[str]) -> _File | None:
    """A working-tree file git does not vouch for: read and hashed (None: gone, a link or unreadable)."""
    full = os.path.join(root, p)
    try:
        if not stat.S_ISREG(os.lstat(full).st_mode):
            return None  # a link or a submodule: links are not followed, so nothing outside the root is read
        with open(full, "rb") as fh:
            data = fh.read()
    except FileNotFoundError:
        return None  # deleted in the working tree
    except OSError as e:
        incomplete.append(f"{p}: unreadable ({e.strerror})")
        return None
    return _File(p, _git_blob_id(data), codemask.lang_for(p), data)


def _learn(cache: _Cache, reader: _Reader, files: list[_File], incomplete: list[str], progress) -> dict:
    """Cache ids of the files' versions, indexing those the cache has not seen (binary and
    undecodable versions are remembered too); a file left out could not be read."""
    ids = cache.ids(sorted({f.key for f in files}))
    reader.preload([f for f in files if f.key not in ids], incomplete)
    new: dict[str, codemask.FileIndex | str] = {}
    todo: dict[str, _File] = {}
    for f in files:
        if f.key in ids or f.key in new or f.key in todo or not reader.load(f, incomplete):
            continue
        problem = _decode_problem(f.data)
        if problem:
            new[f.key] = problem
        else:
            todo[f.key] = f
    new.update(zip(todo, _index_all([(f.data, f.lang) for f in todo.values()], progress)))
    if new:
        ids.update(cache.add(new))
    return ids


def _prepare_index(cache: _Cache, key: str, rows: list[tuple], paths: list[str], left_out: list[tuple[str, bool]],
                   index_shas: dict[str, str | None], scope: list[str], tests: list[str]) -> None:
    """Remember the file set of a dirty tree's index: this scan's rows for the paths git status did
    not report, the index versions of those it did (when the cache knows them; else they are
    `pending`, and the set serves only while git status reports them)."""
    kept = [r for r in rows if r[0] not in index_shas]
    if len(kept) != sum(1 for p in paths if p not in index_shas):
        return  # an unchanged file could not be read: nothing to remember
    left = {p for p, _ in left_out}
    theirs = {p: (sha, codemask.lang_for(p)) for p, sha in index_shas.items() if sha != "" and p not in left}
    ids = cache.ids(sorted({f"{sha}:{lang or '-'}" for sha, lang in theirs.values() if sha}))
    pending = []
    for p, (sha, lang) in theirs.items():
        got = ids.get(f"{sha}:{lang or '-'}") if sha else None
        if got is None:
            pending.append(p)
        else:
            bid, fd, fl, problem = got
            kept.append((p, sha, lang, bid, fd, fl, problem, _under(p, scope), _under(p, tests)))
    kept.sort(key=lambda r: r[0])
    in_index = [(p, ex) for p, ex in left_out if index_shas.get(p, None) != ""]
    listed = {d for r in kept for d in _prefixes(r[0])} | {d for p in pending for d in _prefixes(p)} \
        | {d for p, _ in in_index for d in _prefixes(p)}
    info = {
        "unlisted": [s for s in scope if s and s not in listed],
        "excluded": sum(1 for _, ex in in_index if ex),
        "hidden": sum(1 for _, ex in in_index if not ex),
        "left_out": {p for p, _ in in_index},
        "pending": sorted(pending),
        "summary": _summary(kept),
    }
    cache.store_prepared(key, info, kept, [(r[3], i, r[7], r[8]) for i, r in enumerate(kept) if r[6] is None])


def _patched(ctx: _Ctx, cache: _Cache, lst: int, info: dict, old: list[tuple], changed: list[tuple[str, bool]],
             excl: list[re.Pattern], wanted: list[str], progress) -> Scan:
    """A scan of a working tree whose index has a prepared file set, with the few paths git status
    reports (modified, deleted, untracked) read from disk in place of their index versions."""
    at = {r[0]: n for n, r in enumerate(old)}
    excluded, hidden = info["excluded"], info["hidden"]
    known = info["left_out"]  # index paths already counted as excluded or hidden
    incomplete: list[str] = []
    drop: set[int] = set()
    files: list[_File] = []
    for p, _ in changed:
        if p in at:
            drop.add(at[p])
        elif p in known:
            continue
        elif excl and any(r.fullmatch(p) for r in excl):
            excluded += 1
            continue
        elif _hidden(p, wanted):
            hidden += 1
            continue
        f = _read_file(ctx.root, p, incomplete)
        if f is not None:
            files.append(f)
    reader = _Reader(ctx.root)
    try:
        ids = _learn(cache, reader, files, incomplete, progress)
    except BaseException:
        reader.close()
        raise
    rows: list[tuple] = [r for n, r in enumerate(old) if n not in drop]
    kept: list[_File | None] = [None] * len(rows)
    for f in files:
        if f.key in ids:
            f.scoped, f.test = _under(f.path, ctx.scope), _under(f.path, ctx.tests)
            bid, fd, fl, problem = ids[f.key]
            rows.append((f.path, f.sha, f.lang, bid, fd, fl, problem, f.scoped, f.test))
            kept.append(f)
    order = sorted(range(len(rows)), key=lambda n: rows[n][0])
    rows, kept = [rows[n] for n in order], [kept[n] for n in order]
    listed = {d for p, _ in changed for d in _prefixes(p)}
    missing = [s for s in info["unlisted"] if s not in listed and not (ctx.root / s).exists()]
    return _finish(ctx, cache, rows, kept, 0, incomplete, missing, excluded, hidden, reader)


@dataclass
class _Ctx:
    root: Path
    symbols: list[str]
    names: dict[str, list[str]]
    regexes: list[str]
    compiled: dict[str, re.Pattern]
    scope: list[str]
    tests: list[str]
    texts: bool
    disk: bool  # the working tree (files read from disk), not a revision


def _lazy_of(result: Scan) -> "_LazyHits | None":
    for c in list(result.counts.values()) + list(result.control_counts.values()):
        load = c.__dict__.get("_load")
        if load is not None:
            return load.func.__self__
    return None


def _release(result: Scan) -> None:
    """Let go of a discarded scan's lazy hits, leaving the cache connection open for the scan that goes on."""
    lazy = _lazy_of(result)
    if lazy is not None:
        lazy.closer.detach()
        lazy.reader.close()


def _finish(ctx: _Ctx, cache: _Cache, rows: list[tuple], kept: list[_File] | None, lst: int, incomplete: list[str],
            missing: list[str], excluded: int, hidden: int, reader: _Reader | None, keep_cache: bool = False,
            summary: tuple | None = None) -> Scan:
    """Counts and the scan, from the classified files: rows of (path, blob id, language, cache id,
    first definition, its line, problem, in scope, in tests scope); `kept` the matching _File objects
    (None: clean working-tree files, made when needed); `lst` the stored file set (0: none), which
    comes with its `summary`."""
    if reader is None:
        reader = _Reader(ctx.root)
    owned = False
    try:
        live, binary, problems, scope_files, no_grammar, first = summary or _summary(rows)
        incomplete = incomplete + problems

        # the automatic control: the first function or class defined in the scope
        auto, auto_how = {}, {}
        if first:
            path, fd, fl = first
            auto["word"] = fd
            auto_how["word"] = f"automatic: the first definition found in the scope ({path}:{fl})"
            if ctx.compiled:
                auto["regex"] = rf"\b{fd}\b"
                auto_how["regex"] = auto_how["word"] + ", as a regex"

        # words: counted in SQL from per-file totals; their Hit objects are made on first use
        word_names = {s: ctx.names[s] for s in ctx.symbols}
        if "word" in auto and auto["word"] not in word_names:
            word_names[auto["word"]] = [auto["word"]]
        counts: dict[str, Count] = {}
        files = _Files(rows, live, kept, ctx.disk)
        if word_names:
            order = list(word_names)
            fileset = None if lst else [(rows[i][3], i, rows[i][7], rows[i][8]) for i in live]
            totals = cache.tally(lst, fileset, [(n, v, len(word_names[sym])) for n, sym in enumerate(order) for v in word_names[sym]])
            hits = _LazyHits(cache, reader, files, ctx.texts)
            owned = True
            zero = (0,) * 7
            for n, sym in enumerate(order):
                raw, code, nfiles, defs, tests, cons, dele = totals.get(n, zero)
                c = counts[sym] = Count(sym, "word", word_names[sym], code, raw, nfiles, defs, tests, cons, [], dele)
                c.__dict__["_load"] = partial(hits.load, sym, word_names[sym])

        # regexes read every file
        rx_all = dict(ctx.compiled)
        if "regex" in auto and auto["regex"] not in rx_all:
            rx_all[auto["regex"]] = re.compile(auto["regex"].encode(), re.MULTILINE)
        if rx_all:
            where: dict[str, list[tuple[_File, int]]] = {}  # per count, each hit's file and byte offset
            readable = [files.get(i) for i in live]
            reader.preload(readable, incomplete)
            infos = cache.infos(sorted({rows[i][3] for i in live}))
            for rx, pat in rx_all.items():
                groups = []
                for i, f in zip(live, readable):
                    if not reader.load(f, incomplete):
                        continue
                    fi = infos[rows[i][3]]
                    nl, flat, matched = None, [], []
                    for m in pat.finditer(f.data):
                        if m.end() == m.start():
                            continue
                        if nl is None:
                            nl = [n.start() for n in _NEWLINE.finditer(f.data)]
                        s = m.start()
                        line = bisect_right(nl, s - 1) + 1
                        col = s - (nl[line - 2] + 1 if line > 1 else 0) + 1
                        flat += (line, col, fi.flags_at(s), s)
                        matched.append(m.group().decode("utf-8", "replace"))
                    if flat:
                        groups.append((f.path, matched, flat, f))
                counts[rx] = _count(rx, "regex", [rx], groups, where.setdefault(rx, []))
            if ctx.texts and where:
                reader.preload(list({id(f): f for ws in where.values() for f, _ in ws}.values()), [])
                for key, ws in where.items():
                    for h, (f, offset) in zip(counts[key].hits, ws):
                        h.text = reader.line(f, offset, h.col)
    finally:
        if not owned:
            reader.close()
            if not keep_cache:
                cache.close()

    asked = {**{s: counts[s] for s in ctx.symbols}, **{r: counts[r] for r in ctx.regexes}}
    controls = {auto[form]: counts[auto[form]] for form in auto}
    return Scan(
        tree=None,  # set by the caller
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
        control_counts=controls,
    )


def _summary(rows: list[tuple]) -> tuple:
    """What a scan reports of its files: (readable row numbers, binary paths, "path: problem" lines,
    files in the scope, paths read raw for want of a grammar, (path, name, line) of the first
    definition in the scope or None)."""
    live, binary, problems, no_grammar, first = [], [], [], [], None
    scope_files = 0
    for i, (path, _, lang, _, fd, fl, problem, scoped, _) in enumerate(rows):
        if problem is None:
            live.append(i)
            if scoped:
                scope_files += 1
                if fd and first is None:
                    first = (path, fd, fl)
            if lang is None:
                no_grammar.append(path)
        elif problem == "binary":
            binary.append(path)
        else:
            problems.append(f"{path}: {problem}")
    return live, binary, problems, scope_files, no_grammar, first


class _Files:
    """The readable files of a scan; _File objects of clean working-tree files are made on first use."""

    def __init__(self, rows: list[tuple], live: list[int], kept: list[_File | None] | None, disk: bool):
        self.rows, self.live, self.kept, self.disk = rows, live, kept, disk
        self.preloaded = False
        self.made: dict[int, _File] = {}
        self._by_id: dict[int, list[_File]] | None = None

    def get(self, i: int) -> _File:
        if self.kept is not None and self.kept[i] is not None:
            return self.kept[i]
        f = self.made.get(i)
        if f is None:
            path, sha, lang, _, _, _, _, scoped, test = self.rows[i]
            f = self.made[i] = _File(path, sha, lang, disk=self.disk, scoped=scoped, test=test)
        return f

    def by_id(self) -> dict[int, list[_File]]:
        if self._by_id is None:
            self._by_id = {}
            for i in self.live:
                self._by_id.setdefault(self.rows[i][3], []).append(self.get(i))
        return self._by_id


def _index_one(job: tuple[bytes, str | None]) -> codemask.FileIndex:
    return codemask.index_file(*job)


def _index_all(jobs: list[tuple[bytes, str | None]], progress=None) -> list[codemask.FileIndex]:
    """Index new file versions; a big first scan spreads over the CPUs (parsing is most of its time)."""
    workers = min(os.cpu_count() or 1, 8)

    def counted(results) -> list[codemask.FileIndex]:
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
        and sum(len(d) for d, _ in jobs) > POOL_MIN_BYTES
    ):
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        # fork, not spawn or forkserver: those re-run the caller's main script in every worker.
        # Forking is safe only while this process runs one thread; otherwise, and where fork is
        # missing or unsafe (Windows, macOS), the indexing stays in this process.
        ctx = multiprocessing.get_context("fork")
        try:
            with ProcessPoolExecutor(workers, mp_context=ctx) as pool:
                return counted(pool.map(_index_one, jobs, chunksize=8))
        except (OSError, RuntimeError):  # no processes allowed here: do it in this one
            pass
    return counted(map(_index_one, jobs))


def _exists(root: Path, rel: str, tree: Tree) -> bool:
    if tree.rev is None:
        return (root / rel).exists()
    proc = gitio.git(root, "--literal-pathspecs", "ls-tree", tree.commit, "--", rel or ".")
    return bool(proc.strip())


def _cat_batch(root: Path, shas: list[str]) -> dict[str, bytes | None]:
    """Many blobs through one `git cat-file --batch`, all requests written at once (no round trips)."""
    proc = subprocess.run(["git", "-C", str(root), "cat-file", "--batch"], input="".join(s + "\n" for s in shas).encode(),
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    out: dict[str, bytes | None] = {}
    buf, pos = proc.stdout, 0
    for sha in shas:
        end = buf.find(b"\n", pos)
        if end < 0:
            break  # git stopped early (e.g. a corrupt object): the rest count as missing
        header = buf[pos:end].split()
        pos = end + 1
        if len(header) != 3:
            out[sha] = None
            continue
        size = int(header[2])
        out[sha] = buf[pos : pos + size]
        pos += size + 1
    return out


class _Reader:
    """File contents on demand: the working tree from disk, a revision through cat-file."""

    def __init__(self, root: Path):
        self.root = str(root)
        self.cat: gitio.CatFile | None = None

    def preload(self, files: list[_File], incomplete: list[str]) -> None:
        """Read the blobs of many revision files in one batch; a missing object is listed as incomplete."""
        want = [f for f in files if f.data is None and not f.disk]
        if not want:
            return
        got = _cat_batch(Path(self.root), list(dict.fromkeys(f.sha for f in want)))
        for f in want:
            f.data = got.get(f.sha)
            if f.data is None:
                incomplete.append(f"{f.path}: missing object {f.sha}")
                f.missing = True

    def load(self, f: _File, incomplete: list[str]) -> bool:
        if f.missing:
            return False
        if f.data is not None:
            return True
        if f.disk:
            try:
                with open(os.path.join(self.root, f.path), "rb") as fh:
                    f.data = fh.read()
                return True
            except OSError as e:
                incomplete.append(f"{f.path}: unreadable ({e.strerror})")
                return False
        if self.cat is None:
            self.cat = gitio.CatFile(Path(self.root))
        f.data = self.cat.read(f.sha)
        if f.data is None:
            incomplete.append(f"{f.path}: missing object {f.sha}")
            return False
        return True

    def line(self, f: _File, offset: int, col: int) -> str:
        """The stripped source line of a hit, found from its byte offset."""
        if f.data is None and not self.load(f, []):
            return ""
        start = offset - (col - 1)
        end = f.data.find(b"\n", offset)
        return f.data[start : end if end >= 0 else len(f.data)].decode("utf-8", "replace").strip()

    def close(self) -> None:
        if self.cat is not None:
            self.cat.close()


class _LazyHits:
    """Makes the Hit objects of a scan's word counts when one is first asked for.

    Holds the scan's SQLite connection (the cache may be in memory) and reader, and closes them
    when the scan's counts are gone. Line texts of clean working-tree files are read from disk
    at that moment, as a scan reads them."""

    def __init__(self, cache: _Cache, reader: _Reader, files: _Files, texts: bool):
        self.cache, self.reader, self.files, self.texts = cache, reader, files, texts
        self.lock = threading.Lock()
        self.closer = weakref.finalize(self, _close_both, cache, reader)

    def load(self, sym: str, vs: list[str]) -> list[Hit]:
        with self.lock:
            by_id = self.files.by_id()
            groups = [(f.path, v, a, f) for v, bid, a in self.cache.occurrences(vs, by_id) for f in by_id[bid]]
            if self.texts and not self.files.disk and not self.files.preloaded:
                # a revision's lines come through cat-file: all its files in one batch, once
                self.reader.preload([self.files.get(i) for i in self.files.live], [])
                self.files.preloaded = True
            if len(vs) > 1:  # identifiers may share a file: _count merges them by position
                where: list[tuple[_File, int]] = []
                hits = _count(sym, "word", vs, groups, where).hits
                if self.texts:
                    for h, (f, offset) in zip(hits, where):
                        h.text = self.reader.line(f, offset, h.col)
                return hits
            # one identifier: one group per file, its hits already in order
            groups.sort(key=lambda g: g[0])
            hits: list[Hit] = []
            add = hits.append
            for path, name, a, f in groups:
                kinds = _KINDS[f.test]
                data = f.data if self.texts and (f.data is not None or self.reader.load(f, [])) else None
                if data is None:  # no texts, or the file cannot be read now
                    for i in range(0, len(a), 4):
                        kind, why = kinds[a[i + 2] & 31]
                        add(Hit(path, a[i], kind, "", a[i + 1], name, why))
                    continue
                for i in range(0, len(a), 4):
                    kind, why = kinds[a[i + 2] & 31]
                    offset = a[i + 3]
                    end = data.find(b"\n", offset)
                    text = data[offset - a[i + 1] + 1 : end if end >= 0 else len(data)].decode("utf-8", "replace").strip()
                    add(Hit(path, a[i], kind, text, a[i + 1], name, why))
            return hits

    def close(self) -> None:
        self.closer()


def _close_both(cache: _Cache, reader: _Reader) -> None:
    try:
        cache.close()
        reader.close()
    except Exception:  # at interpreter exit: nothing left to release
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


_KINDS = {False: _kinds(False), True: _kinds(True)}


def _count(symbol: str, form: str, vs: list[str], groups: list[tuple], where: list[tuple]) -> Count:
    """Class and tally hits given per file as (path, name, flat [line, col, flags, offset, ...], file).

    `name` is one string, or a list with one per hit (a regex's matched texts). `where` gets
    (file, offset) for each hit, for the source lines."""
    c = Count(symbol, form, vs, 0, 0, 0, 0, 0, 0, [])
    hits, files = c.hits, set()
    groups.sort(key=lambda g: g[0])
    n = 0
    while n < len(groups):
        path, name, a, f = groups[n]
        n += 1
        if n < len(groups) and groups[n][0] == path:  # several variants in one file: merge by position
            rows = []
            while True:
                rows += [(a[i], a[i + 1], a[i + 2], a[i + 3], name if isinstance(name, str) else name[i // 4]) for i in range(0, len(a), 4)]
                if n == len(groups) or groups[n][0] != path:
                    break
                _, name, a, _ = groups[n]
                n += 1
            rows.sort()
            a = [x for r in rows for x in r[:4]]
            name = [r[4] for r in rows]
        kinds, scoped, test = _KINDS[f.test], f.scoped, f.test
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


# ---------------------------------------------------------------- judging


def judge(scan: Scan, symbol: str, control: str | None = None) -> Probe:
    """Judge one scanned symbol by its positive control (explicit, or chosen from the same scan)."""
    if symbol not in scan.counts:
        raise ValueError(f"{symbol!r} was not part of this scan")
    count = scan.counts[symbol]
    ccount: Count | None = None
    if control is not None:
        ccount = scan.counts.get(control) or scan.control_counts.get(control)
        how = "explicit (--control)"
        if ccount is not None and ccount.form != count.form:
            how += f", searched as a {ccount.form} while the probe is a {count.form}"
    else:
        how = "none found"
        for other, oc in scan.counts.items():
            if other != symbol and oc.form == count.form and oc.code > 0:
                control, ccount = other, oc
                how = f"automatic: another {'symbol' if oc.form == 'word' else 'regex'} of this probe, found in the same scope"
                break
        else:
            auto = scan.auto_control.get(count.form)
            if auto is not None and auto in scan.control_counts:
                control, ccount, how = auto, scan.control_counts[auto], scan.auto_control_how[count.form]

    where = ", ".join(scan.scope) or "(no scope)"
    unread = [i for i in scan.incomplete if _under(i.split(": ")[0], scan.scope)]
    unread_tests = [i for i in scan.incomplete if i not in unread and _under(i.split(": ")[0], scan.tests_scope)]
    notes = []
    status = "present"
    if count.code > 0:
        if unread:
            notes.append(f"{len(unread)} file(s) in the scope could not be read, so the count may be low")
    elif unread:
        status = "incomplete"
        notes.append(f"{len(unread)} file(s) in the scope could not be read: " + "; ".join(unread[:3]))
    else:
        why = _scope_problem(scan)
        if why:
            status = "untrusted"
            notes.append(why)
        elif ccount is None:
            status = "untrusted"
            if control is not None:
                notes.append(f"control {control!r} was not searched in this scan")
            else:
                notes.append(f"no positive control: nothing else in {where} was found to prove the scan sees code")
        elif ccount.code == 0:
            status = "untrusted"
            notes.append(f"control {control!r} has no code hit in {where} either")
        else:
            status = "absent"
            raw_only = sorted({h.path for h in count.hits if h.why == "no grammar" and _under(h.path, scan.scope)})
            if raw_only:
                notes.append(f"raw hits in {len(raw_only)} file(s) no grammar reads, not counted as code: " + ", ".join(raw_only[:3]))
    if unread_tests:
        notes.append(f"{len(unread_tests)} file(s) in the tests scope could not be read, so the tests count may be low")
    reason = "; ".join(notes)
    return Probe(
        symbol=symbol,
        form=count.form,
        scope=scan.scope,
        tree=str(scan.tree),
        count=count,
        control=control,
        control_count=ccount,
        control_how=how,
        status=status,
        reason=reason,
        files_scanned=scan.files_scanned,
        incomplete=list(scan.incomplete),
        commit=scan.tree.commit,
        dirty=scan.tree.dirty,
    )


def _scope_problem(scan: Scan) -> str:
    """Why a zero in this scope proves nothing, or '' when the scope looks sound."""
    tree = str(scan.tree)
    if not scan.scope:
        return "the scope is empty: no paths were given"
    if scan.missing_scopes:
        names = ", ".join(repr(s) for s in scan.missing_scopes)
        return f"scope path {names} does not exist in {tree} (misspelled?)"
    if scan.scope_files == 0:
        if scan.excluded and not scan.hidden:
            return f"all {scan.excluded} file(s) under the scope were excluded by the exclude globs"
        if scan.hidden:
            return f"all file(s) under the scope lie in hidden folders ({scan.hidden}) or were excluded ({scan.excluded})"
        if scan.binary:
            return f"the scope holds only binary files ({len(scan.binary)})"
        return f"the scope {', '.join(scan.scope)} holds no files in {tree}"
    return ""


def probe(root: Path, symbols: Iterable[str], *, control: str | None = None, regex: bool = False, **scan_kwargs) -> list[Probe]:
    """Scan once for all symbols (and the control), then judge each."""
    symbols = list(dict.fromkeys(symbols))
    asked = symbols + ([control] if control and control not in symbols else [])
    if regex:
        s = scan(root, regexes=asked, **scan_kwargs)
    else:
        s = scan(root, asked, **scan_kwargs)
    return [judge(s, sym, control) for sym in symbols]


# ---------------------------------------------------------------- rendering


def render(probes: list[Probe], max_hits: int = 12) -> list:
    """Rich renderables for people: one table of probes, then each probe's hits (the first few)."""
    from rich.table import Table
    from rich.text import Text

    if not probes:
        return []
    first = probes[0]
    colour = {"present": "green", "absent": "cyan", "untrusted": "red", "incomplete": "yellow"}
    t = Table(
        title=f"probe of {first.tree} in {', '.join(first.scope) or '(no scope)'}: {first.files_scanned} files scanned (scope and tests)",
        title_justify="left",
    )
    for col in ("symbol", "status", "code", "raw", "files", "defs", "tests", "consumers", "control"):
        t.add_column(col, justify="right" if col in ("code", "raw", "files", "defs", "tests", "consumers") else "left")
    for p in probes:
        c = p.count
        ctrl = f"{p.control} ({p.control_count.code})" if p.control and p.control_count else "—"
        t.add_row(
            Text(p.symbol),
            Text(p.status, style=colour.get(p.status, "")),
            str(c.code),
            str(c.raw),
            str(c.files),
            str(c.definitions),
            str(c.tests),
            str(c.consumers),
            Text(ctrl),
        )
    out: list = [t]
    for p in probes:
        lines = Text()
        names = ", ".join(p.count.variants)
        lines.append(f"{p.symbol}", style="bold")
        lines.append(f" [{p.form}: {names}] control: {p.control_how}")
        if p.reason:
            lines.append(f"\n  {p.status}: {p.reason}", style=colour.get(p.status, ""))
        for h in p.count.hits[:max_hits]:
            kind = f"{h.kind} ({h.why})" if h.why else h.kind
            lines.append(f"\n  {h.path}:{h.line}  {kind:<22} {h.text[:100]}")
        if len(p.count.hits) > max_hits:
            lines.append(f"\n  … {len(p.count.hits) - max_hits} more hits (--json lists all)")
        out.append(lines)
    if first.incomplete:
        out.append(Text("incomplete: " + "; ".join(first.incomplete[:10]), style="yellow"))
    return out


def console_progress(console) -> Callable[[int, int], None]:
    """Progress of a first scan: a transient bar on a terminal, a plain line every quarter otherwise."""
    state: dict = {"next": 0.25, "bar": None}

    def tick(done: int, total: int) -> None:
        if console.is_terminal:
            if state["bar"] is None:
                from rich.progress import Progress

                state["bar"] = Progress(console=console, transient=True)
                state["bar"].start()
                state["task"] = state["bar"].add_task("indexing files (first scan only)", total=total)
            state["bar"].update(state["task"], completed=done)
            if done >= total:
                state["bar"].stop()
        elif done / total >= state["next"] or done == total:
            console.print(f"probe: indexed {done}/{total} files (first scan only)", markup=False)
            while state["next"] <= done / total:
                state["next"] += 0.25

    return tick
