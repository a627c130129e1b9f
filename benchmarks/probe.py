"""Benchmark: porttrack's probe of 300 symbols vs git grep (one alternation pass, one per symbol) and rg.

    python benchmarks/probe.py                       # synthetic 1,500-file, 250k-line C++ tree
    python benchmarks/probe.py --tree PATH --scope src include tests

docs/design.md §11 target: ≤ 0.3 s warm, ≥ 5× faster than one `git grep -w` alternation pass,
≥ 20× faster than one `git grep` per symbol. Everything is measured in this one run; the
ratios printed are baseline time / porttrack warm time. The headline warm time is a scan's
counts (what check and audit gates read); a count's Hit objects are built when first asked
for, so the time with every Hit and its line text (what `probe --json` prints) is printed
too. Also cross-checks that porttrack's raw hit lines equal `git grep -w -n`'s for every
symbol, and that the counts summed in SQL equal a tally of those hits one by one.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from porttrack import probe

WORDS = [
    "block",
    "cache",
    "kv",
    "manager",
    "slot",
    "layout",
    "zero",
    "spec",
    "group",
    "token",
    "request",
    "prefix",
    "hash",
    "page",
    "mamba",
    "attn",
    "sched",
    "alloc",
    "free",
    "table",
]


def synth_tree(root: Path, files: int = 1500, lines: int = 250_000, seed: int = 0) -> None:
    """A C++ tree with classes, methods, calls, comments, strings and `#if 0` blocks, committed to git."""
    rng = random.Random(seed)
    names = sorted({f"{rng.choice(WORDS)}_{rng.choice(WORDS)}_{i}" for i in range(6000)})
    classes = sorted({"".join(w.title() for w in rng.sample(WORDS, 2)) + str(i) for i in range(600)})
    per_file = lines // files
    for n in range(files):
        sub = root / ("include" if n % 3 == 0 else "src") / f"mod{n % 40}"
        sub.mkdir(parents=True, exist_ok=True)
        cls = classes[n % len(classes)]
        out = [
            f"// Ported from: vllm/v1/core/mod{n}.py @ abcdef1",
            '#include "common.h"',
            "namespace vllm {",
            f"class {cls} {{",
            " public:",
        ]
        while len(out) < per_file - 3:
            fn, callee, other = rng.choice(names), rng.choice(names), rng.choice(names)
            r = rng.random()
            if r < 0.15:
                out.append(f"  // {other} is called by {fn}; see {rng.choice(classes)}")
            elif r < 0.2:
                out.append(f'  const char* k_{fn} = "{other}";')
            elif r < 0.22:
                out += ["#if 0", f"  void dead_{fn}() {{ {other}(); }}", "#endif"]
            else:
                out += [
                    f"  std::vector<int> {fn}(int n) {{",
                    f"    auto x = {callee}(n) + this->{other}(n - 1);",
                    f"    return x > 0 ? {rng.choice(names)}(x) : {{}};",
                    "  }",
                ]
        out += ["};", "}  // namespace vllm", ""]
        (sub / f"file{n}.{'h' if n % 3 == 0 else 'cpp'}").write_text("\n".join(out[:per_file]) + "\n")
    env = dict(
        os.environ, GIT_AUTHOR_NAME="b", GIT_AUTHOR_EMAIL="b@b", GIT_COMMITTER_NAME="b", GIT_COMMITTER_EMAIL="b@b"
    )
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "synthetic"]):
        subprocess.run(["git", "-C", str(root), *args], check=True, env=env)


def pick_symbols(root: Path, scope: list[str], n: int = 300, seed: int = 1) -> list[str]:
    """n symbols: most of them identifiers of the tree (declared names), a sixth made up (absent)."""
    out = subprocess.run(
        ["git", "-C", str(root), "grep", "-h", "-o", "-E", r"\b[A-Za-z_][A-Za-z0-9_]{5,}\(", "--", *scope],
        capture_output=True,
        text=True,
    ).stdout
    found = sorted({w[:-1] for w in out.split()})
    rng = random.Random(seed)
    present = rng.sample(found, min(len(found), n - n // 6))
    return present + [f"absent_symbol_{i}" for i in range(n - len(present))]


def timed(fn, repeat: int = 1) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), result


def tally(hits) -> tuple[int, ...]:
    """(code, raw, files, definitions, consumers, delegations, tests) counted hit by hit, the slow way
    (scope only: the benchmark scans without a tests scope, where every hit is in the scope)."""
    code = [h for h in hits if h.kind != "comment"]
    kinds = [h.kind for h in code]
    return (
        len(code),
        len(hits),
        len({h.path for h in code}),
        kinds.count("definition"),
        kinds.count("consumer"),
        kinds.count("delegation"),
        kinds.count("test"),
    )


def _args() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tree", type=Path, help="a git work tree to probe (default: a synthetic one)")
    ap.add_argument("--scope", nargs="+", default=["src", "include"])
    ap.add_argument("--symbols", type=int, default=300)
    ap.add_argument(
        "--per-symbol-sample", type=int, default=30, help="git grep per symbol: time this many and scale to all"
    )
    return ap.parse_args()


def _porttrack_times(root: Path, scope: list[str], symbols: list[str], tmp: Path) -> tuple[dict, object]:
    """porttrack's scans, cold and warm, with and without hits, and the CLI end to end; the warm result."""
    cache = tmp / "cache"
    scan = lambda **kw: probe.scan(root, symbols, scope=scope, tests_scope=[], cache_dir=cache, **kw)  # noqa: E731

    def with_hits(**kw):  # what `porttrack probe --json` needs: every Hit object (and its line text)
        s = scan(**kw)
        for c in s.counts.values():
            _ = c.hits  # load them now, inside the timing
        return s

    t: dict = {}
    t["cold"], _ = timed(scan)
    t["warm"], result = timed(scan, repeat=9)
    t["warm_hits"], _ = timed(with_hits, repeat=9)
    t["warm_hits_nt"], _ = timed(lambda: with_hits(texts=False), repeat=9)
    t["rev_warm"], _ = timed(lambda: scan(rev="HEAD"), repeat=9)
    t["rev_hits"], _ = timed(lambda: with_hits(rev="HEAD"), repeat=5)
    t["tests_warm"] = None
    if len(scope) > 1:  # the general tally (a tests scope): last scope path as tests, as check and audit scan
        ts = lambda: probe.scan(root, symbols, scope=scope[:-1], tests_scope=scope[-1:], cache_dir=cache)  # noqa: E731
        ts()
        t["tests_warm"], _ = timed(ts, repeat=9)
    cli = [sys.executable, "-m", "porttrack", "probe", *symbols, "--json", "--scope", ",".join(scope)]
    env = dict(os.environ, PORTTRACK_CACHE_DIR=str(tmp))
    (tmp / "cfg.toml").write_text(f'[port]\nroot = "{root}"\n[cache]\ndir = "{cache}"\n')
    t["cli"], _ = timed(
        lambda: subprocess.run([*cli, "--config", str(tmp / "cfg.toml")], capture_output=True, env=env, check=True),
        repeat=3,
    )
    return t, result


