"""KVBlockZeroer exactness on every layout docs/design.md §13.4 names, checked against an independent oracle.

Every test builds real tensors as views into one byte buffer filled with a
never-zero pattern, zeroes some blocks, and compares the *whole* buffer with
an oracle that zeroes the same elements by plain advanced indexing.
"""

import pytest
from conftest import Lazy, needs_torch, torch_worker

pytestmark = [needs_torch, torch_worker]
torch = Lazy("torch")
KVBlockZeroer, KVLayer = Lazy("kvref", "KVBlockZeroer"), Lazy("kvref", "KVLayer")
DTYPES = {1: "int8", 2: "bfloat16", 4: "float32"}  # bytes per element: torch's dtype of that name


def filled(nbytes, device="cpu"):
    return (torch.arange(nbytes, dtype=torch.int64) * 37 + 11).remainder(251).add(1).to(torch.uint8).to(device)


def view(buf, offset, shape, strides, el=2):
    dtype = getattr(torch, DTYPES[el])
    return buf.view(dtype).as_strided(shape, strides, offset // el)


def oracle(before, layers, ids):
    """The buffer with exactly the listed blocks' elements zeroed in every given layer."""
    expect = before.clone()
    for offset, shape, strides, el, bd, ratio in layers:
        v = view(expect, offset, shape, strides, el)
        kids = torch.tensor([i * ratio + j for i in ids for j in range(ratio)], dtype=torch.long)
        index = [slice(None)] * len(shape)
        index[bd] = kids
        v[tuple(index)] = 0
    return expect


def dense(shape):
    out, acc = [], 1
    for n in reversed(shape):
        out.append(acc)
        acc *= n
    return out[::-1]


def run(layers, ids, nbytes, device="cpu", **kw):
    buf = filled(nbytes, device)
    before = buf.clone()
    tensors = [KVLayer(view(buf, off, shape, strides, el), bd, ratio) for off, shape, strides, el, bd, ratio in layers]
    z = KVBlockZeroer(tensors, **kw)
    z.zero(ids)
    assert torch.equal(buf.cpu(), oracle(before.cpu(), layers, ids))
    return z


def test_block_dim_outermost():
    shape = [10, 2, 4, 8]  # blocks, K/V, tokens, head
    z = run([(0, shape, dense(shape), 2, 0, 1)], [0, 3, 9], 10 * 64 * 2)
    assert len(z.segments) == 1 and z.segments[0].page == z.segments[0].stride == 128


def test_kv_outermost_gives_two_segments():
    shape = [2, 10, 4, 8]
    z = run([(0, shape, dense(shape), 2, 1, 1)], [1, 2, 8], 10 * 64 * 2)
    assert [s.offset for s in z.segments] == [0, 640]


def test_heads_and_kv_outside_the_block_dim():
    shape = [2, 2, 6, 16]
    z = run([(0, shape, dense(shape), 4, 2, 1)], [5, 0], 2 * 2 * 6 * 16 * 4)
    assert len(z.segments) == 4


def test_kernel_blocks_smaller_than_spec_blocks():
    shape = [2, 12, 4, 8]  # 12 kernel blocks = 6 spec blocks of 2
    z = run([(0, shape, dense(shape), 2, 1, 2)], [0, 5], 12 * 64 * 2)
    assert z.num_blocks == 6


def test_shared_tensor_is_zeroed_once():
    buf = filled(640 * 2)
    t = view(buf, 0, [2, 10, 4, 8], dense([2, 10, 4, 8]))
    z = KVBlockZeroer([KVLayer(t, 1), KVLayer(t, 1)])
    assert len(z.plans) == 1 and len(z.segments) == 2


def test_non_uniform_page_sizes():
    a, b = [10, 2, 4, 8], [10, 16]
    layers = [(0, a, dense(a), 2, 0, 1), (1280, b, dense(b), 4, 0, 1)]
    z = run(layers, [2, 7], 1280 + 640)
    assert sorted({s.page for s in z.segments}) == [64, 128]
    with pytest.raises(ValueError, match="Non-uniform page sizes: 64 vs 128"):
        run(layers, [2], 1280 + 640, semantics="G1")


def test_packed_pages_use_the_segment_stride_and_touch_nothing_else():
    # Two layers' pages interleaved: block stride is both pages, each layer writes only its own.
    layers = [(0, [6, 8], [16, 1], 4, 0, 1), (32, [6, 8], [16, 1], 4, 0, 1)]
    z = run(layers[:1], [1, 5], 6 * 64 + 64)
    assert z.segments[0].stride == 64 and z.segments[0].page == 32


def test_packed_pages_before_d6af803f43_zero_the_whole_stride():
    buf = filled(6 * 64 + 64)
    before = buf.clone()
    t = view(buf, 32, [6, 8], [16, 1], 4)
    KVBlockZeroer([t], semantics="G1").zero([1])
    assert not buf[96:160].any()  # layer 2's block 1 and then layer 1's block 2: the bug modelled
    assert torch.equal(buf[:96], before[:96]) and torch.equal(buf[160:], before[160:])


def test_page_with_holes_is_filled_element_by_element():
    # A block's page has gaps (head-dim slice of a wider tensor): only the view's own elements change.
    wide = [6, 4, 16]
    layers = [(0, [6, 4, 8], dense(wide), 2, 0, 1)]
    z = run(layers, [0, 4], 6 * 64 * 2)
    assert not z.plans[0].dense


def test_g1_zeroes_full_attention_only_and_mamba_never():
    buf = filled(640 * 2)
    t = view(buf, 0, [10, 64], [64, 1])
    before = buf.clone()
    KVBlockZeroer([KVLayer(t, kind="sliding_window")], semantics="G1").zero([1])
    assert torch.equal(buf, before)
    KVBlockZeroer([KVLayer(t, kind="mamba")]).zero([1])
    assert torch.equal(buf, before)
    KVBlockZeroer([KVLayer(t, kind="sliding_window")]).zero([1])
    assert not buf[128:256].any()
    KVBlockZeroer([KVLayer(t, runner_only=True)]).zero([2])
    assert buf[256:384].all()
    KVBlockZeroer([KVLayer(t, kind="mla")], semantics="4ff8c3c8f").zero([3])  # exact type only before f4b42df04
    assert buf[384:512].all()
    KVBlockZeroer([KVLayer(t, kind="mla")], semantics="G1").zero([3])
    assert not buf[384:512].any()


def test_errors_name_the_values():
    buf = filled(640 * 2)
    t = view(buf, 0, [10, 64], [64, 1])
    z = KVBlockZeroer([t])
    with pytest.raises(ValueError, match=r"out of range \[0, 10\): \[-1, 10\]"):
        z.zero([3, 10, -1])
    with pytest.raises(ValueError, match="block stride 6 bytes"):
        KVBlockZeroer([view(buf, 0, [10, 3], [3, 1])])
    with pytest.raises(ValueError, match="block_dim 4 is out of range"):
        KVBlockZeroer([KVLayer(t, block_dim=4)])
    with pytest.raises(ValueError, match="unknown layer kind"):
        KVBlockZeroer([KVLayer(t, kind="dense")])
    z.zero([])  # a no-op
    KVBlockZeroer([]).zero([1, 2])


def test_ids_as_a_tensor_and_repeated_ids():
    shape = [2, 10, 4, 8]
    run([(0, shape, dense(shape), 2, 1, 1)], torch.tensor([4, 4, 2]).tolist(), 640 * 2)


@pytest.mark.cuda
@pytest.mark.skipif("not torch.cuda.is_available()", reason="needs a CUDA device")
@pytest.mark.parametrize("use_triton", [False, None])
def test_cuda_exactness_on_every_layout(use_triton):
    a, b = [2, 10, 4, 8], [10, 16]
    layers = [(0, a, dense(a), 2, 1, 2), (1280, b, dense(b), 4, 0, 1)]
    run(layers, [0, 3, 4], 1280 + 640, device="cuda", use_triton=use_triton)
    run(
        [(0, [6, 8], [16, 1], 4, 0, 1), (32, [6, 8], [16, 1], 4, 0, 1)],
        [1, 5],
        6 * 64 + 64,
        device="cuda",
        use_triton=use_triton,
    )
    run([(0, [6, 4, 8], dense([6, 4, 16]), 2, 0, 1)], [0, 4], 6 * 64 * 2, device="cuda", use_triton=use_triton)


def test_non_uniform_page_sizes_switch_on_at_79f3183f86():
    a, b = [10, 2, 4, 8], [10, 16]
    layers = [(0, a, dense(a), 2, 0, 1), (1280, b, dense(b), 4, 0, 1)]
    with pytest.raises(ValueError, match="allowed from 79f3183f86 on"):
        run(layers, [2], 1280 + 640, semantics="e3fe212eaf")
    run(layers, [2], 1280 + 640, semantics="79f3183f86")


def test_id_past_the_pool_before_d6af803f43_is_an_error_naming_the_fix():
    # Packed pages stepped by the whole stride: the last block's write would overrun the storage.
    buf = filled(6 * 64)
    t = view(buf, 32, [6, 8], [16, 1], 4)
    with pytest.raises(ValueError, match=r"writes past the end of the KV pool.*fixed by d6af803f43"):
        KVBlockZeroer([t], semantics="1cd75b3dd4").zero([5])
    before = buf.clone()
    KVBlockZeroer([t], semantics="d6af803f43").zero([5])
    assert not buf[32 + 5 * 64 : 32 + 5 * 64 + 32].any() and torch.equal(buf[: 32 + 5 * 64], before[: 32 + 5 * 64])


def test_non_integer_ids_are_refused_not_truncated():
    buf = filled(640 * 2)
    before = buf.clone()
    z = KVBlockZeroer([view(buf, 0, [10, 64], [64, 1])])
    for bad, what in (
        ([1.5], "float32 ids such as 1.5"),
        (torch.tensor([2.0]), "float32"),
        ([True], "bool"),
        (["a"], "must be integers"),
    ):
        with pytest.raises(ValueError, match=what):
            z.zero(bad)
    assert torch.equal(buf, before)
    z.zero(torch.tensor([], dtype=torch.float32))  # empty is a no-op whatever its dtype
