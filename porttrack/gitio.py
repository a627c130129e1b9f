"""Thin, typed access to git: one subprocess per question, one long-lived cat-file for blobs."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import NamedTuple, Self

from porttrack.errors import UserError


def git(repo: Path, *args: str, input: bytes | None = None) -> bytes:
    """Run `git -C repo args...` and return stdout; a failure becomes a UserError naming the command."""
    proc = subprocess.run(
        ["git", "-C", str(repo), *args],
        input=input,
        capture_output=True,
    )
    if proc.returncode != 0:
        err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        detail = err[-1] if err else f"exit {proc.returncode}"
        raise UserError(f"git {' '.join(args[:3])} failed in {repo}: {detail}")
    return proc.stdout


def is_git_repo(path: Path) -> bool:
    proc = subprocess.run(
        ["git", "-C", str(path), "rev-parse", "--git-dir"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return proc.returncode == 0


def require_repo(path: Path, what: str) -> Path:
    """Return the repo's top level, or refuse with a sentence naming `what` (e.g. "[upstream] repo")."""
    if not path.is_dir():
        raise UserError(f"{what} {path} is not a directory.")
    if not is_git_repo(path):
        raise UserError(f"{what} {path} is not a git repository.")
    bare = git(path, "rev-parse", "--is-bare-repository").decode().strip() == "true"
    if bare:  # a mirror or `fetch`ed repo: readable, with no work tree
        return path.resolve()
    return Path(git(path, "rev-parse", "--show-toplevel").decode().strip())


def rev_parse(repo: Path, rev: str) -> str | None:
    """Full sha of `rev` as a commit, or None when it does not resolve."""
    proc = subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    return proc.stdout.decode().strip() if proc.returncode == 0 else None


def resolve_commits(repo: Path, revs: list[str]) -> dict[str, str | None]:
    """Full sha of each rev as a commit (None where it does not resolve), from one `cat-file --batch-check`."""
    revs = [r for r in dict.fromkeys(revs) if r and "\n" not in r]
    if not revs:
        return {}
    proc = subprocess.run(
        ["git", "-C", str(repo), "cat-file", "--batch-check=%(objectname) %(objecttype)"],
        input="".join(f"{r}^{{commit}}\n" for r in revs).encode(),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        check=False,
    )
    lines = proc.stdout.decode(errors="replace").splitlines()
    out: dict[str, str | None] = {}
    for rev, line in zip(revs, lines, strict=False):
        bits = line.split()
        out[rev] = bits[0] if len(bits) == 2 and bits[1] == "commit" else None
    return out


def is_ancestor(repo: Path, older: str, newer: str) -> bool:
    """Is commit `older` an ancestor of (or equal to) `newer`? False too when either is unknown."""
    proc = subprocess.run(
        ["git", "-C", str(repo), "merge-base", "--is-ancestor", older, newer],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=False,
    )
    return proc.returncode == 0


