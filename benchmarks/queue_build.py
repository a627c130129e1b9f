"""queue build speed (docs/design.md §11): porttrack's range walk against one streamed `git log -p`.

    python benchmarks/queue_build.py --repo ../vllm --range A..B --paths vllm/ tests/
    python benchmarks/queue_build.py            # a synthetic upstream of --commits commits

Prints, from one run: the walk with a cold parse cache and again warm, one streamed
`git log -p` over the same range (and, for reference, limited to the paths), their ratios
(target ≤ 1.5×), and a `porttrack queue refresh` with nothing new (target ≤ 1 s), timed
through the real CLI in a subprocess.
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from porttrack.queue.walk import _jobs, walk


def stream_git_log(repo: Path, rev_range: str, first_parent: bool, paths: list[str] | None = None) -> tuple[float, int]:
    """Seconds to read one `git log -p` of the range through a pipe, and the bytes it produced."""
    args = ["git", "-C", str(repo), "log", "-p", "--no-color", *(["--first-parent"] if first_parent else []), rev_range]
    if paths:
        args += ["--", *paths]
    start = time.perf_counter()
    proc = subprocess.Popen(args, stdout=subprocess.PIPE)
    size = 0
    while chunk := proc.stdout.read(1 << 16):
        size += len(chunk)
    proc.wait()
    return time.perf_counter() - start, size


def synthetic_repo(root: Path, commits: int, seed: int = 7) -> tuple[Path, str]:
    """An upstream of `commits` commits editing Python and C++ files, built with git fast-import."""
    rnd = random.Random(seed)
    repo = root / "upstream"
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    files = {f"pkg/mod{i}.py": [f"def f{i}_{j}(x):\n    return x + {j}\n" for j in range(60)] for i in range(40)}
    files.update(
        {f"csrc/k{i}.cpp": [f"int k{i}_{j}(int x) {{ return x + {j}; }}\n" for j in range(60)] for i in range(10)}
    )
    out = []
    for n in range(commits + 1):
        if n == 0:
            touched = list(files)
        elif n % 5 == 0:
            touched = ["docs/notes.md"]
        else:
            touched = rnd.sample(sorted(files), rnd.randint(1, 3))
        ops = []
        for path in touched:
            if path == "docs/notes.md":
                data = f"note {n}\n".encode()
            else:
                body = files[path]
                j = rnd.randrange(len(body))
                if path.endswith(".py"):
                    body[j] = body[j].replace("return x", f"return helper_{n}(x)") if rnd.random() < 0.5 else body[j]
                    body.insert(j, f"def added_{n}(y):\n    return y * {n}\n")
                else:
                    body.insert(j, f"int added_{n}(int y) {{ return y * {n}; }}\n")
                data = "".join(body).encode()
            ops.append(
                b"M 100644 inline " + path.encode() + b"\ndata " + str(len(data)).encode() + b"\n" + data + b"\n"
            )
        msg = f"change {n} (#{1000 + n})".encode()
        stamp = f"{1_700_000_000 + n * 3600} +0000".encode()
        out.append(
            b"commit refs/heads/main\ncommitter b <b@example.invalid> "
            + stamp
            + b"\ndata "
            + str(len(msg)).encode()
            + b"\n"
            + msg
            + b"\n"
            + b"".join(ops)
            + b"\n"
        )
    subprocess.run(["git", "-C", str(repo), "fast-import", "--quiet"], input=b"".join(out), check=True)
    first = subprocess.run(
        ["git", "-C", str(repo), "rev-list", "--max-parents=0", "main"], capture_output=True, text=True
    ).stdout.strip()
    return repo, f"{first}..main"


def time_refresh(repo: Path, rev_range: str, paths: list[str], work: Path) -> tuple[str, float | None, float | None]:
    """Build a queue with the real CLI, then time `queue refresh` with nothing new."""
    port = work / "port"
    port.mkdir()
    bare = subprocess.run(["git", "-C", str(repo), "rev-parse", "--is-bare-repository"], capture_output=True, text=True)
    if bare.stdout.strip() == "true":
        # queue build wants a checkout; a shared clone without a work tree borrows the objects.
        clone = work / "checkout"
        subprocess.run(["git", "clone", "-q", "--shared", "--no-checkout", str(repo), str(clone)], check=True)
        repo = clone
    (port / "porttrack.toml").write_text(
        f'[upstream]\nrepo = "{repo}"\npaths = {list(paths) or [""]!r}\n'.replace("'", '"') + '\n[port]\nroot = "."\n'
    )
    # the cache lies outside the port, so the environment names it: a config names none there
    env = dict(os.environ, NO_COLOR="1", PORTTRACK_CACHE_DIR=str(work / "cli-cache"))
    cli = [sys.executable, "-m", "porttrack"]
    start = time.perf_counter()
    build = subprocess.run(
        [*cli, "queue", "build", "--range", rev_range, "--name", "bench"],
        cwd=port,
        env=env,
        capture_output=True,
        text=True,
    )
    build_s = time.perf_counter() - start
    if build.returncode != 0:
        return f"porttrack queue build failed: {build.stderr.strip()[-300:]}", None, None
    target = rev_range.split("..")[1]
    start = time.perf_counter()
    refresh = subprocess.run(
        [*cli, "queue", "refresh", "--target", target, "--queue", "queue/bench.toml"],
        cwd=port,
        env=env,
        capture_output=True,
        text=True,
    )
    refresh_s = time.perf_counter() - start
    if refresh.returncode != 0:
        return f"porttrack queue refresh failed: {refresh.stderr.strip()[-300:]}", build_s, None
    return refresh.stdout.strip(), build_s, refresh_s


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repo", type=Path, help="upstream git repository (default: a synthetic one)")
    ap.add_argument("--range", dest="rev_range", help="PIN..TARGET (default with --repo: TARGET~1500..HEAD)")
    ap.add_argument("--paths", nargs="*", default=None, help="mirrored upstream paths (default: the whole tree)")
    ap.add_argument("--commits", type=int, default=1500, help="size of the synthetic upstream")
    ap.add_argument("--all-parents", action="store_true", help="walk merges' side branches too")
    ap.add_argument("--no-cli", action="store_true", help="skip the CLI build+refresh timing (slow on big queues)")
    ap.add_argument("--jobs", type=int, help="parse processes for the walk (PORTTRACK_JOBS; default: the cores)")
    args = ap.parse_args()
    if args.jobs:
        os.environ["PORTTRACK_JOBS"] = str(args.jobs)

    with tempfile.TemporaryDirectory(prefix="porttrack-bench-") as tmp:
        work = Path(tmp)
        if args.repo is None:
            t = time.perf_counter()
            repo, rev_range = synthetic_repo(work, args.commits)
            print(f"synthetic upstream: {args.commits} commits built in {time.perf_counter() - t:.2f} s")
            paths = args.paths if args.paths is not None else ["pkg/", "csrc/"]
        else:
            repo = args.repo.resolve()
            rev_range = args.rev_range or "HEAD~1500..HEAD"
            paths = args.paths or []
        first_parent = not args.all_parents
        pin, target = (
            subprocess.run(["git", "-C", str(repo), "rev-parse", end], capture_output=True, text=True).stdout.strip()
            for end in rev_range.split("..")
        )
        rev_range = f"{pin}..{target}"  # fixed shas, so the CLI refresh below sees the same range
        print(
            f"repo {repo}\nrange {pin[:12]}..{target[:12]}  paths {' '.join(paths) or '(all)'}  "
            f"{'first-parent' if first_parent else 'all parents'}"
        )

        git_s, git_bytes = stream_git_log(repo, rev_range, first_parent)
        cache = work / "cache"
        t = time.perf_counter()
        cold = walk(repo, rev_range, paths, first_parent=first_parent, cache_dir=cache)
        cold_s = time.perf_counter() - t
        t = time.perf_counter()
        warm = walk(repo, rev_range, paths, first_parent=first_parent, cache_dir=cache)
        warm_s = time.perf_counter() - t
        git_paths_s, _ = stream_git_log(repo, rev_range, first_parent, paths) if paths else (git_s, 0)
        t = time.perf_counter()
        walk(repo, f"{target}..{target}", paths, first_parent=first_parent, cache_dir=cache)
        empty_s = time.perf_counter() - t

        touched = sum(len(c.files) for c in cold.commits)
        print(f"commits in range {cold.total_commits}, touching the paths {len(cold.commits)} ({touched} file changes)")
        print(f"git log -p, streamed:               {git_s:8.3f} s  ({git_bytes / 1e6:.1f} MB)")
        print(f"git log -p -- paths, streamed:      {git_paths_s:8.3f} s  (reference)")
        print(
            f"porttrack walk, cold parse cache:   {cold_s:8.3f} s  ({cold.parsed} blobs parsed, up to {_jobs()} processes)"
        )
        print(
            f"porttrack walk, warm parse cache:   {warm_s:8.3f} s  ({warm.parsed} blobs parsed, {warm.cached} file changes from cache)"
        )
        print(f"ratio cold / git log -p:            {cold_s / git_s:8.2f} x  (target <= 1.5)")
        print(f"ratio warm / git log -p:            {warm_s / git_s:8.2f} x  (target <= 1.5)")
        print(f"walk of an empty range (B..B):      {empty_s:8.3f} s")
        if args.no_cli:
            return 0
        note, build_s, refresh_s = time_refresh(repo, rev_range, paths, work)
        if refresh_s is None:
            print(f"CLI refresh not timed: {note}")
        else:
            print(f"porttrack queue build (CLI, cold):  {build_s:8.3f} s")
            print(f"porttrack queue refresh, nothing new (CLI): {refresh_s:.3f} s  (target <= 1 s; said: {note})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
