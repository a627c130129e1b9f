"""Benchmark: `porttrack audit` of 300 queue entries against a tree of the real port's size.

    python benchmarks/audit.py                    # synthetic 1,500-file, 250k-line C++ tree (benchmarks/probe.py's)
    python benchmarks/audit.py --tree PATH        # a git work tree of your own (scopes src include tests)

Everything is measured in this one run. The baseline is one bare probe scan of the same
symbols over the same scope (the least any audit must do); the ratio printed is audit time
over that scan time, so it says what the rules, owners, headers and evidence cost on top.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from porttrack import audit, probe  # noqa: E402
from porttrack.queue import file as queuefile  # noqa: E402
from porttrack.config import load_config  # noqa: E402

_spec = importlib.util.spec_from_file_location("bench_probe", HERE / "probe.py")
bench_probe = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench_probe)


def queue_text(symbols: list[str], absent: list[str], n: int = 300, seed: int = 2) -> str:
    """n entries: each adds, changes or uses a few symbols; some use what earlier ones add; a series; paths that rules and rows catch."""
    rng = random.Random(seed)
    out = [
        '[queue]\nname = "bench"\nupstream = "vllm-project/vllm"\npin = "'
        + "0" * 40
        + '"\ntarget = "'
        + "f" * 40
        + '"\n'
    ]
    added_so_far: list[str] = []
    for i in range(1, n + 1):
        files = [f"vllm/v1/core/mod{rng.randrange(1500)}.py"]
        if i % 25 == 0:
            files = [f"vllm/v1/kv_offload/tier{i}.py"]
        if i % 40 == 0:
            files = ["docs/usage.md"]
        added = [rng.choice(absent)] if i % 3 == 0 else ([rng.choice(symbols)] if i % 7 == 0 else [])
        changed = rng.sample(symbols, 2) + ([rng.choice(absent)] if i % 5 == 0 else [])
        uses = [rng.choice(added_so_far)] if added_so_far and i % 4 == 0 else []
        added_so_far += added
        subject = f"[{i % 3 + 1}/N][Layout Refactor] stage" if i % 50 < 3 else f"[Core] change {i}"
        out.append(
            f'[[entry]]\nn = {i}\nsha = "{i:040x}"\npr = {40000 + i}\nsubject = "{subject} (#{40000 + i})"\n'
            f"files = {json.dumps(files)}\n"
            f"[entry.symbols]\nadded = {json.dumps(added)}\nchanged = {json.dumps(changed)}\nremoved = []\nuses = {json.dumps(uses)}\n"
        )
    out.append(
        '[[rule]]\nupstream = "vllm/v1/kv_offload/**"\nverdict = "inert"\nreason = "bench"\n'
        f'[[rule.gate]]\nid = "g"\nkind = "absent"\nprobe = "{absent[0]}"\nscope = ["src"]\ncontrol = "{symbols[0]}"\n'
    )
    return "\n".join(out)


def matrix_text(n_rows: int = 300, seed: int = 3) -> str:
    rng = random.Random(seed)
    rows = [
        "| ID | Item | Tier | Upstream code/tests | Our code | Our tests/evidence | Spike/spec | State | Owner |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    states = ["ACTIVE", "INVENTORIED", "DONE", "PARTIAL"]
    for i in range(n_rows):
        rows.append(
            f"| `ROW-{i}` | item | T1 | `vllm/v1/core/mod{rng.randrange(4000)}.py:{i}-{i + 40}` @ `e24d1b24` | — | — | — | `{rng.choice(states)}` | x |"
        )
    return "# Bench matrix\n\n" + "\n".join(rows) + "\n"


timed = bench_probe.timed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tree", type=Path, help="a git work tree (default: a synthetic one)")
    ap.add_argument("--entries", type=int, default=300)
    args = ap.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="porttrack-audit-bench-"))
    if args.tree:  # a clone beside the config: a config names no port root outside its own folder
        root = tmp / "tree"
        subprocess.run(["git", "clone", "-q", "--shared", str(args.tree.resolve()), str(root)], check=True)
    else:
        root = tmp / "tree"
        root.mkdir()
        t = time.perf_counter()
        bench_probe.synth_tree(root)
        print(f"synthetic tree built in {time.perf_counter() - t:.1f} s")
    scope = ["src", "include"]
    files = subprocess.run(
        ["git", "-C", str(root), "ls-files", "--", *scope], capture_output=True, text=True
    ).stdout.split()
    symbols = [s for s in bench_probe.pick_symbols(root, scope, 400) if not s.startswith("absent_")]
    absent = [f"AbsentThing{i}" for i in range(60)]

    work = tmp  # the config's folder holds the tree it names (docs/security.md)
    (work / "queue.toml").write_text(queue_text(symbols, absent, args.entries))
    (work / "matrix.md").write_text(matrix_text())
    (work / "porttrack.toml").write_text(
        f'[upstream]\npaths = ["vllm/"]\n[port]\nroot = "{root}"\nscopes = {{ code = ["src", "include"], tests = ["tests"] }}\n'
        f'[owners]\nmatrices = []\n[cache]\ndir = "{tmp / "cache"}"\n'
        "[[map]]\nupstream = 'vllm/(?P<rest>.+)\\.py'\nport = [\"src/{rest}.cpp\"]\n"
    )
    cfg = load_config(work / "porttrack.toml")
    qf = queuefile.load(work / "queue.toml")
    q = qf.queue
    all_syms = sorted(
        {s for e in q.entries for s in [*e.symbols.added, *e.symbols.changed, *e.symbols.removed, *e.symbols.uses]}
    )
    print(f"tree: {root}  files in scope: {len(files)}  entries: {len(q.entries)}  distinct symbols: {len(all_syms)}")

    def scan():
        return probe.scan(
            root,
            all_syms,
            scope=scope,
            tests_scope=cfg.tests_scope,
            exclude=[],
            rev=None,
            renames={},
            strip_leading_underscore=True,
            cache_dir=tmp / "cache",
        )

    cold_scan, _ = timed(scan)
    warm_scan, _ = timed(scan, repeat=3)
    run = lambda: audit.audit(cfg, q, where=lambda n: f"queue.toml:{queuefile.line_of(qf, n)}")  # noqa: E731
    warm_audit, result = timed(run, repeat=3)
    write_t, _ = timed(lambda: audit.write(queuefile.load(work / "queue.toml"), result, "queue.toml"))
    tally: dict[str, int] = {}
    for r in result.results:
        tally[r.verdict] = tally.get(r.verdict, 0) + 1

    print(f"verdicts: {', '.join(f'{k} {v}' for k, v in sorted(tally.items()))}")
    print(f"bare probe scan of the same symbols: cold {cold_scan:.3f} s, warm {warm_scan:.3f} s")
    print(
        f"audit of {len(q.entries)} entries (warm): {warm_audit:.3f} s = {warm_audit / max(warm_scan, 1e-9):.2f}x the bare scan, "
        f"{1000 * warm_audit / len(q.entries):.2f} ms per entry"
    )
    print(f"audit --write into the queue document (every entry, one model rebuild): {write_t:.3f} s")


if __name__ == "__main__":
    main()
