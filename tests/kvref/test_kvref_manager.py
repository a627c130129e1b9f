"""KVCacheManagerSim: which managers record new block ids, and when the lists drain (docs/design.md §13.3)."""

import pytest

from kvref import FullAttentionSpec as F, KVCacheManagerSim, MambaSpec, MLAAttentionSpec, SlidingWindowSpec
from kvref.manager import run_steps


def test_pool_hands_out_from_the_head_and_takes_freed_blocks_back_first():
    sim = KVCacheManagerSim([F(block_size=4)], num_blocks=8, needs_zeroing=True)
    assert sim.allocate_slots("a", 9) == [[1, 2, 3]]  # block 0 is the null block
    assert sim.allocate_slots("a", 12) == [[]]
    assert sim.allocate_slots("b", 1) == [[4]]
    sim.free("a")  # tail first, and unhashed blocks are evicted first (520828789)
    assert list(sim.pool.free) == [3, 2, 1, 5, 6, 7]
    with pytest.raises(ValueError, match="Cannot get 7 free blocks"):
        sim.allocate_slots("c", 28)


def test_before_520828789_freed_blocks_join_the_tail():
    sim = KVCacheManagerSim([F(block_size=4)], num_blocks=8, needs_zeroing=True, semantics="4d51588e2")
    sim.allocate_slots("a", 9)
    sim.free("a")
    assert list(sim.pool.free) == [4, 5, 6, 7, 3, 2, 1]


def test_drain_concatenates_managers_in_group_order():
    sim = KVCacheManagerSim([F(block_size=4), MLAAttentionSpec(block_size=8)], num_blocks=16, needs_zeroing=True)
    sim.allocate_slots("a", 16)
    assert sim.take_new_block_ids() == [1, 2, 3, 4, 5, 6]
    assert sim.take_new_block_ids() == []


def test_g1_records_exact_full_attention_types_only():
    groups = [F(block_size=4), SlidingWindowSpec(block_size=4), MambaSpec(block_size=4), MLAAttentionSpec(block_size=4)]
    g1 = KVCacheManagerSim(groups, num_blocks=32, needs_zeroing=True, semantics="G1")
    assert g1.records_new_block_ids == [True, False, False, True]
    # G1 records whether or not zeroing is needed.
    assert KVCacheManagerSim(groups, num_blocks=32, needs_zeroing=False, semantics="G1").records_new_block_ids == [
        True,
        False,
        False,
        True,
    ]


def test_e3fe212eaf_records_any_attention_spec_iff_zeroing_is_needed():
    groups = [F(block_size=4), SlidingWindowSpec(block_size=4), MambaSpec(block_size=4)]
    assert KVCacheManagerSim(
        groups, num_blocks=32, needs_zeroing=True, semantics="e3fe212eaf"
    ).records_new_block_ids == [True, True, False]
    assert KVCacheManagerSim(
        groups, num_blocks=32, needs_zeroing=False, semantics="e3fe212eaf"
    ).records_new_block_ids == [False, False, False]
    assert KVCacheManagerSim(
        groups, num_blocks=32, needs_zeroing=True, semantics="d6af803f43"
    ).records_new_block_ids == [True, False, False]


STEPS = [
    [{"op": "allocate", "request": "a", "num_tokens": 8}],
    [{"op": "allocate", "request": "b", "num_tokens": 4}],
    [],
]


def test_g1_quirk_lists_never_drain_when_zeroing_is_not_needed():
    r = run_steps([F(block_size=4)], num_blocks=16, needs_zeroing=False, steps=STEPS, semantics="G1")
    assert r["new_block_ids_to_zero"] == [None, None, None]
    assert r["pending"] == [3]  # grows for ever


def test_g3_drains_every_step_and_returns_none_when_not_needed():
    r = run_steps([F(block_size=4)], num_blocks=16, needs_zeroing=False, steps=STEPS, semantics="G3")
    assert r["new_block_ids_to_zero"] == [None, None, None]
    assert r["pending"] == [0]


@pytest.mark.parametrize("sem", ["G1", "G3"])
def test_drained_ids_go_out_when_zeroing_is_needed(sem):
    r = run_steps([F(block_size=4)], num_blocks=16, needs_zeroing=True, steps=STEPS, semantics=sem)
    assert r["new_block_ids_to_zero"] == [[1, 2], [3], None]
    assert r["pending"] == [0]


def test_g3_drops_ids_an_async_load_will_write():
    steps = [
        [
            {"op": "allocate_external", "request": "a", "num_tokens": 8, "async_load": True},
            {"op": "allocate", "request": "b", "num_tokens": 4},
        ],
        [{"op": "allocate", "request": "a", "num_tokens": 12}],
    ]
    assert run_steps([F(block_size=4)], num_blocks=16, needs_zeroing=True, steps=steps, semantics="G3")[
        "new_block_ids_to_zero"
    ] == [[3], [4]]
    assert run_steps([F(block_size=4)], num_blocks=16, needs_zeroing=True, steps=steps, semantics="G1")[
        "new_block_ids_to_zero"
    ] == [[1, 2, 3], [4]]


def test_mamba_outside_align_allocates_like_attention_plus_speculative_room():
    sim = KVCacheManagerSim(
        [F(block_size=4), MambaSpec(block_size=8, num_speculative_blocks=1)], num_blocks=16, needs_zeroing=True
    )
    assert sim.allocate_slots("a", 12) == [[1, 2, 3], [4, 5, 6]]  # cdiv(12 + 8, 8) = 3


def test_mamba_align_keeps_one_real_block_and_nulls_before_it():
    sim = KVCacheManagerSim(
        [F(block_size=4), MambaSpec(block_size=4, mamba_cache_mode="align")], num_blocks=16, needs_zeroing=True
    )
    assert sim.allocate_slots("a", 12) == [[1, 2, 3], [4]]
    assert sim.managers[1].req_blocks["a"] == [0, 0, 4]
    assert sim.allocate_slots("a", 16) == [[5], [6]]
    sim.free("a")  # the null block never returns to the pool
    assert list(sim.pool.free)[:6] == [6, 4, 5, 3, 2, 1]


def test_bad_input():
    with pytest.raises(ValueError, match="num_blocks must be an integer >= 2"):
        KVCacheManagerSim([F(block_size=4)], num_blocks=1, needs_zeroing=True)
    with pytest.raises(ValueError, match="unknown action 'grow'"):
        run_steps([F(block_size=4)], num_blocks=8, needs_zeroing=True, steps=[[{"op": "grow"}]])
    with pytest.raises(ValueError, match="not recorded before 4ff8c3c8f"):
        KVCacheManagerSim([F(block_size=4)], num_blocks=8, needs_zeroing=True, semantics=[])


def test_mla_records_from_d2889722f():
    groups = [F(block_size=4), MLAAttentionSpec(block_size=4)]
    assert KVCacheManagerSim(groups, num_blocks=8, needs_zeroing=True, semantics="4d51588e2").records_new_block_ids == [
        True,
        False,
    ]
    assert KVCacheManagerSim(groups, num_blocks=8, needs_zeroing=True, semantics="d2889722f").records_new_block_ids == [
        True,
        True,
    ]
