"""KVBlockZeroer: zero whole KV blocks across a model's cache tensors, exactly and in one pass.

Built once from the layers' KV tensors (docs/design.md §13.4). For each tensor it finds
the block dimension's byte stride, the *segments* (outer dimensions whose
stride exceeds a block's, such as K/V outermost), and the *page* (the bytes
one block occupies inside a segment). `zero(ids)` then writes zeros over
every (id, segment, kernel block) with one indexed fill per tensor: the
Python loop is over tensors, never over ids. The same code runs on CPU and
CUDA; on CUDA a Triton kernel does the word-aligned tensors when Triton is
importable, one launch for every tensor of a device and page layout.

Exactness: after `zero(ids)` every byte of every element whose block index
is a listed id is zero, and no other byte of any storage changed. (Under
pre-d6af803f43 semantics kvref reproduces upstream's whole-stride writes,
which do touch the bytes between packed pages; that is the bug it models.)
"""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass
from typing import Any, NamedTuple
from collections.abc import Iterable, Sequence

import torch

from kvref.semantics import SemanticsLike, resolve_semantics
from kvref.specs import KINDS

_INT_OF_SIZE = {1: torch.int8, 2: torch.int16, 4: torch.int32, 8: torch.int64}
# CUDA's launch limits: grid x up to 2**31 - 1 programs, grid y up to 65,535.
GRID_X_MAX, GRID_Y_MAX = 2**31 - 1, 65_535


@dataclass
class KVLayer:
    """One layer's KV tensor and how to read it."""

    tensor: torch.Tensor
    block_dim: int = 0
    ratio: int = 1  # spec block_size // kernel block_size: kernel blocks per spec block
    kind: str = "full_attention"
    runner_only: bool = False


@dataclass(frozen=True)
class Segment:
    """One run of blocks: block k of it starts at `offset + k * stride` bytes into its storage."""

    storage: int  # data_ptr of the underlying storage
    offset: int
    stride: int  # bytes between consecutive kernel blocks
    page: int  # bytes written per kernel block
    ratio: int


@dataclass
class _Plan:
    tensor: torch.Tensor
    block_dim: int
    ratio: int
    num_blocks: int  # spec blocks
    stride: int  # kernel block stride, bytes
    page: int  # bytes written per kernel block
    dense: bool  # the written bytes of one kernel block are one contiguous run
    outer: list[tuple[int, int]]  # (size, byte stride) of segment dimensions
    base: int  # byte offset of the tensor's first element in its storage
    nbytes: int  # storage size
    target: torch.Tensor | None = None  # what index_fill_ writes through (dense plans: a word view)
    array: Any = None  # the same as a numpy array, for CPU tensors
    words: torch.Tensor | None = None  # the whole storage as int32 words (the Triton path)
    max_id: int = 0  # the highest id whose write stays inside the storage


class Launch(NamedTuple):
    """One kernel launch over a slice of the (row, page chunk) grid; a row is (segment, id, kernel block)."""

    row0: int
    rows: int  # grid x
    col0: int  # first page chunk
    cols: int  # grid y


