"""The CLI end to end: every command has --help, and bad input is one sentence with exit 2."""

import json

import pytest

from conftest import commit_files, init_repo, run_cli

COMMANDS = [
    ["init"],
    ["demo"],
    ["queue", "build"],
    ["queue", "refresh"],
    ["queue", "show"],
    ["probe"],
    ["audit"],
    ["report"],
    ["check"],
    ["headers"],
    ["validate", "kv"],
    ["kvref", "vectors"],
]


@pytest.mark.parametrize("cmd", COMMANDS, ids=" ".join)
def test_every_command_has_help(tmp_path, cmd):
    proc = run_cli(*cmd, "--help", cwd=tmp_path, check_rc=0)
    assert "Usage:" in proc.stdout


def one_sentence_exit_2(proc, *needles):
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, proc.stderr
    for n in needles:
        assert n in lines[0], lines[0]
    return lines[0]


def port_with_config(tmp_path, config: str):
    port = init_repo(tmp_path / "port")
    (port / "porttrack.toml").write_text(config)
    return port


def test_malformed_toml(tmp_path):
    port = port_with_config(tmp_path, '[upstream]\nrepo = "../up"\npaths = ["vllm/"\n')
    one_sentence_exit_2(run_cli("queue", "show", cwd=port), "porttrack.toml:", "malformed TOML")


def test_wrong_type_key(tmp_path):
    port = port_with_config(tmp_path, '[port]\nscopes = { code = "src" }\n')
    one_sentence_exit_2(run_cli("queue", "show", cwd=port), "porttrack.toml:2", "port.scopes.code")


def test_queue_outside_port_root(tmp_path):
    port = port_with_config(tmp_path, '[port]\nroot = "."\n')
    (tmp_path / "q.toml").write_text('[queue]\nname = "x"\n')
    one_sentence_exit_2(run_cli("queue", "show", "--queue", "../q.toml", cwd=port), "outside the port root")


def test_non_git_upstream(tmp_path):
    (tmp_path / "up").mkdir()
    port = port_with_config(tmp_path, '[upstream]\nrepo = "../up"\npaths = ["vllm/"]\n')
    one_sentence_exit_2(run_cli("queue", "build", "--range", "a..b", cwd=port), "not a git repository", "upstream")


def test_range_whose_commits_do_not_exist(tmp_path):
    up = init_repo(tmp_path / "up")
    commit_files(up, {"vllm/a.py": "def f():\n    pass\n"}, "first (#1)")
    port = port_with_config(tmp_path, '[upstream]\nrepo = "../up"\npaths = ["vllm/"]\n')
    line = one_sentence_exit_2(run_cli("queue", "build", "--range", "deadbeef1..cafebabe2", cwd=port))
    assert "deadbeef1" in line or "cafebabe2" in line


def test_unknown_option_is_usage_error(tmp_path):
    proc = run_cli("queue", "show", "--no-such-flag", cwd=tmp_path)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr


def test_queue_show_table_and_json(tmp_path):
    port = port_with_config(tmp_path, '[port]\nroot = "."\n')
    (port / "queue").mkdir()
    (port / "queue" / "q.toml").write_text(
        '[queue]\nname = "demo"\n\n[[entry]]\nn = 3\nsha = "0123456789abcdef0123456789abcdef01234567"\n'
        'pr = 35219\nsubject = "[Core] Zero freed SSM cache blocks (#35219)"\nverdict = "inert"\nverdict_by = "human"\n'
        '[[entry.gate]]\nid = "g"\nkind = "no-consumer"\nprobe = "take_new_block_ids"\nscope = ["src"]\n'
    )
    table = run_cli("queue", "show", cwd=port, check_rc=0).stdout
    assert "35219" in table and "inert (human)" in table and "no-consumer:take_new_block_ids" in table
    data = json.loads(run_cli("queue", "show", "3", "--json", cwd=port, check_rc=0).stdout)
    assert data[0]["n"] == 3 and data[0]["gates"][0]["probe"] == "take_new_block_ids"
    one_sentence_exit_2(run_cli("queue", "show", "4", cwd=port), "no entry 4")


# ---------------------------------------------------------------- acceptance: bad input across commands


def test_bare_command_prints_help_and_no_empty_error_line(tmp_path):
    proc = run_cli(cwd=tmp_path)
    assert "Usage:" in proc.stdout and "Traceback" not in proc.stderr
    assert not [ln for ln in proc.stderr.splitlines() if ln.strip()], proc.stderr  # no bare "porttrack: "
    assert proc.returncode in (0, 2)


