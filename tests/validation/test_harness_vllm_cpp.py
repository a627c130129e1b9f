"""The vllm-cpp harness kit end to end: build.sh on a port tree, validate kv --record, check.

tests/harness_port/ is a miniature of the real port's KV-cache code (same paths,
same class interfaces) with one planted divergence from kvref: its managers
record new block ids for exact full attention only, so they lack kvref's
`mla-records` switch. The test copies it into a tmp folder next to a real
upstream git repo whose commits carry the switches' PR numbers, builds the
harness with the machine's g++, records the harness's behaviour into a queue
that `queue build` made, and checks it.
"""

from __future__ import annotations

import difflib
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import ROOT, commit_files, git, init_repo, needs_torch, run_cli

from kvref.semantics import SWITCHES

pytestmark = needs_torch  # kvref's answers (the zeroer) need torch

BUILD = ROOT / "harnesses" / "vllm-cpp" / "build.sh"
MINI = Path(__file__).parent.parent / "harness_port"
BY_NAME = {s.name: s for s in SWITCHES}
CASES = "40"


def _needs_gxx() -> None:
    if shutil.which("g++") is None:
        pytest.skip("no C++ compiler (g++) on this machine")


def _build(port: Path, out: Path, jobs: int | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "JOBS": str(jobs)} if jobs else None
    return subprocess.run(
        ["bash", str(BUILD), str(port), str(out)], check=False, capture_output=True, text=True, env=env
    )


def _upstream(tmp: Path) -> dict[str, str]:
    """An upstream with three kvref switch commits (by PR number) between a base and a later commit."""
    up = init_repo(tmp / "upstream")
    mgr = "vllm/v1/core/single_type_kv_cache_manager.py"
    shas = {
        "base": commit_files(
            up,
            {
                mgr: "class SingleTypeKVCacheManager:\n    pass\n",
                "vllm/v1/core/block_pool.py": "class BlockPool:\n    pass\n",
            },
            "base",
            date="2026-01-01T00:00:00Z",
        )
    }
    steps = [
        ("record-new-block-ids", mgr, "    def take_new_block_ids(self):\n        return []\n"),
        ("mla-records", mgr, "    RECORDS = ('full_attention', 'mla')\n"),
        ("free-uncached-first", "vllm/v1/core/block_pool.py", "    def free_blocks(self, ids):\n        pass\n"),
    ]
    for i, (name, path, add) in enumerate(steps, 2):
        text = (up / path).read_text() + add
        shas[name] = commit_files(up, {path: text}, f"{name} (#{BY_NAME[name].pr})", date=f"2026-01-0{i}T00:00:00Z")
    shas["later"] = commit_files(up, {"vllm/v1/core/later.py": "X = 1\n"}, "later (#1)", date="2026-01-09T00:00:00Z")
    return shas


def _port(tmp: Path, pin: str) -> Path:
    port = tmp / "port"
    shutil.copytree(MINI, port)
    for p in port.rglob("*"):
        if p.is_file() and "@PIN@" in p.read_text():
            p.write_text(p.read_text().replace("@PIN@", pin[:8]))
    (port / "porttrack.toml").write_text(
        '[upstream]\nrepo = "../upstream"\npaths = ["vllm/v1"]\n\n[port]\nroot = "."\n'
    )
    init_repo(port)
    git(port, "add", "-A")
    git(port, "commit", "-qm", "port")
    return port


@pytest.fixture(scope="session")
def harness(tmp_path_factory) -> Path:
    _needs_gxx()
    tmp = tmp_path_factory.mktemp("build")
    port = _port(tmp, "0" * 8)  # the pin does not matter to the build
    exe = tmp / "out" / "kv_harness"
    proc = _build(port, exe)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == str(exe) and exe.is_file()
    return exe


def _queue(port: Path, shas: dict[str, str]) -> Path:
    run_cli("queue", "build", "--range", f"{shas['base']}..{shas['later']}", cwd=port, check_rc=0)
    (q,) = (port / "queue").glob("*.toml")
    return q


def _entry_of(qdata: dict, sha: str) -> dict:
    return next(e for e in qdata["entry"] if e["sha"] == sha)


@pytest.mark.xdist_group("vllm-cpp-harness")  # one worker builds the session fixture, once
def test_hello_lists_only_the_ops_the_port_has(harness):
    reply = subprocess.run(
        [str(harness)], input='{"id": 0, "op": "hello", "args": {}}\n', check=True, capture_output=True, text=True
    ).stdout
    assert json.loads(reply)["result"]["ops"] == ["needs_kv_cache_zeroing", "record_new_block_ids"]


