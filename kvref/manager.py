"""KVCacheManagerSim: per-group block allocation over one pool, and new-block-id recording.

A small model of upstream's scheduler side (docs/design.md §13.3): one block pool
(block 0 is the null block; allocation pops the head of the free queue;
freed blocks, never hashed here, go back at its head from 520828789 on and at
its tail before), one single-type manager per KV cache group in
group order, each recording newly allocated block ids under the predicate of
the semantics in force, and a scheduler step that puts the drained ids in
`new_block_ids_to_zero`. Prefix-cache hits and blocks freed for leaving a
window (sliding window, Mamba's skipped blocks) are out of its scope: actions
carry no computed-token counts, so nothing is released before `free`.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from collections.abc import Sequence

from kvref.semantics import SemanticsLike, resolve_semantics
from kvref.specs import Group, MambaSpec, cdiv, group_spec, layer_specs

# The exact spec types G1 records for (subclasses such as sliding window do not); MLA from d2889722f.
G1_RECORDING_KINDS = ("full_attention", "mla")


NULL_BLOCK = 0


class BlockPool:
    def __init__(self, num_blocks: int, *, free_uncached_first: bool = True) -> None:
        if not isinstance(num_blocks, int) or num_blocks < 2:
            raise ValueError(f"num_blocks must be an integer >= 2 (block 0 is the null block), got {num_blocks!r}")
        self.num_blocks = num_blocks
        self.free = deque(range(1, num_blocks))
        self.free_uncached_first = free_uncached_first

    def get_new_blocks(self, n: int) -> list[int]:
        if n > len(self.free):
            raise ValueError(f"Cannot get {n} free blocks from the pool ({len(self.free)} free of {self.num_blocks})")
        return [self.free.popleft() for _ in range(n)]

    def free_blocks(self, ids: Sequence[int]) -> None:
        """Return blocks in eviction order (first evicted first). Nothing here has a block hash, so
        from 520828789 on they go to the head of the free queue, in order; before, to its tail."""
        ids = [i for i in ids if i != NULL_BLOCK]
        if self.free_uncached_first:
            self.free.extendleft(reversed(ids))
        else:
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

    def allocate(self, request: str, num_tokens: int) -> list[int]:
        blocks = self.req_blocks.setdefault(request, [])
        spec_blocks = getattr(self.spec, "num_speculative_blocks", 0)
        if isinstance(self.spec, MambaSpec) and self.spec.mamba_cache_mode == "align":
            ids = self._allocate_align(blocks, num_tokens, spec_blocks)
        else:
            # Mamba outside align mode allocates like attention, plus room for speculative tokens.
            need = cdiv(num_tokens + self.block_size * spec_blocks, self.block_size) - len(blocks)
            ids = self.pool.get_new_blocks(max(0, need))
            blocks.extend(ids)
        if self.records:
            self.new_block_ids.extend(ids)
        return ids

    def _allocate_align(self, blocks: list[int], num_tokens: int, spec_blocks: int) -> list[int]:
        # Align mode keeps only the running state (plus speculative) blocks real; earlier
        # positions hold the null block.
        required = cdiv(num_tokens, self.block_size) + spec_blocks
        if required <= len(blocks):
            return []
        had = len(blocks)
        skipped = required - spec_blocks - 1
        blocks.extend([NULL_BLOCK] * max(0, skipped - had))
        if had:  # speculative blocks of the last step move up past the skipped positions
            for i in range(had - spec_blocks, had):
                if i >= skipped:
                    break
                blocks.append(blocks[i])
                blocks[i] = NULL_BLOCK
        ids = self.pool.get_new_blocks(required - len(blocks))
        blocks.extend(ids)
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
        self.pool = BlockPool(num_blocks, free_uncached_first="free-uncached-first" in self.semantics)
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
        kinds = G1_RECORDING_KINDS if "mla-records" in self.semantics else G1_RECORDING_KINDS[:1]
        return getattr(group_spec(group), "kind", None) in kinds

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


def run_steps(
    groups: Sequence[Group],
    *,
    num_blocks: int,
    needs_zeroing: bool,
    steps: Sequence[Sequence[dict]],
    dcp: int = 1,
    pcp: int = 1,
    semantics: SemanticsLike = "latest",
) -> dict:
    """Drive a KVCacheManagerSim through steps of actions (the protocol's record op).

    An action is {"op": "allocate", "request": r, "num_tokens": n},
    {"op": "allocate_external", "request": r, "num_tokens": n, "async_load": bool}
    or {"op": "free", "request": r}; each step ends with a scheduler step.
    """
    sim = KVCacheManagerSim(
        groups, num_blocks=num_blocks, needs_zeroing=needs_zeroing, dcp=dcp, pcp=pcp, semantics=semantics
    )
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
    return {"new_block_ids_to_zero": out, "pending": sim.pending_new_block_ids(), "records": sim.records_new_block_ids}
