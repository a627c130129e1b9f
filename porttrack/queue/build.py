"""queue build / refresh: turn an upstream walk into numbered queue entries."""

from __future__ import annotations

import re
from pathlib import Path
from collections.abc import Callable

from porttrack import gitio
from porttrack.queue import file as queuefile
from porttrack.queue import walk
from porttrack import paths as pathrules
from porttrack.cache import cache_root
from porttrack.config import Config, inside
from porttrack.errors import UserError
from porttrack.model import Entry, QueueMeta


def _upstream(cfg: Config) -> Path:
    if cfg.upstream_repo is None:
        raise UserError(f"{cfg.path}: [upstream] repo is not set; queue build needs a local upstream checkout.")
    return gitio.require_repo(cfg.upstream_repo, f"{cfg.path}: [upstream] repo")


def entries_from(result: walk.WalkResult, paths: list[str], first_n: int) -> list[Entry]:
    """One entry per walked commit, numbered from `first_n`, keeping only the files under `paths`."""
    roots = pathrules.norm_all(paths)  # as in the walk: no paths (or ".") mirror the whole tree

    def mirrored(p: str) -> bool:
        return pathrules.mirrored(p, roots)

    entries = []
    for i, c in enumerate(result.commits):
        files = [f for f in c.files if mirrored(f.path) or (f.old_path and mirrored(f.old_path))]
        unread = set(c.unreadable)
        entries.append(
            Entry(
                n=first_n + i,
                sha=c.sha,
                subject=c.subject,
                date=c.date,
                pr=c.pr,
                reverts=c.reverts,
                files=[f.path for f in files],
                renames={f.path: f.old_path for f in files if f.old_path and f.old_path != f.path},
                stat={f.path: [f.insertions, f.deletions] for f in files if f.path not in unread},
                unreadable=list(c.unreadable),
                symbols=c.symbols,
            )
        )
    return entries


def _walk(cfg: Config, repo: Path, rev_range: str, progress, skip_missing: bool = False) -> walk.WalkResult:
    try:
        return walk.walk(
            repo,
            rev_range,
            cfg.upstream_paths,
            pr_pattern=cfg.pr_pattern,
            first_parent=cfg.merges == "first-parent",
            cache_dir=cache_root(cfg.cache_dir or None),
            progress=progress,
            skip_missing=skip_missing,
        )
    finally:
        if hasattr(progress, "close"):
            progress.close()


def default_name(target: str) -> str:
    return f"sync-{target[:10]}"


def _destination(cfg: Config, queue: Path | None, stem: str) -> Path:
    """The new queue file: --queue, else queue/<stem>.toml; inside the port root and not there yet."""
    path = queue if queue is not None else Path(f"queue/{stem}.toml")
    rel = path if not path.is_absolute() else path.resolve()
    if path.is_absolute():
        try:
            rel = rel.relative_to(cfg.port_root.resolve())
        except ValueError:
            raise UserError(f"queue path {path} lies outside the port root {cfg.port_root}.") from None
    full = inside(cfg.port_root, str(rel), "queue path")
    if full.exists():
        raise UserError(f"{full} already exists; use `porttrack queue refresh` to append to it.")
    if len(full.name.encode()) > 255:
        raise UserError(
            f"queue file name {full.name[:40]}... is longer than a file name may be; pass a shorter --name."
        )
    return full


def build(
    cfg: Config,
    rev_range: str,
    *,
    name: str | None = None,
    queue: Path | None = None,
    progress: Callable | None = None,
    skip_missing: bool = False,
) -> tuple[Path, int]:
    """Walk the range and write a new queue file: (its path, the number of entries)."""
    repo = _upstream(cfg)
    if ".." not in rev_range:
        raise UserError(f"--range {rev_range!r} must look like PIN..TARGET.")
    if name is not None and not re.fullmatch(r"\w[\w.-]*", name):
        raise UserError(
            f"--name {name!r} may hold only letters, digits, '.', '_' and '-', and starts with a letter or digit."
        )
    # refuse a bad or taken destination before walking anything: the default name needs only the target
    target = gitio.rev_parse(repo, rev_range.rsplit("..", 1)[1].strip()) if name is None and queue is None else None
    if queue is not None or name is not None or target is not None:
        _destination(cfg, queue, name or (default_name(target) if target else "x"))
    result = _walk(cfg, repo, rev_range, progress, skip_missing)
    stem = name or default_name(result.target)
    full = _destination(cfg, queue, stem)
    meta = QueueMeta(
        name=f"{stem} {result.pin[:10]}..{result.target[:10]}",
        upstream=cfg.upstream_name or repo.name,
        pin=result.pin,
        target=result.target,
        paths=[pathrules.folder(p) for p in cfg.upstream_paths],
        range_commits=result.total_commits,
    )
    qf = queuefile.new(full, meta)
    entries = entries_from(result, cfg.upstream_paths, 1)
    queuefile.append_entries(qf, entries)
    queuefile.save(qf)
    return full, len(entries)


def refresh(
    cfg: Config,
    *,
    target: str | None = None,
    queue: Path | None = None,
    progress: Callable | None = None,
    skip_missing: bool = False,
) -> tuple[Path, int]:
    from porttrack.config import queue_path

    path = queue_path(cfg, queue)
    qf = queuefile.load(path, lock=True)  # held to the save: a concurrent audit --write waits, not loses
    try:
        repo = _upstream(cfg)
        old = qf.queue.meta.target
        if not old:
            raise UserError(f"{path}: [queue] target is empty, so there is nothing to refresh from.")
        new_target = gitio.rev_parse(repo, target or "HEAD")
        if new_target is None:
            raise UserError(f"--target {target or 'HEAD'!r} is no commit of the upstream repository {repo}.")
        if gitio.rev_parse(repo, old) is None:
            raise UserError(
                f"{path}: recorded target {old[:12]} is not in the upstream repository {repo} (shallow clone?)."
            )
        if new_target == old:
            return path, 0
        result = _walk(cfg, repo, f"{old}..{new_target}", progress, skip_missing)
        known = {e.sha for e in qf.queue.entries}
        fresh = [c for c in result.commits if c.sha not in known]
        result.commits = fresh
        entries = entries_from(result, qf.queue.meta.paths or cfg.upstream_paths, qf.queue.next_n)
        if entries:
            queuefile.append_entries(qf, entries)
        # counted over pin..target rather than added up, so a hand-reset target is not counted twice
        pin = qf.queue.meta.pin
        if pin and gitio.rev_parse(repo, pin):
            first_parent = ["--first-parent"] if cfg.merges == "first-parent" else []
            total = int(gitio.git(repo, "rev-list", "--count", *first_parent, f"{pin}..{new_target}").decode())
        else:
            total = qf.queue.meta.range_commits + result.total_commits
        queuefile.set_meta(qf, target=new_target, range_commits=total)
        queuefile.save(qf)
        return path, len(entries)
    finally:
        queuefile.release(qf)
