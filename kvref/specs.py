"""KV-cache spec classes: the facts about a layer's cache that the semantics read.

Plain frozen dataclasses, no torch. `kind` is the spec's protocol name; the
exact-type questions upstream asks (G1 records new block ids only for the
exact full-attention types) are asked of `kind`, never of isinstance.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from collections.abc import Iterable, Sequence

DTYPE_BYTES = {
    "float32": 4,
    "float": 4,
    "bfloat16": 2,
    "float16": 2,
    "half": 2,
    "fp8": 1,
    "fp8_e4m3": 1,
    "fp8_e5m2": 1,
    "float8_e4m3fn": 1,
    "float8_e5m2": 1,
    "int8": 1,
    "uint8": 1,
}
MAMBA_CACHE_MODES = ("none", "all", "align")


def dtype_bytes(dtype: str) -> int:
    try:
        return DTYPE_BYTES[dtype]
    except KeyError:
        raise ValueError(f"unknown dtype {dtype!r}: known are {sorted(DTYPE_BYTES)}") from None


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


def _positive(name: str, value: int) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")


@dataclass(frozen=True)
class KVCacheSpec:
    block_size: int
    tokens_per_state: int | Fraction | float = 1
    kind = "spec"
    prefix_cacheable = True
    is_attention = False

    def __post_init__(self) -> None:
        _positive("block_size", self.block_size)

    @property
    def num_states(self) -> int:
        tps = self.tokens_per_state
        return int(Fraction(self.block_size) // Fraction(tps)) if tps > 0 else 1

    @property
    def page_size_bytes(self) -> int:
        raise NotImplementedError

    def max_memory_usage_bytes(self, max_model_len: int) -> int:
        return cdiv(max_model_len, self.block_size) * self.page_size_bytes


@dataclass(frozen=True)
class AttentionSpec(KVCacheSpec):
    num_kv_heads: int = 1
    head_size: int = 128
    dtype: str = "bfloat16"
    kv_quant_mode: str | None = None  # with dtype, what "mixed KV precision" compares
    page_size_padded: int | None = None
    is_attention = True

    def __post_init__(self) -> None:
        super().__post_init__()
        _positive("num_kv_heads", self.num_kv_heads)
        _positive("head_size", self.head_size)
        dtype_bytes(self.dtype)
        if self.page_size_padded is not None and self.page_size_padded < self.real_page_size_bytes:
            raise ValueError(
                f"page_size_padded={self.page_size_padded} is smaller than the unpadded page size "
                f"{self.real_page_size_bytes}"
            )

    @property
    def state_bytes(self) -> int:  # K and V
        return 2 * self.head_size * dtype_bytes(self.dtype)

    @property
    def real_page_size_bytes(self) -> int:
        return self.num_kv_heads * self.num_states * self.state_bytes

    @property
    def page_size_bytes(self) -> int:
        return self.page_size_padded if self.page_size_padded is not None else self.real_page_size_bytes


@dataclass(frozen=True)
class FullAttentionSpec(AttentionSpec):
    kind = "full_attention"


@dataclass(frozen=True)
class MLAAttentionSpec(FullAttentionSpec):
    kind = "mla"

    @property
    def state_bytes(self) -> int:  # one latent vector, no separate V
        return self.head_size * dtype_bytes(self.dtype)


@dataclass(frozen=True)
class SlidingWindowSpec(AttentionSpec):
    sliding_window: int = 4096
    kind = "sliding_window"


@dataclass(frozen=True)
class ChunkedLocalAttentionSpec(AttentionSpec):
    attention_chunk_size: int = 8192
    kind = "chunked_local"


@dataclass(frozen=True)
class CircularBufferSpec(AttentionSpec):
    """A ring of raw keys still being compressed: one block per request, never prefix-cached."""

    kind = "circular_buffer"
    prefix_cacheable = False

    def max_memory_usage_bytes(self, max_model_len: int) -> int:
        return self.page_size_bytes


@dataclass(frozen=True)
class MambaSpec(KVCacheSpec):
    tokens_per_state: int | Fraction | float = -1
    state_bytes: int = 4096  # all conv + SSM state of one request, per layer
    mamba_cache_mode: str = "none"
    num_speculative_blocks: int = 0
    page_size_padded: int | None = None
    kind = "mamba"

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.mamba_cache_mode not in MAMBA_CACHE_MODES:
            raise ValueError(f"mamba_cache_mode must be one of {MAMBA_CACHE_MODES}, got {self.mamba_cache_mode!r}")

    @property
    def page_size_bytes(self) -> int:
        return self.page_size_padded if self.page_size_padded is not None else self.state_bytes

    def max_memory_usage_bytes(self, max_model_len: int) -> int:
        if self.mamba_cache_mode == "all":
            pages = cdiv(max_model_len, self.block_size) + self.num_speculative_blocks
        elif self.mamba_cache_mode == "align":
            pages = 2 + self.num_speculative_blocks
        else:
            pages = 1 + self.num_speculative_blocks
        return pages * self.page_size_bytes


@dataclass(frozen=True)
class UniformTypeKVCacheSpecs:
    """A group whose layers share one spec type (upstream's uniform-type wrapper)."""

    specs: tuple[KVCacheSpec, ...] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        if not self.specs:
            raise ValueError("UniformTypeKVCacheSpecs needs at least one spec")
        kinds = {s.kind for s in self.specs}
        if len(kinds) > 1:
            raise ValueError(f"UniformTypeKVCacheSpecs mixes spec types {sorted(kinds)}")

    @property
    def block_size(self) -> int:
        return self.specs[0].block_size

    @property
    def prefix_cacheable(self) -> bool:
        return all(s.prefix_cacheable for s in self.specs)


Group = KVCacheSpec | UniformTypeKVCacheSpecs | Sequence[KVCacheSpec]
KINDS = {
    c.kind: c
    for c in (
        FullAttentionSpec,
        MLAAttentionSpec,
        SlidingWindowSpec,
        ChunkedLocalAttentionSpec,
        CircularBufferSpec,
        MambaSpec,
    )
}


def layer_specs(group: Group) -> tuple[KVCacheSpec, ...]:
    """The layer specs of a group, looking inside a uniform-type wrapper."""
    if isinstance(group, KVCacheSpec):
        return (group,)
    if isinstance(group, UniformTypeKVCacheSpecs):
        return group.specs
    specs = tuple(group)
    if not specs or not all(isinstance(s, KVCacheSpec) for s in specs):
        raise ValueError(f"a KV cache group must be a spec or a non-empty list of specs, got {group!r}")
    return UniformTypeKVCacheSpecs(specs).specs


def group_spec(group: Group) -> KVCacheSpec | UniformTypeKVCacheSpecs:
    """What upstream stores as the group's spec: the spec itself, or the wrapper for several layers."""
    if isinstance(group, (KVCacheSpec, UniformTypeKVCacheSpecs)):
        return group
    specs = layer_specs(group)
    return specs[0] if len(specs) == 1 else UniformTypeKVCacheSpecs(specs)


def spec_from_json(d: dict) -> KVCacheSpec:
    """{"kind": "full_attention", "block_size": 16, ...} -> a spec (protocol and vectors)."""
    if not isinstance(d, dict) or d.get("kind") not in KINDS:
        raise ValueError(f"a spec needs a kind among {sorted(KINDS)}, got {d!r}")
    args = {k: v for k, v in d.items() if k != "kind"}
    tps = args.get("tokens_per_state")
    if isinstance(tps, str):
        args["tokens_per_state"] = Fraction(tps)
    try:
        return KINDS[d["kind"]](**args)
    except TypeError as e:
        raise ValueError(f"bad fields for a {d['kind']} spec: {e}") from None


def spec_to_json(spec: KVCacheSpec) -> dict:
    from dataclasses import fields

    out: dict[str, object] = {"kind": spec.kind}
    for f in fields(spec):
        v = getattr(spec, f.name)
        if f.default is not v and v != f.default:
            out[f.name] = str(v) if isinstance(v, Fraction) else v
    out.setdefault("block_size", spec.block_size)
    return out


def groups_from_json(groups: Iterable) -> list[Group]:
    return [[spec_from_json(s) for s in g] if isinstance(g, list) else spec_from_json(g) for g in groups]
