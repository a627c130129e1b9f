"""resolve_kv_cache_block_sizes and needs_kv_cache_zeroing: docs/design.md §13.1 rules per generation, plus semantics lookup."""

import math
from fractions import Fraction

import pytest
from hypothesis import given, settings, strategies as st

import kvref
from kvref import (
    CircularBufferSpec,
    FullAttentionSpec as F,
    MambaSpec,
    MLAAttentionSpec,
    SlidingWindowSpec,
    UniformTypeKVCacheSpecs,
    needs_kv_cache_zeroing,
    resolve_kv_cache_block_sizes as resolve,
)


def sizes(r):
    return r.scheduler_block_size, r.hash_block_size


# ---------------------------------------------------------------- the four known cases (docs/design.md §13.1)


@pytest.mark.parametrize("sem", ["G1", "G2", "G3"])
def test_four_known_cases(sem):
    assert sizes(resolve([F(block_size=16)], block_size=16, semantics=sem)) == (16, 16)
    assert sizes(resolve([F(block_size=16), F(block_size=32)], block_size=16, semantics=sem)) == (32, 16)
    assert sizes(resolve([F(block_size=32), F(block_size=8)], block_size=16, semantics=sem)) == (32, 8)
    with pytest.raises(ValueError, match=r"=5;.*\[16, 32\]"):
        resolve([F(block_size=16), F(block_size=32)], block_size=16, prefix_match_unit=5, semantics=sem)


# ---------------------------------------------------------------- G1 rules


def test_g1_rule1_single_group_scales_by_dcp_and_pcp():
    r = resolve([F(block_size=16)], block_size=16, dcp=2, pcp=2, semantics="G1")
    assert r == (64, 64, None)
    assert sizes(resolve([], block_size=8, dcp=2, semantics="G1")) == (16, 16)


def test_g1_rule2_hybrid_context_parallel_is_an_error_naming_the_sizes():
    with pytest.raises(ValueError, match=r"context parallelism.*dcp=2, pcp=1"):
        resolve([F(block_size=16), F(block_size=32)], block_size=16, dcp=2, semantics="G1")


def test_g1_rule3_lcm_and_rule4_no_prefix_caching():
    groups = [F(block_size=12), F(block_size=8)]
    assert sizes(resolve(groups, block_size=8, enable_prefix_caching=False, semantics="G1")) == (24, 24)
    assert sizes(
        resolve(groups, block_size=8, enable_prefix_caching=False, connector_enabled=True, semantics="G1")
    ) == (24, 4)


def test_g1_rule5_mamba_block_size_differing_from_cache_block_size_backs_off():
    assert sizes(
        resolve([F(block_size=16), MambaSpec(block_size=64, mamba_cache_mode="align")], block_size=16, semantics="G1")
    ) == (64, 64)
    # At the cache block size, G1 hashes even in "none" mode (its stand-in for "align").
    assert sizes(resolve([F(block_size=32), MambaSpec(block_size=16)], block_size=16, semantics="G1")) == (32, 16)


def test_g1_rule6_override_and_rule7_error_names_the_knob():
    assert sizes(resolve([F(block_size=16), F(block_size=32)], block_size=16, prefix_match_unit=8, semantics="G1")) == (
        32,
        8,
    )
    with pytest.raises(ValueError, match=r"Invalid hash_block_size=32; .*Got group block sizes=\[16, 32\]"):
        resolve([F(block_size=16), F(block_size=32)], block_size=16, prefix_match_unit=32, semantics="G1")


def test_g1_circular_buffer_still_counts_for_the_hash_size():
    groups = [F(block_size=16), CircularBufferSpec(block_size=4)]
    assert sizes(resolve(groups, block_size=16, semantics="G1")) == (16, 4)


# ---------------------------------------------------------------- G2 and G3 rules


def test_g2_mamba_mode_decides_the_backoff_and_the_knob_is_renamed():
    groups = [F(block_size=32), MambaSpec(block_size=16)]
    assert sizes(resolve(groups, block_size=16, semantics="G2")) == (32, 32)
    aligned = [F(block_size=16), MambaSpec(block_size=64, mamba_cache_mode="align")]
    assert sizes(resolve(aligned, block_size=16, semantics="G2")) == (64, 16)
    with pytest.raises(ValueError, match="Invalid prefix_match_unit=32"):
        resolve([F(block_size=16), F(block_size=32)], block_size=16, prefix_match_unit=32, semantics="G2")


def test_g3_dcp_scales_only_attention_groups_and_pcp_is_gone():
    groups = [F(block_size=16), MambaSpec(block_size=32, mamba_cache_mode="align")]
    assert sizes(resolve(groups, block_size=16, dcp=2, semantics="G3")) == (32, 32)
    assert sizes(resolve([F(block_size=16)], block_size=16, dcp=2, pcp=4, semantics="G3")) == (32, 32)
    assert sizes(resolve([MambaSpec(block_size=64)], block_size=16, dcp=2, semantics="G3")) == (64, 64)
    # The switch alone (2ba984a5d0), before e126687a9a:
    assert sizes(resolve([F(block_size=16), F(block_size=32)], block_size=16, pcp=2, semantics="2ba984a5d0")) == (
        32,
        16,
    )


