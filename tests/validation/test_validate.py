"""validate kv and kvref vectors through the real CLI, against real harness processes.

The cross-language check compiles tests/kvref/harness/kv_harness.cpp (a G1
port of resolution and zeroing) with the machine's g++; the misbehaving
harnesses are tests/kvref/harness/py_harness.py, which answers from kvref.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import run_cli, torch_worker

pytestmark = torch_worker  # this module imports torch (see conftest)

ROOT = Path(__file__).resolve().parents[2]
HARNESS = ROOT / "tests" / "kvref" / "harness"
PY = f"{shlex.quote(sys.executable)} {shlex.quote(str(HARNESS / 'py_harness.py'))}"


def porttrack(*args: str, timeout: float = 30.0, cwd: Path | None = None) -> subprocess.CompletedProcess:
    # the CLI in-process; the harnesses it drives are real processes
    return run_cli(*args, cwd=cwd or ROOT, env={"PORTTRACK_KV_TIMEOUT": str(timeout)})


@pytest.fixture(scope="session")
def cpp(tmp_path_factory):
    gxx = shutil.which("g++")
    if gxx is None:
        pytest.skip("no C++ compiler (g++) on this machine")
    exe = tmp_path_factory.mktemp("harness") / "kv_harness"
    proc = subprocess.run(
        [gxx, "-std=c++17", "-O0", "-o", str(exe), str(HARNESS / "kv_harness.cpp")],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    assert proc.returncode == 0, f"kv_harness does not compile: {proc.stdout.decode(errors='replace')}"
    return {"pin": str(exe), "mutant": f"{exe} --mutant", "mutant_zero": f"{exe} --mutant-zero"}


def run(impl: str, as_of: str | None, n: int, *, detect: bool = False, timeout: float = 30.0):
    from porttrack.validation import validate

    return validate.validate(impl, as_of, n, 0, detect=detect, timeout=timeout)


def test_cpp_harness_passes_at_its_pin_and_as_of_finds_it(cpp):
    r = porttrack("validate", "kv", "--impl", cpp["pin"], "--as-of", "--cases", "40", "--json")
    assert r.returncode == 0, r.stdout + r.stderr
    data = json.loads(r.stdout)
    assert data["ok"] and not data["failures"]
    assert data["counts"]["resolve_block_sizes"]["passed"] > 20
    assert data["counts"]["zero_blocks"]["passed"] > 20
    assert data["counts"]["record_new_block_ids"] == {"skipped": 7 + 10}
    a = data["as_of"]
    assert a["matches"] and a["matching"][-1] == "g1-pin"
    assert {s["sha"] for s in a["included"]} >= {"4ff8c3c8f", "4d51588e2"}
    assert {s["name"] for s in a["not_included"]} >= {"mamba-mode-backoff", "prefix-cacheable"}
    at_g1 = run(cpp["pin"], "G1", 40)
    assert not at_g1.failed and at_g1.semantics == "G1"
    assert run(cpp["pin"], "latest", 0).failed


def test_cpp_mutant_fails_naming_the_field(cpp):
    r = porttrack("validate", "kv", "--impl", cpp["mutant"], "--as-of", "G1", "--cases", "0")
    assert r.returncode == 1 and "result.scheduler_block_size: expected 32, got 512" in r.stdout
    first = next(x for x in run(cpp["mutant"], "G1", 0).results if x.status == "failed")
    assert first.op == "resolve_block_sizes" and first.field == "result.scheduler_block_size"
    assert (first.expected, first.got) == (32, 512)  # lcm(16, 32) vs the mutant's product


def test_cpp_zeroing_mutant_fails_naming_the_block(cpp):
    report = run(cpp["mutant_zero"], "G1", 0)
    failed = [x for x in report.results if x.status == "failed"]
    assert failed and {x.op for x in failed} == {"zero_blocks"}
    first = failed[0]
    assert first.field == "result.blocks[1]" and (first.expected, first.got) == ("zero", "mixed")


def test_reference_harness_passes_every_op_and_as_of_finds_g3():
    report = run(f"{PY} G3", None, 30, detect=True)
    assert not report.failed and report.as_of["matching"] == ["prefix-cacheable"]
    assert all(set(c) == {"passed"} for c in report.counts().values()), report.counts()
    names = {s["name"] for s in report.as_of["included"]}
    assert names >= {"attention-zeroing", "dcp-attention-only", "zeroer-segment-stride"}


LIGHT = "--ops resolve_block_sizes,needs_kv_cache_zeroing,record_new_block_ids"  # no torch in the harness


def test_g1_reference_harness_passes_at_g1_and_fails_at_g3():
    assert not run(f"{PY} G1 {LIGHT}", "G1", 30).failed
    failed = [x for x in run(f"{PY} G1 {LIGHT}", "G3", 0).results if x.status == "failed"]
    assert {x.op for x in failed} == {"resolve_block_sizes", "needs_kv_cache_zeroing", "record_new_block_ids"}


def test_survives_crash_hang_and_garbage():
    impl = f"{PY} G3 {LIGHT} --crash-on 3 --hang-on 5 --garbage-on 7"
    report = run(impl, "G3", 4, timeout=0.5)
    assert report.failed
    notes = {x.id: x.note for x in report.results if x.status == "failed"}
    assert set(notes) == {3, 5, 7}
    assert "exited with code 3" in notes[3] and "boom" in notes[3]
    assert "no reply within 0.5s" in notes[5]
    assert "garbage on stdout" in notes[7]
    assert [x.id for x in report.results if x.status == "passed"][:5] == [1, 2, 4, 6, 8]  # the run went on


def test_unsupported_ops_are_skipped():
    counts = run(f"{PY} G3 --ops needs_kv_cache_zeroing", "G3", 4).counts()
    assert set(counts["resolve_block_sizes"]) == {"skipped"} and set(counts["zero_blocks"]) == {"skipped"}
    assert set(counts["needs_kv_cache_zeroing"]) == {"passed"}


def test_kvref_answers_only_the_ops_the_harness_has_so_a_light_harness_never_loads_torch():
    # zero_blocks' answers need torch (a 3 s import); a harness without that op must not pay for it
    light = f"{PY} G3 --ops resolve_block_sizes,needs_kv_cache_zeroing"
    code = (
        "import sys, porttrack.cli; "
        f"sys.argv = ['porttrack', 'validate', 'kv', '--impl', {light!r}, '--as-of', 'G3', '--cases', '30']; "
        "rc = 0\ntry:\n    porttrack.cli.main()\nexcept SystemExit as e:\n    rc = e.code\n"
        "print('torch loaded' if 'torch' in sys.modules else 'no torch', rc)"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert r.stdout.strip().endswith("no torch 0"), r.stdout + r.stderr
    assert "zero_blocks" in r.stdout  # the op was among the cases, and skipped


def test_bad_harness_is_one_sentence_exit_2():
    r = porttrack("validate", "kv", "--impl", "/nonexistent/harness", "--cases", "1")
    assert r.returncode == 2 and "cannot start '/nonexistent/harness'" in r.stderr
    assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize(
    "impl, as_of, message",
    [
        (f"{PY} G3 --no-hello", None, "did not answer hello: garbage on stdout: 'hello yourself'"),
        ("'unclosed", None, "is not a valid command line"),
        (f"{PY} G3 {LIGHT}", "nosuchrev", "--as-of 'nosuchrev'"),
    ],
)
def test_bad_input_is_a_user_error(impl, as_of, message):
    from porttrack.errors import UserError

    with pytest.raises(UserError, match=re.escape(message)):
        run(impl, as_of, 1)


def test_vectors_match_kvref_and_are_reproducible(tmp_path):
    from kvref import cases
    from porttrack.validation import validate
    from porttrack.errors import UserError

    out = tmp_path / "vec"
    r = porttrack("kvref", "vectors", "--out", str(out), "--as-of", "G1", "--cases", "12", "--seed", "3")
    assert r.returncode == 0, r.stderr
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["semantics"] == "G1" and manifest["protocol"] == 1
    assert "prefix-cacheable" not in manifest["switches_on"]
    lines = [json.loads(x) for x in (out / "resolve_block_sizes.jsonl").read_text().splitlines()]
    assert manifest["files"]["resolve_block_sizes.jsonl"] == len(lines) > 20
    for v in lines:
        assert v["expect"] == cases.answer(v, "G1")
    first = lines[0]
    assert first["args"]["groups"] == [{"kind": "full_attention", "block_size": 16}]
    assert first["expect"] == {"ok": True, "result": {"scheduler_block_size": 16, "hash_block_size": 16}}
    zero = [json.loads(x) for x in (out / "zero_blocks.jsonl").read_text().splitlines()]
    assert all(len(z["expect"]["result"]["digest"]) == 16 for z in zero if z["expect"]["ok"])
    again = tmp_path / "again"
    validate.write_vectors(again, "G1", 12, 3)
    assert (again / "zero_blocks.jsonl").read_bytes() == (out / "zero_blocks.jsonl").read_bytes()
    with pytest.raises(UserError, match="is not a folder"):
        validate.write_vectors(out / "manifest.json", None, 1, 0)


def test_porttrack_never_imports_torch_and_says_how_to_get_kvref():
    code = (
        "import sys; import porttrack.cli, porttrack.validation.validate; assert 'torch' not in sys.modules; "
        "sys.modules['kvref'] = None; sys.argv = ['porttrack', 'kvref', 'vectors', '--out', 'x']; "
        "porttrack.cli.main()"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 2 and "pip install -e '.[kvref]'" in r.stderr


def test_the_protocol_document_states_its_version():
    from kvref import cases

    text = (ROOT / "docs" / "protocol.md").read_text()
    assert f"Protocol version: {cases.PROTOCOL_VERSION}" in text
    for op in cases.OPS:
        assert f"`{op}`" in text


def test_as_of_names_the_queue_entries_of_the_switches(tmp_path, monkeypatch):
    (tmp_path / "porttrack.toml").write_text('[port]\nroot = "."\n')
    (tmp_path / "queue").mkdir()
    (tmp_path / "queue" / "port-now.toml").write_text(
        '[queue]\nname = "PORT-NOW"\nupstream = "vllm-project/vllm"\npin = "fa36f86d7"\ntarget = "e126687a9a"\n\n'
        '[[entry]]\nn = 142\nsha = "e3fe212eaf0000000000000000000000000000aa"\npr = 51749\n'
        'subject = "[Bugfix] Generalize KV block zeroing to `AttentionSpec` (#51749)"\n\n'
        '[[entry]]\nn = 150\nsha = "e126687a9a"\npr = 53896\nsubject = "prefix-cacheable specs (#53896)"\n'
    )
    monkeypatch.chdir(tmp_path)
    report = run(f"{PY} G1 {LIGHT}", None, 4, detect=True)
    assert report.as_of["queue"] == {"attention-zeroing": [142], "prefix-cacheable": [150]}
    assert {"attention-zeroing", "prefix-cacheable"} <= {s["name"] for s in report.as_of["not_included"]}


def test_without_the_kvref_extra_validate_kv_is_exit_2_before_the_harness_starts(tmp_path: Path):
    """torch hidden from the interpreter, as in an install without porttrack[kvref]."""
    marker = tmp_path / "harness-started"
    code = (
        "import sys; sys.modules['torch'] = None; "
        "from porttrack.cli import main; "
        f"sys.argv = ['porttrack', 'validate', 'kv', '--impl', 'touch {marker}']; main()"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert proc.returncode == 2, proc.stderr
    assert "install porttrack[kvref]" in proc.stderr and "Traceback" not in proc.stderr
    assert not marker.exists()


def test_detection_never_says_a_switch_matches_and_is_not_included():
    """A port with a later fix but without an earlier one matches no point of history: the closest point
    lacks the later fix, which toggled alone the harness has; the report says that once, not both ways."""
    have = "record-new-block-ids+zeroer-full-attention-subclasses+resolve-block-sizes+free-uncached-first+g1-pin"
    r = porttrack("validate", "kv", "--impl", f"{PY} {have} {LIGHT}", "--as-of", "--cases", "60")
    assert "as-of: the harness matches no point exactly" in r.stdout, r.stdout
    said = {}
    for line in r.stdout.splitlines():
        m = re.match(r"\s+(.+?): (?:[0-9a-f]{7,}|\(no sha\)) ([a-z0-9-]+)\b", line)
        if m:
            said.setdefault(m[2], []).append(m[1])
    assert "matches" in said["free-uncached-first"]
    assert "does not include" not in said["free-uncached-first"], said["free-uncached-first"]
    assert "closest point lacks it, yet toggled alone it matches" in said["free-uncached-first"]
    for switch, words in said.items():
        assert not ("matches" in words and "does not include" in words), (switch, words)
