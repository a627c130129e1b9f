"""porttrack init: a starter config from what the tree shows."""

from conftest import commit_files, init_repo, run_cli

from porttrack.config import load_config


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