def head_state(repo: Path, paths: list[str] | None = None) -> tuple[str | None, bool]:
    """(HEAD sha or None for an empty repo, whether the working tree differs from HEAD).

    With `paths`, only changes under them count: a probe of `src include` is not
    "dirty" because a queue file or a report next to it was just written.
    """
    head = rev_parse(repo, "HEAD")
    status = subprocess.run(
        ["git", "-C", str(repo), "status", "--porcelain", "--untracked-files=normal", "--", *(paths or [])],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    return head, bool(status.stdout.strip())


class CatFile:
    """A `git cat-file --batch` process: read many objects without a process each.

    `read(spec)` returns the object's bytes, or None when the object is missing.
    """

    def __init__(self, repo: Path):
        self._proc = subprocess.Popen(
            ["git", "-C", str(repo), "cat-file", "--batch"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )

    def read(self, spec: str) -> bytes | None:
        assert self._proc.stdin and self._proc.stdout
        self._proc.stdin.write(spec.encode() + b"\n")
        self._proc.stdin.flush()
        header = self._proc.stdout.readline()
        if not header or header.endswith(b" missing\n") or header.endswith(b" ambiguous\n"):
            return None
        size = int(header.split()[2])
        data = self._proc.stdout.read(size)
        self._proc.stdout.read(1)  # the newline after each object
        return data

    def close(self) -> None:
        if self._proc.poll() is None:
            assert self._proc.stdin
            self._proc.stdin.close()
            self._proc.wait()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class Hunk(NamedTuple):
    """One hunk of a commit's first-parent diff, with no context lines."""

    path: str  # the new path ("" for a deleted file: then old_path)
    old_start: int
    old_len: int
    new_start: int
    new_len: int
    old: list[str]  # the removed lines, without their "-"
    new: list[str]  # the added lines, without their "+"


_HUNK_HEAD = re.compile(rb"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def diff_hunks(repo: Path, sha: str, paths: list[str]) -> list[Hunk] | None:
    """The hunks `sha` makes to `paths` against its first parent; None when git cannot show it
    (the commit is not in `repo`, say): the caller then knows the diff, not the change, is unknown."""
    if not paths:
        return []
    proc = subprocess.run(
        [
            "git",
            "-C",
            str(repo),
            "diff",
            "--no-color",
            "--no-ext-diff",
            "-U0",
            "--no-renames",
            f"{sha}^!",
            "--",
            *paths,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    if proc.returncode != 0:
        return None
    out: list[Hunk] = []
    path = ""
    cur: list | None = None
    for raw in proc.stdout.split(b"\n"):
        if raw.startswith(b"+++ "):
            name = raw[4:].decode("utf-8", "replace")
            path = name[2:] if name.startswith("b/") else path  # /dev/null: a deletion keeps the old path
            continue
        if raw.startswith(b"--- "):
            name = raw[4:].decode("utf-8", "replace")
            path = name[2:] if name.startswith("a/") else ""
            continue
        m = _HUNK_HEAD.match(raw)
        if m:
            if cur is not None:
                out.append(Hunk(*cur))
            cur = [
                path,
                int(m[1]),
                int(m[2] if m[2] is not None else 1),
                int(m[3]),
                int(m[4] if m[4] is not None else 1),
                [],
                [],
            ]
            continue
        if cur is None or not raw:
            continue
        if raw.startswith(b"-"):
            cur[5].append(raw[1:].decode("utf-8", "replace"))
        elif raw.startswith(b"+"):
            cur[6].append(raw[1:].decode("utf-8", "replace"))
    if cur is not None:
        out.append(Hunk(*cur))
    return out


def grep_lines(repo: Path, pattern: str, paths: list[str]) -> dict[str, list[int]] | None:
    """Lines matching an extended regex (any case) in the work tree's files under `paths`, tracked or
    not, as path -> line numbers; None when `repo` is no git work tree (the caller reads files itself)."""
    proc = subprocess.run(
        ["git", "-C", str(repo), "grep", "-n", "-I", "-i", "--untracked", "-E", "-e", pattern, "--", *paths],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    if proc.returncode == 1:
        return {}
    if proc.returncode != 0:
        return None
    out: dict[str, list[int]] = {}
    for raw in proc.stdout.decode("utf-8", "replace").splitlines():
        path, _, rest = raw.partition(":")
        line, _, _ = rest.partition(":")
        if line.isdigit():
            out.setdefault(path, []).append(int(line))
    return out


def start(repo: Path, *args: str) -> subprocess.Popen:
    """`git -C repo --literal-pathspecs args...` started, for `records` to collect while other work runs."""
    return subprocess.Popen(
        ["git", "-C", str(repo), "--literal-pathspecs", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )


def records(proc: subprocess.Popen) -> list[bytes]:
    """The NUL-separated records a `start`ed `-z` command printed; a failure is a UserError."""
    out, err = proc.communicate()
    if proc.returncode != 0:
        argv = list(proc.args) if isinstance(proc.args, (list, tuple)) else [proc.args]
        raise UserError(f"git {' '.join(map(str, argv[4:6]))} failed: {err.decode('utf-8', 'replace').strip()}")
    return [r for r in out.split(b"\0") if r]


def ls_tree_blobs(repo: Path, commit: str, paths: list[str]) -> list[tuple[str, str]]:
    """(path, blob id) of the regular files under `paths` at `commit` (symlinks and submodules skipped)."""
    raw = git(repo, "--literal-pathspecs", "ls-tree", "-r", "-z", commit, "--", *(p or "." for p in paths))
    out = []
    for rec in raw.split(b"\0"):
        if not rec:
            continue
        meta, _, path = rec.partition(b"\t")
        mode, kind, sha = meta.split()
        if kind == b"blob" and mode in (b"100644", b"100755"):
            out.append((path.decode("utf-8", "surrogateescape"), sha.decode()))
    return out


def path_exists_at(repo: Path, commit: str, path: str) -> bool:
    return bool(git(repo, "--literal-pathspecs", "ls-tree", commit, "--", path or ".").strip())


def tracked(repo: Path, path: str) -> bool:
    """Whether git tracks any file at or under `path` (relative to the work tree)."""
    proc = subprocess.run(
        ["git", "-C", str(repo), "--literal-pathspecs", "ls-files", "--", path or "."],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    return proc.returncode == 0 and bool(proc.stdout.strip())


def cat_batch(repo: Path, shas: list[str]) -> dict[str, bytes | None]:
    """Many blobs through one `git cat-file --batch`, all requests written at once (no round trips)."""
    proc = subprocess.run(
        ["git", "-C", str(repo), "cat-file", "--batch"],
        input="".join(s + "\n" for s in shas).encode(),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
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