def test_os_error_from_a_configured_path_is_one_sentence(tmp_path):
    # [cache] dir names a file: creating the cache folder fails deep inside the scan
    port = port_with_config(tmp_path, '[port]\nroot = "."\n\n[cache]\ndir = "porttrack.toml"\n')
    (port / "src").mkdir()
    (port / "src" / "a.cpp").write_text("int take_new_block_ids();\n")
    one_sentence_exit_2(run_cli("probe", "take_new_block_ids", cwd=port), "porttrack.toml:5", "cache.dir")
    # a cache folder that cannot be made at all: the system's refusal, in one sentence naming it
    (port / "porttrack.toml").write_text('[port]\nroot = "."\n\n[cache]\ndir = "porttrack.toml/sub"\n')
    one_sentence_exit_2(run_cli("probe", "take_new_block_ids", cwd=port), "porttrack.toml/sub")


def test_demo_out_that_is_a_file_or_cannot_be_made(tmp_path):
    (tmp_path / "f").write_text("x")
    one_sentence_exit_2(run_cli("demo", "--out", str(tmp_path / "f"), cwd=tmp_path), "--out", "not a folder")
    one_sentence_exit_2(run_cli("demo", "--out", str(tmp_path / "f" / "d"), cwd=tmp_path), "--out", "cannot create")


def test_queue_build_refuses_a_bad_name_or_destination_before_walking(tmp_path):
    up = init_repo(tmp_path / "up")
    a = commit_files(up, {"vllm/a.py": "def f():\n    pass\n"}, "first (#1)")
    b = commit_files(up, {"vllm/a.py": "def f():\n    return 1\n"}, "second (#2)")
    port = port_with_config(tmp_path, '[upstream]\nrepo = "../up"\npaths = ["vllm/"]\n')
    # one sentence: no "walked N commits" progress line before the refusal
    one_sentence_exit_2(run_cli("queue", "build", "--range", f"{a}..{b}", "--name", "a b", cwd=port), "--name")
    one_sentence_exit_2(
        run_cli("queue", "build", "--range", f"{a}..{b}", "--queue", "../q.toml", cwd=port), "outside the port root"
    )
    one_sentence_exit_2(run_cli("queue", "build", "--range", f"{a}..{b}", "--name", "x" * 300, cwd=port), "--name")
    assert not (port / "queue").exists()


def test_init_refuses_a_non_git_upstream(tmp_path):
    (tmp_path / "up").mkdir()
    port = init_repo(tmp_path / "port")
    one_sentence_exit_2(
        run_cli("init", "--upstream", str(tmp_path / "up"), cwd=port), "--upstream", "not a git repository"
    )
    one_sentence_exit_2(run_cli("init", "--upstream", str(tmp_path / "nope"), cwd=port), "--upstream")
    assert not (port / "porttrack.toml").exists()


