"""A queue of N entries: `check` and `audit --entries 5 --write` should cost what they touch, not N.

Builds a small real port (git) with a generated queue of --entries entries (every 10th carries a
gate), then times each command as a real process and reports its peak memory, against the same
commands on a 1,000-entry queue (the baseline: proportional loading keeps the ratio near 1).

    python benchmarks/big_queue.py [--entries 100000] [--work DIR]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GIT_ENV = {
    "GIT_AUTHOR_NAME": "b",
    "GIT_AUTHOR_EMAIL": "b@example.invalid",
    "GIT_COMMITTER_NAME": "b",
    "GIT_COMMITTER_EMAIL": "b@example.invalid",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
}
CONFIG = '[upstream]\nname = "up"\npaths = ["vllm/"]\n\n[port]\nroot = "."\nscopes = { code = ["src"] }\n\n[queue]\nfile = "queue/big.toml"\n'


def queue_text(n: int) -> str:
    out = ['[queue]\nname = "big"\nupstream = "up"\npaths = ["vllm/"]\n']
    for i in range(1, n + 1):
        sha = f"{i:040x}"
        out.append(
            f'\n[[entry]]\nn = {i}\nsha = "{sha}"\nsubject = "[Core] change {i} (#{i})"\n'
            f'files = ["vllm/m{i % 50}.py"]\ndisposition = "PORT-NOW"\nverdict = "unclassified"\n'
            f'reason = ""\n\n[entry.symbols]\nadded = []\nchanged = ["f{i % 50}"]\nremoved = []\nuses = []\n'
        )
        if i % 10 == 0:
            out.append(f'\n[[entry.gate]]\nid = "g{i}"\nkind = "present"\nprobe = "f{i % 50}"\nscope = ["src"]\n')
    return "".join(out)


def make_port(where: Path, n: int) -> Path:
    port = where / f"port{n}"
    (port / "src").mkdir(parents=True)
    (port / "queue").mkdir()
    for k in range(50):
        (port / "src" / f"m{k}.cpp").write_text(
            f"// Ported from: vllm/m{k}.py\nint f{k}() {{ return {k}; }}\nint use{k}() {{ return f{k}(); }}\n"
        )
    (port / "porttrack.toml").write_text(CONFIG)
    (port / "queue" / "big.toml").write_text(queue_text(n))
    env = dict(os.environ, **GIT_ENV)
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "port"]):
        subprocess.run(["git", "-C", str(port), *args], env=env, check=True, capture_output=True)
    return port


def timed(port: Path, *args: str) -> tuple[float, float, float]:
    """(wall seconds, CPU seconds, peak RSS in MiB) of one porttrack process; CPU time is the
    figure to compare on a shared machine, where wall time also counts other people's work."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), NO_COLOR="1", PORTTRACK_CACHE_DIR=str(port.parent / "cache"))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "porttrack", *args], cwd=port, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode not in (0, 1):
        sys.exit(f"porttrack {' '.join(args)} exited {proc.returncode}: {proc.stderr.strip()[-300:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, max(after.ru_maxrss, before.ru_maxrss) / 1024


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--entries", type=int, default=100_000)
    ap.add_argument("--work", type=Path, default=None)
    opt = ap.parse_args()
    work = opt.work or Path(tempfile.mkdtemp(prefix="porttrack-bigq-"))
    rows = {}
    for n in (1_000, opt.entries):
        port = make_port(work, n)
        timed(port, "check")  # warms the parse cache: the figures are for the queue, not the tree
        rows[n] = {cmd: timed(port, *cmd.split()) for cmd in ("check", "audit --entries 5 --write")}
    print(f"big_queue: {opt.entries:,}-entry queue vs the 1,000-entry baseline (same port, warm cache)")
    for cmd in ("check", "audit --entries 5 --write"):
        (_w1, c1, m1), (wn, cn, mn) = rows[1_000][cmd], rows[opt.entries][cmd]
        print(
            f"  {cmd:26s} cpu {cn:7.2f} s (wall {wn:7.2f} s) {mn:6.0f} MiB   "
            f"baseline cpu {c1:5.2f} s {m1:4.0f} MiB   ratio {cn / c1:5.1f}x cpu"
        )


def append_figures(n: int) -> tuple[float, float]:
    """CPU seconds to append and save n new entries: through the text emitter (`queuefile.encode`'s
    `entry_text`, what `queue build` and `queue import` use on a file whose document was never built)
    and through tomlkit tables (the same file with its document built first). The emitter stays only
    while this shows it is needed."""
    sys.path.insert(0, str(ROOT))
    from porttrack.queue import file as queuefile
    from porttrack.model import Entry, Symbols

    out = []
    for build_document in (False, True):
        with tempfile.TemporaryDirectory(prefix="porttrack-append-") as d:
            path = Path(d) / "q.toml"
            path.write_text('[queue]\nname = "big"\nupstream = "up"\npaths = ["vllm/"]\n')
            qf = queuefile.load(path)
            new = [
                Entry(n=i, sha=f"{i:040x}", subject=f"[Core] change {i} (#{i})", files=[f"vllm/m{i % 50}.py"],
                      disposition="PORT-NOW", verdict="unclassified", symbols=Symbols(changed=[f"f{i % 50}"]))
                for i in range(1, n + 1)
            ]  # fmt: skip
            t0 = time.process_time()
            if build_document:
                qf.doc  # noqa: B018 - appends then go through tomlkit tables
            queuefile.append_entries(qf, new)
            queuefile.save(qf)
            out.append(time.process_time() - t0)
    return out[0], out[1]


if __name__ == "__main__":
    main()
    n = 10_000
    text, tables = append_figures(n)
    print(f"  append {n:,} entries and save: text emitter cpu {text:.2f} s, tomlkit tables cpu {tables:.2f} s "
          f"({tables / text:.1f}x): the emitter is {'needed' if tables > 1.5 * text else 'not needed'}")  # fmt: skip
