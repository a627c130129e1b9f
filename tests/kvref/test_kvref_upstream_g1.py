"""KVBlockZeroer at G1 against an independent transcription of upstream's own rule.

The oracle below is transcribed by hand from upstream vLLM's
`vllm/v1/worker/utils.py` as of `fa36f86d7` (`KVBlockZeroer.__init__`, which
builds the segment address table, and `_zero_kv_blocks_kernel`, which writes
`PAGE_SIZE_EL` int32 words at `seg_addr + block_id * PAGE_SIZE_EL * 4`); the
segment rule is unchanged there since the class appeared in `4ff8c3c8f`. It
works on plain bytes and imports nothing from kvref, so a disagreement is a
disagreement with upstream, not with kvref's own reading of it.
"""

from __future__ import annotations

import itertools
import random

import pytest

from kvref import cases
from tests.conftest import torch_worker

pytestmark = torch_worker  # this module imports torch (see conftest)


class Refused(Exception):
    """Upstream would stop here (an assert), or the protocol refuses the write (see `upstream_g1`)."""


def fill(n: int, mul: int, add: int, mod: int) -> bytearray:
    return bytearray((i * mul + add) % mod + 1 for i in range(n))


def fnv(data: bytes) -> str:
    h = 0xCBF29CE484222325
    for b in data:
        h = ((h ^ b) * 0x100000001B3) % 2**64
    return f"{h:016x}"


