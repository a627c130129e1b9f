"""validate kv against misbehaving harness processes: every run ends, bounded, with one clear result."""

from __future__ import annotations

import shlex
import subprocess
import sys
import time
from pathlib import Path

from tests.conftest import ROOT, run_cli, run_cli_process

PY_HARNESS = ROOT / "tests" / "kvref" / "harness" / "py_harness.py"
LIGHT = "--ops resolve_block_sizes,needs_kv_cache_zeroing,record_new_block_ids"  # no torch in the harness

# A harness that says hello, then does what BEHAVIOUR says with every request.
FAKE = """\
import json, sys, time
behaviour = sys.argv[1]
for n, line in enumerate(sys.stdin):
    req = json.loads(line)
    if req["op"] == "hello":
        print(json.dumps({"id": req["id"], "ok": True, "result": {"protocol": 1, "name": "fake",
              "ops": ["resolve_block_sizes"]}}), flush=True)
    elif behaviour == "hang" or (behaviour == "hang-every-other" and req["id"] % 2 == 0):
        time.sleep(3600)
    elif behaviour == "endless-line" and req["id"] == 1:  # once: each restart would pipe 17 MiB again
        sys.stdout.write("x" * (17 * 2**20))
        sys.stdout.flush()
        time.sleep(3600)
    else:
        print(json.dumps({"id": req["id"], "ok": False, "error": "unsupported"}), flush=True)
"""

# Relays py_harness, turning every integer of a result into a float (16 -> 16.0).
FLOATS = """\
import json, subprocess, sys
inner = subprocess.Popen(sys.argv[1:], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
def floats(x):
    if isinstance(x, bool): return x
    if isinstance(x, int): return float(x)
    if isinstance(x, list): return [floats(v) for v in x]
    if isinstance(x, dict): return {k: floats(v) for k, v in x.items()}
    return x
for line in sys.stdin:
    inner.stdin.write(line); inner.stdin.flush()
    reply = json.loads(inner.stdout.readline())
    if json.loads(line)["op"] != "hello" and reply.get("ok"):
        reply["result"] = floats(reply["result"])
    print(json.dumps(reply), flush=True)
"""


def validate(
    impl: str, *args: str, env: dict | None = None, limit: float | None = None
) -> tuple[subprocess.CompletedProcess, float]:
    """`porttrack validate kv` in this process; in a real one (killed past `limit` seconds) when a limit is given."""
    start = time.monotonic()
    argv = ("validate", "kv", "--impl", impl, *args)
    if limit is None:
        proc = run_cli(*argv, cwd=ROOT, env=env)
    else:
        proc = run_cli_process(*argv, cwd=ROOT, env=env, timeout=limit)
    return proc, time.monotonic() - start


def fake(tmp_path: Path, behaviour: str) -> str:
    script = tmp_path / "fake_harness.py"
    script.write_text(FAKE)
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(script))} {behaviour}"


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


def test_a_background_child_of_the_harness_neither_hangs_the_run_nor_outlives_it(tmp_path):
    pidfile = tmp_path / "child.pid"
    inner = f"{shlex.quote(sys.executable)} {shlex.quote(str(PY_HARNESS))} G3 {LIGHT}"
    impl = f"bash -c {shlex.quote(f'sleep 300 & echo $! > {pidfile}; exec {inner}')}"
    proc, _took = validate(impl, "--as-of", "G3", "--cases", "3", limit=90)  # a real process: it must not linger
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "resolve_block_sizes" in proc.stdout
    pid = int(pidfile.read_text())
    deadline = time.monotonic() + 10
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not alive(pid), "the harness's background child outlived porttrack"


def test_a_harness_that_hangs_after_hello_stops_after_three_timeouts(tmp_path):
    proc, took = validate(fake(tmp_path, "hang"), "--as-of", "G3", "--cases", "50", env={"PORTTRACK_KV_TIMEOUT": "0.3"})
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "stopped early: the harness hung on 3 cases in a row" in proc.stdout
    assert proc.stdout.count("no reply within 0.3s") == 3 and "Traceback" not in proc.stderr
    assert took < 60


def test_the_whole_run_has_a_deadline(tmp_path):
    proc, took = validate(
        fake(tmp_path, "hang-every-other"),
        "--as-of",
        "G3",
        "--cases",
        "200",
        env={"PORTTRACK_KV_TIMEOUT": "0.3", "PORTTRACK_KV_DEADLINE": "1"},
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "stopped early: the run passed its overall deadline" in proc.stdout
    assert took < 60


def test_a_line_without_end_is_capped(tmp_path):
    proc, _took = validate(
        fake(tmp_path, "endless-line"), "--as-of", "G3", "--cases", "0", env={"PORTTRACK_KV_TIMEOUT": "20"}
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "harness line too long (over 16 MiB without a newline)" in proc.stdout
    assert "MemoryError" not in proc.stderr and "Traceback" not in proc.stderr


def test_an_overflowing_timeout_is_one_sentence():
    proc, _ = validate("true", "--cases", "1", env={"PORTTRACK_KV_TIMEOUT": "1e10"})
    assert proc.returncode == 2 and "PORTTRACK_KV_TIMEOUT='1e10' must be a number of seconds" in proc.stderr
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def test_integers_sent_as_floats_fail(tmp_path):
    relay = tmp_path / "floats.py"
    relay.write_text(FLOATS)
    inner = f"{shlex.quote(sys.executable)} {shlex.quote(str(PY_HARNESS))} G3 {LIGHT}"
    plain, _ = validate(inner, "--as-of", "G3", "--cases", "5")
    assert plain.returncode == 0, plain.stdout + plain.stderr  # positive control: the same answers as integers pass
    proc, _ = validate(
        f"{shlex.quote(sys.executable)} {shlex.quote(str(relay))} {inner}", "--as-of", "G3", "--cases", "5"
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert ".0" in proc.stdout and "expected" in proc.stdout