def _grep_times(root: Path, scope: list[str], symbols: list[str], sample_size: int) -> tuple[dict, str]:
    """git grep (one alternation pass, and one per symbol scaled from a sample) and rg; git grep's lines."""
    alternation = "(" + "|".join(re.escape(s) for s in symbols) + ")"
    g: dict = {}
    g["alt"], out = timed(
        lambda: (
            subprocess.run(
                ["git", "-C", str(root), "grep", "-n", "-w", "-E", alternation, "--", *scope],
                capture_output=True,
                text=True,
            ).stdout
        ),
        repeat=3,
    )
    sample = symbols[:sample_size]
    g["sample"] = len(sample)
    each_sample, _ = timed(
        lambda: [
            subprocess.run(["git", "-C", str(root), "grep", "-c", "-w", s, "--", *scope], capture_output=True)
            for s in sample
        ]
    )
    g["each"] = each_sample * len(symbols) / len(sample)
    rg = shutil.which("rg")
    g["rg"] = None
    if rg:
        g["rg"], _ = timed(
            lambda: subprocess.run([rg, "-n", "-w", "-e", alternation, *scope], cwd=root, capture_output=True),
            repeat=3,
        )
    return g, out


def _cross_check(symbols: list[str], result, gg_out: str) -> tuple[int, int]:
    """(symbols whose raw hit lines equal git grep's, counts whose SQL sums equal a tally of their hits)."""
    # the hits are asked for here, so they are built: the headline time does not include that
    per_symbol: dict[str, set] = {s: set() for s in symbols}
    for m in re.finditer(r"^([^:\n]+):(\d+):(.*)$", gg_out, re.M):
        for s in set(
            re.findall(r"(?<![A-Za-z0-9_])(" + "|".join(map(re.escape, symbols)) + r")(?![A-Za-z0-9_])", m.group(3))
        ):
            per_symbol[s].add((m.group(1), int(m.group(2))))
    agree = sum(1 for s in symbols if {(h.path, h.line) for h in result.counts[s].hits if h.name == s} == per_symbol[s])
    same = sum(
        1
        for c in result.counts.values()
        if tally(c.hits) == (c.code, c.raw, c.files, c.definitions, c.consumers, c.delegations, c.tests)
    )
    return agree, same