@pytest.mark.xdist_group("vllm-cpp-harness")  # one worker builds the session fixture, once
def test_record_writes_behaviour_into_the_switch_entries_and_check_finds_the_pin_ahead(harness, tmp_path):
    import tomllib

    shas = _upstream(tmp_path)
    port = _port(tmp_path, shas["later"])  # headers claim a pin past the planted switch
    qpath = _queue(port, shas)
    # A person's words in the queue survive the rewrite byte for byte.
    mla = _entry_of(tomllib.loads(qpath.read_text()), shas["mla-records"])
    text = qpath.read_text().replace(f"n = {mla['n']}\n", f"n = {mla['n']}  # looked at this one\n", 1)
    qpath.write_text("# kept by hand\n" + text)
    before = qpath.read_text()

    proc = run_cli("validate", "kv", "--impl", str(harness), "--as-of", "G1", "--cases", CASES, "--record", cwd=port)
    assert proc.returncode == 1, proc.stdout + proc.stderr  # the planted divergence fails cases
    assert "[switch: mla-records" in proc.stdout
    assert "next: `porttrack audit --write --queue " in proc.stdout
    after = qpath.read_text()
    assert after.startswith("# kept by hand\n") and "  # looked at this one\n" in after
    data = tomllib.loads(after)

    b = _entry_of(data, shas["mla-records"])["behaviour"]
    assert b["result"] == "lacks" and b["switch"] == "mla-records" and b["semantics"] == "G1"
    assert b["lack"] > 0 and b["agree"] == 0 and b["cases"] == int(CASES) and b["seed"] == 0
    assert b["field"].startswith("result.") and b["case"] > 0 and b["expected"] != b["got"]
    assert b["impl"] == str(harness) and b["harness"].startswith("vllm.cpp kv harness")
    free = _entry_of(data, shas["free-uncached-first"])["behaviour"]
    assert free["result"] == "matches" and free["agree"] > 0 and free["lack"] == 0
    # Toggling the op's own switch off leaves the op without an answer: no case can tell, nothing written.
    assert "behaviour" not in _entry_of(data, shas["record-new-block-ids"])
    assert "behaviour" not in _entry_of(data, shas["later"])
    # The rewrite only added lines (the two [entry.behaviour] tables): every line before is still there, in order.
    diff = list(difflib.ndiff(before.splitlines(), after.splitlines()))
    assert not [d for d in diff if d.startswith("- ")]
    assert sum(d == "+ [entry.behaviour]" for d in diff) == 2

    # Recording the same observation again changes nothing.
    again = run_cli(
        "validate", "kv", "--impl", str(harness), "--as-of", "G1", "--cases", CASES, "--record", "--json", cwd=port
    )
    assert json.loads(again.stdout)["recorded"]["written"] == [] and qpath.read_text() == after

    # Audit reads the evidence before any static probe, and says which rule fired.
    verdicts = {
        r["entry"]: (r["verdict"], r["rule"], r["reason"])
        for r in json.loads(run_cli("audit", "--json", cwd=port, check_rc=0).stdout)["results"]
    }
    mla_n, free_n = _entry_of(data, shas["mla-records"])["n"], _entry_of(data, shas["free-uncached-first"])["n"]
    assert verdicts[mla_n][:2] == ("real-gap", "behaviour") and f"case {b['case']}" in verdicts[mla_n][2]
    assert verdicts[free_n][:2] == ("ported", "behaviour")
    assert verdicts[_entry_of(data, shas["later"])["n"]][1] != "behaviour"

    git(port, "add", "-A")
    git(port, "commit", "-qm", "queue")
    chk = run_cli("check", "--format", "json", cwd=port)
    assert chk.returncode == 1, chk.stdout + chk.stderr
    found = [f for f in json.loads(chk.stdout)["findings"] if f["code"] == "behaviour-behind-pin"]
    assert [f["entry"] for f in found] == [_entry_of(data, shas["mla-records"])["n"]]
    assert found[0]["path"] == "include/vllm/v1/core/single_type_kv_cache_manager.h" and found[0]["line"] == 1
    assert "mla-records" in found[0]["message"] and shas["later"][:8] in found[0]["message"]


