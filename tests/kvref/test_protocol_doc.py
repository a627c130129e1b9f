"""docs/protocol.md is enough to implement the protocol, and the default run catches single-point bugs.

tests/kvref/harness/doc_harness.py was written from docs/protocol.md alone (no
kvref, no torch). It must pass `validate kv` at every semantics; each of its
planted mutants (one wrong rule each) must fail a default run, and only in the
op the rule belongs to. benchmarks/kvref_mutants.py prints the catch rates.
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest

from tests.conftest import torch_worker

pytestmark = torch_worker  # this module imports torch (see conftest)

ROOT = Path(__file__).resolve().parents[2]
HARNESS = ROOT / "tests" / "kvref" / "harness" / "doc_harness.py"
sys.path.insert(0, str(ROOT / "benchmarks"))

from kvref_mutants import MUTANTS  # noqa: E402 -- benchmarks/ is on sys.path from the line above


def impl(sem: str, mutant: str | None = None) -> str:
    return shlex.join([sys.executable, str(HARNESS), sem] + (["--mutant", mutant] if mutant else []))


def run(sem: str, mutant: str | None = None, n: int = 200):
    from porttrack.validation import validate

    # pass or fail per case is what these tests read: the per-switch evidence is left out
    return validate.validate(impl(sem, mutant), sem, n, 0, timeout=60, evidence=False)


def test_the_doc_harness_imports_nothing_of_kvref():
    import ast

    tree = ast.parse(HARNESS.read_text())
    names = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    names |= {n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    assert names <= {"__future__", "itertools", "json", "math", "sys", "collections", "fractions"}, names


@pytest.mark.parametrize(
    "sem",
    [
        "record-new-block-ids",
        "zeroer-full-attention-subclasses",
        "mla-records",
        "G1",
        "G2",
        "zeroer-segment-stride",
        "attention-zeroing",
        "zeroer-bounded-grid",
        "dcp-attention-only",
        "G3",
    ],
)
def test_the_doc_harness_passes_every_case(sem):
    report = run(sem, n=120)
    bad = [r for r in report.results if r.status == "failed"]
    assert not bad, f"{bad[0].op} case {bad[0].id}: {bad[0].field} expected {bad[0].expected!r} got {bad[0].got!r}"
    assert sum(r.status == "passed" for r in report.results) > 100


def test_the_doc_harness_is_found_at_its_point_by_as_of(tmp_path):
    from tests.conftest import run_cli

    r = run_cli("validate", "kv", "--impl", impl("G1"), "--as-of", "--cases", "80", "--json", cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    a = json.loads(r.stdout)["as_of"]
    assert a["matches"] and a["matching"][-1] == "g1-pin"


def test_leaving_out_the_switch_evidence_changes_no_result():
    from porttrack.validation import validate

    full = validate.validate(impl("G2"), "G2", 40, 0, timeout=60)
    bare = run("G2", n=40)
    assert full.evidence and not bare.evidence
    assert [(r.id, r.status, r.field) for r in bare.results] == [(r.id, r.status, r.field) for r in full.results]


@pytest.mark.parametrize("mutant", list(MUTANTS))
def test_every_mutant_fails_a_default_run_in_its_own_op(mutant):
    sem, op, _ = MUTANTS[mutant]
    failed = [r for r in run(sem, mutant).results if r.status == "failed"]
    assert failed and {r.op for r in failed} == {op}