def _report(t: dict, g: dict, scope: list[str], symbols: list[str], result, agree: int, same: int) -> None:
    warm = t["warm"]
    code = sum(c.code for c in result.counts.values())
    raw = sum(c.raw for c in result.counts.values())
    print(f"porttrack scan, cold (parse + index):   {t['cold']:8.3f} s")
    print(f"porttrack scan, warm working tree:      {warm:8.4f} s   (counts; Hit objects deferred until asked for)")
    print(f"  + every Hit with its line text:       {t['warm_hits']:8.4f} s   (what `probe --json` needs)")
    print(f"  + every Hit, no line texts:           {t['warm_hits_nt']:8.4f} s")
    if t["tests_warm"] is not None:
        print(
            f"porttrack scan, warm, scope {' '.join(scope[:-1])} + tests scope {scope[-1]}: {t['tests_warm']:.4f} s   (the general tally, as check and audit scan)"
        )
    print(
        f"porttrack scan, warm --rev HEAD:        {t['rev_warm']:8.4f} s   (+ every Hit with its line text: {t['rev_hits']:.3f} s)"
    )
    print(f"porttrack CLI --json, {len(symbols)} symbols, warm (end to end, incl. interpreter start): {t['cli']:.3f} s")
    print(
        f"git grep -w, one alternation pass:      {g['alt']:8.3f} s   ratio {g['alt'] / warm:6.1f}x  (target >= 5x)"
        f"   with every Hit and text: {g['alt'] / t['warm_hits']:.1f}x"
    )
    print(
        f"git grep -w, one per symbol ({len(symbols)}, {g['sample']} timed): {g['each']:8.3f} s   ratio {g['each'] / warm:6.1f}x  (target >= 20x)"
    )
    print(
        f"rg -w, one alternation pass:            {g['rg']:8.3f} s   ratio {g['rg'] / warm:6.1f}x"
        if g["rg"]
        else "rg: not installed, not measured"
    )
    print(
        f"hits: {raw} raw, {code} code; raw hit lines equal git grep's for {agree}/{len(symbols)} symbols; "
        f"SQL counts equal the hits' tally for {same}/{len(result.counts)}"
    )
    print(f"warm target <= 0.3 s: {'met' if warm <= 0.3 else 'NOT met'}")
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} cores")


def main() -> None:
    args = _args()
    tmp = Path(tempfile.mkdtemp(prefix="porttrack-bench-"))
    try:
        if args.tree:
            root = args.tree.resolve()
        else:
            root = tmp / "tree"
            root.mkdir()
            t = time.perf_counter()
            synth_tree(root)
            print(f"synthetic tree built in {time.perf_counter() - t:.1f} s")
        scope = args.scope
        files = subprocess.run(
            ["git", "-C", str(root), "ls-files", "--", *scope], capture_output=True, text=True
        ).stdout.split()
        nlines = sum((root / f).read_bytes().count(b"\n") for f in files if (root / f).is_file())
        symbols = pick_symbols(root, scope, args.symbols)
        print(f"tree: {root}  scope: {' '.join(scope)}  files: {len(files)}  lines: {nlines}  symbols: {len(symbols)}")
        times, result = _porttrack_times(root, scope, symbols, tmp)
        greps, gg_out = _grep_times(root, scope, symbols, args.per_symbol_sample)
        agree, same = _cross_check(symbols, result, gg_out)
        _report(times, greps, scope, symbols, result, agree, same)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
