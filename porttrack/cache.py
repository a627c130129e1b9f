"""Where parse results keyed by git blob id are kept between runs: one SQLite file for the probe
and the symbol walk, one schema version, one policy for damage (see docs/reliability.md).

Rows hold plain SQLite values and JSON text, never pickles: a cache folder that someone else
can write (a committed `[cache] dir`, a restored CI cache) can change counts at worst, and the
checks below make a damaged file a rebuilt one, with one warning line, not a wrong count.
"""

from __future__ import annotations

import functools
import hashlib
import os
import sqlite3
import sys
from collections.abc import Callable
from pathlib import Path

from porttrack.errors import UserError

SCHEMA = 10  # bump when a table's meaning changes (codemask's output included); other versions are removed
DB_FILE = f"cache-v{SCHEMA}.sqlite"

_TABLES = (
    # probe: one row per file version (blob id + language); `masked`: parsed, its first definition known
    "blob (id INTEGER PRIMARY KEY, key TEXT UNIQUE NOT NULL, problem TEXT, masked INTEGER NOT NULL DEFAULT 0,"
    " first_def TEXT, first_line INTEGER)",
    # probe: the occurrences of one identifier in one parsed file version, with their totals
    "occ (ident TEXT NOT NULL, blob INTEGER NOT NULL, data BLOB NOT NULL, raw INTEGER NOT NULL,"
    " code INTEGER NOT NULL, decl INTEGER NOT NULL, deleg INTEGER NOT NULL, PRIMARY KEY (ident, blob)) WITHOUT ROWID",
    # probe: `git ls-files -s` output by index checksum and pathspec (JSON); the newest few are kept
    "listing (key TEXT PRIMARY KEY, data TEXT NOT NULL)",
    # probe: classified file sets (JSON), their files, and the identifiers searched in all of them
    "prepared (id INTEGER PRIMARY KEY, key TEXT UNIQUE NOT NULL, data TEXT NOT NULL, rows TEXT NOT NULL)",
    "fileset (lst INTEGER NOT NULL, blob INTEGER NOT NULL, fi INTEGER NOT NULL, scoped INTEGER NOT NULL,"
    " test INTEGER NOT NULL, PRIMARY KEY (lst, blob, fi)) WITHOUT ROWID",
    "searched (lst INTEGER NOT NULL, ident TEXT NOT NULL, PRIMARY KEY (lst, ident)) WITHOUT ROWID",
    # symbols: definitions per blob, per change, and changed lines per change, JSON
    "sym_blob (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "sym_pair (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "sym_lines (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    # headers: one port file's provenance (JSON) by parser, blob id, header length and path
    "header (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    # audit: what it reads from a whole clean port tree (deferral records, comment index, code
    # tokens), by kind and by a key of the readers' versions and the tree's file listing (`keep`)
    "kept (kind TEXT NOT NULL, key TEXT NOT NULL, value BLOB NOT NULL, PRIMARY KEY (kind, key))",
)

MEMORY = ":memory:"  # a `[cache] dir` refused by `confine`: this run keeps its cache in memory
MARKER = ".porttrack-cache"  # written into a configured folder porttrack made its own; cleanup needs it

_checked: set[str] = set()  # files validated by this process
_failed: set[str] = set()  # files that failed this process mid-run: it keeps its cache in memory from then on
_warned: set[str] = set()


def confine(folder: Path, checkout: Path, tracked: Callable[[str], bool]) -> str:
    """The `[cache] dir` to use: `folder` itself, or MEMORY (with one warning) when a pull request could
    have laid it out: git tracks files in it, or it is, lies under, or holds a symbolic link.

    `folder` lies inside `checkout` (the config made sure); `tracked(rel)` asks git of the checkout.
    """
    rel = os.path.relpath(folder, checkout)
    why = ""
    if os.path.realpath(folder) != os.path.normpath(folder):
        why = "it is or lies under a symbolic link"
    elif folder.is_dir() and any(p.is_symlink() for p in folder.rglob("*")):
        why = "it holds a symbolic link"
    elif folder.is_dir() and tracked(rel):
        why = "git tracks files in it, so a pull request could have written them"
    if why:
        warn(f"[cache] dir {rel} is not used ({why}); this run keeps its cache in memory.")
        return MEMORY
    return str(folder)


def cache_root(configured: str | os.PathLike | None = None) -> Path:
    """The cache folder: config `[cache] dir`, else $PORTTRACK_CACHE_DIR, else the user cache dir."""
    if configured == MEMORY:
        return Path(MEMORY)
    if configured:
        root, source = Path(configured).expanduser(), "[cache] dir"
    elif os.environ.get("PORTTRACK_CACHE_DIR"):
        root, source = Path(os.environ["PORTTRACK_CACHE_DIR"]), "PORTTRACK_CACHE_DIR"
    else:
        import platformdirs

        root, source = Path(platformdirs.user_cache_dir("porttrack")), "the user cache folder"
    fresh = not root.exists()
    try:
        root.mkdir(parents=True, exist_ok=True)
        if source != "[cache] dir" or fresh or not any(root.iterdir()):
            # the user's own cache home, or a folder that holds nothing but what porttrack writes
            os.close(os.open(root / MARKER, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600))
    except OSError as e:
        raise UserError(f"cache folder {root} ({source}) cannot be created: {e.strerror or e}.") from None
    return root


def db_path(configured: str | os.PathLike | None = None) -> Path:
    if configured == MEMORY:
        return Path(MEMORY)
    return cache_root(configured) / DB_FILE


@functools.cache
def parser_id(source: str) -> str:
    """The text of the module at `source` (its `__file__`), hashed: a row a parser wrote is never read
    by another version of it. Where the text cannot be read, a value of this process alone: nothing
    cached is reused."""
    try:
        return hashlib.sha1(Path(source).read_bytes()).hexdigest()[:16]
    except OSError:
        return os.urandom(8).hex()


KEEP_TREES = 8  # the newest tree states `keep` holds a value of each kind for; older ones are dropped


def kept(kind: str, key: str, configured: str | os.PathLike | None) -> bytes | None:
    """The value `keep` stored for (kind, key); None when there is none or the cache cannot say."""
    try:
        db = open_db(db_path(configured))
        try:
            row = db.execute("SELECT value FROM kept WHERE kind = ? AND key = ?", (kind, key)).fetchone()
        finally:
            db.close()
    except (sqlite3.Error, OSError):
        return None
    value = row[0] if row is not None else None
    if isinstance(value, str):  # TEXT, where someone wrote the row by hand
        return value.encode("utf-8", "surrogateescape")
    return value if isinstance(value, bytes) and value else None


def keep(kind: str, key: str, value: bytes, configured: str | os.PathLike | None) -> None:
    """Store what a reader made of a whole tree under `key` (see `listing.tree_key`); only a
    shortcut, so a cache that fails is passed over in silence (opening it warns once)."""
    try:
        db = open_db(db_path(configured))
        try:
            db.execute("INSERT OR REPLACE INTO kept VALUES (?, ?, ?)", (kind, key, value))
            db.execute(
                "DELETE FROM kept WHERE kind = ? AND rowid NOT IN"
                f" (SELECT rowid FROM kept WHERE kind = ? ORDER BY rowid DESC LIMIT {KEEP_TREES})",
                (kind, kind),
            )
        finally:
            db.close()
    except (sqlite3.Error, OSError):
        pass


def warn(message: str) -> None:
    """One warning line on stderr, once per process per message."""
    if message not in _warned:
        _warned.add(message)
        print(f"porttrack: warning: {message}", file=sys.stderr)


def open_db(path: Path, *, autocommit: bool = True) -> sqlite3.Connection:
    """The cache at `path`, validated (schema version, `quick_check`) the first time this process
    opens it. A damaged file is removed and rebuilt with one warning; a cache that cannot be
    written is replaced by one in memory, with one warning: a run is never stopped by its cache."""
    where = str(path)
    if where == MEMORY or where in _failed:
        return _open(MEMORY, autocommit)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        _claim(path)
        _remove_other_versions(path)
        try:
            return _open(where, autocommit)
        except sqlite3.DatabaseError as e:
            if _readonly(e):
                raise
            if not (is_damage(e) or isinstance(e, _Invalid)):
                # locked, busy, an I/O error: another run may hold the file, which is never removed under it
                warn(f"cache {path} cannot be opened now ({e}); this run keeps its cache in memory.")
                return _open(MEMORY, autocommit)
            warn(f"cache {path} was damaged ({e}); it was rebuilt.")
            _remove(path)
            _checked.discard(where)
            return _open(where, autocommit)
    except (OSError, sqlite3.Error) as e:
        warn(f"cache {path} cannot be written ({getattr(e, 'strerror', None) or e}); running without a cache.")
        return _open(":memory:", autocommit)


def is_damage(e: sqlite3.DatabaseError) -> bool:
    """Whether an error met mid-run says the file is damaged (not busy, not read-only)."""
    msg = str(e).lower()
    return "malformed" in msg or "not a database" in msg or "corrupt" in msg


def failed(path: Path, e: sqlite3.Error) -> None:
    """A cache file that failed mid-run, not from damage (full, an I/O error, locked past the wait):
    it may be another run's, so it stays; this process keeps its cache in memory from now on."""
    if str(path) == MEMORY:
        return
    warn(f"cache {path} failed mid-run ({e}); this run keeps its cache in memory.")
    _failed.add(str(path))


def rebuild(path: Path, why: str) -> None:
    """Remove a cache file found damaged mid-run, with one warning; the next open starts it afresh."""
    if str(path) == MEMORY:
        return
    warn(f"cache {path} was damaged ({why}); it was rebuilt.")
    _remove(path)
    _checked.discard(str(path))


def _readonly(e: Exception) -> bool:
    msg = str(e).lower()
    return "readonly" in msg or "read-only" in msg or "unable to open" in msg


class _Invalid(sqlite3.DatabaseError):
    """The file opened, and is not this schema's cache, or fails its integrity check: damage."""


BUSY_TIMEOUT_S = 60.0  # how long a run waits for another run's write before it goes on without the file


def _open(where: str, autocommit: bool) -> sqlite3.Connection:
    db = sqlite3.connect(
        where, timeout=BUSY_TIMEOUT_S, isolation_level=None if autocommit else "DEFERRED", check_same_thread=False
    )
    try:
        if where != ":memory:":
            db.execute("PRAGMA journal_mode=WAL")  # concurrent runs read while one writes
        db.execute("PRAGMA synchronous=OFF")
        # The version is read on every open (one cheap PRAGMA): a long-lived process (tests, an
        # editor integration) must notice a cache that another writer replaced since its last open.
        version = db.execute("PRAGMA user_version").fetchone()[0]
        if version not in (0, SCHEMA):
            raise _Invalid(f"schema version {version}, expected {SCHEMA}")
        if where not in _checked or not version:
            if version and db.execute("PRAGMA quick_check").fetchone()[0] != "ok":
                raise _Invalid("quick_check failed")
            db.execute("BEGIN IMMEDIATE")  # fails here, not mid-run, when the file cannot be written
            for table in _TABLES:
                db.execute("CREATE TABLE IF NOT EXISTS " + table)
            db.execute(f"PRAGMA user_version = {SCHEMA}")
            db.execute("COMMIT")
            _checked.add(where)
        db.execute("PRAGMA temp_store=MEMORY")
        if not autocommit:
            db.commit()
        return db
    except BaseException:
        db.close()
        raise


def _companions(path: Path) -> tuple[Path, ...]:
    return (path, Path(f"{path}-wal"), Path(f"{path}-shm"), Path(f"{path}-journal"))


def _claim(path: Path) -> None:
    """Create the database file without following a link: SQLite opens by name, so a link planted
    where the file goes would be written through. OSError when one is there.

    A file already there is never opened here: closing any descriptor of it drops every POSIX lock
    this process holds on it, those of its open connections included (SQLite's documented way to
    corrupt a database). Another run that then closes its last connection takes the file for its
    own, checkpoints and deletes the write-ahead log under the connections still writing to it."""
    for f in _companions(path):
        if f.is_symlink():
            raise OSError(f"{f.name} is a symbolic link")
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except FileExistsError:
        if path.is_symlink() or not path.is_file():
            raise OSError(f"{path.name} is not a regular file") from None
        return
    os.close(fd)


def _remove(path: Path) -> None:
    for f in _companions(path):
        if not f.is_symlink():
            f.unlink(missing_ok=True)


def _remove_other_versions(path: Path) -> None:
    """Earlier formats are never read again: their files go (the probe's and symbols' old folders too).

    Only in a folder porttrack marked as its own, and only regular files named as porttrack names them.
    """
    folder = path.parent
    if not (folder / MARKER).is_file():
        return
    for old in [
        *folder.glob("cache-v*.sqlite*"),
        *folder.glob("probe/index-v*.sqlite*"),
        *folder.glob("symbols/parse-v*.sqlite*"),
    ]:
        if not old.name.startswith(DB_FILE) and not old.is_symlink() and old.is_file():
            old.unlink(missing_ok=True)