def test_config_option_from_anywhere_and_a_folder_refused(tmp_path):
    port = port_with_config(tmp_path, '[port]\nroot = "."\n')
    (port / "queue").mkdir()
    (port / "queue" / "q.toml").write_text(
        '[queue]\nname = "given"\n\n[[entry]]\nn = 1\nsha = "abababab"\nsubject = "s (#5)"\n'
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    one_sentence_exit_2(run_cli("queue", "show", cwd=elsewhere), "no porttrack.toml")
    data = json.loads(
        run_cli("queue", "show", "--json", "--config", str(port / "porttrack.toml"), cwd=elsewhere, check_rc=0).stdout
    )
    assert [e["n"] for e in data] == [1]
    one_sentence_exit_2(run_cli("queue", "show", "--config", str(port), cwd=elsewhere), "is a folder")


def test_queue_show_prints_brackets_in_subjects_literally(tmp_path):
    port = port_with_config(tmp_path, '[port]\nroot = "."\n')
    (port / "queue").mkdir()
    (port / "queue" / "q.toml").write_text(
        '[queue]\nname = "q [/tag]"\n\n[[entry]]\nn = 1\nsha = "abababab"\nsubject = "Revert [/x] and [bold]this (#7)"\n'
        'verdict = "ignore"\nreason = "ci [red]only"\n'
    )
    proc = run_cli("queue", "show", cwd=port, check_rc=0)
    assert "Revert [/x] and [bold]this (#7)" in proc.stdout and "q [/tag]" in proc.stdout


def test_ci_runs_the_readme_test_command_and_refuses_an_empty_suite():
    from conftest import ROOT

    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    assert "pip install -e '.[kvref]' && porttrack demo" in readme
    assert "pip install -e '.[kvref,test]' && pytest" in readme
    assert "pip install -e '.[kvref,test]' && set +e && pytest" in ci
    assert '"$rc" -eq 5' in ci and "exit 1" in ci


def test_a_huge_entries_range_is_clipped_to_the_queue(tmp_path):
    import os
    import resource
    import subprocess
    import sys

    from conftest import ROOT

    port = port_with_config(tmp_path, '[port]\nroot = "."\n')
    (port / "src").mkdir()
    (port / "src" / "a.cpp").write_text("int f();\n")
    (port / "queue").mkdir()
    (port / "queue" / "q.toml").write_text(
        '[queue]\nname = "q"\n\n[[entry]]\nn = 1\nsha = "abababab"\nsubject = "s (#5)"\n[entry.symbols]\nchanged = ["f"]\n'
    )

    def limit():  # without the clip, a set of 10^11 numbers: a MemoryError here, not a machine out of memory
        resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))

    env = dict(os.environ, NO_COLOR="1", COLUMNS="200", PYTHONPATH=str(ROOT))
    proc = subprocess.run(
        [sys.executable, "-m", "porttrack", "audit", "--json", "--entries", "1-99999999999"],
        cwd=port,
        env=env,
        capture_output=True,
        text=True,
        preexec_fn=limit,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert [r["entry"] for r in json.loads(proc.stdout)["results"]] == [1]


def test_a_table_into_a_pipe_is_not_squeezed_to_80_columns(tmp_path):
    import os
    import subprocess
    import sys

    from conftest import ROOT

    port = port_with_config(tmp_path, '[port]\nroot = "."\n')
    (port / "queue").mkdir()
    subject = "A subject long enough that a table squeezed to eighty columns would have to fold it (#5)"
    (port / "queue" / "q.toml").write_text(
        f'[queue]\nname = "q"\n\n[[entry]]\nn = 1\nsha = "abababab"\nsubject = "{subject}"\n'
    )
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"} | {"PYTHONPATH": str(ROOT), "NO_COLOR": "1"}
    cmd = [sys.executable, "-m", "porttrack", "queue", "show"]
    out = subprocess.run(cmd, cwd=port, env=env, capture_output=True, text=True, check=True).stdout
    assert any(subject in line for line in out.splitlines()), out


def test_ctrl_c_is_one_line_and_exit_130(tmp_path):
    import os
    import signal
    import subprocess
    import sys
    import time
    from pathlib import Path

    from conftest import CLI_ENV, ROOT

    env = dict(os.environ, **CLI_ENV, PYTHONPATH=str(ROOT), PORTTRACK_KV_TIMEOUT="60")
    cmd = [sys.executable, "-m", "porttrack", "validate", "kv", "--impl", "sleep 60", "--as-of", "g3"]
    # a runner that started the suite in the background (`cmd &` without job control) ignores
    # SIGINT, and a child inherits that: porttrack is started as a terminal would start it
    proc = subprocess.Popen(
        cmd,
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    # Past the imports, the harness is being waited on once porttrack has started it: Linux says
    # when (the child running `sleep`, not a git process before it); elsewhere, four seconds is past
    # the imports. A loaded machine can take long over torch's import: a signal then would land in it.
    children = Path(f"/proc/{proc.pid}/task/{proc.pid}/children")

    def harness_started() -> bool:
        for pid in children.read_text().split():
            try:
                if Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0].endswith(b"sleep"):
                    return True
            except OSError:
                continue  # it ended between the two reads
        return False

    deadline = time.monotonic() + 120
    while children.exists() and not harness_started() and time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.05)
    if not children.exists():
        time.sleep(4)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode in (130, -signal.SIGINT), err
    lines = [line for line in err.splitlines() if line.strip() and not line.startswith("validate:")]
    assert lines == ["porttrack: interrupted."], err


def test_report_out_into_a_missing_folder_is_one_sentence(tmp_path):
    port = port_with_config(tmp_path, '[port]\nroot = "."\n')
    (port / "queue").mkdir()
    (port / "queue" / "q.toml").write_text(
        '[queue]\nname = "q"\n\n[[entry]]\nn = 1\nsha = "abababab"\nsubject = "s (#5)"\nverdict = "no-op"\nreason = "docs"\n'
    )
    proc = run_cli("report", "sync", "--out", ".agents/synk/x.md", cwd=port, check_rc=2)
    assert "folder" in proc.stderr and "does not exist" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    assert not (port / ".agents").exists()
