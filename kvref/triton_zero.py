"""The optional Triton path of KVBlockZeroer: launches that zero every (segment, id, kernel block) of one tensor.

Imported only when Triton is importable and the tensors are on CUDA. The
grid is 2-D (rows x page chunks) with masked stores, so a page that is not a
multiple of the chunk is still written exactly; `zeroer.plan_launches` splits
it into launches within CUDA's grid limits, and each launch is told where its
slice starts (row0, col0). Indices are 64-bit inside the kernel.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from kvref.zeroer import GRID_X_MAX, GRID_Y_MAX, plan_launches

CHUNK = 1024  # int32 words per program


@triton.jit
def _zero_rows(ptr, seg_offs, ids, n_ids, row0, col0, RATIO: tl.constexpr, STRIDE_W, PAGE_W, CHUNK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64) + row0  # (segment, id, kernel block) flattened
    per_seg = n_ids * RATIO
    seg = row // per_seg
    k = (row % per_seg) // RATIO
    j = row % RATIO
    bid = tl.load(ids + k)
    start = tl.load(seg_offs + seg) + (bid * RATIO + j) * STRIDE_W
    cols = (tl.program_id(1).to(tl.int64) + col0) * CHUNK + tl.arange(0, CHUNK)
    tl.store(ptr + start + cols, tl.zeros([CHUNK], dtype=tl.int32), mask=cols < PAGE_W)


def zero_pages(
    words: torch.Tensor,
    plan,
    ids: torch.Tensor,
    seg_offs: torch.Tensor,
    max_x: int | None = None,
    max_y: int | None = None,
) -> None:
    """Zero plan.page bytes of every listed block in every segment of one tensor; `words` is its int32 storage.

    `seg_offs` are the segment starts in words on the tensor's device (cached by the zeroer);
    max_x / max_y (default: CUDA's limits, read at call time) let a test force the chunking on a
    small tensor.
    """
    page_w = plan.page // 4
    rows = seg_offs.numel() * ids.numel() * plan.ratio
    for launch in plan_launches(rows, page_w, CHUNK, max_x or GRID_X_MAX, max_y or GRID_Y_MAX):
        _zero_rows[(launch.rows, launch.cols)](
            words,
            seg_offs,
            ids,
            ids.numel(),
            launch.row0,
            launch.col0,
            RATIO=plan.ratio,
            STRIDE_W=plan.stride // 4,
            PAGE_W=page_w,
            CHUNK=CHUNK,
        )
