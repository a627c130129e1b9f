"""Conformance cases and kvref's answers to them (docs/protocol.md).

A case is {"id", "op", "args"}; `answer(case, semantics)` is kvref's reply to
it ({"ok": true, "result": ...} or {"ok": false, "error": "ValueError", ...}),
or None when the op does not exist yet at that semantics. Cases are
deterministic: the edge cases first, then `n` random ones from `seed`.
"""

from __future__ import annotations

import copy
import functools
import json
import math
import random
from typing import Any

from kvref.manager import run_steps
from kvref.resolve import needs_kv_cache_zeroing, resolve_kv_cache_block_sizes
from kvref.semantics import Semantics, SemanticsLike, resolve_semantics
from kvref.specs import groups_from_json, spec_from_json

PROTOCOL_VERSION = 1
OPS = ("resolve_block_sizes", "needs_kv_cache_zeroing", "record_new_block_ids", "zero_blocks")
# Byte i of a zeroing buffer starts as (i * MUL + ADD) % MOD + 1: never zero.
FILL = {"mul": 37, "add": 11, "mod": 251}
_OP_SWITCH = {
    "resolve_block_sizes": "resolve-block-sizes",
    "needs_kv_cache_zeroing": "record-new-block-ids",
    "record_new_block_ids": "record-new-block-ids",
    "zero_blocks": "record-new-block-ids",
}


def fnv1a64(data: bytes) -> str:
    """64-bit FNV-1a of the bytes, as 16 lowercase hex digits."""
    h = 0xCBF29CE484222325
    for b in data:
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


def answer(case: dict, semantics: SemanticsLike = "latest") -> dict | None:
    sem = resolve_semantics(semantics)
    op = case["op"]
    if op not in OPS:
        raise ValueError(f"unknown op {op!r}")
    if _OP_SWITCH[op] not in sem:
        return None
    # A run asks the same case again under each switch toggled, and runs of one seed repeat their
    # cases: an answer is computed once per (case, switches on). Each caller gets its own copy.
    return copy.deepcopy(_answer(json.dumps(case["args"], sort_keys=True), op, sem.on))


@functools.lru_cache(maxsize=8192)
def _answer(args_json: str, op: str, on: frozenset[str]) -> dict:
    sem = Semantics(on, "")
    args = json.loads(args_json)
    try:
        if op == "resolve_block_sizes":
            r = resolve_kv_cache_block_sizes(
                groups_from_json(args["groups"]),
                block_size=args["block_size"],
                dcp=args.get("dcp", 1),
                pcp=args.get("pcp", 1),
                enable_prefix_caching=args.get("enable_prefix_caching", True),
                connector_enabled=args.get("connector_enabled", False),
                prefix_match_unit=args.get("prefix_match_unit"),
                semantics=sem,
            )
            result = {"scheduler_block_size": r.scheduler_block_size, "hash_block_size": r.hash_block_size}
            if r.cache_hit_alignment is not None:
                result["cache_hit_alignment"] = r.cache_hit_alignment
        elif op == "needs_kv_cache_zeroing":
            layers = [spec_from_json(s) for s in args["layers"]]
            result = {"needs_kv_cache_zeroing": needs_kv_cache_zeroing(layers, semantics=sem)}
        elif op == "record_new_block_ids":
            ran = run_steps(
                groups_from_json(args["groups"]),
                num_blocks=args["num_blocks"],
                needs_zeroing=args["needs_zeroing"],
                steps=args["steps"],
                semantics=sem,
            )
            result = {"new_block_ids_to_zero": ran["new_block_ids_to_zero"], "pending": ran["pending"]}
        else:
            result = zero_blocks(args, sem)
    except ValueError as e:
        return {"ok": False, "error": "ValueError", "message": str(e)}
    return {"ok": True, "result": result}


# ---------------------------------------------------------------- zeroing over a described buffer


def fill_bytes(n: int, fill: dict = FILL):
    import numpy as np

    i = np.arange(n, dtype=np.int64)
    return ((i * fill["mul"] + fill["add"]) % fill["mod"] + 1).astype(np.uint8)


