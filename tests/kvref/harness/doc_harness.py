"""A conformance harness written from docs/protocol.md alone: plain Python, no kvref, no torch.

usage: doc_harness.py SEMANTICS [--mutant NAME]

SEMANTICS is a preset (G1, G2, G3, latest) or a switch name; the switch list
and the rules are the ones docs/protocol.md states. It is the test that the
doc is enough to implement the protocol (tests/kvref/test_protocol_doc.py),
and, with `--mutant`, the reference harness of benchmarks/kvref_mutants.py:
each mutant is one planted single-point bug, named in MUTANTS.
"""

from __future__ import annotations

import itertools
import json
import math
import sys
from collections import deque
from fractions import Fraction

SWITCHES = [
    "record-new-block-ids",
    "zeroer-full-attention-subclasses",
    "resolve-block-sizes",
    "mla-records",
    "free-uncached-first",
    "g1-pin",
    "mamba-mode-backoff",
    "zeroer-fresh-staging",
    "zeroer-segment-stride",
    "attention-zeroing",
    "zeroer-bounded-grid",
    "tokens-per-state",
    "dcp-attention-only",
    "prefix-cacheable",
]
PRESETS = {"G1": "g1-pin", "G2": "mamba-mode-backoff", "G3": "prefix-cacheable", "latest": SWITCHES[-1]}
MUTANTS = (
    "ignore-prefix-caching",
    "g1-backoff-by-mode",
    "g3-wrapper-blind",
    "dcp-scales-mamba",
    "circular-buffer-hashed",
    "no-alignment-check",
    "unit-not-checked",
    "mixed-precision-ignored",
    "g1-records-subclasses",
    "free-to-tail",
    "async-ids-zeroed",
    "pool-never-exhausted",
    "g1-after-dims-segments",
    "g1-page-not-stride",
    "stride-not-checked",
    "g1-zeroes-sliding-window",
    "ids-not-checked",
    "mla-not-recorded",
    "mla-not-zeroed",
    "non-uniform-accepted",
    "cp-error-missing",
    "past-end-not-refused",
)
ON: set[str] = set()
MUTANT = ""


class Refuse(Exception):
    """The op's ValueError."""


def on(name: str) -> bool:
    return name in ON


# ---------------------------------------------------------------- specs and groups


def layers(group) -> list[dict]:
    return group if isinstance(group, list) else [group]


def own(group) -> dict | None:
    """The group's own spec; None for a wrapper (a list of two or more specs is no spec type)."""
    if isinstance(group, dict):
        return group
    return group[0] if len(group) == 1 else None


def attention(spec: dict) -> bool:
    return spec["kind"] != "mamba"


def tps(spec: dict):
    v = spec.get("tokens_per_state", -1 if spec["kind"] == "mamba" else 1)
    return Fraction(v) if isinstance(v, str) else v


def cacheable(spec: dict) -> bool:
    return spec["kind"] != "circular_buffer" or MUTANT == "circular-buffer-hashed"


def mamba_not_align(spec: dict | None) -> bool:
    return spec is not None and spec["kind"] == "mamba" and spec.get("mamba_cache_mode", "none") != "align"


# ---------------------------------------------------------------- resolve_block_sizes


