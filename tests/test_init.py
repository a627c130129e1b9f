"""porttrack init: a starter config from what the tree shows."""

from __future__ import annotations

from conftest import commit_files, init_repo, run_cli, git

from porttrack.config import load_config
import re
import tomllib
from pathlib import Path


def test_init_writes_a_starter_from_the_tree(tmp_path):
    port = init_repo(tmp_path / "port")
    commit_files(
        port,
        {
            "src/vllm/v1/core/kv_cache_utils.cpp": "// Ported from: vllm/v1/core/kv_cache_utils.py @ e24d1b24\nint x;\n",
            "include/vllm/v1/core/kv_cache_utils.h": "// Ported from: vllm/v1/core/kv_cache_utils.py @ e24d1b24\n",
            "tests/test_a.cpp": "// Ports tests/v1/core/test_kv_cache_utils.py @ e24d1b24\n",
            ".agents/engine-matrix.md": "| ID | Item |\n|---|---|\n",
        },
        "port",
    )
    proc = run_cli("init", cwd=port, check_rc=0)
    assert "e24d1b24" in proc.stdout
    text = (port / "porttrack.toml").read_text()
    assert '"vllm/"' in text and '"tests/"' in text and ".agents/engine-matrix.md" in text
    cfg = load_config(port / "porttrack.toml")  # the starter file loads and validates
    assert cfg.code_scope == ["src", "include"] and cfg.matrices == [".agents/engine-matrix.md"]
    again = run_cli("init", cwd=port)
    assert again.returncode == 2 and "already exists" in again.stderr and "Traceback" not in again.stderr


def test_init_notes_are_not_wrapped_mid_command(tmp_path):
    port = init_repo(tmp_path / "port")
    commit_files(port, {"src/a.cpp": "// Ported from: vllm/v1/core/kv_cache_utils.py @ e24d1b24\n"}, "port")
    out = run_cli("init", cwd=port, env={"COLUMNS": "60"}, check_rc=0).stdout
    assert "next: `porttrack queue build --range e24d1b24..TARGET`" in out


def test_a_bare_mirror_upstream_is_read_with_explicit_git_dir(tmp_path):
    """git refuses to discover a bare repository by itself (safe.bareRepository=explicit, docs/security.md):
    a mirror named as the upstream is read with --git-dir, from the command line and from the engine."""
    from conftest import git

    from porttrack import init

    up = init_repo(tmp_path / "up")
    pin = commit_files(up, {"vllm/v1/core/kv_cache_utils.py": "def f():\n    pass\n"}, "first")
    commit_files(up, {"vllm/v1/core/kv_cache_utils.py": "def f():\n    return 1\n"}, "second")
    git(tmp_path, "clone", "-q", "--bare", str(up), str(tmp_path / "up.git"))
    port = init_repo(tmp_path / "port")
    commit_files(
        port,
        {"src/vllm/v1/core/kv_cache_utils.cpp": f"// Ported from: vllm/v1/core/kv_cache_utils.py @ {pin[:8]}\n"},
        "port",
    )
    assert "vllm/" in init.propose(port, tmp_path / "up.git").text
    run_cli("init", "--upstream", "../up.git", cwd=port, check_rc=0)
    proc = run_cli("queue", "build", "--range", f"{pin[:8]}..HEAD", cwd=port, check_rc=0)
    assert "1 entr" in proc.stdout or "1 entr" in proc.stderr


def test_one_pin_written_at_several_lengths_counts_once(tmp_path):
    """`e24d1b24` and `e24d1b24fe96` are one commit: together they outnumber another pin."""
    port = init_repo(tmp_path / "port")
    files = {f"src/a{i}.cpp": f"// Ported from: vllm/a{i}.py @ e24d1b24\n" for i in range(3)}
    files |= {f"src/b{i}.cpp": f"// Ported from: vllm/b{i}.py @ e24d1b24fe96\n" for i in range(2)}
    files |= {f"src/c{i}.cpp": f"// Ported from: vllm/c{i}.py @ aaaaaaa1\n" for i in range(4)}
    commit_files(port, files, "port")
    out = run_cli("init", cwd=port, check_rc=0).stdout
    assert "most common header pin e24d1b24fe96 (5 files)" in out, out


def upstream_tree(tmp_path: Path) -> tuple[Path, str, str]:
    """An upstream with a core folder the port mirrors whole, a big folder it cites one file of,
    tests, and docs; a clone of it whose origin is a GitHub-style URL."""
    up = init_repo(tmp_path / "vllm")
    files = {f"vllm/core/m{i}.py": f"def f{i}():\n    pass\n" for i in range(4)}
    files.update({f"vllm/models/model{i}.py": "x = 1\n" for i in range(10)})
    files.update(
        {
            "tests/core/test_m0.py": "def test():\n    pass\n",
            "tests/other/test_x.py": "y = 1\n",
            "docs/index.md": "hi\n",
        }
    )
    pin = commit_files(up, files, "base (#1)")
    target = commit_files(up, {"vllm/core/m0.py": "def f0():\n    return 1\n"}, "[Core] f0 (#2)")
    git(up, "remote", "add", "origin", "https://github.com/acme/vllm.git")
    return up, pin, target


