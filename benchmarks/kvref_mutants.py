"""How much of a default `validate kv` run each switch, error path and planted bug reaches.

    python benchmarks/kvref_mutants.py [--cases 200] [--seed 0] [--coverage-only]

Three tables, all over the cases a default run sends (the edge cases, then
`--cases` random ones from `--seed`):

1. per semantics switch: how many cases answer differently with the switch on
   than at the point just before it (a port that gets that one switch wrong
   fails exactly these cases at that point);
2. per error path: how many cases end in that ValueError at some point;
3. per mutant: the reference harness `tests/kvref/harness/doc_harness.py`
   (written from docs/protocol.md, no kvref inside) with one planted
   single-point bug, run through the real `porttrack validate kv` at the
   semantics the bug belongs to. The catch rate is failed cases over the cases
   of the op the bug lives in; "caught" is at least one failure. The clean
   harness (no mutant) must pass every case at every semantics used.

The baseline is the case generator before stratification (commit a0245d1),
whose figures docs/performance.md quotes next to these.
"""

from __future__ import annotations

import argparse
import re
import shlex
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kvref import cases as kcases  # noqa: E402 -- after the sys.path line above
from kvref.semantics import SWITCHES, Semantics, upto  # noqa: E402

ERRORS = {  # error path -> a phrase of kvref's message (messages are never compared; this only labels)
    "prefix_match_unit does not divide": r"Invalid (prefix_match_unit|hash_block_size)=\d+; (all|prefix-cacheable)",
    "cache_hit_alignment vs tokens_per_state": r"must align with each spec's per-state",
    "hybrid groups with context parallelism": r"do not support context parallelism",
    "block pool exhausted": r"Cannot get \d+ free blocks",
    "block stride not whole int32 words": r"not a (positive )?multiple of 4",
    "non-uniform page sizes": r"Non-uniform page sizes",
    "block ids out of range": r"block ids out of range",
    "write past the end of the pool": r"writes past the end",
    "offset not aligned to the element": r"must be aligned within the buffer",
}

# name: (semantics to validate at, the op it lives in, what the bug is)
MUTANTS = {
    "ignore-prefix-caching": ("G1", "resolve_block_sizes", "hashes even with prefix caching and connector off"),
    "g1-backoff-by-mode": ("G1", "resolve_block_sizes", "G1 Mamba back-off tests the mode, not the block size"),
    "g3-wrapper-blind": ("latest", "resolve_block_sizes", "G3 Mamba back-off does not look inside wrappers"),
    "dcp-scales-mamba": ("latest", "resolve_block_sizes", "DCP scales Mamba groups too"),
    "circular-buffer-hashed": ("latest", "resolve_block_sizes", "circular-buffer groups count in the hash size"),
    "no-alignment-check": ("latest", "resolve_block_sizes", "no cache_hit_alignment vs tokens_per_state error"),
    "unit-not-checked": ("G1", "resolve_block_sizes", "an explicit prefix_match_unit is never checked"),
    "mixed-precision-ignored": ("latest", "needs_kv_cache_zeroing", "mixed KV precision does not need zeroing"),
    "g1-records-subclasses": ("G1", "record_new_block_ids", "G1 records for sliding window (isinstance)"),
    "free-to-tail": ("G1", "record_new_block_ids", "freed blocks go to the tail of the free queue"),
    "async-ids-zeroed": ("latest", "record_new_block_ids", "ids an async load will write are zeroed"),
    "pool-never-exhausted": ("G1", "record_new_block_ids", "running out of blocks is not an error"),
    "g1-after-dims-segments": ("G1", "zero_blocks", "G1 takes dims after block_dim as segments too"),
    "g1-page-not-stride": ("G1", "zero_blocks", "G1 writes only the page, not the whole stride"),
    "stride-not-checked": ("G1", "zero_blocks", "a block stride that is not whole words is accepted"),
    "g1-zeroes-sliding-window": ("G1", "zero_blocks", "G1 zeroes every attention kind"),
    "ids-not-checked": ("latest", "zero_blocks", "ids outside the pool are skipped, not an error"),
    "mla-not-recorded": ("G1", "record_new_block_ids", "the MLA manager does not record (before d2889722f)"),
    "mla-not-zeroed": ("G1", "zero_blocks", "the zeroer takes the exact full-attention type only"),
    "non-uniform-accepted": ("G1", "zero_blocks", "tensors with different page sizes are accepted at G1"),
    "cp-error-missing": ("G1", "resolve_block_sizes", "hybrid groups with dcp/pcp > 1 are not refused at G1"),
    "past-end-not-refused": ("G1", "zero_blocks", "a whole-stride write past the pool is clipped, not refused"),
}