def resolve(a: dict) -> dict:
    groups, bs = a["groups"], a["block_size"]
    dcp, pcp = a.get("dcp", 1), a.get("pcp", 1)
    g3 = on("prefix-cacheable")

    def out(sched, hsize, align):
        r = {"scheduler_block_size": sched, "hash_block_size": hsize}
        if g3:
            r["cache_hit_alignment"] = align
        return r

    if on("dcp-attention-only"):

        def scaled(g):
            return all(attention(s) for s in layers(g)) or MUTANT == "dcp-scales-mamba"

        sizes = [layers(g)[0]["block_size"] * (dcp if scaled(g) else 1) for g in groups]
        if len(groups) <= 1:
            size = sizes[0] if sizes else bs * dcp
            return out(size, size, size)
    else:
        if len(groups) <= 1:
            return out(bs * dcp * pcp, bs * dcp * pcp, bs * dcp * pcp)
        if (dcp != 1 or pcp != 1) and MUTANT != "cp-error-missing":
            raise Refuse("hybrid groups with context parallelism")
        sizes = [layers(g)[0]["block_size"] for g in groups]
    sched = math.lcm(*sizes)
    if (
        not (a.get("enable_prefix_caching", True) or a.get("connector_enabled", False))
        and MUTANT != "ignore-prefix-caching"
    ):
        return out(sched, sched, sched)
    if g3 and MUTANT != "g3-wrapper-blind":
        backoff = any(mamba_not_align(s) for g in groups for s in layers(g))
    elif g3 or on("mamba-mode-backoff") or MUTANT == "g1-backoff-by-mode":
        backoff = any(mamba_not_align(own(g)) for g in groups)
    else:
        backoff = any(own(g) is not None and own(g)["kind"] == "mamba" and own(g)["block_size"] != bs for g in groups)
    if backoff:
        return out(sched, sched, sched)
    hashing = sizes
    if g3:
        hashing = [n for g, n in zip(groups, sizes, strict=False) if all(cacheable(s) for s in layers(g))] or sizes
    unit = a.get("prefix_match_unit")
    if unit is None:
        unit = math.gcd(*hashing)
    if any(n % unit for n in hashing) and MUTANT != "unit-not-checked":
        raise Refuse("prefix_match_unit does not divide")
    if not g3:
        return out(sched, unit, None)
    aligns = {
        tps(s)
        for g in groups
        for s in layers(g)
        if cacheable(s) and not isinstance(tps(s), bool) and Fraction(tps(s)).denominator == 1 and tps(s) > 1
    }
    partial = any(
        s["kind"] == "mamba"
        and s.get("mamba_cache_mode", "none") == "align"
        and ((dcp == 1 and n > unit) or (dcp > 1 and n >= unit))
        for g, n in zip(groups, sizes, strict=False)
        for s in layers(g)
    )
    hit = unit if partial else sched
    if any(hit % int(x) for x in aligns) and MUTANT != "no-alignment-check":
        raise Refuse("cache_hit_alignment")
    return out(sched, unit, hit)


# ---------------------------------------------------------------- needs_kv_cache_zeroing


def needs_zeroing(a: dict) -> dict:
    specs = a["layers"]
    if any(s["kind"] == "mamba" for s in specs):
        return {"needs_kv_cache_zeroing": True}
    if not on("attention-zeroing") or MUTANT == "mixed-precision-ignored":
        return {"needs_kv_cache_zeroing": False}
    kinds = {(s.get("dtype", "bfloat16"), s.get("kv_quant_mode")) for s in specs if attention(s)}
    return {"needs_kv_cache_zeroing": len(kinds) > 1}


# ---------------------------------------------------------------- record_new_block_ids


def _manager(g: dict, needs: bool) -> dict:
    """One group's manager: its spec, block size, whether it records new block ids, and its state."""
    spec = own(g)
    if on("attention-zeroing"):
        rec = needs and all(attention(s) for s in layers(g))
    else:
        kinds = ["full_attention"] + (["mla"] if on("mla-records") and MUTANT != "mla-not-recorded" else [])
        if MUTANT == "g1-records-subclasses":
            kinds += ["sliding_window", "chunked_local", "circular_buffer"]
        rec = spec is not None and spec["kind"] in kinds
    return {"spec": spec, "bs": layers(g)[0]["block_size"], "rec": rec, "new": [], "blocks": {}}


