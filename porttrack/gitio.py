"""Every git process porttrack starts, started here and hardened here (docs/security.md).

A checkout under review is untrusted: any file in it may be hostile. So each git process
- runs with `core.fsmonitor` off, `safe.bareRepository=explicit`, signatures and transports off,
  the system config unread, no pager and no prompt;
- diffs and greps with `--no-textconv --no-ext-diff`, so no driver a repository names can run;
- gets `--end-of-options` before revisions, and revisions that look like options are refused.
A bare repository is read only where the caller declared one (`declare_bare`, for an upstream
mirror): then git gets `--git-dir` and never discovers a repository by itself.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path
from typing import Any, NamedTuple, Self

from porttrack.errors import UserError

# Command-line config outranks every file git reads, and is "protected" config, which
# `safe.bareRepository` requires.
_HARDENING = (
    "-c", "core.fsmonitor=false",
    "-c", "safe.bareRepository=explicit",
    "-c", "log.showSignature=false",
    "-c", "protocol.allow=never",
    "-c", "diff.external=",
    "-c", "core.pager=cat",
)  # fmt: skip

# A commit id as people and reports write it: an abbreviation of 7 or more hex digits, a full
# SHA-1, or a full SHA-256.
SHA = re.compile(r"[0-9a-fA-F]{7,40}|[0-9a-fA-F]{64}")

_bare: set[str] = set()  # repositories read with --git-dir (declared bare mirrors)


def is_sha(value: str) -> bool:
    return SHA.fullmatch(value) is not None


def env() -> dict[str, str]:
    """The environment each git process gets: the user's, less the system config, pagers and prompts."""
    out = dict(os.environ)
    out.update(
        GIT_CONFIG_NOSYSTEM="1",
        GIT_ATTR_NOSYSTEM="1",
        GIT_TERMINAL_PROMPT="0",
        GIT_PAGER="cat",
        PAGER="cat",
        GIT_OPTIONAL_LOCKS="0",
    )
    return out


def argv(repo: Path, *args: str) -> list[str]:
    """The whole command line for `git args...` in `repo`."""
    where = ["--git-dir", str(repo)] if _bare and os.path.realpath(repo) in _bare else ["-C", str(repo)]
    return ["git", *_HARDENING, *where, *args]


def declare_bare(repo: Path) -> bool:
    """Read `repo` with `--git-dir` when it is a bare repository (an upstream mirror); True when it is.

    Decided from its files, not by running git in it: git would otherwise discover it
    implicitly, which `safe.bareRepository=explicit` refuses.
    """
    parts = (repo / "HEAD").is_file(), (repo / "objects").is_dir(), (repo / "refs").is_dir()
    looks_bare = all(parts) and not (repo / ".git").exists()
    if looks_bare:
        _bare.add(os.path.realpath(repo))
    return looks_bare


def _revision(rev: str) -> str:
    if rev.startswith("-"):
        raise UserError(f"revision {rev!r} starts with '-': a revision is never an option.")
    return rev


def run(
    repo: Path,
    *args: str,
    input: bytes | None = None,
    stderr: int | None = subprocess.PIPE,
    extra_env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[bytes]:
    """`git args...` in `repo`, hardened; the CompletedProcess, whatever its exit code."""
    return subprocess.run(
        argv(repo, *args),
        input=input,
        stdout=subprocess.PIPE,
        stderr=stderr,
        env={**env(), **(extra_env or {})},
        check=False,
    )


def popen(repo: Path, *args: str, stdin: Any = None, stdout: Any = subprocess.PIPE, stderr: Any = None):
    """`git args...` in `repo`, hardened, started and left running (a stream, or a batch reader)."""
    return subprocess.Popen(argv(repo, *args), stdin=stdin, stdout=stdout, stderr=stderr, env=env())


def git(repo: Path, *args: str, input: bytes | None = None) -> bytes:
    """Run `git args...` in `repo` and return stdout; a failure becomes a UserError naming the command."""
    proc = run(repo, *args, input=input)
    if proc.returncode != 0:
        err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        detail = err[-1] if err else f"exit {proc.returncode}"
        raise UserError(f"git {' '.join(args[:3])} failed in {repo}: {detail}")
    return proc.stdout


def is_git_repo(path: Path) -> bool:
    return run(path, "rev-parse", "--git-dir", stderr=subprocess.DEVNULL).returncode == 0


def toplevel(path: Path) -> Path | None:
    """The working tree's top folder that `path` lies in, or None when it lies in none git will use."""
    proc = run(path, "rev-parse", "--show-toplevel", stderr=subprocess.DEVNULL)
    out = proc.stdout.decode("utf-8", "surrogateescape").strip()
    return Path(out).resolve() if proc.returncode == 0 and out else None


def require_repo(path: Path, what: str) -> Path:
    """Return the repo's top level, or refuse with a sentence naming `what` (e.g. "[upstream] repo").

    A bare repository (a mirror or a `fetch`ed one) is readable: it has no work tree.
    """
    if not path.is_dir():
        raise UserError(f"{what} {path} is not a directory.")
    if declare_bare(path.resolve()):
        path = path.resolve()
        if not is_git_repo(path):
            raise UserError(f"{what} {path} is not a git repository.")
        return path
    top = toplevel(path)  # fails outside a work tree: one git process answers both questions
    if top is None:
        raise UserError(f"{what} {path} is not a git repository.")
    return top


def rev_parse(repo: Path, rev: str) -> str | None:
    """Full sha of `rev` as a commit, or None when it does not resolve (or looks like an option)."""
    if rev.startswith("-"):
        return None
    proc = run(
        repo, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}", stderr=subprocess.DEVNULL
    )
    return proc.stdout.decode().strip() if proc.returncode == 0 else None


