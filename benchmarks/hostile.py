"""Benchmark: what a pull request's hostile long lines cost `audit`, `check` and `queue import`.

    python benchmarks/hostile.py              # runs of 256 KiB and 512 KiB per line
    python benchmarks/hostile.py --kib 1024   # and a size of your own (a second run at twice it)

A port file of long runs of path characters (`a/a/a/...`, `a-a-a-...`, spaces, digits, brackets)
is committed to the demo pair, under a provenance label, a deferral word and plain comments; an
entry's subject and an imported report carry the same runs. The baseline, from the same run, is
the same commands over a file of the same size made of ordinary lines. Printed: each command's
seconds for both at each size. Twice the length should cost about twice the time (x2; less where
start-up dominates); a pattern that tries a match from every character of a run costs x4, as
`audit` did before its patterns started a match only where a token starts.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from porttrack import demo  # noqa: E402

_RUNS = ["a/", "a-", "a.", ".a", "a", " ", "0", "[", "(a", "x=True, "]


def hostile_lines(kib: int) -> list[str]:
    out = []
    for unit in _RUNS:
        run = unit * (kib * 1024 // len(unit))
        out += [f"// Ported from: {run}", f"// DEFERRED: {run} #12345", f"// {run}"]
    return out


def ordinary_lines(kib: int) -> list[str]:
    line = "// the block table keeps one row per request; see vllm/v1/core/kv_cache_manager.py @ 0123abcd"
    return [line] * (len(_RUNS) * 3 * kib * 1024 // len(line))


def report(n: int) -> str:
    """A tranche report whose count, label and cited span carry runs of digits, spaces and `(`."""
    return (
        "# PORT-NOW tranche 1 of `aaaaaaa000..bbbbbbb000`\n\n## 1. The answer\n\n| | Count |\n|---|---:|\n"
        f"| REAL_GAP | **1** {'0' * n} |\n\n## 3. The entries\n\n"
        "| # | upstream | vllm# | label | holds? | evidence |\n|---:|---|---|---|---|---|\n"
        f"| 01 | `1111111111` | 101 | REAL_GAP{' ' * n}**+** NA surface-absent | yes | `f{'(' * n}x)` |\n"
    )


def timed(args: list[str], cwd: Path, cache: Path) -> float:
    # the porttrack of this checkout, whatever the interpreter has installed
    env = {**os.environ, "PORTTRACK_CACHE_DIR": str(cache), "PYTHONPATH": str(HERE.parent)}
    t = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "porttrack", *args], cwd=cwd, env=env, capture_output=True, text=True)
    took = time.perf_counter() - t
    if proc.returncode not in (0, 1):
        raise SystemExit(f"porttrack {' '.join(args)} exited {proc.returncode}: {proc.stderr.strip()[-300:]}")
    return took


def run_pair(base: Path, lines: list[str], subject_run: str, report_text: str) -> dict[str, float]:
    shas = demo.build_upstream(base / "upstream")
    demo.build_port(base / "port", shas)
    port = base / "port"
    (port / "src/vllm/v1/core/long_lines.cpp").write_text("\n".join(lines) + "\n")
    (port / "t.md").write_text(report_text)
    rng = f"{shas[0][:10]}..{shas[-1][:10]}"
    cache = base / "cache"
    timed(["queue", "build", "--range", rng, "--name", "demo"], port, cache)
    queue = port / "queue" / "demo.toml"
    queue.write_text(
        re.sub(r'^subject = ".*"$', f'subject = "{subject_run} [2/N] x"', queue.read_text(), count=1, flags=re.M)
    )
    git = ["git", "-C", str(port), "-c", "user.name=b", "-c", "user.email=b@b"]
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "long lines"], check=True)
    return {
        "audit": timed(["audit"], port, cache),
        "check": timed(["check"], port, cache),
        "queue import": timed(["queue", "import", "--dry-run", "t.md"], port, cache),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kib", type=int, default=256, help="length of each run, KiB (a second run at twice it)")
    a = ap.parse_args()
    got = {}
    for kib in (a.kib, 2 * a.kib):
        for kind, lines in (("hostile", hostile_lines(kib)), ("ordinary", ordinary_lines(kib))):
            run = "[a" * (kib * 512) if kind == "hostile" else "plain subject " * (kib * 73)
            with tempfile.TemporaryDirectory() as tmp:
                text = report(kib * 1024) if kind == "hostile" else report(0) + "\n" * (kib * 3 * 1024)
                got[kind, kib] = run_pair(Path(tmp), lines, run, text)
    print(f"{len(_RUNS) * 3} lines per file; each run of path characters {a.kib} KiB, then {2 * a.kib} KiB")
    for cmd in got["hostile", a.kib]:
        h1, h2 = got["hostile", a.kib][cmd], got["hostile", 2 * a.kib][cmd]
        o1, o2 = got["ordinary", a.kib][cmd], got["ordinary", 2 * a.kib][cmd]
        print(
            f"{cmd:13} hostile {h1:6.2f} s, {h2:6.2f} s (x{h2 / h1:.1f} for twice the length)"
            f"   ordinary lines, the baseline: {o1:6.2f} s, {o2:6.2f} s"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
