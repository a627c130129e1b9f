"""The CLI's contract through the real entry point: exit codes 0/1/2/3, --version, -h, flags read as
flags, `queue show` ranges, and every command that writes naming the next command."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

from conftest import ROOT, commit_files, init_repo, run_cli, run_cli_process

import porttrack

CONFIG = '[upstream]\nrepo = "../up"\npaths = ["vllm/"]\nname = "acme/vllm"\n\n[port]\nroot = "."\nscopes = { code = ["src"], tests = ["tests"] }\n'


def pair(tmp_path: Path) -> tuple[Path, Path, str, str]:
    """A three-commit upstream (two mirrored) and a port with one of the two symbols."""
    up = init_repo(tmp_path / "up")
    pin = commit_files(up, {"vllm/a.py": "def f():\n    return 1\n"}, "base (#1)")
    commit_files(up, {"vllm/a.py": "def f():\n    return 2\n\n\ndef g():\n    return f()\n"}, "[Core] Add g (#2)")
    target = commit_files(up, {"vllm/b.py": "class B:\n    def m(self):\n        pass\n"}, "[Core] Add B (#4)")
    port = init_repo(tmp_path / "port")
    (port / "porttrack.toml").write_text(CONFIG)
    commit_files(
        port, {"src/a.cpp": "// Ported from vllm/a.py\nint f() { return 2; }\nint g() { return f(); }\n"}, "port"
    )
    return up, port, pin, target


def run_with_fault(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    """The real entry point with one engine function that raises what no code path expects: the only
    way to reach 'our own bug' is to plant one, since every known one is fixed."""
    code = (
        "import sys, porttrack.evidence.headers as h\n"
        "def boom(*a, **k):\n    raise RuntimeError('planted fault')\n"
        "h.headers_report = boom\n"
        f"sys.argv = ['porttrack', *{args!r}]\n"
        "from porttrack.cli import main\nmain()\n"
    )
    env = dict(os.environ, NO_COLOR="1", PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True)


def test_version_has_one_source_and_prints(tmp_path):
    proc = run_cli("--version", cwd=tmp_path, check_rc=0)
    assert proc.stdout.strip() == f"porttrack {porttrack.__version__}"
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert "version" not in project and "version" in project["dynamic"]
    assert project["license"] == "Apache-2.0"
    assert "Apache License" in (ROOT / "LICENSE").read_text() and "Version 2.0" in (ROOT / "LICENSE").read_text()


def test_the_entry_point_in_a_real_process(tmp_path):
    """`python -m porttrack` itself (the other tests call main() in-process): prints, and exits 2 on bad input."""
    proc = run_cli_process("--version", cwd=tmp_path, check_rc=0)
    assert proc.stdout.strip() == f"porttrack {porttrack.__version__}"
    bad = run_cli_process("audit", "--config", str(tmp_path / "missing.toml"), cwd=tmp_path, check_rc=2)
    assert bad.stderr.startswith("porttrack: ") and "missing.toml" in bad.stderr and "Traceback" not in bad.stderr


def test_dash_h_is_help_everywhere(tmp_path):
    for cmd in ([], ["queue"], ["queue", "show"], ["audit"], ["validate", "kv"]):
        proc = run_cli(*cmd, "-h", cwd=tmp_path, check_rc=0)
        assert proc.stdout.startswith("Usage:"), proc.stdout


def test_boolean_flags_read_as_flags(tmp_path):
    text = run_cli("audit", "--help", cwd=tmp_path, check_rc=0).stdout
    write = next(ln for ln in text.splitlines() if ln.strip().startswith("--write"))
    assert "<bool>" not in write and "bool" not in write.split("Record")[0], write
    assert re.search(r"--entries <str>", text)  # options that take a value still say so
    _up, port, pin, target = pair(tmp_path)
    run_cli("queue", "build", "--range", f"{pin}..{target}", cwd=port, check_rc=0)
    proc = run_cli("audit", "--write", "true", cwd=port)
    assert proc.returncode == 2 and "true" in proc.stderr and "Traceback" not in proc.stderr


def test_internal_error_is_exit_3_and_says_bug_traceback_only_with_debug(tmp_path):
    _up, port, _, _ = pair(tmp_path)
    proc = run_with_fault(["headers"], port)
    assert proc.returncode == 3, proc.stderr
    assert "this is a bug" in proc.stderr and "planted fault" in proc.stderr and "--debug" in proc.stderr
    assert "Traceback" not in proc.stderr
    for args in (["headers", "--debug"], ["--debug", "headers"]):
        proc = run_with_fault(args, port)
        assert proc.returncode == 3 and "Traceback" in proc.stderr and "RuntimeError: planted fault" in proc.stderr
    # the same command without a fault is 0, so 3 came from the fault and nothing else
    run_cli("headers", cwd=port, check_rc=0)


def test_exit_codes_fine_findings_bad_input(tmp_path):
    _up, port, pin, target = pair(tmp_path)
    run_cli("queue", "build", "--range", f"{pin}..{target}", cwd=port, check_rc=0)
    assert run_cli("check", "--base", "HEAD", cwd=port).returncode == 1  # entries new since HEAD, untriaged: findings
    run_cli("audit", "--write", cwd=port, check_rc=0)
    assert run_cli("check", "--base", "HEAD", cwd=port).returncode == 0  # triaged now: fine
    assert run_cli("queue", "show", "--entries", cwd=port).returncode == 2  # a usage error
    assert run_cli("report", "weekly", cwd=port).returncode == 2


def test_queue_show_takes_the_ranges_entries_takes(tmp_path):
    _up, port, pin, target = pair(tmp_path)
    run_cli("queue", "build", "--range", f"{pin}..{target}", cwd=port, check_rc=0)
    both = run_cli("queue", "show", "1-2", "--json", cwd=port, check_rc=0).stdout
    assert [e["n"] for e in json.loads(both)] == [1, 2]
    assert [
        e["n"] for e in json.loads(run_cli("queue", "show", "2", "1-1", "--json", cwd=port, check_rc=0).stdout)
    ] == [1, 2]
    huge = run_cli("queue", "show", "2-99999999999", "--json", cwd=port, check_rc=0).stdout  # clipped, not a 10^11 set
    assert [e["n"] for e in json.loads(huge)] == [2]
    proc = run_cli("queue", "show", "5-9", cwd=port)
    assert proc.returncode == 2 and "no entry in 5-9" in proc.stderr
    proc = run_cli("queue", "show", "3-1", cwd=port)
    assert proc.returncode == 2 and "runs backwards" in proc.stderr
    # the help promises evidence only where it is shown: in --json
    helptext = " ".join(run_cli("queue", "show", "--help", cwd=port, check_rc=0).stdout.split())
    assert "evidence" not in helptext.replace("--json: every field, evidence included", "")
    assert "evidence" in json.loads(both)[0]


def test_every_writing_command_names_the_next_one(tmp_path):
    _up, port, pin, target = pair(tmp_path)
    build = run_cli("queue", "build", "--range", f"{pin}..{target}", cwd=port, check_rc=0).stdout
    assert "wrote" in build and "next: `porttrack audit`" in build
    plain = run_cli("audit", cwd=port, check_rc=0).stdout.splitlines()
    assert re.match(r"2 verdicts: (\S+ \d+(, )?)+; probed ", plain[-2]), plain[-2]
    assert "porttrack audit --write" in plain[-1] and "nothing written" in plain[-1]
    wrote = run_cli("audit", "--write", cwd=port, check_rc=0).stdout
    assert re.search(r"^wrote 2 verdicts to queue/\S+\.toml$", wrote, re.M)
    assert "next: `porttrack report sync --out SYNC.md` or `porttrack check`" in wrote
    rewrote = run_cli("audit", "--write", cwd=port, check_rc=0).stdout
    assert "wrote 0 verdicts" in rewrote  # a plural for every count but one
    (port / "out").mkdir()
    rep = run_cli("report", "sync", "--out", "out/sync.md", cwd=port, check_rc=0).stdout
    assert "next: `porttrack check`" in rep
    assert (port / "out" / "sync.md").is_file() and os.listdir(port / "out") == ["sync.md"]  # no temp file left


def test_report_to_an_unwritable_place_is_one_sentence_and_leaves_no_temp(tmp_path):
    _up, port, pin, target = pair(tmp_path)
    run_cli("queue", "build", "--range", f"{pin}..{target}", cwd=port, check_rc=0)
    (port / "blocker").write_text("a file where a folder is needed\n")
    proc = run_cli("report", "sync", "--out", "blocker/sync.md", cwd=port)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr and "blocker" in proc.stderr
    (port / "reports").mkdir()
    (port / "reports" / "sync.md").mkdir()  # the target name is a folder: the rename fails
    proc = run_cli("report", "sync", "--out", "reports/sync.md", cwd=port)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert os.listdir(port / "reports") == ["sync.md"]  # the temp file was removed