def test_g3_looks_inside_uniform_type_wrappers():
    groups = [F(block_size=32), UniformTypeKVCacheSpecs((MambaSpec(block_size=16), MambaSpec(block_size=16)))]
    assert sizes(resolve(groups, block_size=16, semantics="G2")) == (32, 16)
    assert sizes(resolve(groups, block_size=16, semantics="G3")) == (32, 32)
    as_list = [F(block_size=32), [MambaSpec(block_size=16), MambaSpec(block_size=16)]]
    assert resolve(as_list, block_size=16, semantics="G3") == resolve(groups, block_size=16, semantics="G3")


def test_g3_hashes_prefix_cacheable_groups_only_and_names_both_lists():
    groups = [F(block_size=16), CircularBufferSpec(block_size=4)]
    assert resolve(groups, block_size=16, semantics="G3") == (16, 16, 16)
    ok = [F(block_size=16), CircularBufferSpec(block_size=6)]
    assert sizes(resolve(ok, block_size=16, prefix_match_unit=8, semantics="G3")) == (48, 8)
    with pytest.raises(ValueError, match=r"Invalid prefix_match_unit=8.*sizes=\[16, 12\], prefix-cacheable=\[16, 12\]"):
        resolve([F(block_size=16), SlidingWindowSpec(block_size=12)], block_size=16, prefix_match_unit=8)
    only_circular = [CircularBufferSpec(block_size=8), CircularBufferSpec(block_size=12)]
    assert sizes(resolve(only_circular, block_size=8)) == (24, 4)  # none prefix-cacheable: all groups


def test_g3_per_state_prefix_alignment():
    # No partial Mamba group: the alignment is the scheduler size, which 4 divides.
    assert resolve([F(block_size=64, tokens_per_state=4), F(block_size=16)], block_size=16) == (64, 16, 64)
    # A partial align-mode Mamba group brings the alignment down to H, which 32 does not divide.
    groups = [F(block_size=16, tokens_per_state=32), MambaSpec(block_size=64, mamba_cache_mode="align")]
    with pytest.raises(ValueError, match=r"per-state compression. Got alignments=\[32\]"):
        resolve(groups, block_size=16)
    assert sizes(resolve(groups, block_size=16, semantics="2ba984a5d0")) == (64, 16)  # before e126687a9a
    partial = [F(block_size=16), MambaSpec(block_size=64, mamba_cache_mode="align")]
    assert resolve(partial, block_size=16) == (64, 16, 16)
    # dcp > 1: a Mamba group exactly at H counts as partial.
    at_h = [F(block_size=8, tokens_per_state=2), MambaSpec(block_size=16, mamba_cache_mode="align")]
    assert resolve(at_h, block_size=8, dcp=2) == (16, 16, 16)
    # Fractions and -1 are not alignments; circular buffers are not prefix-cacheable.
    ignored = [
        F(block_size=16, tokens_per_state=Fraction(1, 2)),
        CircularBufferSpec(block_size=16, tokens_per_state=64),
        MambaSpec(block_size=32, mamba_cache_mode="align"),
    ]
    assert resolve(ignored, block_size=16) == (32, 16, 16)


def test_bad_input_names_the_value():
    with pytest.raises(ValueError, match="block_size must be a positive integer, got 0"):
        resolve([F(block_size=16)], block_size=0)
    with pytest.raises(ValueError, match="mamba_cache_mode"):
        MambaSpec(block_size=16, mamba_cache_mode="some")
    with pytest.raises(ValueError, match="page_size_padded=10"):
        F(block_size=16, page_size_padded=10)


# ---------------------------------------------------------------- semantics lookup


def test_semantics_by_sha_prefix_preset_and_order():
    from kvref.semantics import SWITCHES, resolve_semantics

    assert [s.date for s in SWITCHES] == sorted(s.date for s in SWITCHES)
    sem = resolve_semantics("d6af803f434397222674e8ea5cc6f25b3a208e62")  # a full sha finds its prefix
    assert "zeroer-segment-stride" in sem and "attention-zeroing" not in sem
    assert "mamba-mode-backoff" in resolve_semantics("1cd75b3dd4")
    assert resolve_semantics("G3").on == resolve_semantics("e126687a9a").on
    assert resolve_semantics("latest").on == {s.name for s in SWITCHES}
    assert "resolve-block-sizes" not in resolve_semantics("4ff8c3c8f")
    with pytest.raises(ValueError, match="unknown semantics 'deadbeef0'"):
        resolve_semantics("deadbeef0")
    with pytest.raises(ValueError, match="does not exist before 4d51588e2"):
        resolve([F(block_size=16)], block_size=16, semantics="4ff8c3c8f")


