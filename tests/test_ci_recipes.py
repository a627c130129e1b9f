"""The CI recipes of docs/ci.md, run for real: the pre-commit hooks through `pre-commit try-repo` in a
temporary repository, and `pip install git+URL@SHA` from a clone of this repository. No network: a
recipe whose environment would need a package index is skipped, saying so."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import GIT_ENV, ROOT, commit_files, git, init_repo

DOC = (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")


def test_recipes_pin_a_commit_and_install_from_git():
    assert "pip install porttrack" not in DOC  # not on an index
    assert re.search(r'pip install "git\+https://\S+@<commit sha>"', DOC)
    pre = DOC.split("## pre-commit", 1)[1]
    assert "rev: <40-hex commit sha>" in pre and not re.search(r"rev: v\d", pre)
    hooks = (ROOT / ".pre-commit-hooks.yaml").read_text()
    for hook in re.findall(r"id: (\S+)", pre):
        assert f"- id: {hook}\n" in hooks, hook


def _snapshot(tmp_path: Path) -> tuple[Path, str]:
    """This repository's tracked files as they are now, committed in a fresh repo: (path, sha)."""
    files = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z"], capture_output=True, check=True).stdout
    repo = init_repo(tmp_path / "porttrack")
    for rel in files.decode().split("\0"):
        if rel and (ROOT / rel).is_file():
            dst = repo / rel
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / rel, dst)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "snapshot")
    return repo, git(repo, "rev-parse", "HEAD")


def _port_with_live_gate(tmp_path: Path) -> Path:
    """A port whose queue has a gate that is live: check must fail the commit."""
    port = init_repo(tmp_path / "port")
    (port / "porttrack.toml").write_text('[port]\nroot = "."\nscopes = { code = ["src"], tests = ["tests"] }\n')
    (port / "queue").mkdir()
    (port / "queue" / "q.toml").write_text(
        '[queue]\nname = "q"\n\n[[entry]]\nn = 1\nsha = "' + "1" * 40 + '"\nsubject = "[Core] Zeroer (#1)"\n'
        'verdict = "surface-absent"\nverdict_by = "human"\n'
        '[[entry.gate]]\nid = "zeroer-absent"\nkind = "absent"\nprobe = "KVBlockZeroer"\nscope = ["src"]\ncontrol = "allocate"\n'
    )
    commit_files(port, {"src/a.cpp": "struct KVBlockZeroer {};\nint allocate();\n"}, "port")
    return port


def _pre_commit(args: list[str], cwd: Path, env: dict) -> subprocess.CompletedProcess:
    exe = shutil.which("pre-commit")
    if exe is None:
        pytest.skip("pre-commit is not installed")
    return subprocess.run([exe, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


# pre-commit builds the `language: python` hook's environment with pip from a package index. The
# suite never reaches the network, so that hook runs only where one is declared reachable.
INDEX_OK = os.environ.get("PORTTRACK_TEST_INDEX") == "1"


def _env(tmp_path: Path) -> dict:
    shim = tmp_path / "bin"
    shim.mkdir(exist_ok=True)
    (shim / "porttrack").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m porttrack "$@"\n')
    (shim / "porttrack").chmod(0o755)
    return dict(
        os.environ,
        **GIT_ENV,
        PRE_COMMIT_HOME=str(tmp_path / "pc-home"),
        NO_COLOR="1",
        PYTHONPATH=str(ROOT),
        PATH=f"{shim}{os.pathsep}{os.environ['PATH']}",
        **({} if INDEX_OK else {"PIP_NO_INDEX": "1"}),
    )  # never the network unless PORTTRACK_TEST_INDEX=1 says an index is reachable


def test_system_hook_through_pre_commit_try_repo(tmp_path):
    repo, sha = _snapshot(tmp_path)
    port = _port_with_live_gate(tmp_path)
    env = _env(tmp_path)
    proc = _pre_commit(["try-repo", str(repo), "porttrack-check-system", "--ref", sha, "--all-files"], port, env)
    assert proc.returncode == 1, proc.stdout + proc.stderr  # the live gate fails the hook
    assert "porttrack check (installed porttrack)" in proc.stdout and "Failed" in proc.stdout
    assert "zeroer-absent" in proc.stdout
    # once the queue says what is true, the hook passes
    q = port / "queue" / "q.toml"
    q.write_text(q.read_text().replace('verdict = "surface-absent"', 'verdict = "ported"').split("[[entry.gate]]")[0])
    proc = _pre_commit(["try-repo", str(repo), "porttrack-check-system", "--ref", sha, "--all-files"], port, env)
    assert proc.returncode == 0 and "Passed" in proc.stdout, proc.stdout + proc.stderr


@pytest.mark.skipif(not INDEX_OK, reason="the python hook's environment needs a package index (PORTTRACK_TEST_INDEX=1)")
def test_python_hook_through_pre_commit_try_repo(tmp_path):
    repo, sha = _snapshot(tmp_path)
    port = _port_with_live_gate(tmp_path)
    proc = _pre_commit(["try-repo", str(repo), "porttrack-check", "--ref", sha, "--all-files"], port, _env(tmp_path))
    assert proc.returncode == 1 and "zeroer-absent" in proc.stdout, proc.stdout + proc.stderr


def test_pip_install_from_git_at_a_commit(tmp_path):
    repo, sha = _snapshot(tmp_path)
    target = tmp_path / "site"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "--no-compile",  # bytecode is pip's own step, not the recipe's: 0.8 s of CPU
            "--target",
            str(target),
            f"git+file://{repo}@{sha}",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env=dict(os.environ, PIP_NO_INDEX="1"),
    )
    assert proc.returncode == 0, proc.stderr
    out = subprocess.run(
        [sys.executable, "-c", "import porttrack, sys; print(porttrack.__file__, porttrack.__version__)"],
        capture_output=True,
        text=True,
        env=dict(os.environ, PYTHONPATH=str(target)),
        cwd=tmp_path,
    )
    assert out.stdout.startswith(str(target)), out.stdout + out.stderr
    import porttrack

    assert out.stdout.split()[1] == porttrack.__version__
