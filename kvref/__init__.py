"""kvref: a reference implementation of upstream vLLM's KV-cache pieces, per upstream commit.

`import kvref` needs no GPU, and torch only once the zeroer is used.
"""

from kvref.manager import BlockPool, KVCacheManagerSim
from kvref.resolve import BlockSizes, needs_kv_cache_zeroing, resolve_kv_cache_block_sizes
from kvref.semantics import PRESETS, SWITCHES, Semantics, Switch, resolve_semantics
from kvref.specs import (
    AttentionSpec,
    ChunkedLocalAttentionSpec,
    CircularBufferSpec,
    FullAttentionSpec,
    KVCacheSpec,
    MambaSpec,
    MLAAttentionSpec,
    SlidingWindowSpec,
    UniformTypeKVCacheSpecs,
)

__all__ = [
    "PRESETS",
    "SWITCHES",
    "AttentionSpec",
    "BlockPool",
    "BlockSizes",
    "ChunkedLocalAttentionSpec",
    "CircularBufferSpec",
    "FullAttentionSpec",
    "KVBlockZeroer",
    "KVCacheManagerSim",
    "KVCacheSpec",
    "KVLayer",
    "MLAAttentionSpec",
    "MambaSpec",
    "Semantics",
    "SlidingWindowSpec",
    "Switch",
    "UniformTypeKVCacheSpecs",
    "needs_kv_cache_zeroing",
    "resolve_kv_cache_block_sizes",
    "resolve_semantics",
]


def __getattr__(name):
    # The zeroer needs torch; keep `import kvref` cheap for the pure-Python pieces.
    if name in ("KVBlockZeroer", "KVLayer", "Segment"):
        from kvref import zeroer

        return getattr(zeroer, name)
    raise AttributeError(f"module 'kvref' has no attribute {name!r}")
