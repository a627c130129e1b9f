"""The CUDA path's planning, tested on the CPU by calling the planner directly; the launches themselves
run in the `cuda`-marked tests (scripts/gpu-check.sh runs them on a GPU).

Grid limits: a launch never exceeds 2**31 - 1 programs in x or 65,535 in y, and
the launches cover every (row, page chunk) exactly once. Device: every launch
runs under the tensor's own device. Staging: ids go through a fresh host buffer,
never the caller's tensor. Segment offsets: built once per zeroer and device.
"""

from __future__ import annotations

import pytest
from conftest import Lazy, needs_torch, torch_worker

pytestmark = [needs_torch, torch_worker]
torch, zeroer = Lazy("torch"), Lazy("kvref.zeroer")
KVBlockZeroer, KVLayer = Lazy("kvref", "KVBlockZeroer"), Lazy("kvref", "KVLayer")


def covered(launches):
    return sorted(
        (r, c) for la in launches for r in range(la.row0, la.row0 + la.rows) for c in range(la.col0, la.col0 + la.cols)
    )


@pytest.mark.parametrize(
    "rows, page_words, chunk, max_x, max_y",
    [(7, 5000, 1024, 3, 2), (1, 1, 1024, 1, 1), (12, 4096, 1024, 12, 4), (13, 4097, 1024, 4, 3)],
)
def test_launches_cover_every_program_once_within_the_limits(rows, page_words, chunk, max_x, max_y):
    launches = zeroer.plan_launches(rows, page_words, chunk, max_x, max_y)
    chunks = -(-page_words // chunk)
    assert covered(launches) == [(r, c) for r in range(rows) for c in range(chunks)]
    assert all(0 < la.rows <= max_x and 0 < la.cols <= max_y for la in launches)


def test_real_limits_split_only_what_passes_them():
    assert len(zeroer.plan_launches(4 * 8192 * 2, 32 * 1024 // 4, 1024)) == 1  # an ordinary step: one launch
    rows = 4 * 2**30  # segments x ids x ratio past 2**31 - 1
    xs = zeroer.plan_launches(rows, 1024, 1024)
    assert [la.rows for la in xs] == [zeroer.GRID_X_MAX, zeroer.GRID_X_MAX, rows - 2 * zeroer.GRID_X_MAX]
    ys = zeroer.plan_launches(2, 300 * 2**20 // 4, 1024)  # a 300 MiB page: 76,800 chunks
    assert [(la.rows, la.col0, la.cols) for la in ys] == [
        (2, 0, zeroer.GRID_Y_MAX),
        (2, zeroer.GRID_Y_MAX, 76_800 - zeroer.GRID_Y_MAX),
    ]
    assert zeroer.plan_launches(0, 1024, 1024) == []


def test_each_launch_runs_under_the_tensors_device():
    g = zeroer.device_guard(torch.device("cuda", 1))  # building the guard needs no GPU; entering it does
    assert isinstance(g, torch.cuda.device) and g.idx == 1
    with zeroer.device_guard(torch.device("cpu")):
        pass


def test_ids_are_staged_in_a_fresh_buffer_even_when_already_int64():
    mine = torch.tensor([3, 1, 2], dtype=torch.int64)
    staged = zeroer.stage_ids(mine, pin=False)
    assert staged.data_ptr() != mine.data_ptr() and staged.tolist() == [3, 1, 2]
    mine[0] = 9  # the caller reuses its buffer for the next step: the staged ids do not change
    assert staged.tolist() == [3, 1, 2]
    assert zeroer.stage_ids(torch.tensor([[4], [5]], dtype=torch.int32), pin=False).dtype == torch.int64


def test_segment_offsets_are_built_once_per_device_and_match_the_segments():
    t = torch.zeros(2, 3, 10, 16, dtype=torch.int32)  # heads, K/V outside the block dim: 6 segments
    z = KVBlockZeroer([KVLayer(t, block_dim=2)])
    p = z.plans[0]
    words = z.group_words([p], torch.device("cpu"))
    assert words.tolist() == [s.offset // 4 for s in z.segments] == [0, 160, 320, 480, 640, 800]
    assert z.group_words([p], torch.device("cpu")) is words  # cached, not rebuilt per call
    assert list(z._group_words) == [(torch.device("cpu"), (id(p),))]


@pytest.mark.cuda
@pytest.mark.skipif("not torch.cuda.is_available()", reason="needs a CUDA device")
def test_cuda_chunked_launches_are_exact(monkeypatch):
    pytest.importorskip("triton")
    from kvref import triton_zero

    monkeypatch.setattr(triton_zero, "GRID_X_MAX", 3)  # force several launches in x and y
    monkeypatch.setattr(triton_zero, "GRID_Y_MAX", 2)
    buf = (torch.arange(2 * 10 * 3000, dtype=torch.int32) % 97 + 1).cuda()
    t = buf.view(2, 10, 3000)  # pages of 3000 words: 3 chunks of 1024
    before = t.clone()
    z = KVBlockZeroer([KVLayer(t, block_dim=1)], use_triton=True)
    z.zero([1, 4, 7])
    expect = before.clone()
    expect[:, [1, 4, 7]] = 0
    assert torch.equal(t, expect)


@pytest.mark.cuda
@pytest.mark.skipif("torch.cuda.device_count() < 2", reason="needs two CUDA devices")
@pytest.mark.parametrize("use_triton", [False, None])
def test_cuda_tensor_on_another_device_than_the_current_one(use_triton):
    torch.cuda.set_device(0)
    t = torch.ones(2, 8, 256, dtype=torch.bfloat16, device="cuda:1")
    KVBlockZeroer([KVLayer(t, block_dim=1)], use_triton=use_triton).zero(torch.tensor([2, 5]).pin_memory())
    assert int((t[:, [2, 5]] != 0).sum()) == 0 and bool((t[:, [0, 1, 3, 4, 6, 7]] == 1).all())


@pytest.mark.cuda
@pytest.mark.skipif("not torch.cuda.is_available()", reason="needs a CUDA device")
def test_cuda_tensors_of_one_layout_share_a_launch_across_storages_and_stay_exact():
    """Layers allocated one by one (each its own storage) are zeroed by one launch per page layout,
    their segments addressed from the first storage, which may lie above or below the others."""
    pytest.importorskip("triton")
    same = [(torch.arange(2 * 12 * 256, dtype=torch.int32) % 89 + 1).cuda().view(2, 12, 256) for _ in range(3)]
    other = (torch.arange(12 * 2 * 64, dtype=torch.int32) % 83 + 1).cuda().view(12, 2, 64)  # block dim outermost
    whole = (torch.arange(2 * 12 * 256, dtype=torch.int32) % 79 + 1).cuda().view(2, 12, 256)
    wider = whole[:, :, :128]  # pages half their stride: the rest of each row is not the layer's
    layers = [KVLayer(t, block_dim=1) for t in same] + [KVLayer(other, block_dim=0), KVLayer(wider, block_dim=1)]
    before = [t.clone() for t in [*same, other, whole]]
    z = KVBlockZeroer(layers, use_triton=True)
    ids = [0, 5, 11, 5]
    z.zero(ids)
    gone = sorted(set(ids))
    for t, old, bd in zip([*same, other], before[:4], [1, 1, 1, 0], strict=True):
        expect = old.clone()
        expect[(slice(None),) * bd + (gone,)] = 0
        assert torch.equal(t, expect)
    expect = before[-1].clone()
    expect[:, gone, :128] = 0
    assert torch.equal(whole, expect)
    # one launch per layout: the three like layers together; the outermost one, and the one whose
    # pages are half its stride, alone
    assert sorted(len(key[1]) for key in z._group_words) == [1, 1, 3]
