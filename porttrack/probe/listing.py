"""Which files a scan reads: scope checks, excludes, hidden folders, and the file lists git gives
(the index for the working tree, `ls-tree` for a revision, `git status` for what changed)."""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path, PurePosixPath

from porttrack import gitio, globs, paths
from porttrack.errors import UserError
from porttrack.probe.model import Tree


def check_scope(root: Path, rel: str, what: str) -> str:
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


def glob_re(pattern: str) -> re.Pattern:
    """A config exclude glob: `**` spans folders, `*` and `?` stay inside one; no slash means any folder."""
    p = pattern.strip().rstrip("/")
    if "/" not in p:
        p = "**/" + p
    return re.compile(globs.translate(p) + "(?:/.*)?")  # a pattern naming a folder excludes what lies under it


def prefixes(path: str):
    """The path and every folder above it: a/b/c -> a/b/c, a/b, a."""
    while path:
        yield path
        path = path.rpartition("/")[0]


def under(path: str, scope: list[str]) -> bool:
    return any(p == "" or path == p or path.startswith(p + "/") for p in scope)


def hidden(path: str, scopes: list[str]) -> bool:
    """A file in a hidden folder counts only when a scope names that folder (or something inside it)."""
    if "/." not in path and not path.startswith("."):
        return False
    parts = path.split("/")
    for s in scopes:
        if under(path, [s]):
            depth = len(s.split("/")) if s else 0
            if not any(d.startswith(".") for d in parts[depth:-1]):
                return False
    return True


def blob_id(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def read_worktree(tree: paths.Tree, rel: str) -> bytes | None:
    """A working-tree file's bytes; None for a link or anything not a regular file (links are not
    followed). `paths.Outside` when a folder on its way leads out of the root: nothing outside the
    root is read, whatever replaced a tracked folder."""
    real = tree.resolve_file(rel)
    if real is None:
        return None
    try:
        return paths.read_file(real)
    except IsADirectoryError:  # a FIFO, a socket, a device or a folder: refused before a read can block
        return None


def list_worktree(root: Path, paths: list[str], in_git: bool) -> dict[str, str | None]:
    """Files under `paths` -> blob id when the index vouches for the working-tree content, else None.

    Clean tracked files are known by their index entry and are never read; modified and
    untracked (not ignored) files are read and hashed. Outside git: a plain walk, all read.
    """
    if in_git:
        spec = [p or "." for p in paths]
        staged = gitio.start(root, "ls-files", "-s", "-z", "--", *spec)
        changed = gitio.start(root, "ls-files", "-z", "-m", "-o", "--exclude-standard", "--", *spec)
        out = parse_staged(gitio.records(staged))
        for rec in gitio.records(changed):
            out[rec.decode("utf-8", "surrogateescape")] = None
        return out
    found = []
    for p in paths:
        base = root / p
        if base.is_file():
            found.append(p)
            continue
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames[:] = [d for d in dirnames if not d.startswith(".")]  # hidden only when named
            rel = Path(dirpath).relative_to(root).as_posix()
            found += [f"{rel}/{f}" if rel != "." else f for f in filenames]
    return dict.fromkeys(found)


def tree_key(root: Path, folders: list[str]) -> str | None:
    """A key for what is read from every file under `folders`: each file's path and blob id, hashed
    (audit/kept.py adds the readers' versions and options). None unless `root` is a git work tree
    whose index vouches for every file there (a modified or untracked file is read every run)."""
    if not folders or not gitio.is_git_repo(root):
        return None
    blobs = list_worktree(root, folders, True)
    if any(b is None for b in blobs.values()):
        return None
    what = json.dumps([folders, sorted(blobs.items())])
    return hashlib.sha1(what.encode("utf-8", "surrogateescape")).hexdigest()


def index_checksum(root: Path) -> bytes | None:
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


def parse_staged(records: list[bytes]) -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for rec in records:
        meta, _, path = rec.partition(b"\t")
        mode, sha, stage = meta.split()
        p = path.decode("utf-8", "surrogateescape")
        if mode in (b"100644", b"100755"):
            out[p] = sha.decode() if stage == b"0" and p not in out else None
    return out


def status_changes(raw: bytes) -> tuple[str | None, bool, list[tuple[str, bool]]]:
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


def tree_of(root: Path, rev: str | None, paths: list[str] | None = None) -> Tree:
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


def exists(root: Path, rel: str, tree: Tree) -> bool:
    if tree.rev is None:
        return (root / rel).exists()
    assert tree.commit is not None
    return gitio.path_exists_at(root, tree.commit, rel)