def batch_check(repo: Path, specs: list[str], fmt: str) -> list[str]:
    """One `git cat-file --batch-check=FMT` line per spec (object names on stdin, never options)."""
    specs = [s for s in specs if "\n" not in s]
    if not specs:
        return []
    proc = run(
        repo,
        "cat-file",
        f"--batch-check={fmt}",
        input="".join(s + "\n" for s in specs).encode(),
        stderr=subprocess.DEVNULL,
    )
    return proc.stdout.decode(errors="replace").splitlines()


def resolve_commits(repo: Path, revs: list[str]) -> dict[str, str | None]:
    """Full sha of each rev as a commit (None where it does not resolve), from one `cat-file --batch-check`."""
    revs = [r for r in dict.fromkeys(revs) if r and "\n" not in r]
    if not revs:
        return {}
    lines = batch_check(repo, [f"{r}^{{commit}}" for r in revs], "%(objectname) %(objecttype)")
    out: dict[str, str | None] = {}
    for rev, line in zip(revs, lines, strict=False):
        bits = line.split()
        out[rev] = bits[0] if len(bits) == 2 and bits[1] == "commit" else None
    return out


def remotes(repo: Path) -> list[str]:
    """The names of the repository's remotes, `origin` first when it has one."""
    names = run(repo, "remote", stderr=subprocess.DEVNULL).stdout.decode("utf-8", "replace").split()
    return sorted(names, key=lambda n: n != "origin")


def last_commit_before(repo: Path, when: str, rev: str = "HEAD") -> str | None:
    """The newest first-parent commit of `rev` committed at or before `when` (ISO 8601), or None."""
    if rev.startswith("-"):
        return None
    proc = run(
        repo, "rev-list", "-1", "--first-parent", f"--before={when}", "--end-of-options", rev, stderr=subprocess.DEVNULL
    )
    out = proc.stdout.decode().strip()
    return out or None


def commit_date(repo: Path, rev: str = "HEAD") -> str | None:
    """The committer date of `rev`, ISO 8601, or None."""
    if rev.startswith("-"):
        return None
    proc = run(repo, "log", "-1", "--format=%cI", "--end-of-options", rev, stderr=subprocess.DEVNULL)
    out = proc.stdout.decode().strip()
    return out if proc.returncode == 0 and out else None


def is_ancestor(repo: Path, older: str, newer: str) -> bool:
    """Is commit `older` an ancestor of (or equal to) `newer`? False too when either is unknown."""
    return ancestry(repo, older, newer) is True


def ancestry(repo: Path, older: str, newer: str) -> bool | None:
    """Like `is_ancestor`, but None when git cannot tell (an unknown commit)."""
    if older.startswith("-") or newer.startswith("-"):
        return None
    proc = run(repo, "merge-base", "--is-ancestor", "--end-of-options", older, newer, stderr=subprocess.DEVNULL)
    return proc.returncode == 0 if proc.returncode in (0, 1) else None


def head_state(repo: Path, paths: list[str] | None = None) -> tuple[str | None, bool]:
    """(HEAD sha or None for an empty repo, whether the working tree differs from HEAD).

    With `paths`, only changes under them count: a probe of `src include` is not
    "dirty" because a queue file or a report next to it was just written.
    """
    head = rev_parse(repo, "HEAD")
    status = run(
        repo, "status", "--porcelain", "--untracked-files=normal", "--", *(paths or []), stderr=subprocess.DEVNULL
    )
    return head, bool(status.stdout.strip())


