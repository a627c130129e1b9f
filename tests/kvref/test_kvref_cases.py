"""Conformance cases: deterministic, edge cases first, and kvref's answers hold up against plain arithmetic."""

import json
from pathlib import Path

import numpy as np

from kvref import cases
from kvref.semantics import SWITCHES
from tests.conftest import torch_worker

pytestmark = torch_worker  # this module imports torch (see conftest)

ROOT = Path(__file__).resolve().parents[2]


def test_cases_are_deterministic_and_edges_come_first():
    a, b = cases.generate(40, 7), cases.generate(40, 7)
    assert json.dumps(a) == json.dumps(b)
    assert json.dumps(a) != json.dumps(cases.generate(40, 8))
    edges = [c for c in a if c["edge"]]
    assert a[: len(edges)] == edges and len(a) == len(edges) + 40
    assert [c["id"] for c in a] == list(range(1, len(a) + 1))
    assert {c["op"] for c in a[len(edges) :]} == set(cases.OPS)


def test_the_four_known_resolve_cases_lead_the_edges():
    first = [cases.answer(c, "G1") for c in cases.generate(0, 0)[:4]]
    assert [f.get("result") for f in first[:3]] == [
        {"scheduler_block_size": 16, "hash_block_size": 16},
        {"scheduler_block_size": 32, "hash_block_size": 16},
        {"scheduler_block_size": 32, "hash_block_size": 8},
    ]
    assert first[3]["ok"] is False and first[3]["error"] == "ValueError"


def test_fnv1a64_known_values():
    assert cases.fnv1a64(b"") == "cbf29ce484222325"
    assert cases.fnv1a64(b"a") == "af63dc4c8601ec8c"


def test_zero_answers_at_latest_match_plain_byte_arithmetic():
    """At latest semantics: listed blocks all zero, the rest untouched, digest of exactly those bytes zeroed."""
    checked = 0
    for c in cases.generate(60, 11):
        if c["op"] != "zero_blocks" or c["edge"]:
            continue
        got = cases.answer(c, "latest")
        if not got["ok"]:
            continue
        args = c["args"]
        ids = set(args["block_ids"])
        assert got["result"]["blocks"] == ["zero" if b in ids else "untouched" for b in range(args["num_blocks"])]
        buf = cases.fill_bytes(args["buffer_bytes"])
        for t in args["tensors"]:
            idx = np.moveaxis(cases._byte_index(t), t["block_dim"], 0)
            for b in ids:
                buf[idx[b * t["ratio"] : (b + 1) * t["ratio"]].reshape(-1)] = 0
        assert got["result"]["digest"] == cases.fnv1a64(buf.tobytes())
        checked += 1
    assert checked >= 8


def test_every_switch_is_in_the_docs():
    text = (ROOT / "docs" / "kvref.md").read_text()
    for s in SWITCHES:
        assert f"`{s.name}`" in text and (not s.sha or f"`{s.sha}`" in text), s.name


def test_a_repeated_question_gets_the_same_answer_and_its_own_copy():
    case = next(c for c in cases.generate(20, 0) if c["op"] == "zero_blocks")
    first = cases.answer(case, "G2")
    first["result"]["blocks"].append("tampered")  # a caller's edit stays with that caller
    cases._answer.cache_clear()
    fresh = cases.answer(case, "G2")
    again = cases.answer(case, "G2")
    assert again == fresh and again is not fresh and "tampered" not in again["result"]["blocks"]
    # the switches on decide, not the name they were asked by
    assert cases.answer(case, "g2") == fresh