def test_spec_page_sizes():
    assert F(block_size=16, num_kv_heads=8, head_size=128).page_size_bytes == 16 * 8 * 2 * 128 * 2
    assert MLAAttentionSpec(block_size=16, head_size=576).page_size_bytes == 16 * 576 * 2
    assert F(block_size=16, tokens_per_state=4, num_kv_heads=1, head_size=8).num_states == 4
    assert F(block_size=16, tokens_per_state=Fraction(1, 2)).num_states == 32
    assert MambaSpec(block_size=16).num_states == 1
    m = MambaSpec(block_size=16, state_bytes=100, mamba_cache_mode="all", num_speculative_blocks=1)
    assert m.max_memory_usage_bytes(100) == (7 + 1) * 100
    assert MambaSpec(block_size=16, state_bytes=100, mamba_cache_mode="align").max_memory_usage_bytes(100) == 200


# ---------------------------------------------------------------- needs_kv_cache_zeroing


def test_needs_kv_cache_zeroing_g1_and_g3():
    bf16, fp8 = F(block_size=16), F(block_size=16, dtype="fp8_e4m3")
    assert not needs_kv_cache_zeroing([bf16], semantics="G1")
    assert needs_kv_cache_zeroing([bf16, MambaSpec(block_size=16)], semantics="G1")
    assert not needs_kv_cache_zeroing([bf16, fp8], semantics="G1")
    assert needs_kv_cache_zeroing([bf16, fp8], semantics="G3")
    assert needs_kv_cache_zeroing([bf16, F(block_size=16, kv_quant_mode="per_token_head")])
    assert not needs_kv_cache_zeroing([fp8, SlidingWindowSpec(block_size=16, dtype="fp8_e4m3")])
    assert not needs_kv_cache_zeroing([])


# ---------------------------------------------------------------- property: never violates its own rules

_spec = st.one_of(
    st.builds(
        F,
        block_size=st.sampled_from([4, 8, 12, 16, 32, 48, 64]),
        tokens_per_state=st.sampled_from([1, 1, 2, 4, Fraction(1, 2)]),
    ),
    st.builds(SlidingWindowSpec, block_size=st.sampled_from([8, 16, 32])),
    st.builds(
        MambaSpec, block_size=st.sampled_from([8, 16, 64]), mamba_cache_mode=st.sampled_from(["none", "all", "align"])
    ),
    st.builds(CircularBufferSpec, block_size=st.sampled_from([4, 6, 16])),
)


@settings(max_examples=150, deadline=None)
@given(
    groups=st.lists(_spec, max_size=4),
    block_size=st.sampled_from([8, 16]),
    dcp=st.sampled_from([1, 2]),
    pcp=st.sampled_from([1, 2]),
    prefix=st.booleans(),
    unit=st.sampled_from([None, None, 4, 8, 5]),
    sem=st.sampled_from(["G1", "G2", "2ba984a5d0", "G3"]),
)
def test_resolve_never_breaks_its_own_divisibility_rules(groups, block_size, dcp, pcp, prefix, unit, sem):
    try:
        r = resolve(
            groups,
            block_size=block_size,
            dcp=dcp,
            pcp=pcp,
            enable_prefix_caching=prefix,
            prefix_match_unit=unit,
            semantics=sem,
        )
    except ValueError:
        return
    s, h, align = r
    assert s % h == 0
    if len(groups) > 1:
        scale = [g.block_size * (dcp if g.is_attention and sem in ("G3", "2ba984a5d0") else 1) for g in groups]
        assert s == math.lcm(*scale)
        hashing = [x for x, g in zip(scale, groups, strict=False) if g.prefix_cacheable or sem not in ("G3",)]
        hashing = hashing or scale
        assert h == s or all(x % h == 0 for x in hashing)
    if align is not None:
        assert align in (s, h)
        for g in groups:
            t = g.tokens_per_state
            if g.prefix_cacheable and isinstance(t, int) and t > 1:
                assert align % t == 0
    assert (align is not None) == (sem == "G3")
    assert isinstance(kvref.BlockSizes(*r), tuple)


def test_g3_no_prefix_caching_and_no_connector_backs_off_to_the_scheduler_size():
    groups = [F(block_size=16), F(block_size=24)]
    assert resolve(groups, block_size=16, enable_prefix_caching=False, semantics="G3") == (48, 48, 48)
    assert resolve(groups, block_size=16, enable_prefix_caching=False, connector_enabled=True, semantics="G3") == (
        48,
        8,
        48,
    )
    # the back-off comes before the divisibility check: a bad unit is not an error then
    assert sizes(resolve(groups, block_size=16, enable_prefix_caching=False, prefix_match_unit=5, semantics="G3")) == (
        48,
        48,
    )


@pytest.mark.parametrize("bad", [None, 3, b"G1"])
def test_semantics_of_the_wrong_type_is_a_value_error_naming_it(bad):
    with pytest.raises(ValueError, match=f"semantics must be a preset.*got {bad!r}"):
        resolve([F(block_size=16)], block_size=16, semantics=bad)
