"""The optional Triton path of KVBlockZeroer: one launch per tensor zeroes every (segment, id, kernel block).

Imported only when Triton is importable and the tensors are on CUDA. The
grid is 2-D and bounded (rows x page chunks) with masked stores, so a page
that is not a multiple of the chunk is still written exactly.
"""

from __future__ import annotations

import itertools

import torch
import triton
import triton.language as tl

CHUNK = 1024  # int32 words per program


@triton.jit
def _zero_rows(ptr, seg_offs, ids, n_ids, RATIO: tl.constexpr, STRIDE_W, PAGE_W, CHUNK: tl.constexpr):
    row = tl.program_id(0)  # (segment, id, kernel block) flattened
    per_seg = n_ids * RATIO
    seg = row // per_seg
    k = (row % per_seg) // RATIO
    j = row % RATIO
    bid = tl.load(ids + k)
    start = tl.load(seg_offs + seg) + (bid * RATIO + j) * STRIDE_W
    cols = tl.program_id(1) * CHUNK + tl.arange(0, CHUNK)
    tl.store(ptr + start + cols, tl.zeros([CHUNK], dtype=tl.int32), mask=cols < PAGE_W)


def zero_pages(words: torch.Tensor, plan, ids: torch.Tensor) -> None:
    """Zero plan.page bytes of every listed block in every segment of one tensor; `words` is its int32 storage."""
    offs = [plan.base + sum(i * s for i, (_, s) in zip(idx, plan.outer))
            for idx in itertools.product(*(range(n) for n, _ in plan.outer))]
    seg_offs = torch.tensor([o // 4 for o in offs], dtype=torch.int64, device=words.device)
    page_w = plan.page // 4
    grid = (len(offs) * ids.numel() * plan.ratio, triton.cdiv(page_w, CHUNK))
    _zero_rows[grid](words, seg_offs, ids, ids.numel(), RATIO=plan.ratio, STRIDE_W=plan.stride // 4,
                     PAGE_W=page_w, CHUNK=CHUNK)