def upstream_g1(buf: bytearray, tensors: list[dict], ids: list[int]) -> None:
    """Zero `ids` in `buf` the way upstream's KVBlockZeroer does at fa36f86d7."""
    seen: set[int] = set()
    seg_addrs: list[int] = []
    page_size_el = None
    sizes = []
    # Not upstream: a tensor always starts on a multiple of its element size; the protocol refuses
    # a description that could not be a tensor (docs/protocol.md, zero_blocks).
    if any(t["offset"] % t["element_size"] or len(buf) % t["element_size"] for t in tensors):
        raise Refused("offset not aligned to the element size")
    for t in tensors:
        if t["kind"] not in ("full_attention", "mla"):  # `isinstance(spec, FullAttentionSpec)`
            continue
        if t["offset"] in seen:  # `dp in seen_ptrs`
            continue
        seen.add(t["offset"])
        el, block_dim, ratio = t["element_size"], t["block_dim"], t["ratio"]
        cur_bytes = t["strides"][block_dim] * el
        if cur_bytes % 4:  # `assert cur_bytes % 4 == 0`
            raise Refused("block stride not a multiple of 4 bytes")
        cur_page_el = cur_bytes // 4 * ratio
        if page_size_el is None:
            page_size_el = cur_page_el
        elif page_size_el != cur_page_el:  # `assert page_size_el == cur_page_el`
            raise Refused("Non-uniform page sizes")
        # The rule under test: only dimensions *before* block_dim, and only those whose byte
        # stride exceeds the block's, make segments.
        outer_dims = [d for d in range(block_dim) if t["strides"][d] * el > cur_bytes]
        outer_strides = [t["strides"][d] * el for d in outer_dims]
        for outer in itertools.product(*(range(t["shape"][d]) for d in outer_dims)):
            seg_addrs.append(t["offset"] + sum(i * s for i, s in zip(outer, outer_strides, strict=False)))
        sizes.append(t["shape"][block_dim] // ratio)
    if not ids or not seg_addrs:  # `if not block_ids or self._meta is None: return`
        return
    page = page_size_el * 4
    # Not upstream: it writes wherever the ids point. The protocol makes both of these a
    # ValueError (docs/protocol.md, zero_blocks), so the oracle refuses them too.
    if min(ids) < 0 or max(ids) >= min(sizes):
        raise Refused("ids out of range")
    if max(s + max(ids) * page + page for s in seg_addrs) > len(buf):
        raise Refused("write past the end of the buffer")
    for block_id in ids:
        for seg in seg_addrs:
            start = seg + block_id * page
            buf[start : start + page] = bytes(page)


def random_layout(rng: random.Random) -> dict:
    """One zero_blocks case: 1-3 tensors, each a dense buffer seen through a random permutation of its dims."""
    tensors, offset = [], 0
    nb = rng.randint(2, 6)
    for _ in range(rng.randint(1, 3)):
        el = rng.choice([1, 2, 4, 8])
        ratio = rng.choice([1, 1, 2])
        shape = [nb * ratio] + [rng.choice([1, 2, 3, 4]) for _ in range(rng.randint(1, 3))]
        order = list(range(len(shape)))  # memory order, outermost first
        rng.shuffle(order)
        strides, acc = [0] * len(shape), 1
        for d in reversed(order):
            strides[d] = acc
            acc *= shape[d]
        # Put the block dim anywhere in the index order: permute the (shape, stride) pairs.
        perm = list(range(len(shape)))
        rng.shuffle(perm)
        shape, strides = [shape[p] for p in perm], [strides[p] for p in perm]
        bd = perm.index(0)
        kind = rng.choice(["full_attention", "full_attention", "mla", "sliding_window"])
        offset = -(-offset // 8) * 8
        tensors.append(
            {
                "offset": offset,
                "shape": shape,
                "strides": strides,
                "element_size": el,
                "block_dim": bd,
                "ratio": ratio,
                "kind": kind,
            }
        )
        offset += acc * el
    size = -(-offset // 8) * 8 + rng.choice([0, 0, 64])
    n = min(t["shape"][t["block_dim"]] // t["ratio"] for t in tensors)
    ids = rng.sample(range(n), rng.randint(0, n))
    return {"buffer_bytes": size, "fill": dict(cases.FILL), "tensors": tensors, "num_blocks": n, "block_ids": ids}


def differs(args: dict) -> str | None:
    """None when kvref's G1 reply equals the oracle's, else what differs."""
    buf = fill(args["buffer_bytes"], **args["fill"])
    try:
        upstream_g1(buf, args["tensors"], args["block_ids"])
        want = fnv(bytes(buf))
    except Refused:
        want = None
    got = cases.answer({"op": "zero_blocks", "args": args}, "G1")
    if want is None:
        return None if not got["ok"] else f"upstream refuses, kvref zeroes: {args}"
    if not got["ok"]:
        return f"kvref refuses ({got['message']}), upstream zeroes: {args}"
    return None if got["result"]["digest"] == want else f"different bytes: {args}"


def test_the_issue_layout_zeroes_the_k_half_only():
    # A (2, 2) int32 view with strides (1, 2): dim 1, after the block dim, strides wider than a block.
    t = {
        "offset": 0,
        "shape": [2, 2],
        "strides": [1, 2],
        "element_size": 4,
        "block_dim": 0,
        "ratio": 1,
        "kind": "full_attention",
    }
    args = {"buffer_bytes": 16, "fill": dict(cases.FILL), "tensors": [t], "num_blocks": 2, "block_ids": [0]}
    buf = fill(16, **cases.FILL)
    upstream_g1(buf, [t], [0])
    assert buf[:4] == bytes(4) and all(buf[4:])  # bytes 0-3 only
    assert differs(args) is None
    # From d6af803f43 on a block is exactly its elements: both halves (kvref's documented choice).
    latest = cases.answer({"op": "zero_blocks", "args": args}, "latest")["result"]
    assert latest["blocks"] == ["zero", "untouched"] and latest["digest"] != fnv(bytes(buf))


def test_g1_matches_upstream_on_random_permuted_layouts():
    rng = random.Random(20260623)
    diffs, permuted, refused = [], 0, 0
    for _ in range(600):
        args = random_layout(rng)
        permuted += any(
            t["strides"][d] > t["strides"][t["block_dim"]]
            for t in args["tensors"]
            for d in range(t["block_dim"] + 1, len(t["shape"]))
        )
        refused += not cases.answer({"op": "zero_blocks", "args": args}, "G1")["ok"]
        d = differs(args)
        if d:
            diffs.append(d)
    assert diffs == [], f"{len(diffs)} differences, first: {diffs[0]}"
    assert permuted > 200 and 20 < refused < 400  # the new layout is well covered, and so are the errors


def test_g1_matches_upstream_on_the_generated_cases():
    checked = permuted = 0
    for c in cases.generate(400, 5):
        if c["op"] != "zero_blocks":
            continue
        assert differs(c["args"]) is None, c["id"]
        checked += 1
        permuted += any(
            t["strides"][d] > t["strides"][t["block_dim"]]
            for t in c["args"]["tensors"]
            for d in range(t["block_dim"] + 1, len(t["shape"]))
        )
    assert checked > 100 and permuted >= 10  # the case generator now produces the layout too


@pytest.mark.parametrize("kind, zeroed", [("full_attention", True), ("mla", True), ("sliding_window", False)])
def test_the_oracle_itself_follows_the_kind_rule(kind, zeroed):
    t = {"offset": 0, "shape": [4, 4], "strides": [4, 1], "element_size": 4, "block_dim": 0, "ratio": 1, "kind": kind}
    buf = fill(64, **cases.FILL)
    upstream_g1(buf, [t], [1])
    assert (buf[16:32] == bytes(16)) is zeroed
