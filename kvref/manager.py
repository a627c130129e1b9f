"""KVCacheManagerSim: per-group block allocation over one pool, and new-block-id recording.

A small model of upstream's scheduler side (KVREF.md §3): one block pool
(block 0 is the null block; allocation pops the head of the free queue,
freed blocks join its tail), one single-type manager per KV cache group in
group order, each recording newly allocated block ids under the predicate of
the semantics in force, and a scheduler step that puts the drained ids in
`new_block_ids_to_zero`. Sliding-window eviction and prefix-cache hits are
out of its scope: it models which ids get recorded and when they drain.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Sequence

from kvref.semantics import SemanticsLike, resolve_semantics
from kvref.specs import Group, MambaSpec, cdiv, group_spec, layer_specs

# The exact spec types G1 records for (subclasses such as sliding window do not).
G1_RECORDING_KINDS = ("full_attention", "mla")


class BlockPool:
    def __init__(self, num_blocks: int) -> None:
        if not isinstance(num_blocks, int) or num_blocks < 2:
            raise ValueError(f"num_blocks must be an integer >= 2 (block 0 is the null block), got {num_blocks!r}")
        self.num_blocks = num_blocks
        self.free = deque(range(1, num_blocks))

    def get_new_blocks(self, n: int) -> list[int]:
        if n > len(self.free):
            raise ValueError(f"Cannot get {n} free blocks from the pool ({len(self.free)} free of {self.num_blocks})")
        return [self.free.popleft() for _ in range(n)]

    def free_blocks(self, ids: Sequence[int]) -> None:
        self.free.extend(ids)


@dataclass
class SingleTypeManagerSim:
    group: int
    spec: object
    block_size: int
    records: bool
    pool: BlockPool
    new_block_ids: list[int] = field(default_factory=list)
    req_blocks: dict[str, list[int]] = field(default_factory=dict)

    def _blocks_needed(self, request: str, num_tokens: int) -> int:
        have = len(self.req_blocks.get(request, []))
        if isinstance(self.spec, MambaSpec) and self.spec.mamba_cache_mode != "all":
            # One running state block (plus speculative ones) per request, whatever its length.
            return max(0, 1 + self.spec.num_speculative_blocks - have)
        return max(0, cdiv(num_tokens, self.block_size) - have)

    def allocate(self, request: str, num_tokens: int) -> list[int]:
        ids = self.pool.get_new_blocks(self._blocks_needed(request, num_tokens))
        self.req_blocks.setdefault(request, []).extend(ids)
        if self.records:
            self.new_block_ids.extend(ids)
        return ids

    def free(self, request: str) -> None:
        # Upstream frees a request's blocks tail first, so the tail is evicted first.
        self.pool.free_blocks(list(reversed(self.req_blocks.pop(request, []))))

    def take_new_block_ids(self) -> list[int]:
        ids, self.new_block_ids = self.new_block_ids, []
        return ids


class KVCacheManagerSim:
    """allocate/free per group over one pool; records new block ids per upstream predicate."""

    def __init__(
        self,
        groups: Sequence[Group],
        *,
        num_blocks: int,
        needs_zeroing: bool,
        dcp: int = 1,
        pcp: int = 1,
        semantics: SemanticsLike = "latest",
    ) -> None:
        self.semantics = resolve_semantics(semantics)
        if "record-new-block-ids" not in self.semantics:
            raise ValueError(f"new block ids are not recorded before 4ff8c3c8f (semantics {self.semantics.label})")
        self.needs_zeroing = bool(needs_zeroing)
        self.pool = BlockPool(num_blocks)
        self.managers = [
            SingleTypeManagerSim(i, group_spec(g), self._block_size(g, dcp, pcp), self._records(g), self.pool)
            for i, g in enumerate(groups)
        ]
        self._async_ids: set[int] = set()

    def _block_size(self, group: Group, dcp: int, pcp: int) -> int:
        specs = layer_specs(group)
        if "dcp-attention-only" in self.semantics:
            return specs[0].block_size * (dcp if all(s.is_attention for s in specs) else 1)
        return specs[0].block_size * dcp * pcp

    def _records(self, group: Group) -> bool:
        specs = layer_specs(group)
        if "attention-zeroing" in self.semantics:
            return self.needs_zeroing and all(s.is_attention for s in specs)
        spec = group_spec(group)
        return getattr(spec, "kind", None) in G1_RECORDING_KINDS

    @property
    def records_new_block_ids(self) -> list[bool]:
        return [m.records for m in self.managers]

    def allocate_slots(self, request: str, num_tokens: int) -> list[list[int]]:
        """allocate_new_blocks on every manager: at least num_tokens slots for the request."""
        return [m.allocate(request, num_tokens) for m in self.managers]

    def allocate_external(self, request: str, num_tokens: int, *, async_load: bool = False) -> list[list[int]]:
        """allocate_external_computed_blocks: blocks a KV connector fills (asynchronously when async_load)."""
        got = [m.allocate(request, num_tokens) for m in self.managers]
        if async_load:
            self._async_ids.update(i for ids in got for i in ids)
        return got

    def free(self, request: str) -> None:
        for m in self.managers:
            m.free(request)

    def take_new_block_ids(self) -> list[int]:
        """The managers' drains concatenated in manager order."""
        return [i for m in self.managers for i in m.take_new_block_ids()]

    def pending_new_block_ids(self) -> list[int]:
        return [len(m.new_block_ids) for m in self.managers]

    def schedule_step(self) -> list[int] | None:
        """SchedulerOutput.new_block_ids_to_zero for one step."""
        if "attention-zeroing" in self.semantics:
            ids = self.take_new_block_ids()  # drained every step, needed or not
            # Blocks an async KV load is about to write must not be zeroed under it.
            ids = [i for i in ids if i not in self._async_ids]
            self._async_ids.clear()
            return (ids or None) if self.needs_zeroing else None
        self._async_ids.clear()
        if not self.needs_zeroing:
            return None  # G1 quirk: never drained, so the lists keep growing
        return self.take_new_block_ids() or None


def run_steps(groups: Sequence[Group], *, num_blocks: int, needs_zeroing: bool, steps: Sequence[Sequence[dict]],
              dcp: int = 1, pcp: int = 1, semantics: SemanticsLike = "latest") -> dict:
    """Drive a KVCacheManagerSim through steps of actions (the protocol's record op).

    An action is {"op": "allocate", "request": r, "num_tokens": n},
    {"op": "allocate_external", "request": r, "num_tokens": n, "async_load": bool}
    or {"op": "free", "request": r}; each step ends with a scheduler step.
    """
    sim = KVCacheManagerSim(groups, num_blocks=num_blocks, needs_zeroing=needs_zeroing, dcp=dcp, pcp=pcp,
                            semantics=semantics)
    out = []
    for step in steps:
        for a in step:
            op = a.get("op")
            if op == "allocate":
                sim.allocate_slots(a["request"], a["num_tokens"])
            elif op == "allocate_external":
                sim.allocate_external(a["request"], a["num_tokens"], async_load=bool(a.get("async_load")))
            elif op == "free":
                sim.free(a["request"])
            else:
                raise ValueError(f"unknown action {op!r}: use allocate, allocate_external or free")
        out.append(sim.schedule_step())
    return {"new_block_ids_to_zero": out, "pending": sim.pending_new_block_ids(),
            "records": sim.records_new_block_ids}