@pytest.mark.xdist_group("vllm-cpp-harness")  # one worker builds the session fixture, once
def test_no_finding_when_the_headers_pin_is_before_the_switch(harness, tmp_path):
    shas = _upstream(tmp_path)
    port = _port(tmp_path, shas["record-new-block-ids"])  # pinned before the MLA switch: lacking it is expected
    _queue(port, shas)
    run_cli(
        "validate", "kv", "--impl", str(harness), "--as-of", "G1", "--cases", CASES, "--record", cwd=port, check_rc=1
    )
    chk = run_cli("check", "--format", "json", cwd=port)
    assert not [f for f in json.loads(chk.stdout)["findings"] if f["code"] == "behaviour-behind-pin"]


@pytest.mark.xdist_group("vllm-cpp-harness")  # one worker builds the session fixture, once
def test_detection_records_too(harness, tmp_path):
    import tomllib

    shas = _upstream(tmp_path)
    port = _port(tmp_path, shas["later"])
    qpath = _queue(port, shas)
    proc = run_cli("validate", "kv", "--impl", str(harness), "--as-of", "--cases", CASES, "--record", cwd=port)
    assert f"lacks: {BY_NAME['mla-records'].sha} mla-records" in proc.stdout
    b = _entry_of(tomllib.loads(qpath.read_text()), shas["mla-records"])["behaviour"]
    assert b["result"] == "lacks" and b["semantics"] != "G1"


def _unlink_pool(port: Path) -> None:
    (port / "src/vllm/v1/core/block_pool.cpp").unlink()


def _move_take(port: Path) -> None:
    src = port / "src/vllm/v1/core/kv_cache_manager.cpp"
    text = src.read_text().replace(
        "std::vector<int> KVCacheManager::take_new_block_ids()", "#if 0  // moved away\n&", 1
    )
    src.write_text(
        text.replace("}  // namespace vllm::v1", "#endif\n}  // namespace vllm::v1").replace(
            "\n&", "\nstd::vector<int> KVCacheManager::take_new_block_ids()"
        )
    )


def _drop_coordinator(port: Path) -> None:
    hdr = port / "include/vllm/v1/core/kv_cache_manager.h"
    hdr.write_text(hdr.read_text().replace("std::unique_ptr<KVCacheCoordinator> coordinator;", ""))


@pytest.mark.parametrize(
    ("move", "said"),
    [
        (_unlink_pool, "src/vllm/v1/core/block_pool.cpp is missing"),
        (_move_take, "KVCacheManager::take_new_block_ids() no longer links"),
        (_drop_coordinator, "kv_cache_manager.cpp does not compile"),
    ],
)
@pytest.mark.xdist_group("vllm-cpp-harness")  # one worker builds the session fixture, once
def test_build_names_what_moved(harness, tmp_path, move, said):
    port, out = _copy_of_the_build(harness, tmp_path)  # only what the move touches compiles again
    move(port)
    proc = _build(port, out, jobs=1)
    assert proc.returncode == 1 and said in proc.stderr, proc.stderr
    # the first unit that fails ends the build: the harness's own unit, after it, is not started
    assert (out.parent / f".{out.name}.o" / "harness_kv_harness.cpp.o.stamp").is_file()


def _copy_of_the_build(harness: Path, tmp: Path) -> tuple[Path, Path]:
    """A copy of the fixture's port and of the objects its build kept, and where its harness goes."""
    port = shutil.copytree(harness.parent.parent / "port", tmp / "port")
    shutil.copytree(harness.parent / f".{harness.name}.o", tmp / "out" / f".{harness.name}.o")
    return port, tmp / "out" / harness.name


@pytest.mark.xdist_group("vllm-cpp-harness")  # one worker builds the session fixture, once
def test_a_rebuild_compiles_only_the_units_whose_content_changed(harness, tmp_path):
    port, out = _copy_of_the_build(harness, tmp_path)
    proc = _build(port, out)
    assert proc.returncode == 0 and "compiled 0 of 12 " in proc.stderr, proc.stderr
    assert proc.stdout.strip() == str(out) and out.is_file()

    # (a changed header is test_build_names_what_moved's _drop_coordinator: only a recompile finds it)
    unit = port / "src/vt/dtype.cpp"
    unit.touch()  # a newer time, the same content: nothing to compile
    assert "compiled 0 of 12 " in _build(port, out).stderr
    unit.write_text(unit.read_text() + "// edited\n")
    assert "compiled 1 of 12 " in _build(port, out).stderr