def plan_launches(
    rows: int, page_words: int, chunk: int, max_x: int = GRID_X_MAX, max_y: int = GRID_Y_MAX
) -> list[Launch]:
    """Cover rows x cdiv(page_words, chunk) programs with launches that each fit CUDA's grid limits."""
    chunks = -(-page_words // chunk)
    return [
        Launch(r0, min(max_x, rows - r0), c0, min(max_y, chunks - c0))
        for r0 in range(0, rows, max_x)
        for c0 in range(0, chunks, max_y)
    ]


def segment_offsets(p: _Plan) -> torch.Tensor:
    """Every segment's start in bytes (CPU int64), outer dimensions in row-major order; no Python loop per segment."""
    offs = torch.tensor([p.base], dtype=torch.int64)
    for n, s in p.outer:
        offs = (offs[:, None] + torch.arange(n, dtype=torch.int64) * s).reshape(-1)
    return offs


def device_guard(device: torch.device):
    """Make the tensor's device current for a launch (a tensor on cuda:1 while cuda:0 is current)."""
    return torch.cuda.device(device) if device.type == "cuda" else contextlib.nullcontext()


def stage_ids(ids: torch.Tensor, pin: bool) -> torch.Tensor:
    """A fresh host copy of the ids, never the caller's tensor, for a non-blocking copy to the device.

    `ids.to("cpu", torch.int64)` returns the caller's own tensor when it already is one (pinned or
    not), and a non-blocking copy would then read it after zero() returned (1cd75b3dd4's race). A
    pinned buffer is freed to torch's caching host allocator, which keeps it until the copy is done.
    """
    host = torch.empty(ids.numel(), dtype=torch.int64, pin_memory=pin)
    host.copy_(ids.reshape(-1))
    return host


def _layout(t: torch.Tensor, bd: int, whole_stride: bool) -> tuple[int, int, bool, list[tuple[int, int]]]:
    """(block stride, page, dense, outer dims) in bytes for a tensor and its block dim.

    With `whole_stride` (before d6af803f43) this is upstream's rule as of G1: only dimensions
    *before* block_dim whose stride exceeds a block's are segments, and a block is its whole
    stride from each segment start. A later dimension with a larger stride (say K/V after the
    block dim in a permuted view) is no segment then, so only its index-0 half gets zeroed.
    """
    el = t.element_size()
    stride = t.stride(bd) * el
    outer: list[tuple[int, int]] = []
    inner: list[tuple[int, int]] = []
    if whole_stride:
        outer = [(t.shape[d], t.stride(d) * el) for d in range(bd) if t.stride(d) * el > stride]
        return stride, stride, True, outer
    for d in range(t.dim()):
        if d == bd:
            continue
        (outer if t.stride(d) * el > stride else inner).append((t.shape[d], t.stride(d) * el))
    span = el + sum((n - 1) * s for n, s in inner)
    dense, expect = True, el
    for n, s in sorted((x for x in inner if x[0] > 1), key=lambda x: x[1]):
        dense &= s == expect
        expect = s * n
    return stride, span, dense and span == expect, outer


class KVBlockZeroer:
    """Zero KV blocks by global block id across a set of KV tensors (CUDA when the tensors are there)."""

    def __init__(
        self,
        tensors: Sequence[torch.Tensor | KVLayer],
        *,
        block_dim: int = 0,
        ratio: int = 1,
        kind: str = "full_attention",
        semantics: SemanticsLike = "latest",
        use_triton: bool | None = None,
    ) -> None:
        self.semantics = sem = resolve_semantics(semantics)
        if "record-new-block-ids" not in sem:
            raise ValueError(f"KVBlockZeroer does not exist before 4ff8c3c8f (semantics {sem.label})")
        self.plans: list[_Plan] = []
        seen: set[int] = set()
        for item in tensors:
            layer = item if isinstance(item, KVLayer) else KVLayer(item, block_dim, ratio, kind)
            if not self._zeroes(layer) or layer.tensor.numel() == 0:
                continue
            if layer.tensor.data_ptr() in seen:  # shared tensors are zeroed once
                continue
            seen.add(layer.tensor.data_ptr())
            self.plans.append(self._plan(layer))
        if "zeroer-bounded-grid" not in sem:
            pages = {p.page * p.ratio for p in self.plans}
            if len(pages) > 1:
                a, b = sorted(pages)[:2]
                raise ValueError(f"Non-uniform page sizes: {a} vs {b} bytes (allowed from 79f3183f86 on)")
        self.num_blocks = min((p.num_blocks for p in self.plans), default=0)
        if use_triton is None:
            use_triton = _triton_available() and any(p.tensor.is_cuda for p in self.plans)
        self.use_triton = use_triton
        self._group_words: dict[tuple, torch.Tensor] = {}

    def _zeroes(self, layer: KVLayer) -> bool:
        if layer.kind not in KINDS:
            raise ValueError(f"unknown layer kind {layer.kind!r}: known are {sorted(KINDS)}")
        if layer.runner_only:
            return False
        if "attention-zeroing" in self.semantics:
            return KINDS[layer.kind].is_attention
        if "zeroer-full-attention-subclasses" in self.semantics:
            return layer.kind in ("full_attention", "mla")  # isinstance(spec, FullAttentionSpec)
        return layer.kind == "full_attention"  # type(spec) is FullAttentionSpec

    def _plan(self, layer: KVLayer) -> _Plan:
        t, bd, r = layer.tensor, layer.block_dim, layer.ratio
        if not -t.dim() <= bd < t.dim():
            raise ValueError(f"block_dim {bd} is out of range for a {t.dim()}-d tensor of shape {tuple(t.shape)}")
        bd %= t.dim()
        if not isinstance(r, int) or r < 1:
            raise ValueError(f"ratio must be a positive integer, got {r!r}")
        # Before d6af803f43 a block was the whole stride: packed neighbours got zeroed too.
        stride, span, dense, outer = _layout(t, bd, "zeroer-segment-stride" not in self.semantics)
        if stride % 4 or stride == 0:
            raise ValueError(
                f"block stride {stride} bytes of a tensor of shape {tuple(t.shape)} is not a positive "
                "multiple of 4 bytes (zeroing writes int32 words)"
            )
        if span > stride:
            raise ValueError(
                f"blocks of a tensor of shape {tuple(t.shape)} overlap: a block spans {span} bytes "
                f"but blocks are {stride} bytes apart"
            )
        el = t.element_size()
        p = _Plan(
            t,
            bd,
            r,
            int(t.shape[bd]) // r,
            stride,
            span,
            dense,
            outer,
            int(t.storage_offset()) * el,
            t.untyped_storage().nbytes(),
        )
        room = p.nbytes - p.base - sum((n - 1) * s for n, s in outer) - p.page + p.stride
        p.max_id = room // (r * stride) - 1
        if not dense:  # the page has holes: fill exactly the tensor's own elements
            p.target = t.view(_INT_OF_SIZE[el])
            p.array = p.target.numpy() if p.target.is_cpu else None
            return p
        # Dense pages: fill whole words of the storage through one strided view built once here.
        word = math.gcd(8, p.base, p.stride, p.page, p.nbytes, *(s for _, s in outer))
        flat = torch.empty(0, dtype=_INT_OF_SIZE[word], device=t.device)
        flat.set_(t.untyped_storage(), 0, (p.nbytes // word,), (1,))
        if word >= 4:
            p.words = flat.view(torch.int32)
        if t.is_cpu:
            # numpy fills a contiguous uint8 row with memset: about twice its int64 speed here.
            flat, word = flat.view(torch.uint8), 1
        # Rows the overrunning pre-d6af803f43 writes would reach past the storage are left out of the view.
        blocks = min(p.num_blocks, p.max_id + 1)
        shape = [n for n, _ in outer] + [blocks, r, p.page // word]
        strides = [s // word for _, s in outer] + [stride * r // word, stride // word, 1]
        p.target = flat.as_strided(shape, strides, p.base // word)
        p.array = p.target.numpy() if p.target.is_cpu else None
        return p

    @property
    def segments(self) -> list[Segment]:
        out = []
        for p in self.plans:
            ptr = p.tensor.untyped_storage().data_ptr()
            out += [Segment(ptr, off, p.stride, p.page, p.ratio) for off in segment_offsets(p).tolist()]
        return out

    def group_words(self, group: Sequence[_Plan], device: torch.device) -> torch.Tensor:
        """The segment starts of every plan in `group`, in int32 words from the first plan's storage
        (another storage's lie at its distance from that one, which may be negative), on `device`;
        built and copied there once per zeroer. One launch then zeroes the whole group."""
        key = (device, tuple(id(p) for p in group))
        got = self._group_words.get(key)
        if got is None:
            first = group[0].tensor.untyped_storage().data_ptr()
            got = self._group_words[key] = torch.cat(
                [segment_offsets(p) // 4 + (p.tensor.untyped_storage().data_ptr() - first) // 4 for p in group]
            ).to(device)
        return got

    def zero(self, block_ids: Iterable[int] | torch.Tensor) -> None:
        """Zero every listed spec block in every tensor. Ids are global pool ids."""
        try:
            ids = torch.as_tensor(block_ids if isinstance(block_ids, torch.Tensor) else list(block_ids))
        except (TypeError, ValueError, RuntimeError) as e:
            raise ValueError(f"block ids must be integers: {e}") from None
        if ids.numel() == 0 or not self.plans:
            return
        if ids.dtype.is_floating_point or ids.dtype.is_complex or ids.dtype == torch.bool:
            raise ValueError(f"block ids must be integers, got {ids.dtype} ids such as {ids.reshape(-1)[0].item()!r}")
        ids = ids.to("cpu", torch.int64).reshape(-1)  # checked on the host, then staged per device
        lo, hi = (int(x) for x in torch.aminmax(ids))
        if lo < 0 or hi >= self.num_blocks:
            bad = ids[(ids < 0) | (ids >= self.num_blocks)].unique()[:8].tolist()
            raise ValueError(f"block ids out of range [0, {self.num_blocks}): {bad}")
        for p in self.plans:
            if hi > p.max_id:
                raise ValueError(
                    f"zeroing block {hi} writes past the end of the KV pool (page {p.page} bytes "
                    f"stepped by stride {p.stride}; fixed by d6af803f43)"
                )
        staged: dict[torch.device, torch.Tensor] = {}
        host = None

        def on_device(dev: torch.device) -> torch.Tensor:
            # A fresh staging buffer and device copy per call (1cd75b3dd4): a reused one raced the next step.
            nonlocal host
            if dev not in staged:
                if host is None:
                    host = stage_ids(ids, pin=dev.type == "cuda")
                staged[dev] = host.to(dev, non_blocking=True)
            return staged[dev]

        ids_np = ids.numpy()
        # Triton plans of one device and one page layout share a launch: zeroing 1 % of the blocks of
        # an 8 GiB four-layer cache on an H200 took 105 us in four launches and 48 us in one.
        launches: dict[tuple, list[_Plan]] = {}
        for p in self.plans:
            dim = len(p.outer) if p.dense else p.block_dim
            if p.array is not None:
                # numpy's fancy-index assignment writes whole contiguous rows; torch's CPU index_fill_
                # goes element by element (3x slower in benchmarks/zeroing.py). One call per tensor.
                rows = ids_np if p.dense else (ids_np[:, None] * p.ratio + _arange(p.ratio)).reshape(-1)
                p.array[(slice(None),) * dim + (rows,)] = 0
                continue
            if p.dense and self.use_triton and p.words is not None:
                # word distances between storages are whole only between storages as aligned as each other
                align = p.tensor.untyped_storage().data_ptr() % 4
                launches.setdefault((p.tensor.device, p.stride, p.page, p.ratio, align), []).append(p)
                continue
            target = p.target
            assert target is not None  # every plan without a numpy array has one
            dev = p.tensor.device
            with device_guard(dev):
                dev_ids = on_device(dev)
                if not p.dense:
                    kids = (dev_ids[:, None] * p.ratio + torch.arange(p.ratio, device=dev)).reshape(-1)
                    target.index_fill_(dim, kids, 0)
                else:
                    target.index_fill_(dim, dev_ids, 0)
        if launches:
            from kvref import triton_zero

            for (dev, *_), group in launches.items():
                words = group[0].words
                assert words is not None  # grouped for having them
                with device_guard(dev):
                    triton_zero.zero_pages(words, group[0], on_device(dev), self.group_words(group, dev))

    zero_block_ids = zero


def _arange(n: int):
    import numpy as np

    return np.arange(n, dtype=np.int64)


def _triton_available() -> bool:
    try:
        import triton  # noqa: F401
    except (ImportError, RuntimeError, OSError):  # not installed, or installed without a usable driver
        return False
    return torch.cuda.is_available()
