"""What a scan reads: its context (Ctx), the scope's files and their bytes, and RE2 for a person's regexes."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from porttrack import gitio, paths
from porttrack.evidence import codemask
from porttrack.errors import UserError
from porttrack.probe import listing as L
from porttrack.probe.model import Row


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


def _first_unknown(rows: list[Row]) -> bool:
    """Whether an unparsed readable file of the scope comes before any file known to define something."""
    for r in rows:
        if r.problem is None and r.scoped:
            if not r.masked:
                return True
            if r.first_def:
                return False
    return False


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