def record(a: dict) -> dict:
    n = a["num_blocks"]
    free = deque(range(1, n))
    needs = a["needs_zeroing"]

    def take(k: int) -> list[int]:
        if k > len(free):
            if MUTANT == "pool-never-exhausted":
                return []
            raise Refuse("pool exhausted")
        return [free.popleft() for _ in range(k)]

    mgrs = [_manager(g, needs) for g in a["groups"]]

    def allocate(m, req: str, tokens: int) -> list[int]:
        blocks = m["blocks"].setdefault(req, [])
        spec, bs = m["spec"], m["bs"]
        sb = spec.get("num_speculative_blocks", 0) if spec is not None and spec["kind"] == "mamba" else 0
        if spec is not None and spec["kind"] == "mamba" and spec.get("mamba_cache_mode", "none") == "align":
            required = -(-tokens // bs) + sb
            if required <= len(blocks):
                return []
            had = len(blocks)
            skipped = required - sb - 1
            blocks.extend([0] * max(0, skipped - had))
            for i in range(had - sb, had) if had else ():
                if i >= skipped:
                    break
                blocks.append(blocks[i])
                blocks[i] = 0
            ids = take(required - len(blocks))
        else:
            ids = take(max(0, -(-(tokens + bs * sb) // bs) - len(blocks)))
        blocks.extend(ids)
        if m["rec"]:
            m["new"].extend(ids)
        return ids

    async_ids: set[int] = set()
    out = []
    for step in a["steps"]:
        for act in step:
            if act["op"] in ("allocate", "allocate_external"):
                for m in mgrs:
                    got = allocate(m, act["request"], act["num_tokens"])
                    if act["op"] == "allocate_external" and act.get("async_load"):
                        async_ids.update(got)
            elif act["op"] == "free":
                for m in mgrs:
                    ids = [i for i in reversed(m["blocks"].pop(act["request"], [])) if i != 0]
                    if on("free-uncached-first") and MUTANT != "free-to-tail":
                        free.extendleft(reversed(ids))
                    else:
                        free.extend(ids)
            else:
                raise Refuse("unknown action")
        if on("attention-zeroing"):
            ids = [i for m in mgrs for i in m["new"]]
            for m in mgrs:
                m["new"] = []
            if MUTANT != "async-ids-zeroed":
                ids = [i for i in ids if i not in async_ids]
            out.append((ids or None) if needs else None)
        elif needs:
            ids = [i for m in mgrs for i in m["new"]]
            for m in mgrs:
                m["new"] = []
            out.append(ids or None)
        else:
            out.append(None)
        async_ids.clear()
    return {"new_block_ids_to_zero": out, "pending": [len(m["new"]) for m in mgrs]}


# ---------------------------------------------------------------- zero_blocks


def element_bytes(t: dict, kernel_block: int) -> list[int]:
    """Byte offsets of every byte of every element of one kernel block of a described tensor."""
    el, bd = t["element_size"], t["block_dim"]
    ranges = [range(kernel_block, kernel_block + 1) if d == bd else range(n) for d, n in enumerate(t["shape"])]
    out = []
    for idx in itertools.product(*ranges):
        start = t["offset"] + sum(i * s * el for i, s in zip(idx, t["strides"], strict=False))
        out.extend(range(start, start + el))
    return out


def zeroes(kind: str) -> bool:
    if on("attention-zeroing") or MUTANT == "g1-zeroes-sliding-window":
        return kind != "mamba"
    if on("zeroer-full-attention-subclasses") and MUTANT != "mla-not-zeroed":
        return kind in ("full_attention", "mla")
    return kind == "full_attention"


def zero(a: dict) -> dict:
    size, f = a["buffer_bytes"], a["fill"]
    start = bytearray((i * f["mul"] + f["add"]) % f["mod"] + 1 for i in range(size))
    buf = bytearray(start)
    tensors = a["tensors"]
    for t in tensors:
        if t["element_size"] not in (1, 2, 4, 8) or t["offset"] % t["element_size"] or size % t["element_size"]:
            raise Refuse("misaligned")
    whole = not on("zeroer-segment-stride") and MUTANT != "g1-page-not-stride"
    plans, seen = [], set()
    for t in tensors:
        if not zeroes(t.get("kind", "full_attention")) or t["offset"] in seen or 0 in t["shape"]:
            continue
        seen.add(t["offset"])
        el, bd, r = t["element_size"], t["block_dim"], t.get("ratio", 1)
        stride = t["strides"][bd] * el
        if (stride % 4 or stride == 0) and MUTANT != "stride-not-checked":
            raise Refuse("stride")
        dims = range(t["shape"].__len__()) if MUTANT == "g1-after-dims-segments" else range(bd)
        segs_dims = [d for d in dims if d != bd and t["strides"][d] * el > stride]
        if whole:
            page = stride
        else:
            inner = [d for d in range(len(t["shape"])) if d != bd and t["strides"][d] * el <= stride]
            page = el + sum((t["shape"][d] - 1) * t["strides"][d] * el for d in inner)
            if page > stride:
                raise Refuse("overlap")
        segs = [
            t["offset"] + sum(i * t["strides"][d] * el for i, d in zip(idx, segs_dims, strict=False))
            for idx in itertools.product(*(range(t["shape"][d]) for d in segs_dims))
        ]
        plans.append((t, stride, page, r, segs))
    if not on("zeroer-bounded-grid") and len({p[2] * p[3] for p in plans}) > 1 and MUTANT != "non-uniform-accepted":
        raise Refuse("non-uniform")
    ids = a["block_ids"]
    if ids and plans:
        pool = min(t["shape"][t["block_dim"]] // r for t, _, _, r, _ in plans)
        if MUTANT == "ids-not-checked":
            ids = [i for i in ids if 0 <= i < pool]
        if any(i < 0 or i >= pool for i in ids):
            raise Refuse("ids")
        for _t, stride, _page, r, segs in plans:
            if ids and whole and max(segs) + (max(ids) + 1) * r * stride > size and MUTANT != "past-end-not-refused":
                raise Refuse("past the end")
        for t, stride, _page, r, segs in plans:
            for b in ids:
                if whole:
                    for s in segs:
                        lo, hi = s + b * r * stride, min(size, s + (b + 1) * r * stride)
                        buf[lo:hi] = bytes(hi - lo)
                else:
                    for k in range(b * r, b * r + r):
                        for i in element_bytes(t, k):
                            buf[i] = 0
    nb = min(t["shape"][t["block_dim"]] // t.get("ratio", 1) for t in tensors)
    states = []
    for b in range(nb):
        where = [
            i
            for t in tensors
            for k in range(b * t.get("ratio", 1), (b + 1) * t.get("ratio", 1))
            for i in element_bytes(t, k)
        ]
        zero_all = all(buf[i] == 0 for i in where)
        states.append("zero" if zero_all else "untouched" if all(buf[i] == start[i] for i in where) else "mixed")
    h = 0xCBF29CE484222325
    for x in buf:
        h = ((h ^ x) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return {"blocks": states, "digest": f"{h:016x}"}


OPS = {
    "resolve_block_sizes": resolve,
    "needs_kv_cache_zeroing": needs_zeroing,
    "record_new_block_ids": record,
    "zero_blocks": zero,
}


def main() -> int:
    global MUTANT
    args = sys.argv[1:]
    if "--mutant" in args:
        i = args.index("--mutant")
        MUTANT = args[i + 1]
        del args[i : i + 2]
        if MUTANT not in MUTANTS:
            print(f"unknown mutant {MUTANT!r}", file=sys.stderr)
            return 2
    last = PRESETS.get(args[0], args[0]) if args else SWITCHES[-1]
    ON.update(SWITCHES[: SWITCHES.index(last) + 1])
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        if req["op"] == "hello":
            reply = {"ok": True, "result": {"name": "doc_harness", "protocol": 1, "ops": list(OPS)}}
        else:
            try:
                reply = {"ok": True, "result": OPS[req["op"]](req["args"])}
            except Refuse as e:
                reply = {"ok": False, "error": "ValueError", "message": str(e)}
        reply["id"] = req["id"]
        print(json.dumps(reply), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