def _byte_index(t: dict):
    """Byte offsets of every byte of every element of a described tensor, shape (*shape, element_size)."""
    import numpy as np

    el = t["element_size"]
    idx = np.full([*t["shape"], el], t["offset"], dtype=np.int64)
    for d, (n, s) in enumerate(zip(t["shape"], t["strides"], strict=False)):
        shape = [1] * (len(t["shape"]) + 1)
        shape[d] = n
        idx += (np.arange(n, dtype=np.int64) * s * el).reshape(shape)
    return idx + np.arange(el, dtype=np.int64)


def block_states(buf, tensors: list[dict], num_blocks: int, fill) -> list[str]:
    """Per spec block: "zero", "untouched" (as filled) or "mixed", over every tensor's bytes of that block."""
    import numpy as np

    states = []
    per_tensor = []
    for t in tensors:
        idx = np.moveaxis(_byte_index(t), t["block_dim"], 0)
        per_tensor.append((idx, t.get("ratio", 1)))
    for b in range(num_blocks):
        where = np.concatenate([idx[b * r : (b + 1) * r].reshape(-1) for idx, r in per_tensor])
        got = buf[where]
        states.append("zero" if not got.any() else "untouched" if (got == fill[where]).all() else "mixed")
    return states


def zero_blocks(args: dict, semantics: SemanticsLike) -> dict:
    """Run KVBlockZeroer over the described buffer; report each block's state and the buffer's digest."""
    import torch

    from kvref.zeroer import KVBlockZeroer, KVLayer

    fill = args.get("fill", FILL)
    start = fill_bytes(args["buffer_bytes"], fill)
    buf = torch.from_numpy(start.copy())
    layers = []
    for t in args["tensors"]:
        el = t["element_size"]
        if el not in (1, 2, 4, 8) or t["offset"] % el or args["buffer_bytes"] % el:
            raise ValueError(f"element_size {el} and offset {t['offset']} must be aligned within the buffer")
        typed = buf.view({1: torch.int8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[el])
        view = typed.as_strided(t["shape"], t["strides"], t["offset"] // el)
        layers.append(KVLayer(view, t["block_dim"], t.get("ratio", 1), t.get("kind", "full_attention")))
    zeroer = KVBlockZeroer(layers, semantics=semantics, use_triton=False)
    zeroer.zero(args["block_ids"])
    out = buf.numpy()
    num_blocks = min(t["shape"][t["block_dim"]] // t.get("ratio", 1) for t in args["tensors"])
    return {"blocks": block_states(out, args["tensors"], num_blocks, start), "digest": fnv1a64(out.tobytes())}


# ---------------------------------------------------------------- case generation


def _spec(kind: str, block_size: int, **kw) -> dict:
    d = {"kind": kind, "block_size": block_size}
    d.update(kw)
    return d


def _resolve_args(groups, block_size=16, **kw) -> dict:
    args = {
        "groups": groups,
        "block_size": block_size,
        "dcp": 1,
        "pcp": 1,
        "enable_prefix_caching": True,
        "connector_enabled": False,
        "prefix_match_unit": None,
    }
    args.update(kw)
    return args


def _edge_resolve() -> list[dict]:
    f, m = "full_attention", "mamba"
    return [
        _resolve_args([_spec(f, 16)]),  # docs/design.md §13.1 known case (16, 16)
        _resolve_args([_spec(f, 16), _spec(f, 32)]),  # (32, 16)
        _resolve_args([_spec(f, 32), _spec(f, 8)]),  # (32, 8)
        _resolve_args([_spec(f, 16), _spec(f, 32)], prefix_match_unit=5),  # ValueError for a unit of 5
        _resolve_args([], block_size=16),
        _resolve_args([_spec(f, 16)], dcp=2, pcp=2),
        _resolve_args([_spec(f, 16), _spec(m, 32, mamba_cache_mode="align")], dcp=2),
        _resolve_args([_spec(f, 16), _spec(f, 32)], pcp=2),
        _resolve_args([_spec(f, 16), _spec(f, 48)], enable_prefix_caching=False),
        _resolve_args([_spec(f, 16), _spec(f, 48)], enable_prefix_caching=False, connector_enabled=True),
        _resolve_args([_spec(f, 16), _spec(m, 64)]),  # mamba "none", size differs: back off everywhere
        _resolve_args([_spec(f, 16), _spec(m, 64, mamba_cache_mode="align")]),  # G1 backs off, G2+ hashes
        _resolve_args([_spec(f, 32), _spec(m, 16)]),  # mamba "none" at the cache size: G1 hashes, G2+ back off
        _resolve_args([_spec(f, 32), [_spec(m, 16), _spec(m, 16)]]),  # wrapper: only G3 looks inside
        _resolve_args([_spec(f, 16), _spec("circular_buffer", 4)]),  # G3 hashes prefix-cacheable groups only
        _resolve_args([_spec(f, 16), _spec("circular_buffer", 6)], prefix_match_unit=8),
        _resolve_args([_spec(f, 64, tokens_per_state=4), _spec(f, 16)]),
        _resolve_args([_spec(f, 16, tokens_per_state=32), _spec(m, 64, mamba_cache_mode="align")]),
        _resolve_args([_spec(f, 16, tokens_per_state="1/2"), _spec(f, 32, tokens_per_state=-1)]),
        _resolve_args([_spec(f, 16), _spec(f, 32)], prefix_match_unit=32),
    ]


def _edge_zeroing() -> list[dict]:
    f, m = "full_attention", "mamba"
    return [
        {"layers": []},
        {"layers": [_spec(f, 16)]},
        {"layers": [_spec(f, 16), _spec(m, 16)]},
        {"layers": [_spec(f, 16, dtype="bfloat16"), _spec(f, 16, dtype="fp8_e4m3")]},
        {"layers": [_spec(f, 16), _spec(f, 16, kv_quant_mode="per_token_head")]},
        {"layers": [_spec(f, 16, dtype="fp8_e4m3"), _spec("sliding_window", 16, dtype="fp8_e4m3")]},
    ]


def _record_args(groups, needs, steps, num_blocks=32) -> dict:
    return {"groups": groups, "num_blocks": num_blocks, "needs_zeroing": needs, "steps": steps}


def _edge_record() -> list[dict]:
    f, sw, m = _spec("full_attention", 4), _spec("sliding_window", 4), _spec("mamba", 4)
    steps = [
        [{"op": "allocate", "request": "a", "num_tokens": 9}],
        [{"op": "allocate", "request": "a", "num_tokens": 13}, {"op": "allocate", "request": "b", "num_tokens": 4}],
        [{"op": "free", "request": "a"}, {"op": "allocate", "request": "c", "num_tokens": 8}],
        [],
    ]
    ext = [
        [
            {"op": "allocate_external", "request": "a", "num_tokens": 8, "async_load": True},
            {"op": "allocate", "request": "b", "num_tokens": 4},
        ],
        [{"op": "allocate", "request": "a", "num_tokens": 12}],
    ]
    return [
        _record_args([f], True, steps),
        _record_args([f], False, steps),  # G1: never drained, pending grows
        _record_args([sw], True, steps),  # G1 records exact full-attention types only
        _record_args([f, m], True, steps),
        _record_args([_spec("mla", 4), sw, m], True, steps),
        _record_args([f], True, ext),  # ids an async load will write are not zeroed (G3)
        _record_args([f], True, [[{"op": "allocate", "request": "a", "num_tokens": 200}]], num_blocks=8),
    ]


def _tensor(offset, shape, strides, el, block_dim, ratio=1, kind="full_attention") -> dict:
    return {
        "offset": offset,
        "shape": list(shape),
        "strides": list(strides),
        "element_size": el,
        "block_dim": block_dim,
        "ratio": ratio,
        "kind": kind,
    }


def _dense_strides(shape) -> list[int]:
    out, acc = [], 1
    for n in reversed(shape):
        out.append(acc)
        acc *= n
    return out[::-1]


def _zero_args(tensors, ids, buffer_bytes) -> dict:
    nb = min(t["shape"][t["block_dim"]] // t["ratio"] for t in tensors)
    return {"buffer_bytes": buffer_bytes, "fill": dict(FILL), "tensors": tensors, "num_blocks": nb, "block_ids": ids}


def _edge_zero() -> list[dict]:
    nb = 6
    blk = [nb, 2, 2, 4]  # block outermost: (blocks, K/V, tokens, head)
    kv = [2, nb, 2, 4]  # K/V outermost: two segments
    s_blk, s_kv = _dense_strides(blk), _dense_strides(kv)
    size = nb * 16 * 2  # bf16
    cases = [
        _zero_args([_tensor(0, blk, s_blk, 2, 0)], [1, 4], size),
        _zero_args([_tensor(0, kv, s_kv, 2, 1)], [0, 5], size),
        _zero_args([_tensor(0, [2, nb * 2, 1, 4], _dense_strides([2, nb * 2, 1, 4]), 2, 1, ratio=2)], [2], size),
        _zero_args([_tensor(0, kv, s_kv, 2, 1), _tensor(0, kv, s_kv, 2, 1)], [3], size),  # shared tensor
        _zero_args([_tensor(0, blk, s_blk, 2, 0), _tensor(size, [nb, 8], [8, 1], 4, 0)], [0, 2], size * 2),
        # Packed: two layers' pages interleaved, block stride = both pages, plus one stride of slack.
        _zero_args([_tensor(0, [nb, 8], [16, 1], 4, 0), _tensor(32, [nb, 8], [16, 1], 4, 0)], [1, 3], nb * 64 + 64),
        _zero_args([_tensor(0, [nb, 8], [16, 1], 4, 0), _tensor(32, [nb, 8], [16, 1], 4, 0)], [5], nb * 64 + 64),
        _zero_args([_tensor(0, blk, s_blk, 2, 0, kind="sliding_window")], [2], size),
        _zero_args([_tensor(0, blk, s_blk, 2, 0)], [], size),
        _zero_args([_tensor(0, blk, s_blk, 2, 0)], [nb], size),  # out of range
        _zero_args([_tensor(0, [nb, 3], [3, 1], 2, 0)], [1], nb * 6),  # 6-byte stride: not int32 words
        # Heads outermost, block dim in the middle: four segments.
        _zero_args([_tensor(0, [2, 2, nb, 4], _dense_strides([2, 2, nb, 4]), 4, 2)], [0, 1, 5], 2 * 2 * nb * 16),
    ]
    return cases


# Random cases are stratified: the k-th random case of an op takes the op's k-th *focus* (in
# turn) and is built so that this switch or error path decides the answer; everything else is
# drawn at random around it. A bug in one switch then fails a steady share of a default run's
# cases of that op, not a few in a thousand (benchmarks/kvref_mutants.py measures it per
# switch, per error path and per planted bug).
_ATTN = ["full_attention", "full_attention", "sliding_window", "mla", "chunked_local"]
_RESOLVE_FOCUS = (
    "plain",
    "no_prefix_caching",
    "connector",
    "context_parallel",
    "mamba",
    "mamba",
    "mamba_wrapper",
    "circular_buffer",
    "tokens_per_state",
    "prefix_match_unit",
    "single_group",
)


def _random_resolve(rng: random.Random, k: int) -> dict:
    focus = _RESOLVE_FOCUS[k % len(_RESOLVE_FOCUS)]
    block_size = rng.choice([8, 16, 16, 32])
    sizes = [4, 8, 16, 16, 32, 48, 64, 128]
    # Two attention groups of different sizes: hashing (gcd) and backing off (lcm) then differ.
    a = rng.choice(sizes)
    b = rng.choice([x for x in sizes if x != a])
    groups: list = [_spec(rng.choice(_ATTN), a), _spec(rng.choice(_ATTN), b)]
    kw: dict = {"enable_prefix_caching": rng.random() < 0.9, "connector_enabled": rng.random() < 0.1}
    if focus == "no_prefix_caching":
        kw = {"enable_prefix_caching": False, "connector_enabled": False}
    elif focus == "connector":
        kw = {"enable_prefix_caching": False, "connector_enabled": True}
    elif focus == "context_parallel":
        kw["dcp"], kw["pcp"] = rng.choice([(2, 1), (4, 1), (1, 2), (2, 2)])
        if rng.random() < 0.5:
            groups = groups[:1]
        if rng.random() < 0.7:  # a Mamba group is not scaled by DCP from 2ba984a5d0 on
            groups.append(_spec("mamba", rng.choice([a, block_size]), mamba_cache_mode="align"))
    elif focus in ("mamba", "mamba_wrapper"):
        # The size matters at G1 (differs from block_size = not align), the mode from G2 on.
        mamba = _spec(
            "mamba",
            rng.choice([block_size, block_size, 2 * block_size]),
            mamba_cache_mode=rng.choice(["none", "all", "align"]),
        )
        groups[0]["block_size"] = rng.choice([x for x in sizes if x != mamba["block_size"]])
        if rng.random() < 0.3:
            mamba["num_speculative_blocks"] = rng.choice([1, 2])
        groups = [groups[0], [mamba, dict(mamba)] if focus == "mamba_wrapper" else mamba]
    elif focus == "circular_buffer":  # not prefix-cacheable from e126687a9a on: left out of the hash size
        groups.append(_spec("circular_buffer", rng.choice([4, 6, 12, a])))
    elif focus == "tokens_per_state":
        groups[rng.randrange(2)]["tokens_per_state"] = rng.choice([3, 32, 96, 2, 8, "1/2"])
        if rng.random() < 0.4:
            groups.append(_spec("mamba", block_size, mamba_cache_mode="align"))
    elif focus == "prefix_match_unit":
        g = math.gcd(a, b)
        kw["prefix_match_unit"] = rng.choice([g, g, max(1, g // 2), 5, 2 * g if (a % (2 * g) or b % (2 * g)) else 3])
        kw["enable_prefix_caching"] = True
    elif focus == "single_group":
        groups = [rng.choice([groups[0], _spec("mamba", a, mamba_cache_mode=rng.choice(["none", "align"]))])]
        kw["dcp"], kw["pcp"] = rng.choice([(1, 1), (2, 1), (1, 2), (2, 2)])
    if focus not in ("mamba_wrapper",) and rng.random() < 0.15:
        groups[0] = [groups[0], dict(groups[0])]  # a wrapper around two layers of one kind
    if focus != "prefix_match_unit" and rng.random() < 0.1:
        kw["prefix_match_unit"] = rng.choice([4, 8, 5])
    return _resolve_args(groups, block_size=block_size, **kw)


_ZEROING_FOCUS = ("mamba", "mixed_dtype", "mixed_quant", "uniform", "no_attention")


def _random_zeroing(rng: random.Random, k: int) -> dict:
    focus = _ZEROING_FOCUS[k % len(_ZEROING_FOCUS)]
    dtype = rng.choice(["bfloat16", "fp8_e4m3"])
    layers = [_spec(rng.choice(_ATTN), 16, dtype=dtype) for _ in range(rng.randint(1, 3))]
    if focus == "mamba":
        layers.insert(rng.randrange(len(layers) + 1), _spec("mamba", 16))
    elif focus == "mixed_dtype":  # mixed KV precision needs zeroing from e3fe212eaf on
        layers.append(_spec(rng.choice(_ATTN), 16, dtype="fp8_e4m3" if dtype == "bfloat16" else "bfloat16"))
    elif focus == "mixed_quant":
        layers.append(_spec(rng.choice(_ATTN), 16, dtype=dtype, kv_quant_mode="per_token_head"))
    elif focus == "no_attention":
        layers = [] if rng.random() < 0.5 else [_spec("mamba", 16)]
    rng.shuffle(layers)
    return {"layers": layers}


_RECORD_FOCUS = (
    "full",
    "sliding_window",
    "mla",
    "mamba",
    "wrapper",
    "no_zeroing",
    "free_reuse",
    "async_load",
    "exhaust",
)


def _random_record(rng: random.Random, k: int) -> dict:
    focus = _RECORD_FOCUS[k % len(_RECORD_FOCUS)]
    bs = rng.choice([2, 4, 8])
    main = {"full": "full_attention", "sliding_window": "sliding_window", "mla": "mla", "mamba": "mamba"}
    kinds = [main.get(focus, "full_attention")] + [
        rng.choice(["full_attention", "sliding_window", "mla", "mamba"]) for _ in range(rng.randint(0, 2))
    ]
    groups: list = []
    for kind in kinds:
        spec = _spec(kind, bs)
        if kind == "mamba":
            spec["mamba_cache_mode"] = rng.choice(["none", "align"])
            if rng.random() < 0.3:
                spec["num_speculative_blocks"] = 1
        groups.append(spec)
    if focus == "wrapper":  # a group of two layers: G1 records for exact types, and a wrapper is none
        groups[0] = [groups[0], dict(groups[0])]
    rng.shuffle(groups)
    steps: list[list[dict[str, Any]]] = []
    live: list[str] = []
    n = 0
    for _ in range(rng.randint(2, 5)):
        step: list[dict[str, Any]] = []
        for _ in range(rng.randint(1, 3)):
            r = rng.random()
            if live and r < (0.45 if focus == "free_reuse" else 0.2):
                step.append({"op": "free", "request": live.pop(rng.randrange(len(live)))})
            elif r < (0.7 if focus == "async_load" else 0.35):
                req = f"r{n}"
                n += 1
                live.append(req)
                step.append(
                    {
                        "op": "allocate_external",
                        "request": req,
                        "num_tokens": rng.randint(1, 3 * bs),
                        "async_load": rng.random() < (0.8 if focus == "async_load" else 0.4),
                    }
                )
            else:
                if live and rng.random() < 0.5:
                    req = rng.choice(live)
                else:
                    req = f"r{n}"
                    n += 1
                    live.append(req)
                step.append({"op": "allocate", "request": req, "num_tokens": rng.randint(1, 4 * bs)})
        steps.append(step)
    if focus == "free_reuse":  # freed blocks come back first (head) or last (tail) of the free queue
        steps.append(
            [{"op": "free", "request": r} for r in live[:2]]
            + [{"op": "allocate", "request": f"r{n}", "num_tokens": 2 * bs}]
        )
    num_blocks = rng.choice([4, 6]) if focus == "exhaust" else rng.choice([32, 64, 128])
    needs = focus != "no_zeroing" and rng.random() < 0.75
    return _record_args(groups, needs, steps, num_blocks=num_blocks)


_ZERO_FOCUS = (
    "block_outer",
    "kv_outer",
    "heads_outer",
    "kv_after_block",
    "packed",
    "holes",
    "kinds",
    "ratio",
    "non_uniform",
    "bad_stride",
    "bad_ids",
    "past_end",
    "misaligned",
)


def _random_zero(rng: random.Random, k: int) -> dict:
    focus = _ZERO_FOCUS[k % len(_ZERO_FOCUS)]
    nb = rng.randint(2, 8)
    el = rng.choice([1, 2, 4])
    tokens, head = rng.choice([1, 2, 4]), rng.choice([4, 8])
    # One page size for every tensor (unless the focus wants them mixed): a random mix of page
    # sizes is refused before 79f3183f86 and would hide every other zeroing rule at G1.
    tensors, offset, slack = [], 0, 0
    # An error focus keeps one tensor: a second could fail first for another reason and hide it.
    count = (
        rng.randint(2, 3)
        if focus in ("non_uniform", "kinds")
        else 1
        if focus in ("bad_stride", "misaligned")
        else rng.randint(1, 3)
    )
    shared_layout = (
        "packed"
        if focus == "past_end"
        else focus
        if focus in _ZERO_FOCUS[:6]
        else rng.choice(["block_outer", "kv_outer", "heads_outer", "kv_after_block", "packed"])
    )
    ratio = 2 if focus == "ratio" else 1
    for i in range(count):
        kind = rng.choice(
            ["full_attention", "mla", "sliding_window", "mamba"]
            if focus == "kinds"
            else ["full_attention"]
            if focus in ("past_end", "non_uniform")  # zeroed at every point
            else ["full_attention", "full_attention", "mla", "sliding_window"]
        )
        if focus == "non_uniform" and i:  # a wider head: a different page from the first tensor's
            head *= 2
        layout = "block_outer" if focus in ("bad_stride", "misaligned") and i == 0 else shared_layout
        if focus == "misaligned" and i == 0:
            el = rng.choice([2, 4])
        offset = -(-offset // 8) * 8
        if layout == "packed":  # two layers share each block's bytes; head >= 4 keeps pages int32-aligned
            page = tokens * head * el
            tensors += [
                _tensor(
                    offset + part * page, [nb * ratio, tokens, head], [2 * tokens * head, head, 1], el, 0, ratio, kind
                )
                for part in range(2)
            ]
            offset += nb * ratio * 2 * page
            slack = max(slack, 2 * page)  # room for the pre-d6af803f43 whole-stride write of the top block
            if focus == "past_end":
                slack = 0
            continue
        shape, bd, strides, wide = _layout(rng, layout, nb * ratio, tokens, head)
        if focus == "bad_stride" and i == 0:  # a 6-byte row: not whole int32 words
            el, shape, bd = 2, [nb * ratio, 3], 0
            strides = [3, 1]
        n = 1
        for x in shape:
            n *= x
        off = offset + (el // 2 if focus == "misaligned" and el > 1 and i == 0 else 0)
        tensors.append(_tensor(off, shape, strides, el, bd, ratio, kind))
        if rng.random() < 0.15:  # the same tensor registered by a second layer
            tensors.append(dict(tensors[-1]))
        offset += n * el * wide + (off - offset)
    rng.shuffle(tensors)
    return _zero_args(tensors, _zero_ids(rng, tensors, focus), -(-(offset + slack) // 8) * 8)


def _layout(rng: random.Random, layout: str, blocks: int, tokens: int, head: int):
    """(shape, block dim, strides, how many times wider the underlying tensor is) of one non-packed layout."""
    if layout == "block_outer":
        shape = [blocks, 2, tokens, head]
        return shape, 0, _dense_strides(shape), 1
    if layout == "kv_outer":
        shape = [2, blocks, tokens, head]
        return shape, 1, _dense_strides(shape), 1
    if layout == "kv_after_block":  # K/V outermost in memory, but indexed after the block dim
        return [blocks, 2, tokens, head], 0, [tokens * head, blocks * tokens * head, head, 1], 1
    if layout == "holes":  # a head slice of a wider tensor: the page has gaps
        return [blocks, tokens, head], 0, _dense_strides([blocks, tokens, head * 2]), 2
    shape = [rng.choice([1, 2]), 2, blocks, tokens * head]  # heads, then K/V, outside the block dim
    return shape, 2, _dense_strides(shape), 1


def _zero_ids(rng: random.Random, tensors: list[dict], focus: str) -> list[int]:
    """The block ids to zero: a random set of the blocks every tensor has, and what the focus adds."""
    nb_min = min(t["shape"][t["block_dim"]] // t["ratio"] for t in tensors)
    ids = rng.sample(range(nb_min), rng.randint(1, nb_min))
    if focus == "past_end":
        ids.append(nb_min - 1)
    if focus == "bad_ids" or rng.random() < 0.03:
        ids.append(rng.choice([nb_min + rng.randint(0, 3), -1]))
    if rng.random() < 0.05:
        ids = []
    rng.shuffle(ids)
    return ids


_EDGES = {
    "resolve_block_sizes": _edge_resolve,
    "needs_kv_cache_zeroing": _edge_zeroing,
    "record_new_block_ids": _edge_record,
    "zero_blocks": _edge_zero,
}
_RANDOM = {
    "resolve_block_sizes": _random_resolve,
    "needs_kv_cache_zeroing": _random_zeroing,
    "record_new_block_ids": _random_record,
    "zero_blocks": _random_zero,
}


def generate(n: int = 200, seed: int = 0, ops: tuple[str, ...] = OPS) -> list[dict]:
    """Edge cases for every op, then n random cases spread over the ops, all from `seed`."""
    cases: list[dict[str, Any]] = []
    for op in ops:
        cases += [{"op": op, "args": a, "edge": True} for a in _EDGES[op]()]
    rng = random.Random(seed)
    for i in range(max(0, n)):
        op = ops[i % len(ops)]
        cases.append({"op": op, "args": _RANDOM[op](rng, i // len(ops)), "edge": False})
    for i, c in enumerate(cases, 1):
        c["id"] = i
    return cases
