"""Walk an upstream git range in one streamed `git log` and extract the symbols each commit touches.

One `git rev-list` lists the range (its size, progress positions, the shallow-clone check); one
`git log --raw --numstat -z` streams every commit that touches the mirrored paths with all of its
files, blob ids, renames and line counts; one `git cat-file --batch` serves the blobs that
tree-sitter reads, while git is still producing the rest of the stream. No process or object
load per commit.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from collections.abc import Callable, Iterator, Sequence

from porttrack import gitio
from porttrack import paths as pathrules
from porttrack.errors import UserError
from porttrack.model import Symbols
from porttrack.parse import language_for
from porttrack.symbols.defs import defined_words
from porttrack.symbols.extractor import Extractor, FileDiff, pair_key

ZERO_SHA = "0" * 40
# `Revert "Title (#12)" (#34)`, or with a long title cut by GitHub: `Revert "Long ti… (#34)`.
_REVERT = re.compile(r'^Revert "(?:(?P<inner>.*)"(?P<rest>[^"]*)|(?P<cut>[^"]*)\u2026(?P<cut_rest>[^"]*))$')
_REVERTS_PR = re.compile(r"\brevert(?:s|ing)?\s+(?:PR\s*)?#(\d+)", re.I)
_HEX40 = re.compile(rb"\b[0-9a-f]{40}\b")
_REGULAR_FILE_MODES = ("100644", "100755")  # not symlinks (120000) nor submodules (160000)


@dataclass
class FileChange:
    path: str  # path after the commit (for a delete: the old path)
    old_path: str | None = None  # set for renames/copies
    insertions: int = 0  # -1 for binary files
    deletions: int = 0  # -1 for binary files
    binary: bool = False
    status: str = "M"  # A, M, D, R, C, T
    old_blob: str | None = None  # None when the file did not exist before
    new_blob: str | None = None  # None when the file is gone after
    similarity: int | None = None  # percent, for renames/copies


@dataclass
class Commit:
    sha: str
    date: dt.date
    subject: str
    pr: int | None
    reverts: int | None
    parents: list[str]
    files: list[FileChange]  # the mirrored files the commit touches (against its first parent for merges)
    symbols: Symbols = field(default_factory=Symbols)
    unreadable: list[str] = field(default_factory=list)  # mirrored files not read: a blob is missing (--skip-missing)


@dataclass
class WalkResult:
    pin: str
    target: str
    total_commits: int  # commits in the range, mirrored or not
    commits: list[Commit]  # oldest first, only those touching `paths`
    parsed: int = 0  # blobs tree-sitter parsed in this walk (0 on a second walk of the same range)
    cached: int = 0  # file changes answered from the parse cache
    skipped: int = 0  # binary, NUL-holding or too deeply nested source blobs: recorded as touched, no symbols
    unreadable: list[str] = field(default_factory=list)  # paths left out because a version is missing (--skip-missing)


class MissingObject(UserError):
    """An object git or cat-file could not read; `walk` turns it into a sentence naming the commit and file."""

    def __init__(self, message: str, sha: str):
        super().__init__(message)
        self.sha = sha

    def __reduce__(self):  # raised in a forked parse worker, it is pickled back with its sha
        return (type(self), (self.args[0], self.sha))


def walk(
    repo: Path,
    rev_range: str,
    paths: list[str],
    *,
    pr_pattern: str = r"\(#(\d+)\)",
    first_parent: bool = True,
    cache_dir: Path | None = None,
    progress: Callable[[int, int | None], None] | None = None,
    skip_missing: bool = False,
) -> WalkResult:
    """The commits of `rev_range` (`A..B`) that touch `paths`, oldest first, with their symbols.

    Only blobs under `paths` are read. One of them missing (a partial or filtered mirror) is a
    UserError naming the commit, the file and the path that pulled it in; with `skip_missing`
    every path with a missing version is left out of the walk and recorded on the commits that
    touch it as `unreadable`.
    """
    repo = gitio.require_repo(Path(repo), "upstream repository")  # a bare mirror is fine: no work tree needed
    try:
        pr_re = re.compile(pr_pattern)
    except re.error as e:
        raise UserError(f"pr_pattern {pr_pattern!r} is not a valid regular expression: {e}.") from None
    pin, target = _resolve_range(repo, rev_range)
    mode = ["--first-parent"] if first_parent else []
    order = gitio.git(repo, "rev-list", *mode, f"{pin}..{target}").decode().split()
    _refuse_shallow_cut(repo, order)
    prefixes = [] if pathrules.whole_tree(pathrules.norm_all(paths)) else pathrules.norm_all(paths)
    pathspec = [f":(top,literal){p}" for p in prefixes]
    pre: list[Commit] = []
    unreadable: list[str] = []
    if skip_missing:
        pre, unreadable = _missing_paths(repo, pin, target, first_parent, pathspec, pr_re)
        pathspec = (pathspec or [":(top)."]) + [f":(exclude,top,literal){p}" for p in unreadable]
    try:
        result = _walk(repo, pin, target, order, first_parent, pathspec, prefixes, pr_re, cache_dir, progress)
    except MissingObject as e:
        raise UserError(_missing_message(repo, e.sha, pin, target, first_parent, pathspec, paths, pr_re)) from None
    if unreadable:
        _record_unreadable(result, pre, set(unreadable), {sha: i for i, sha in enumerate(order)})
        result.unreadable = unreadable
    return result


def _walk(
    repo: Path,
    pin: str,
    target: str,
    order: list[str],
    first_parent: bool,
    pathspec: list[str],
    prefixes: list[str],
    pr_re,
    cache_dir: Path | None,
    progress,
) -> WalkResult:
    position = {sha: i for i, sha in enumerate(order, 1)}  # the stream comes newest first, like rev-list
    total = len(order)
    half = total // 2  # progress: reading the stream is the first half, the symbols the second
    jobs = _jobs()
    commits: list[Commit] = []
    with _Blobs(repo) as cat, Extractor(cat.one, cache_dir, cat.many) as extractor:
        for done, commit in enumerate(
            _stream(repo, pin, target, first_parent, pathspec, pr_re, order if jobs > 1 else []), 1
        ):
            if progress:
                progress(position.get(commit.sha, done) * half // max(total, 1), total)
            if not commit.files or (
                prefixes
                and not any(
                    pathrules.under(f.path, prefixes) or pathrules.under(f.old_path, prefixes) for f in commit.files
                )
            ):
                continue  # a merge (no diff when side branches are walked) or no mirrored change
            commits.append(commit)
        # All the range's file changes at once (newest first): the extractor then knows which
        # parse trees later changes still need, and can split the work over processes.
        changes = [_source_changes(c.files, prefixes) for c in commits]
        flat = [change for per_commit in changes for change in per_commit]
        report = None
        if progress:
            report = lambda n, of: progress(half + (total - half) * n // max(of, 1), total)  # noqa: E731
        diffs = extractor.extract(flat, jobs=jobs, open_reader=lambda: _Blobs(repo), sizes=cat.sizes, progress=report)
        for commit, per_commit in zip(commits, changes, strict=False):
            commit.symbols = _combine([diffs[pair_key(*change)] for change in per_commit])
    if progress:
        progress(total, total)
    commits.reverse()
    _resolve_reverts(repo, target, commits, pr_re)
    return WalkResult(pin, target, total, commits, extractor.parsed, extractor.cached, extractor.skipped)


# ---------------------------------------------------------------- missing objects


def _missing_paths(
    repo: Path, pin: str, target: str, first_parent: bool, pathspec: list[str], pr_re
) -> tuple[list[Commit], list[str]]:
    """(the range's commits as a blob-free listing, the mirrored paths with a version missing)."""
    pre = list(_one_stream(repo, pin, target, first_parent, pathspec, pr_re, stats=False))
    blobs = {b for c in pre for f in c.files for b in (f.old_blob, f.new_blob) if b}
    with _Blobs(repo) as cat:
        present = cat.sizes(sorted(blobs))
    missing = blobs - set(present)
    bad = {p for c in pre for f in c.files if {f.old_blob, f.new_blob} & missing for p in (f.path, f.old_path) if p}
    return pre, sorted(bad)


def _record_unreadable(result: WalkResult, pre: list[Commit], bad: set[str], position: dict[str, int]) -> None:
    """Every commit touching a left-out path names it as unreadable; one touching nothing else
    comes back from the blob-free listing, so it still gets its entry."""
    walked = {c.sha: c for c in result.commits}
    for c in pre:
        hit = sorted({f.path for f in c.files if f.path in bad or f.old_path in bad})
        if not hit:
            continue
        mine = walked.get(c.sha)
        if mine is None:
            c.files = [f for f in c.files if f.path in hit]
            for f in c.files:
                f.insertions = f.deletions = 0
            mine = walked[c.sha] = c
            result.commits.append(c)
        else:
            mine.files += [f for f in c.files if f.path in hit and f.path not in {g.path for g in mine.files}]
        mine.unreadable = hit
    result.commits.sort(key=lambda c: -position.get(c.sha, 0))  # oldest first, as the walk returns them


def _missing_message(
    repo: Path, sha: str, pin: str, target: str, first_parent: bool, pathspec: list[str], paths: list[str], pr_re
) -> str:
    """Which commit and file the missing object is, which mirrored path pulled it in, what to do."""
    where = None
    for c in _one_stream(repo, pin, target, first_parent, pathspec, pr_re, stats=False):  # reads no blob
        f = next((f for f in c.files if sha in (f.old_blob, f.new_blob)), None)
        if f is not None:
            where = c, f
            break
    if where is None:
        return f"object {sha} is missing from {repo} (a shallow or partial clone?): fetch it and retry."
    c, f = where
    rule = next((p for p in paths if pathrules.under(f.path, pathrules.norm_all([p]))), None)
    pulled = (
        f"[upstream] paths entry {pathrules.folder(pathrules.norm(rule))!r}"
        if rule is not None
        else "[upstream] paths (the whole tree)"
    )
    return (
        f"object {sha} is missing from {repo}: it is {f.path} in commit {c.sha[:10]} ({c.subject}), "
        f"read because of the {pulled}. Narrow [upstream] paths to leave {f.path} out, fetch the object "
        f"into {repo} (git fetch from a complete clone), or pass --skip-missing to record the file as "
        "unreadable and go on (audit then calls those entries untrusted)."
    )


# ---------------------------------------------------------------- range and repository checks


def _resolve_range(repo: Path, rev_range: str) -> tuple[str, str]:
    if "..." in rev_range or rev_range.count("..") != 1:
        raise UserError(f"range {rev_range!r} must have the form PIN..TARGET (two dots).")
    ends = rev_range.split("..")
    if not all(e.strip() for e in ends):
        raise UserError(f"range {rev_range!r} must name both ends: PIN..TARGET.")
    shas = []
    for rev in ends:
        sha = gitio.rev_parse(repo, rev.strip())
        if sha is not None and not re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", sha):
            sha = None  # `^X` (a negation) or anything else that is not one commit
        if sha is None:
            shallow = _is_shallow(repo)
            hint = " (the repository is a shallow clone: fetch more history)" if shallow else ""
            raise UserError(f"revision {rev!r} of range {rev_range!r} is not a commit in {repo}{hint}.")
        shas.append(sha)
    pin, target = shas
    if pin != target and gitio.is_ancestor(repo, target, pin):
        raise UserError(
            f"range {rev_range!r} is backwards: its TARGET {target[:10]} is an ancestor of its PIN "
            f"{pin[:10]}, so the range holds no commits; write PIN..TARGET, older first."
        )
    return pin, target


def _is_shallow(repo: Path) -> bool:
    return gitio.git(repo, "rev-parse", "--is-shallow-repository").strip() == b"true"


def _refuse_shallow_cut(repo: Path, order: list[str]) -> None:
    """A commit of the range whose parents were cut by a shallow clone would end the walk early."""
    if not _is_shallow(repo):
        return
    shallow_file = Path(
        gitio.git(repo, "rev-parse", "--path-format=absolute", "--git-path", "shallow").decode().strip()
    )
    try:
        cut = set(shallow_file.read_text().split())
    except OSError:
        return
    for sha in order:
        if sha in cut:
            raise UserError(
                f"the range reaches past the shallow clone's boundary at commit {sha} in {repo}: "
                "fetch more history (git fetch --deepen or --unshallow)."
            )


class _Blobs(gitio.CatFile):
    """The cat-file reader, plus batches: all of a commit's blobs asked for with one write.

    One round trip per commit instead of one per blob matters on a busy machine, where each
    wake-up of git costs a scheduler slice.
    """

    def __init__(self, repo: Path):
        super().__init__(repo)
        self.repo = repo

    def one(self, sha: str) -> bytes:
        data = self.read(sha)
        if data is None:
            raise MissingObject(
                f"object {sha} is missing from {self.repo} (a shallow or partial clone?): fetch it and retry.", sha
            )
        return data

    def sizes(self, shas: list[str]) -> dict[str, int]:
        """Byte sizes of blobs, from one `git cat-file --batch-check` (to share work out evenly)."""
        out: dict[str, int] = {}
        for line in gitio.batch_check(self.repo, shas, "%(objectname) %(objectsize)"):
            parts = line.split()
            if len(parts) == 2 and parts[1].isdigit():
                out[parts[0]] = int(parts[1])
        return out

    def many(self, shas: list[str]) -> dict[str, bytes]:
        out: dict[str, bytes] = {}
        stdin, stdout = self._proc.stdin, self._proc.stdout
        assert stdin is not None and stdout is not None  # opened with pipes
        # Requests are 41 bytes: 500 stay far below a pipe's buffer, so writing them all
        # before reading cannot deadlock against git's output.
        for start in range(0, len(shas), 500):
            chunk = shas[start : start + 500]
            stdin.write("".join(f"{sha}\n" for sha in chunk).encode())
            stdin.flush()
            for sha in chunk:
                header = stdout.readline()
                if not header or header.endswith((b" missing\n", b" ambiguous\n")):
                    raise MissingObject(
                        f"object {sha} is missing from {self.repo} (a shallow or partial clone?): fetch it and retry.",
                        sha,
                    )
                size = int(header.split()[2])
                out[sha] = stdout.read(size)
                stdout.read(1)
        return out


# ---------------------------------------------------------------- the stream


_SPLIT_MIN = 400  # a first-parent range of this many commits is read by two git processes


def _stream(
    repo: Path, pin: str, target: str, first_parent: bool, pathspec: list[str], pr_re, order: Sequence[str] = ()
) -> Iterator[Commit]:
    """Commits of the range touching `pathspec` (newest first), parsed from `git log` as it runs.

    `--numstat` makes git diff every file of every commit: most of the stream's cost, and one
    core's work. With a second core, a long first-parent range (`order`: its commits, newest
    first) is therefore cut in two at its middle commit: git writes the older half to a temporary file while the newer
    half is read from the pipe, then the file is read. The two halves list exactly the commits,
    in the order, of one `git log` over the whole range.
    """
    if not (first_parent and len(order) >= _SPLIT_MIN):
        yield from _one_stream(repo, pin, target, first_parent, pathspec, pr_re)
        return
    mid = order[len(order) // 2]  # pin..mid holds mid and everything older; mid..target the rest
    with tempfile.TemporaryFile() as spill, tempfile.TemporaryFile() as err:
        older = gitio.popen(repo, *_log_args(pin, mid, first_parent, pathspec), stdout=spill, stderr=err)
        try:
            yield from _one_stream(repo, mid, target, first_parent, pathspec, pr_re)
            rc = older.wait()
        finally:
            if older.poll() is None:  # the reader stopped early or failed: git's half is not wanted
                older.kill()
                older.wait()
        if rc != 0:
            err.seek(0)
            _fail(repo, err.read())
        spill.seek(0)
        yield from _parse(_tokens(spill), pr_re)


def _log_args(pin: str, target: str, first_parent: bool, pathspec: list[str], stats: bool = True) -> list[str]:
    # No --full-diff: git then diffs only the files under the pathspec, so a blob outside the
    # mirrored paths (which a partial mirror may well lack) is never read. Without `stats`
    # (no --numstat, no -M) the stream reads no blob at all: trees only.
    args = [
        "-c", "diff.relative=false",
        "log", "-z", "--raw", *(["--numstat", "-M"] if stats else []), "--no-abbrev",
        "--no-color", "--no-ext-diff", "--no-textconv", "--no-decorate",
        "--format=%x01%H%x00%P%x00%cs%x00%s",
    ]  # fmt: skip
    if first_parent:
        args += ["--first-parent", "--diff-merges=first-parent"]
    else:
        args += ["--full-history"]  # every commit that changes the paths, not one simplified line
    return [*args, "--end-of-options", f"{pin}..{target}", "--", *pathspec]


def _one_stream(
    repo: Path, pin: str, target: str, first_parent: bool, pathspec: list[str], pr_re, stats: bool = True
) -> Iterator[Commit]:
    """Commits of `pin..target` touching `pathspec`, newest first, from one `git log` through a pipe."""
    args = _log_args(pin, target, first_parent, pathspec, stats)
    with tempfile.TemporaryFile() as err:
        proc = gitio.popen(repo, *args, stderr=err)
        assert proc.stdout
        try:
            yield from _parse(_tokens(proc.stdout), pr_re)
        finally:
            proc.stdout.close()
            rc = proc.wait()
        if rc != 0:
            err.seek(0)
            _fail(repo, err.read())


def _fail(repo: Path, stderr: bytes):
    missing = _HEX40.search(stderr)
    if missing and re.search(rb"unable to read|missing|bad object|could not (read|fetch)|not a valid", stderr, re.I):
        sha = missing.group().decode()
        raise MissingObject(
            f"object {sha} is missing from {repo} (a shallow or partial clone?): fetch it and retry.", sha
        )
    lines = stderr.decode("utf-8", "replace").strip().splitlines()
    raise UserError(f"git log failed in {repo}: {lines[-1] if lines else 'no message'}")


def _tokens(stream) -> Iterator[bytes]:
    """NUL-separated fields of `git log -z`, read in chunks so parsing overlaps git's work."""
    rest = b""
    while chunk := stream.read(1 << 16):
        parts = (rest + chunk).split(b"\x00")
        rest = parts.pop()
        yield from parts
    if rest:
        yield rest


def _parse(tokens: Iterator[bytes], pr_re) -> Iterator[Commit]:
    """Turn the token stream into Commits: header fields, then raw lines, then numstat lines."""
    commit: Commit | None = None
    raw: list[FileChange] = []
    stats: dict[str, tuple[int, int, bool]] = {}
    path = lambda: next(tokens).decode("utf-8", "replace")  # noqa: E731 — a non-UTF-8 name must not break the TOML
    for tok in tokens:
        tok = tok.lstrip(b"\n")
        if not tok:
            continue
        if tok.startswith(b"\x01"):
            if commit is not None:
                yield _finish(commit, raw, stats)
            sha = tok[1:].decode()
            parents = next(tokens).decode().split()
            date = dt.date.fromisoformat(next(tokens).decode())
            subject = next(tokens).decode("utf-8", "replace")
            pr, reverts = pr_of(subject, pr_re)
            commit, raw, stats = Commit(sha, date, subject, pr, reverts, parents, []), [], {}
        elif tok.startswith(b":"):
            _, new_mode, old_blob, new_blob, status = tok.decode().split(" ")
            old_mode = tok[1:7].decode()
            first = path()
            kind = status[0]
            change = FileChange(path=first, status=kind)
            if kind in "RC":
                change.old_path, change.path = first, path()
                change.similarity = int(status[1:] or 0)
            change.old_blob = old_blob if old_blob != ZERO_SHA and old_mode in _REGULAR_FILE_MODES else None
            change.new_blob = new_blob if new_blob != ZERO_SHA and new_mode in _REGULAR_FILE_MODES else None
            raw.append(change)
        else:
            ins, dels, name = tok.split(b"\t", 2)
            if name:
                key = name.decode("utf-8", "replace")
            else:  # a rename or copy: old and new path follow as their own fields
                path()
                key = path()
            binary = ins == b"-"
            stats[key] = (-1 if binary else int(ins), -1 if binary else int(dels), binary)
    if commit is not None:
        yield _finish(commit, raw, stats)


def _finish(commit: Commit, raw: list[FileChange], stats: dict[str, tuple[int, int, bool]]) -> Commit:
    for change in raw:
        if change.path in stats:
            change.insertions, change.deletions, change.binary = stats[change.path]
    commit.files = raw
    return commit


def pr_of(subject: str, pr_re: re.Pattern) -> tuple[int | None, int | None]:
    """(PR number, reverted PR): the last match in the subject; a revert's quoted subject names what it reverts."""
    revert = _REVERT.match(subject)
    if revert:
        inner, rest = _revert_parts(revert)
        reverted = _last_number(pr_re, inner)
        if reverted is None:  # `Revert "Title" (#12) (#34)`: the reverted PR trails the quote
            numbers = [_last_number(pr_re, m.group(0)) for m in pr_re.finditer(rest)]
            reverted = numbers[-2] if len(numbers) >= 2 else None
        return _last_number(pr_re, rest), reverted
    said = _REVERTS_PR.search(subject)  # e.g. "[CI] Revert #42379 to fix ... (#46070)"
    return _last_number(pr_re, subject), int(said.group(1)) if said else None


def _revert_parts(m: re.Match) -> tuple[str, str]:
    """(quoted title, text after it) of a revert subject match."""
    if m.group("inner") is not None:
        return m.group("inner"), m.group("rest")
    return m.group("cut"), m.group("cut_rest")


def _last_number(pr_re: re.Pattern, text: str) -> int | None:
    matches = list(pr_re.finditer(text))
    if not matches:
        return None
    m = matches[-1]
    digits = m.group(1) if m.groups() else m.group(0)
    digits = re.sub(r"\D", "", digits or "")
    return int(digits) if digits else None


def _resolve_reverts(repo: Path, target: str, commits: list[Commit], pr_re: re.Pattern) -> None:
    """Find the PR of reverts whose quoted title carries none (GitHub writes `Revert "Title" (#N)`).

    One `git log --grep` over the history for all of them: the reverted commit is the newest
    non-revert whose subject starts with the quoted title (GitHub truncates long ones with "…").
    """
    wanted = {}
    for c in commits:
        m = _REVERT.match(c.subject)
        if m and c.reverts is None:
            title = _revert_parts(m)[0].rstrip("\u2026.").strip()
            if title:
                wanted[c.sha] = title
    if not wanted:
        return
    greps = [f"--grep={t}" for t in sorted(set(wanted.values()))]
    out = gitio.git(repo, "log", "-F", *greps, "--format=%H%x00%s", target).decode("utf-8", "replace")
    found = [line.split("\x00", 1) for line in out.splitlines() if "\x00" in line]  # newest first
    for c in commits:
        wanted_title = wanted.get(c.sha)
        if wanted_title is None:
            continue
        for sha, subject in found:
            if sha != c.sha and subject.startswith(wanted_title) and not _REVERT.match(subject):
                c.reverts = _last_number(pr_re, subject)
                break


# ---------------------------------------------------------------- symbols per commit


def _source_changes(files: list[FileChange], prefixes: list[str]) -> list[tuple[str, str | None, str | None]]:
    """(language, before blob, after blob) of each mirrored source file a commit changes."""
    changes = []
    for f in files:
        if f.binary or not (pathrules.under(f.path, prefixes) or pathrules.under(f.old_path, prefixes) or not prefixes):
            continue
        lang = language_for(f.path) or (language_for(f.old_path) if f.old_path else None)
        if lang is not None and (f.old_blob or f.new_blob):
            changes.append((lang, f.old_blob, f.new_blob))
    return changes


def _combine(diffs: list[FileDiff]) -> Symbols:
    """One commit's symbols from the FileDiffs of its files."""
    added: set[str] = set()
    changed: set[str] = set()
    removed: set[str] = set()
    uses: set[str] = set()
    for d in diffs:
        added.update(d.added)
        changed.update(d.changed)
        removed.update(d.removed)
        uses.update(d.uses)
    # A name removed from one file and added to another moved: for the port that is a change.
    moved = added & removed
    changed |= moved
    added -= moved
    removed -= moved
    added -= changed
    removed -= changed
    uses -= defined_words(added | changed)
    return Symbols(sorted(added), sorted(changed), sorted(removed), sorted(uses))


def _jobs() -> int:
    """Processes for parsing: PORTTRACK_JOBS, else the cores this process may run on (at most 8:
    each holds its own parse trees and `git cat-file`)."""
    value = os.environ.get("PORTTRACK_JOBS", "").strip()
    if value.isdigit() and int(value) > 0:
        return int(value)
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return max(1, min(cores, 8))
