"""Block-size resolution and the zeroing predicate, per upstream commit (docs/design.md §13.1, §13.2)."""

from __future__ import annotations

import math
from fractions import Fraction
from typing import NamedTuple
from collections.abc import Sequence

from kvref.semantics import SemanticsLike, resolve_semantics
from kvref.specs import AttentionSpec, Group, KVCacheSpec, MambaSpec, group_spec, layer_specs


class BlockSizes(NamedTuple):
    scheduler_block_size: int
    hash_block_size: int
    # The granularity a prefix-cache hit is reported at. None before
    # e126687a9a: that generation had no such value in this function.
    cache_hit_alignment: int | None = None


def _check_positive(**values: int) -> None:
    for name, v in values.items():
        if not isinstance(v, int) or isinstance(v, bool) or v < 1:
            raise ValueError(f"{name} must be a positive integer, got {v!r}")


def resolve_kv_cache_block_sizes(
    groups: Sequence[Group],
    *,
    block_size: int,
    dcp: int = 1,
    pcp: int = 1,
    enable_prefix_caching: bool = True,
    connector_enabled: bool = False,
    prefix_match_unit: int | None = None,
    semantics: SemanticsLike = "latest",
) -> BlockSizes:
    """(scheduler_block_size, hash_block_size, cache_hit_alignment) as upstream computes them."""
    sem = resolve_semantics(semantics)
    if "resolve-block-sizes" not in sem:
        raise ValueError(f"resolve_kv_cache_block_sizes does not exist before 4d51588e2 (semantics {sem.label})")
    _check_positive(block_size=block_size, dcp=dcp, pcp=pcp)
    if prefix_match_unit is not None:
        _check_positive(prefix_match_unit=prefix_match_unit)
    g3 = "prefix-cacheable" in sem
    knob = "prefix_match_unit" if "mamba-mode-backoff" in sem else "hash_block_size"
    specs = [layer_specs(g) for g in groups]
    alignment_on = g3  # cache_hit_alignment is reported from e126687a9a on

    sizes = _group_sizes(sem, groups, specs, block_size, dcp, pcp)
    if isinstance(sizes, int):  # one group: every size is its size
        return BlockSizes(sizes, sizes, sizes if alignment_on else None)
    scheduler = math.lcm(*sizes)
    backoff = BlockSizes(scheduler, scheduler, scheduler if alignment_on else None)
    if not (enable_prefix_caching or connector_enabled) or _mamba_backs_off(sem, groups, specs, block_size):
        return backoff

    hashing = (
        [size for g, size in zip(groups, sizes, strict=False) if group_spec(g).prefix_cacheable] or sizes
        if g3
        else sizes
    )
    unit = prefix_match_unit if prefix_match_unit is not None else math.gcd(*hashing)
    if any(size % unit for size in hashing):
        if g3:
            raise ValueError(
                f"Invalid prefix_match_unit={unit}; prefix-cacheable KV cache group block sizes must be "
                f"divisible by prefix_match_unit. Got group block sizes={sizes}, prefix-cacheable={hashing}."
            )
        raise ValueError(
            f"Invalid {knob}={unit}; all KV cache group block sizes must be divisible by {knob}. "
            f"Got group block sizes={sizes}."
        )
    if not g3:
        return BlockSizes(scheduler, unit, None)
    return BlockSizes(scheduler, unit, _hit_alignment(specs, sizes, unit, scheduler, dcp))


def _group_sizes(sem, groups: Sequence[Group], specs: list, block_size: int, dcp: int, pcp: int) -> int | list[int]:
    """Each group's block size, scaled by context parallelism where the generation does; one int for
    a single group (its size is the answer)."""
    if "dcp-attention-only" in sem:
        sizes = [s[0].block_size * dcp if all(x.is_attention for x in s) else s[0].block_size for s in specs]
        if len(groups) <= 1:
            return sizes[0] if sizes else block_size * dcp
        return sizes
    if len(groups) <= 1:
        return block_size * dcp * pcp
    if dcp != 1 or pcp != 1:
        raise ValueError(
            "Hybrid KV cache groups with multiple block sizes do not support context parallelism "
            f"(dcp_world_size/pcp_world_size > 1); got dcp={dcp}, pcp={pcp}."
        )
    return [s[0].block_size for s in specs]


def _mamba_backs_off(sem, groups: Sequence[Group], specs: list, block_size: int) -> bool:
    """Whether a Mamba layer outside align mode makes prefix caching back off to the scheduler size."""
    if "prefix-cacheable" in sem:  # any Mamba layer, looking inside wrappers, outside align mode
        return any(isinstance(x, MambaSpec) and x.mamba_cache_mode != "align" for s in specs for x in s)
    if "mamba-mode-backoff" in sem:  # the group's own spec only: a wrapper is not a MambaSpec
        return any(isinstance(gs := group_spec(g), MambaSpec) and gs.mamba_cache_mode != "align" for g in groups)
    # G1: a Mamba group's block size differing from the cache block size stands for "not align"
    return any(isinstance(group_spec(g), MambaSpec) and group_spec(g).block_size != block_size for g in groups)


def _hit_alignment(specs: list, sizes: list[int], unit: int, scheduler: int, dcp: int) -> int:
    """cache_hit_alignment (from e126687a9a on): the hash unit where an align-mode Mamba group reports
    partial hits, else the scheduler size; it must be a multiple of every spec's per-state compression."""
    alignments = sorted(
        {
            x.tokens_per_state
            for s in specs
            for x in s
            if x.prefix_cacheable and _is_int(x.tokens_per_state) and x.tokens_per_state > 1
        }
    )
    partial = any(
        isinstance(x, MambaSpec)
        and x.mamba_cache_mode == "align"
        and ((dcp == 1 and size > unit) or (dcp > 1 and size >= unit))
        for s, size in zip(specs, sizes, strict=False)
        for x in s
    )
    hit_alignment = unit if partial else scheduler
    if any(hit_alignment % a for a in alignments):
        raise ValueError(
            f"Invalid prefix_match_unit={unit}; prefix-cache boundaries must align with each spec's "
            f"per-state compression. Got alignments={[int(a) for a in alignments]} "
            f"for cache_hit_alignment={hit_alignment}."
        )
    return hit_alignment


def _is_int(v) -> bool:
    if isinstance(v, bool):
        return False
    if isinstance(v, int):
        return True
    return isinstance(v, Fraction) and v.denominator == 1


def needs_kv_cache_zeroing(layers: Sequence[KVCacheSpec], *, semantics: SemanticsLike = "latest") -> bool:
    """KVCacheConfig.needs_kv_cache_zeroing over all layer specs of a config."""
    sem = resolve_semantics(semantics)
    if "record-new-block-ids" not in sem:
        return False
    if any(isinstance(x, MambaSpec) for x in layers):
        return True
    if "attention-zeroing" not in sem:
        return False
    precisions = {(x.dtype, x.kv_quant_mode) for x in layers if isinstance(x, AttentionSpec)}
    return len(precisions) > 1
