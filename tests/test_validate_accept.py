"""Acceptance: validate kv / kvref vectors never show a traceback, whatever the harness or --out."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

HELLO = ('import sys, json\n'
         'for line in sys.stdin:\n'
         '    r = json.loads(line)\n'
         '    if r["op"] == "hello":\n'
         '        print(json.dumps({"id": r["id"], "ok": True, "result": {"protocol": 1, "ops": OPS}}), flush=True)\n'
         '    else:\n'
         '        REPLY\n')


def harness(tmp_path: Path, ops: str, reply: str = "pass") -> str:
    path = tmp_path / "h.py"
    path.write_text(HELLO.replace("OPS", ops).replace("REPLY", reply))
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(path))}"


def porttrack(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PORTTRACK_KV_TIMEOUT="2", NO_COLOR="1")
    return subprocess.run([sys.executable, "-m", "porttrack", *args], capture_output=True, text=True, env=env,
                          cwd=ROOT, timeout=300)


def test_hello_listing_ops_that_are_not_names_is_exit_2(tmp_path):
    r = porttrack("validate", "kv", "--impl", harness(tmp_path, '[{"a": 1}]'), "--cases", "0")
    assert r.returncode == 2, r.stderr
    assert "answered hello without a result listing its ops" in r.stderr and "Traceback" not in r.stderr


def test_reply_nested_too_deep_for_json_is_garbage_not_a_crash(tmp_path):
    deep = 'print("[" * 200000 + "]" * 200000, flush=True)'
    r = porttrack("validate", "kv", "--impl", harness(tmp_path, '["needs_kv_cache_zeroing"]', deep),
                  "--cases", "0", "--json")
    assert r.returncode == 1, r.stderr
    failures = json.loads(r.stdout)["failures"]
    assert failures and all("garbage on stdout" in f["note"] for f in failures)


def test_vectors_out_that_cannot_be_created_is_exit_2(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    r = porttrack("kvref", "vectors", "--out", str(blocker / "sub"), "--cases", "0")
    assert r.returncode == 2 and f"--out {blocker / 'sub'}: cannot create the folder" in r.stderr
    assert "Traceback" not in r.stderr