HARNESS = ROOT / "tests" / "kvref" / "harness" / "doc_harness.py"


def coverage(cases: list[dict]) -> tuple[list[tuple[str, str, int, int]], Counter]:
    """(switch, sha, cases that tell it apart, cases of its ops) per switch; error path -> cases."""
    names = [s.name for s in SWITCHES]
    points = [Semantics(frozenset(), "none")] + [upto(n) for n in names]
    answers = [[kcases.answer(c, p) for c in cases] for p in points]
    rows = []
    for i, s in enumerate(SWITCHES, 1):
        diff = [c for c, a, b in zip(cases, answers[i - 1], answers[i], strict=False) if _norm(a) != _norm(b)]
        ops = {c["op"] for c in diff}
        rows.append((s.name, s.sha, len(diff), sum(c["op"] in ops for c in cases)))
    errors: Counter = Counter()
    for j, _ in enumerate(cases):
        hit = set()
        for p in answers:
            a = p[j]
            if a is not None and not a["ok"]:
                hit |= {name for name, pat in ERRORS.items() if re.search(pat, a["message"])}
        errors.update(hit)
    return rows, errors


def _norm(a: dict | None):
    return None if a is None else (a["ok"], a.get("error"), a.get("result"))


def mutants(n: int, seed: int) -> list[tuple[str, str, str, int, int, bool]]:
    from porttrack.validation import validate

    out = []
    for sem in sorted({s for s, _, _ in MUTANTS.values()}):
        clean = validate.validate(_impl(sem, None), sem, n, seed, evidence=False)
        bad = [r for r in clean.results if r.status == "failed"]
        if bad:
            raise SystemExit(
                f"the clean harness fails {len(bad)} cases at {sem}: case {bad[0].id} "
                f"{bad[0].op} {bad[0].field} {bad[0].note}"
            )
        out.append(("(none)", sem, "every op", 0, sum(r.status != "skipped" for r in clean.results), True))
    for name, (sem, op, _) in MUTANTS.items():
        report = validate.validate(_impl(sem, name), sem, n, seed, evidence=False)
        mine = [r for r in report.results if r.op == op]
        failed = sum(r.status == "failed" for r in mine)
        others = sum(r.status == "failed" for r in report.results if r.op != op)
        if others:
            raise SystemExit(f"mutant {name} fails {others} cases outside {op}: not a single-point bug")
        out.append((name, sem, op, failed, len(mine), failed > 0))
    return out


def _impl(sem: str, mutant: str | None) -> str:
    cmd = [sys.executable, str(HARNESS), sem] + (["--mutant", mutant] if mutant else [])
    return shlex.join(cmd)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--coverage-only", action="store_true", help="tables 1 and 2 only (no harness runs)")
    opt = ap.parse_args()
    t0 = time.perf_counter()
    cases = kcases.generate(opt.cases, opt.seed)
    per_op = Counter(c["op"] for c in cases)
    print(
        f"default run: {len(cases)} cases ({', '.join(f'{op} {k}' for op, k in per_op.items())}); "
        f"--cases {opt.cases} --seed {opt.seed}"
    )
    rows, errors = coverage(cases)
    print(f"{'switch':<34} {'sha':<11} {'cases that tell it apart':>26}")
    for name, sha, k, total in rows:
        share = f"{k}/{total} ({k / total:.0%})" if total else "0 (not observable)"
        print(f"{name:<34} {sha or '-':<11} {share:>26}")
    print(f"{'error path':<42} {'cases':>6}")
    for name in ERRORS:
        print(f"{name:<42} {errors.get(name, 0):>6}")
    if not opt.coverage_only:
        print(f"{'mutant':<26} {'as of':<7} {'op':<23} {'catch rate':>16} caught")
        results = mutants(opt.cases, opt.seed)
        for name, sem, op, failed, total, caught in results:
            rate = f"{failed}/{total} ({failed / total:.0%})" if name != "(none)" else f"0/{total} failed"
            print(f"{name:<26} {sem:<7} {op:<23} {rate:>16} {'yes' if caught else 'NO'}")
        planted = [r for r in results if r[0] != "(none)"]
        print(
            f"caught {sum(r[5] for r in planted)} of {len(planted)} mutants in a default run; "
            f"lowest catch rate {min(r[3] / r[4] for r in planted):.0%}"
        )
    print(f"({time.perf_counter() - t0:.0f} s)")


if __name__ == "__main__":
    main()