class CatFile:
    """A `git cat-file --batch` process: read many objects without a process each.

    `read(spec)` returns the object's bytes, or None when the object is missing.
    """

    def __init__(self, repo: Path):
        self._proc = popen(repo, "cat-file", "--batch", stdin=subprocess.PIPE, stderr=subprocess.DEVNULL)

    def read(self, spec: str) -> bytes | None:
        assert self._proc.stdin and self._proc.stdout
        if "\n" in spec or "\0" in spec:
            # one request per line: a name with a line break (from a hostile provenance header, say)
            # would be two requests, and every later answer would belong to the wrong question
            return None
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
    if sha.startswith("-"):
        return None
    proc = run(
        repo,
        "diff", "--no-color", "--no-ext-diff", "--no-textconv", "-U0", "--no-renames",
        "--end-of-options", f"{sha}^!", "--", *paths,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    return _hunks(proc.stdout) if proc.returncode == 0 else None


_FULL_SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


def diff_hunks_many(repo: Path, shas: list[str], paths: list[str]) -> dict[str, list[Hunk]]:
    """`diff_hunks` of many commits (full ids) to `paths`, from one `git diff-tree --stdin`: a
    process per commit costs more than the diff. A commit git cannot show, a root commit and a
    merge are left out (ask `diff_hunks`); so is every commit when git fails."""
    wanted = {x for x in shas if _FULL_SHA.fullmatch(x)}
    if not wanted or not paths:
        return {}
    ask = "".join(f"{x}\n" for x in sorted(wanted)).encode()
    listed = run(repo, "rev-list", "--no-walk=unsorted", "--parents", "--stdin", input=ask, stderr=subprocess.DEVNULL)
    if listed.returncode != 0:
        return {}
    # a merge is left out too: `sha^!` of a merge is its combined diff, which no parent pair gives
    pairs = [line.split() for line in listed.stdout.decode("ascii", "replace").splitlines()]
    pairs = [p for p in pairs if len(p) == 2 and p[0] in wanted]
    proc = run(
        repo,
        "diff-tree", "--stdin", "-p", "--no-color", "--no-ext-diff", "--no-textconv", "-U0", "--no-renames",
        "--", *paths,
        input="".join(f"{c} {parent}\n" for c, parent in pairs).encode(),
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    if proc.returncode != 0:
        return {}
    out: dict[str, list[Hunk]] = {c: [] for c, _ in pairs}
    # each commit's diff follows a line holding its id alone (no diff line is bare hex)
    marks = list(re.finditer(rb"^([0-9a-f]{40}|[0-9a-f]{64})(?: \(from [0-9a-f]+\))?$", proc.stdout, re.M))
    for m, nxt in zip(marks, [*marks[1:], None], strict=True):
        commit = m[1].decode("ascii")
        if commit in out:
            out[commit] = _hunks(proc.stdout[m.end() : nxt.start() if nxt else len(proc.stdout)])
    return out


def _hunks(diff: bytes) -> list[Hunk]:
    """The hunks of a `-U0` patch's text."""
    out: list[Hunk] = []
    path = ""
    cur: list | None = None
    for raw in diff.split(b"\n"):
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
    proc = run(
        repo,
        "grep",
        "-n",
        "-I",
        "-i",
        "--no-textconv",
        "--untracked",
        "-E",
        "-e",
        pattern,
        "--",
        *paths,
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


def found_at(repo: Path, rev: str, strings: tuple[str, ...], paths: list[str]) -> set[str] | None:
    """Which of `strings` (fixed, case kept) stand somewhere in the files `paths` match in the tree
    at `rev`; None when git cannot grep that revision. Only the matches come back (`-o`, the first
    of each file), so a line a thousand files share costs a thousand short lines, not its texts."""
    if not strings:
        return set()
    proc = run(
        repo,
        "grep",
        "-h",
        "-o",
        "-I",
        "-F",
        "--no-textconv",
        *(x for w in strings for x in ("-e", w)),
        _revision(rev),
        "--",
        *paths,
        stderr=subprocess.DEVNULL,
    )
    if proc.returncode == 1:
        return set()
    if proc.returncode != 0:
        return None
    return set(proc.stdout.decode("utf-8", "replace").splitlines()) & set(strings)


def grep_rev(
    repo: Path, rev: str | None, word: str | tuple[str, ...], paths: list[str], *, whole_word: bool = True
) -> list[tuple[str, int, str]] | None:
    """The lines of the tree at `rev` (the work tree, untracked files included, for None), in the
    files `paths` match (pathspecs: `*.py`), that name `word` (or any of several) as a whole word,
    or anywhere without `whole_word` (fixed string, case kept), as (path, line, text); None when git
    cannot grep there. A blob the clone lacks is passed over."""
    words = (word,) if isinstance(word, str) else word
    proc = run(
        repo,
        "grep",
        "-z",  # `rev:path NUL line NUL text`: a path may hold a colon
        "-n",
        "-I",
        *(["-w"] if whole_word else []),
        "-F",
        "--no-textconv",
        *(x for w in words for x in ("-e", w)),
        # git grep knows no --end-of-options: a revision never starts with '-'
        *([_revision(rev)] if rev is not None else ["--untracked"]),
        "--",
        *paths,
        stderr=subprocess.DEVNULL,
    )
    if proc.returncode == 1:
        return []
    if proc.returncode != 0:
        return None
    out: list[tuple[str, int, str]] = []
    prefix = f"{rev}:" if rev is not None else ""  # the work tree's paths come bare
    for raw in proc.stdout.decode("utf-8", "replace").split("\n"):
        fields = (raw[len(prefix) :] if prefix and raw.startswith(prefix) else raw).split("\0", 2)
        if len(fields) == 3 and fields[1].isdigit():
            out.append((fields[0], int(fields[1]), fields[2]))
    return out


def start(repo: Path, *args: str) -> subprocess.Popen:
    """`git --literal-pathspecs args...` started in `repo`, for `records` to collect while other work runs."""
    return popen(repo, "--literal-pathspecs", *args, stderr=subprocess.PIPE)


def records(proc: subprocess.Popen) -> list[bytes]:
    """The NUL-separated records a `start`ed `-z` command printed; a failure is a UserError."""
    out, err = proc.communicate()
    if proc.returncode != 0:
        cmd = list(proc.args) if isinstance(proc.args, (list, tuple)) else [proc.args]
        shown = [a for a in cmd[len(_HARDENING) + 3 :] if a != "--literal-pathspecs"][:2]
        raise UserError(f"git {' '.join(map(str, shown))} failed: {err.decode('utf-8', 'replace').strip()}")
    return [r for r in out.split(b"\0") if r]


def ls_tree_blobs(repo: Path, commit: str, paths: list[str]) -> list[tuple[str, str]]:
    """(path, blob id) of the regular files under `paths` at `commit` (symlinks and submodules skipped)."""
    raw = git(
        repo,
        "--literal-pathspecs",
        "ls-tree",
        "-r",
        "-z",
        "--end-of-options",
        _revision(commit),
        "--",
        *(p or "." for p in paths),
    )
    out = []
    for rec in raw.split(b"\0"):
        if not rec:
            continue
        meta, _, path = rec.partition(b"\t")
        mode, kind, sha = meta.split()
        if kind == b"blob" and mode in (b"100644", b"100755"):
            out.append((path.decode("utf-8", "surrogateescape"), sha.decode()))
    return out


def additions_and_deletions(repo: Path, since: str) -> list[tuple[str, list[str], list[str]]]:
    """(commit, files it adds, files it deletes) for each commit after `since` up to HEAD that adds or
    deletes a file, newest first; a rename reads as a deletion and an addition. Empty when git cannot
    tell (an unknown commit). No pathspec: a long list of them costs git more than the whole log."""
    proc = run(
        repo,
        "log",
        "--no-renames",
        "--diff-filter=AD",
        "--name-status",
        "-z",
        "--format=%x00%H",
        "--end-of-options",
        f"{_revision(since)}..HEAD",
        stderr=subprocess.DEVNULL,
    )
    if proc.returncode != 0:
        return []
    out: list[tuple[str, list[str], list[str]]] = []
    fields = proc.stdout.decode("utf-8", "surrogateescape").split("\0")
    i = 0
    while i < len(fields):
        field = fields[i].strip("\n")
        if field in ("A", "D") and out and i + 1 < len(fields):  # a status is followed by its path
            _, added, deleted = out[-1]
            (added if field == "A" else deleted).append(fields[i + 1])
            i += 1
        elif SHA.fullmatch(field):
            out.append((field, [], []))
        i += 1
    return out


def path_exists_at(repo: Path, commit: str, path: str) -> bool:
    return bool(
        git(repo, "--literal-pathspecs", "ls-tree", "--end-of-options", _revision(commit), "--", path or ".").strip()
    )


def tracked(repo: Path, path: str) -> bool:
    """Whether git tracks any file at or under `path` (relative to the work tree)."""
    proc = run(repo, "--literal-pathspecs", "ls-files", "--", path or ".", stderr=subprocess.DEVNULL)
    return proc.returncode == 0 and bool(proc.stdout.strip())


def cat_batch(repo: Path, shas: list[str]) -> dict[str, bytes | None]:
    """Many blobs through one `git cat-file --batch`, all requests written at once (no round trips)."""
    proc = run(repo, "cat-file", "--batch", input="".join(s + "\n" for s in shas).encode(), stderr=subprocess.DEVNULL)
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