def test_init_proposes_paths_pin_scopes_and_name_from_evidence_and_its_command_works(tmp_path):
    _up, pin, target = upstream_tree(tmp_path)
    port = init_repo(tmp_path / "port")
    commit_files(
        port,
        {
            **{
                f"src/core/m{i}.cpp": f"// Ported from: vllm/core/m{i}.py @ {pin[:10]}\nint f{i}();\n" for i in range(3)
            },
            "src/models/model0.cpp": f"// Ported from: vllm/models/model0.py @ {pin[:10]}\n",
            "src/glue.cpp": "// Ported from: llama.cpp/glue.cpp @ 1234567\n",  # another project's file
            "tests/test_m0.cpp": f"// Ports tests/core/test_m0.py @ {pin[:10]}\n",
            ".agents/engine-matrix.md": "| ID | Item |\n|---|---|\n",
        },
        "port",
    )
    proc = run_cli("init", "--upstream", "../vllm", cwd=port, check_rc=0)
    cfg = tomllib.loads((port / "porttrack.toml").read_text())
    # 3 of 4 core files cited: the folder; 1 of 10 models: the file; tests only where one is ported
    assert cfg["upstream"]["paths"] == ["tests/core/", "vllm/core/", "vllm/models/model0.py"]
    assert cfg["upstream"]["repo"] == "../vllm"  # as given
    assert cfg["upstream"]["name"] == "acme/vllm"  # from the origin URL
    assert cfg["port"]["scopes"] == {"code": ["src"], "tests": ["tests"]}
    assert "warning:" in proc.stdout and "llama.cpp/glue.cpp" in proc.stdout  # not in the upstream: said, not mirrored
    assert "1234567" in proc.stdout  # an unplaceable minority pin is named too
    assert "the pin is an ancestor of" in proc.stdout  # the proposed range is walkable
    command = re.search(r"next: `(porttrack [^`]+)`", proc.stdout)[1]
    assert command == f"porttrack queue build --range {pin[:10]}..{target[:10]}"
    built = run_cli(*command.split()[1:], cwd=port, check_rc=0)  # the command it prints runs
    assert "1 entry" in built.stdout


def test_init_in_an_empty_repository_warns_for_every_guess(tmp_path):
    port = init_repo(tmp_path / "empty")
    proc = run_cli("init", cwd=port, check_rc=0)
    warnings = [ln for ln in proc.stdout.splitlines() if ln.startswith("warning:")]
    text = " ".join(warnings)
    for guess in ("paths", "code scope", "tests scope", "matrices", "name", "repo", "pin"):
        assert guess in text, (guess, warnings)
    assert "src" in text and "missing" in text  # a scope naming folders that do not exist says so
    assert "PIN..TARGET" in proc.stdout.splitlines()[-1]
    load_config(port / "porttrack.toml")  # still a valid config


def test_init_with_an_unplaceable_pin_says_so_and_offers_the_newest_placeable_one(tmp_path):
    up, pin, target = upstream_tree(tmp_path)
    absent = "e" * 12  # no commit of the upstream
    port = init_repo(tmp_path / "port")
    commit_files(
        port,
        {
            **{f"src/core/m{i}.cpp": f"// Ported from: vllm/core/m{i}.py @ {absent}\n" for i in range(3)},
            "src/core/m3.cpp": f"// Ported from: vllm/core/m3.py @ {pin[:9]}\n",
        },
        "port",
    )
    proc = run_cli("init", "--upstream", str(up), cwd=port, check_rc=0)
    assert f"header pins {absent} (3 files)" in proc.stdout and "are not commits of" in proc.stdout
    assert f"fetch origin {absent}" in proc.stdout
    assert f"using {pin[:9]} (1 files), the newest header pin" in proc.stdout
    assert f"next: `porttrack queue build --range {pin[:9]}..{target[:10]}`" in proc.stdout
    assert tomllib.loads((port / "porttrack.toml").read_text())["upstream"]["repo"] == str(up)  # absolute, as given
    # no placeable pin at all: the command says to fetch first, from the remote the upstream has
    port2 = init_repo(tmp_path / "port2")
    commit_files(port2, {"src/core/m0.cpp": f"// Ported from: vllm/core/m0.py @ {absent}\n"}, "port")
    git(up, "remote", "rename", "origin", "upstream")
    proc = run_cli("init", "--upstream", str(up), cwd=port2, check_rc=0)
    assert f"fetch upstream {absent}` then `porttrack queue build --range {absent}..{target[:10]}`" in proc.stdout
    # and with no remote: no command that cannot run, but the upstream commit of the port's last day, said for what it is
    (port2 / "porttrack.toml").unlink()
    git(up, "remote", "remove", "upstream")
    proc = run_cli("init", "--upstream", str(up), cwd=port2, check_rc=0)
    assert "fetch" not in proc.stdout.splitlines()[-1] and "no remote to fetch them from" in proc.stdout
    assert "the last upstream commit before the port's newest commit" in proc.stdout
    last = proc.stdout.splitlines()[-1]
    assert last.startswith("next: `porttrack queue build --range ") and f"..{target[:10]}`" in last


def test_init_warns_when_the_pin_is_not_on_the_upstream_branch(tmp_path):
    up, pin, _target = upstream_tree(tmp_path)
    git(up, "checkout", "-q", "-b", "side", pin)
    side = commit_files(up, {"vllm/core/m1.py": "def f1():\n    return 9\n"}, "side (#3)")
    git(up, "checkout", "-q", "main")
    port = init_repo(tmp_path / "port")
    commit_files(port, {"src/m1.cpp": f"// Ported from: vllm/core/m1.py @ {side[:10]}\n"}, "port")
    proc = run_cli("init", "--upstream", str(up), cwd=port, check_rc=0)
    assert f"warning: pin {side[:10]} is not an ancestor of" in proc.stdout, proc.stdout
