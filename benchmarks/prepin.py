"""Benchmark: what the pre-pin check adds to `porttrack audit` (docs/audit.md "Pre-pin gaps").

    python benchmarks/prepin.py --port DIR [--queue FILE] [--entries 1-300]

DIR holds a porttrack.toml whose `[upstream] repo` is a checkout, and a queue. Everything is
measured in this one run, twice: with an empty parse cache (cold: every blob at the pin is
parsed) and again with the cache it left (warm: no blob is parsed). The baseline is the rest
of the same audit (probe scan, rules, evidence): the pass's share of the audit is printed.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from porttrack import audit  # noqa: E402
from porttrack.queue import file as queuefile, show  # noqa: E402
from porttrack.config import queue_path, resolve_config  # noqa: E402
from porttrack.stopwatch import Stopwatch  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--port", type=Path, required=True, help="port root with porttrack.toml and a queue")
    ap.add_argument("--queue", type=Path, default=None, help="queue file (default: the config's)")
    ap.add_argument("--entries", default=None, help="entries to audit, e.g. 1-300 (default: all)")
    args = ap.parse_args()
    cfg = resolve_config(None, args.port.resolve())
    q = queuefile.load(queue_path(cfg, args.queue)).queue
    chosen = show.parse_entries(args.entries, q)
    with tempfile.TemporaryDirectory() as cache:
        os.environ["PORTTRACK_CACHE_DIR"] = cache
        cfg.cache_dir = ""
        for label in ("cold", "warm"):
            watch = Stopwatch()
            t0 = time.perf_counter()
            result = audit.audit(cfg, q, entries=chosen, stage=watch)
            total = time.perf_counter() - t0
            pp, spent = result.prepin, watch.seconds["pre-pin"]
            if pp.note:
                print(f"note: {pp.note}")
            print(
                f"prepin {label}: {spent:.3f} s of audit {total:.3f} s ({100 * spent / total:.0f} %); "
                f"baseline (the rest of the audit) {total - spent:.3f} s; {len(result.results)} results, "
                f"gaps {len(pp.gaps)} ({sum(1 for g in pp.gaps if not g.owner)} unowned), net-zero {len(pp.net_zero)}, "
                f"tree listings {pp.trees}, blobs {pp.blobs}"
            )


if __name__ == "__main__":
    main()
