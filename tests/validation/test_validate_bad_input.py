"""validate kv / kvref vectors never show a traceback, whatever the harness or --out."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

from conftest import run_cli

ROOT = Path(__file__).resolve().parents[2]

HELLO = (
    "import sys, json\n"
    "for line in sys.stdin:\n"
    "    r = json.loads(line)\n"
    '    if r["op"] == "hello":\n'
    '        print(json.dumps({"id": r["id"], "ok": True, "result": {"protocol": 1, "ops": OPS}}), flush=True)\n'
    "    else:\n"
    "        REPLY\n"
)


def harness(tmp_path: Path, ops: str, reply: str = "pass") -> str:
    path = tmp_path / "h.py"
    path.write_text(HELLO.replace("OPS", ops).replace("REPLY", reply))
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(path))}"


def porttrack(*args: str, cwd: Path = ROOT, timeout: str = "30") -> subprocess.CompletedProcess:
    # the CLI in-process; the harnesses it drives are real processes
    return run_cli(*args, cwd=cwd, env={"PORTTRACK_KV_TIMEOUT": timeout})


def test_hello_listing_ops_that_are_not_names_is_exit_2(tmp_path):
    r = porttrack("validate", "kv", "--impl", harness(tmp_path, '[{"a": 1}]'), "--cases", "0")
    assert r.returncode == 2, r.stderr
    assert "answered hello without a result listing its ops" in r.stderr and "Traceback" not in r.stderr


def test_reply_nested_too_deep_for_json_is_garbage_not_a_crash(tmp_path):
    deep = 'print("[" * 200000 + "]" * 200000, flush=True)'
    r = porttrack(
        "validate", "kv", "--impl", harness(tmp_path, '["needs_kv_cache_zeroing"]', deep), "--cases", "0", "--json"
    )
    assert r.returncode == 1, r.stderr
    failures = json.loads(r.stdout)["failures"]
    assert failures and all("garbage on stdout" in f["note"] for f in failures)


def test_vectors_out_that_cannot_be_created_is_exit_2(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    r = porttrack("kvref", "vectors", "--out", str(blocker / "sub"), "--cases", "0")
    assert r.returncode == 2 and f"--out {blocker / 'sub'}: cannot create the folder" in r.stderr
    assert "Traceback" not in r.stderr


PY_HARNESS = ROOT / "tests" / "kvref" / "harness" / "py_harness.py"
LIGHT = "--ops resolve_block_sizes,needs_kv_cache_zeroing,record_new_block_ids"
MIRROR = Path("/work/.mirror/ZJY0516+vllm/repo")


def _port_with_upstream(tmp_path: Path, upstream: Path) -> Path:
    port = tmp_path / "port"
    port.mkdir()
    (port / "porttrack.toml").write_text(f'[upstream]\nrepo = "{upstream}"\npaths = ["vllm/"]\n\n[port]\nroot = "."\n')
    return port


def test_as_of_a_revision_of_an_upstream_without_kvrefs_commits_is_exit_2(tmp_path):
    from conftest import commit_files, init_repo

    up = init_repo(tmp_path / "up")
    commit_files(up, {"vllm/a.py": "x = 1\n"}, "init")
    port = _port_with_upstream(tmp_path, up)
    impl = f"{shlex.quote(sys.executable)} {shlex.quote(str(PY_HARNESS))} G1 {LIGHT}"
    r = porttrack("validate", "kv", "--impl", impl, "--as-of", "HEAD", "--cases", "0", cwd=port, timeout="5")
    assert r.returncode == 2, r.stdout + r.stderr
    assert "holds none of the commits kvref knows" in r.stderr


def test_as_of_a_revision_placed_in_a_real_upstream(tmp_path, monkeypatch):
    import pytest

    if not MIRROR.is_dir():
        pytest.skip("no upstream vLLM mirror on this machine")
    from porttrack.validation import validate

    monkeypatch.chdir(_port_with_upstream(tmp_path, MIRROR))
    sem = validate.resolve_as_of("fa36f86d7~3")
    assert "resolve-block-sizes" in sem and "free-uncached-first" in sem and "g1-pin" not in sem
    assert "mamba-mode-backoff" not in sem


def test_bad_timeout_and_case_counts_are_one_sentence(tmp_path):
    r = porttrack("validate", "kv", "--impl", "true", "--cases", "0", timeout="abc")
    assert r.returncode == 2 and "PORTTRACK_KV_TIMEOUT='abc' must be a number of seconds" in r.stderr
    for args in (["validate", "kv", "--impl", "true"], ["kvref", "vectors", "--out", str(tmp_path / "v")]):
        r = porttrack(*args, "--cases", "99999999999999999999")
        assert r.returncode == 2 and "--cases must be between 0 and 1,000,000" in r.stderr
    assert not (tmp_path / "v").exists()


def test_a_harness_supporting_none_of_the_ops_is_exit_2_not_a_vacuous_pass(tmp_path):
    for args in ([], ["--as-of"]):
        r = porttrack("validate", "kv", "--impl", harness(tmp_path, '["frobnicate"]'), "--cases", "0", *args)
        assert r.returncode == 2, r.stdout + r.stderr
        assert "lists none of the protocol's ops" in r.stderr and "'frobnicate'" in r.stderr
