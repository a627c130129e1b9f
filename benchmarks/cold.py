"""Benchmark: porttrack on a fresh clone (empty cache) and again (warm) against one `git grep` pass.

    python benchmarks/cold.py --tree PATH --scope src include          # a real port, read only
    python benchmarks/cold.py --tree PATH --scope src include --times 10   # a tree 10x its size
    python benchmarks/cold.py ... --porttrack OTHER_CHECKOUT           # time another porttrack (before/after)
    python benchmarks/cold.py --tree PORT --only real --upstream UP --range A..B   # a real queue, as a user makes it
    python benchmarks/cold.py --tree PORT --only real-write --upstream UP --range A..B   # just its cold audit --write

Every figure is a whole process (`python -m porttrack ...`: interpreter, imports, git, cache),
the median of `--repeat` runs; cold runs start each with an empty cache folder
(PORTTRACK_CACHE_DIR), warm runs reuse the folder the cold run filled. The baseline is one
`git grep -c -w -E 'a|b|…'` pass over the same names and scope, timed in the same run. Work:
`check` with 3, 50 and 600 gates; `probe` of 300 symbols; `audit` of 150 entries. Memory is each
command's peak resident set (the largest of the process and the parse workers it waited for).
The tree is not written to: configs and queues live in a temp folder; `--times N` builds a git
tree holding N renamed copies of the scope, in the temp folder, or in `--replica DIR`, where it
is kept and used again by the next run (117 copies of a 599-file scope: a 70,000-file tree).

porttrack runs as an installed package does, from compiled bytecode: the checkout timed is
compiled once, before any timing, into its `__pycache__` folders (whatever PYTHONDONTWRITEBYTECODE
says), so no timed process compiles porttrack's sources.

It also compares the two strategies on the probe's symbols, in this process: a grep-first scan
(this checkout) against parsing and indexing every file (`codemask.index_file`, the strategy
before), and prints how many symbols got identical counts and hits.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))
_spec = importlib.util.spec_from_file_location("bench_probe", HERE / "probe.py")
bench_probe = importlib.util.module_from_spec(_spec)  # type: ignore[arg-type]
_spec.loader.exec_module(bench_probe)  # type: ignore[union-attr]
_spec = importlib.util.spec_from_file_location("bench_audit", HERE / "audit.py")
bench_audit = importlib.util.module_from_spec(_spec)  # type: ignore[arg-type]
_spec.loader.exec_module(bench_audit)  # type: ignore[union-attr]

GIT_ENV = dict(
    os.environ, GIT_AUTHOR_NAME="b", GIT_AUTHOR_EMAIL="b@b", GIT_COMMITTER_NAME="b", GIT_COMMITTER_EMAIL="b@b"
)


def run(cmd: list[str], env: dict, cwd: Path) -> tuple[float, float, int]:
    """(wall seconds, CPU seconds, peak RSS in MiB) of one process (and the children it waited for)."""
    t = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - t
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    proc.stderr.close()  # type: ignore[union-attr]
    rc = os.waitstatus_to_exitcode(status)
    if rc not in (0, 1):
        sys.exit(f"{' '.join(cmd[:6])} … exited {rc}:\n{err[-2000:]}")
    return elapsed, usage.ru_utime + usage.ru_stime, usage.ru_maxrss // 1024


def grep_pass(tree: Path, names: list[str], scope: list[str]) -> tuple[float, float]:
    """Median (wall, CPU) seconds of one `git grep -c -w -E` alternation pass."""
    cmd = ["git", "-C", str(tree), "grep", "-c", "-w", "-E", "|".join(names), "--", *scope]
    runs = [run(cmd, dict(os.environ), tree) for _ in range(3)]
    return statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)


def cold_warm(
    cmd: list[str], env: dict, cwd: Path, work: Path, repeat: int
) -> tuple[tuple[float, float], tuple[float, float], int]:
    """Median (wall, CPU) seconds cold and warm, and the peak RSS of the cold runs (MiB)."""
    cold, warm, rss = [], [], 0
    for i in range(repeat):
        cache = work / f"cache-{time.monotonic_ns()}-{i}"
        e = dict(env, PORTTRACK_CACHE_DIR=str(cache))
        t, cpu, m = run(cmd, e, cwd)
        cold.append((t, cpu))
        rss = max(rss, m)
        warm.append(run(cmd, e, cwd)[:2])
        shutil.rmtree(cache, ignore_errors=True)
    med = lambda xs: (statistics.median(x[0] for x in xs), statistics.median(x[1] for x in xs))  # noqa: E731
    return med(cold), med(warm), rss


def line(what: str, cold, warm, g, rss: int) -> str:
    """One result line: wall seconds and ratio to git grep, then the same in CPU seconds."""
    return (
        f"{what}: cold {cold[0]:6.2f} s ({cold[0] / g[0]:5.1f}x grep), warm {warm[0]:5.2f} s ({warm[0] / g[0]:5.1f}x); "
        f"git grep {g[0]:.3f} s | cpu: cold {cold[1]:5.2f} s ({cold[1] / max(g[1], 0.01):5.1f}x), "
        f"warm {warm[1]:5.2f} s, grep {g[1]:.3f} s | peak {rss} MiB"
    )


def installed_env(checkout: Path) -> dict:
    """The environment that runs `checkout` as an installed porttrack: its bytecode compiled, here and
    untimed, into its own `__pycache__` folders, where every timed process finds it."""
    env = dict(os.environ, PYTHONPATH=str(checkout))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("PYTHONPYCACHEPREFIX", None)
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(checkout / "porttrack")],
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return env


def replicate(src: Path, scope: list[str], times: int, dest: Path) -> Path:
    """A git tree with `times` copies of the scope's tracked files, each under renamed folders and
    with a line of its own, so every copy is a file version to parse (the cache shares none)."""
    files = subprocess.run(
        ["git", "-C", str(src), "ls-files", "-z", "--", *scope], capture_output=True, check=True
    ).stdout
    paths = [p for p in files.decode().split("\0") if p]
    dest.mkdir(parents=True)
    for k in range(times):
        for p in paths:
            top, _, rest = p.partition("/")
            out = dest / top / f"copy{k}" / rest
            out.parent.mkdir(parents=True, exist_ok=True)
            try:
                data = (src / p).read_bytes()
            except OSError:
                continue  # a link or a submodule
            out.write_bytes(data + f"\n// copy {k}\n".encode())  # a blob of its own: parsed, not deduplicated
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "replicated"]):
        subprocess.run(["git", "-C", str(dest), *args], check=True, env=GIT_ENV, stdout=subprocess.DEVNULL)
    return dest


def check_queue(names: list[str], control: str) -> str:
    """Deferred entries with one `absent` gate each, probing `names`."""
    out = ['[queue]\nname = "bench"\n']
    for n, name in enumerate(names):
        out.append(
            f'[[entry]]\nn = {n + 1}\nsha = "{n:040x}"\nsubject = "Change {n} (#{1000 + n})"\n'
            f'verdict = "inert"\nreason = "nothing reads it"\n'
            f'[[entry.gate]]\nid = "g{n}"\nkind = "absent"\nprobe = "{name}"\ncontrol = "{control}"\n'
        )
    return "\n".join(out)


def config(tree: Path, scope: list[str], queue: Path) -> str:
    return (
        f'[upstream]\npaths = ["vllm/"]\n[port]\nroot = "{tree}"\nscopes = {{ code = {json.dumps(scope)}, tests = [] }}\n'
        f'[queue]\nfile = "{queue}"\n[owners]\nmatrices = []\n'
        "[[map]]\nupstream = 'vllm/(?P<rest>.+)\\.py'\nport = [\"src/{rest}.cpp\"]\n"
    )


def compare_strategies(tree: Path, names: list[str], scope: list[str], work: Path) -> str:
    """Grep-first scan against parsing and indexing every file, on the same names."""
    from porttrack import probe
    from porttrack.evidence import codemask
    from porttrack.probe.listing import under
    from porttrack.probe.classify import count
    from porttrack.probe.files import File

    t = time.perf_counter()
    s = probe.scan(tree, names, scope=scope, cache_dir=work / "cmp-cache")
    grep_first = time.perf_counter() - t
    t = time.perf_counter()
    listed = subprocess.run(
        ["git", "-C", str(tree), "ls-files", "-s", "-z", "--", *scope], capture_output=True, check=True
    ).stdout
    idx = []
    for rec in listed.split(b"\0"):
        if not rec:
            continue
        meta, _, path = rec.partition(b"\t")
        if meta.split()[0] not in (b"100644", b"100755"):
            continue
        p = path.decode()
        data = (tree / p).read_bytes()
        if b"\0" in data[:8000] or any(part.startswith(".") for part in p.split("/")[:-1]):
            continue
        try:
            data.decode()
        except UnicodeDecodeError:
            continue
        f = File(p, "", codemask.lang_for(p), data, scoped=under(p, scope))
        idx.append((f, codemask.index_file(data, f.lang)))
    everything = time.perf_counter() - t
    same = 0
    for name in names:
        vs = probe.variants(name)
        want = count(
            name,
            "word",
            vs,
            [(f.path, v, fi.occurrences[v], f) for f, fi in idx for v in vs if v in fi.occurrences],
            [],
        )
        got = s.counts[name]
        key = lambda h: (h.path, h.line, h.col, h.kind, h.why, h.name)  # noqa: E731
        same += got.numbers() == want.numbers() and [key(h) for h in got.hits] == [key(h) for h in want.hits]
    return (
        f"strategies: grep-first scan {grep_first:.2f} s (parsed {s.parsed} of {s.files_scanned} files), "
        f"index every file {everything:.2f} s; identical counts and hits for {same}/{len(names)} symbols"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tree", type=Path, required=True, help="a git work tree (read only)")
    ap.add_argument("--scope", nargs="+", default=["src", "include"])
    ap.add_argument("--times", type=int, default=1, help="benchmark a tree holding this many copies of the scope")
    ap.add_argument("--replica", type=Path, help="with --times: build the tree here once, and reuse it")
    ap.add_argument("--porttrack", type=Path, default=REPO, help="the porttrack checkout to time (default: this one)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--gates", type=int, nargs="+", default=[3, 50, 600])
    ap.add_argument(
        "--only",
        nargs="+",
        choices=["check", "probe", "audit", "compare", "real", "real-write"],
        default=["check", "probe", "audit", "compare"],
    )
    ap.add_argument("--upstream", type=Path, help="with --only real: the upstream checkout the port follows")
    ap.add_argument("--range", dest="rev_range", help="with --only real: the upstream range to queue, A..B")
    args = ap.parse_args()
    if {"real", "real-write"} & set(args.only) and not (args.upstream and args.rev_range):
        ap.error("--only real and real-write need --upstream and --range")

    work = Path(tempfile.mkdtemp(prefix="porttrack-cold-"))
    tree = args.tree.resolve()
    scope = list(args.scope)
    if args.times > 1 and args.replica and (args.replica / ".git").is_dir():
        tree = args.replica.resolve()  # built by an earlier run
    elif args.times > 1:
        tree = replicate(tree, scope, args.times, args.replica or work / "tree")
    else:  # a clone, so the queue and config can lie inside the port as check wants them
        subprocess.run(["git", "clone", "-q", "--shared", str(tree), str(work / "tree")], check=True)
        tree = work / "tree"
    files = subprocess.run(
        ["git", "-C", str(tree), "ls-files", "--", *scope], capture_output=True, text=True
    ).stdout.split()
    size = sum((tree / f).stat().st_size for f in files if (tree / f).is_file())
    env = installed_env(args.porttrack.resolve())
    py = [sys.executable, "-m", "porttrack"]
    symbols = bench_probe.pick_symbols(tree, scope, max(600, max(args.gates)))
    control = symbols[0]
    print(
        f"tree {tree} scope {' '.join(scope)}: {len(files)} files, {size / 1e6:.1f} MB; porttrack {args.porttrack}; "
        f"median of {args.repeat}"
    )

    for n in args.gates if "check" in args.only else []:
        names = symbols[1 : n + 1]
        q = tree / "queue" / f"bench-{n}.toml"
        q.parent.mkdir(exist_ok=True)
        q.write_text(check_queue(names, control))
        (work / f"check-{n}.toml").write_text(config(tree, scope, q.relative_to(tree)))
        cold, warm, rss = cold_warm(
            [*py, "check", "--config", str(work / f"check-{n}.toml")], env, work, work, args.repeat
        )
        print(line(f"check {n:>3} gates", cold, warm, grep_pass(tree, [*names, control], scope), rss), flush=True)

    names = symbols[:300]
    if "probe" in args.only:
        probe_bench(py, env, tree, scope, names, work, args.repeat)
    if "audit" in args.only:
        audit_bench(py, env, tree, scope, symbols, work, args.repeat)
    if "compare" in args.only:
        print(compare_strategies(tree, names, scope, work))
    if {"real", "real-write"} & set(args.only):
        real_queue_bench(py, env, tree, args.upstream.resolve(), args.rev_range, work, args.repeat, "real" in args.only)
    shutil.rmtree(work, ignore_errors=True)


def real_queue_bench(
    py: list[str], env: dict, tree: Path, upstream: Path, rev_range: str, work: Path, repeat: int, more: bool
) -> None:
    """The first hour on a real pair: `init` and `queue build` as a user runs them (untimed), then
    the first `audit --write`, timed once (the cache holds what the build parsed, nothing audit
    reads: the cycle's cold audit); with `more`, `check` and `audit` of that queue, cold and warm,
    the baseline for `check` being one `git grep` pass over the names its gates probe."""
    setup = dict(env, PORTTRACK_CACHE_DIR=str(work / "cache-setup"))
    for cmd in (["init", "--upstream", str(upstream)], ["queue", "build", "--range", rev_range, "--name", "real"]):
        proc = subprocess.run([*py, *cmd], cwd=tree, env=setup, capture_output=True, text=True)
        if proc.returncode not in (0, 1):
            sys.exit(f"porttrack {' '.join(cmd)} exited {proc.returncode}:\n{proc.stderr[-2000:]}")
    t, cpu, rss = run([*py, "audit", "--write"], setup, tree)
    print(f"audit --write, real queue, cold: {t:6.2f} s wall, {cpu:6.2f} s cpu, peak {rss} MiB", flush=True)
    if not more:
        return
    for args in (["add", "-A"], ["commit", "-qm", "queue"]):
        subprocess.run(["git", "-C", str(tree), *args], check=True, env=GIT_ENV, stdout=subprocess.DEVNULL)
    cfg = tomllib.loads((tree / "porttrack.toml").read_text())
    scope = list(cfg["port"]["scopes"]["code"])
    (queue,) = (tree / "queue").glob("real*.toml")
    entries = tomllib.loads(queue.read_text()).get("entry", [])
    gates = [g for e in entries for g in e.get("gate", []) if g.get("probe") and not g.get("regex")]
    names = sorted({g["probe"] for g in gates})
    print(f"real queue: {len(entries)} entries over {rev_range}, {len(gates)} probed gates on {len(names)} names")
    cold, warm, rss = cold_warm([*py, "check"], env, tree, work, repeat)
    print(line(f"check, real queue ({len(gates)} gates)", cold, warm, grep_pass(tree, names, scope), rss), flush=True)
    cold, warm, rss = cold_warm([*py, "audit"], env, tree, work, repeat)
    print(
        f"audit, real queue ({len(entries)} entries): cold {cold[0]:6.2f} s, warm {warm[0]:5.2f} s "
        f"| cpu: cold {cold[1]:5.2f} s, warm {warm[1]:5.2f} s | peak {rss} MiB",
        flush=True,
    )


def probe_bench(
    py: list[str], env: dict, tree: Path, scope: list[str], names: list[str], work: Path, repeat: int
) -> None:
    (work / "probe.toml").write_text(config(tree, scope, Path("queue/none.toml")))
    cmd = [*py, "probe", "--config", str(work / "probe.toml"), *[a for s in scope for a in ("--scope", s)], *names]
    cold, warm, rss = cold_warm(cmd, env, tree, work, repeat)
    print(line("probe 300 symbols", cold, warm, grep_pass(tree, names, scope), rss), flush=True)


def audit_bench(
    py: list[str], env: dict, tree: Path, scope: list[str], symbols: list[str], work: Path, repeat: int
) -> None:
    present = [s for s in symbols if not s.startswith("absent_")]
    qa = tree / "queue" / "audit.toml"
    qa.parent.mkdir(exist_ok=True)
    qa.write_text(bench_audit.queue_text(present, [f"AbsentThing{i}" for i in range(60)], 150))
    (work / "audit-cfg.toml").write_text(config(tree, scope, qa.relative_to(tree)))
    cold, warm, rss = cold_warm([*py, "audit", "--config", str(work / "audit-cfg.toml")], env, work, work, repeat)
    text = qa.read_text()
    names_a = sorted(
        {
            n
            for ln in text.splitlines()
            if ln.startswith(("added =", "changed =", "uses ="))
            for n in json.loads(ln.split("=", 1)[1])
        }
    )
    print(
        line(f"audit 150 entries ({len(names_a)} names)", cold, warm, grep_pass(tree, names_a, scope), rss), flush=True
    )


if __name__ == "__main__":
    main()
