"""kvref zeroing bandwidth as a fraction of contiguously zero-filling the same bytes on the same device.

    python benchmarks/zeroing.py [--mib N] [--reps R] [--device cpu|cuda]

Builds a KV cache of several layers with K/V outermost (so every layer has two
segments), zeroes 1%, 10% and 50% of its blocks (random ids) with
kvref.KVBlockZeroer, and compares with one contiguous `zero_()` of exactly as
many bytes on the same device, measured in the same run. Targets (docs/design.md §11):
CPU >= 50%, CUDA >= 70%. Runs on CUDA when available, else CPU.
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout, installed or not
from kvref import KVBlockZeroer, KVLayer


def timed_pair(a, b, refill, reps: int, sync) -> tuple[float, float]:
    """Best-of-reps seconds for a and b, alternately, each on freshly written (non-zero) memory.

    The refill keeps both sides writing over live pages: re-zeroing zero pages can hit
    copy-on-write faults where the host merges zero pages, which made single runs swing 10x.
    """
    best = [float("inf"), float("inf")]
    for _ in range(reps):
        for i, fn in enumerate((a, b)):
            refill()
            sync()
            t = time.perf_counter()
            fn()
            sync()
            best[i] = min(best[i], time.perf_counter() - t)
    return best[0], best[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--mib", type=int, default=None, help="cache size (default: 256 MiB on CPU, 8 GiB on CUDA)")
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument(
        "--threads",
        type=int,
        default=1,
        help="CPU threads for torch (default 1: kvref's CPU path is single-threaded, and on a "
        "shared machine a descheduled OpenMP worker stalls the baseline for milliseconds)",
    )
    opt = ap.parse_args()
    torch.set_num_threads(opt.threads)
    dev = torch.device(opt.device)
    sync = torch.cuda.synchronize if dev.type == "cuda" else (lambda: None)
    mib = opt.mib or (8192 if dev.type == "cuda" else 256)
    block_size, heads, head = 16, 8, 128  # bf16: 32 KiB per block per K or V
    page = block_size * heads * head * 2
    num_blocks = mib * 2**20 // (opt.layers * 2 * page)
    layers = [
        torch.ones(2, num_blocks, block_size, heads, head, dtype=torch.bfloat16, device=dev) for _ in range(opt.layers)
    ]
    zeroer = KVBlockZeroer([KVLayer(t, block_dim=1) for t in layers])
    flat = torch.ones(opt.layers * 2 * num_blocks * page, dtype=torch.uint8, device=dev)
    name = torch.cuda.get_device_name(dev) if dev.type == "cuda" else platform.processor() or platform.machine()
    print(
        f"device: {dev.type} ({name}); torch {torch.__version__}; triton path: {zeroer.use_triton}; "
        f"CPU threads: {torch.get_num_threads()}"
    )
    print(
        f"cache: {opt.layers} layers x K/V x {num_blocks} blocks x {page // 1024} KiB = "
        f"{opt.layers * 2 * num_blocks * page / 2**20:.0f} MiB; {len(zeroer.segments)} segments; "
        f"best of {opt.reps} alternating runs on refilled memory"
    )
    print(f"{'blocks':>8} {'MiB zeroed':>11} {'kvref GB/s':>11} {'memset GB/s':>12} {'ratio':>7}")
    gen = torch.Generator().manual_seed(0)
    for frac in (0.01, 0.10, 0.50):
        n = max(1, int(num_blocks * frac))
        ids = torch.randperm(num_blocks, generator=gen)[:n]
        nbytes = n * opt.layers * 2 * page

        def refill():
            for t in layers:
                t.fill_(1)
            flat.fill_(1)

        t_kv, t_base = timed_pair(
            lambda ids=ids: zeroer.zero(ids), lambda nbytes=nbytes: flat[:nbytes].zero_(), refill, opt.reps, sync
        )
        zeroer.zero(ids)  # and check it did what it was timed doing
        assert int((layers[-1][1].flatten(1) == 0).all(1).sum()) == n
        gbs = lambda t, nbytes=nbytes: nbytes / t / 1e9  # noqa: E731
        print(f"{frac:>7.0%} {nbytes / 2**20:>11.1f} {gbs(t_kv):>11.2f} {gbs(t_base):>12.2f} {t_base / t_kv:>7.0%}")


if __name__ == "__main__":
    main()
