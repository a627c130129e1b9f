"""Acceptance: odd --range values through the real CLI are one sentence, exit 2, naming the range."""

from __future__ import annotations

import pytest

from conftest import commit_files, init_repo, run_cli


@pytest.fixture
def port(tmp_path):
    up = init_repo(tmp_path / "up")
    for i in range(4):
        commit_files(up, {"vllm/a.py": f"def f{i}():\n    return {i}\n"}, f"[Core] f{i} (#{i + 1})")
    port = init_repo(tmp_path / "port")
    (port / "porttrack.toml").write_text('[upstream]\nrepo = "../up"\npaths = ["vllm/"]\n\n[port]\nroot = "."\n')
    return port


@pytest.mark.parametrize(
    "rng, message",
    [
        ("HEAD~2..^HEAD", "revision '^HEAD' of range 'HEAD~2..^HEAD' is not a commit"),
        ("HEAD..HEAD~3", "range 'HEAD..HEAD~3' is backwards"),
    ],
)
def test_odd_ranges_are_refused_naming_the_range(port, rng, message):
    r = run_cli("queue", "build", "--range", rng, "--name", "q", cwd=port, check_rc=2)
    assert message in r.stderr and "Traceback" not in r.stderr and "git " not in r.stderr
    assert not (port / "queue" / "q.toml").exists()


def test_refresh_to_an_older_target_is_refused(port):
    run_cli("queue", "build", "--range", "HEAD~2..HEAD", "--name", "q", cwd=port, check_rc=0)
    r = run_cli("queue", "refresh", "--target", "HEAD~3", cwd=port, check_rc=2)
    assert "is backwards" in r.stderr


def test_empty_range_at_one_commit_is_fine(port):
    r = run_cli("queue", "build", "--range", "HEAD..HEAD", "--name", "q", cwd=port, check_rc=0)
    assert "0 entries" in r.stdout


def test_a_cache_folder_that_cannot_be_made_names_its_setting(port, tmp_path, monkeypatch):
    blocker = tmp_path / "blocker"
    blocker.write_text("")
    monkeypatch.setenv("PORTTRACK_CACHE_DIR", str(blocker / "sub"))
    r = run_cli("queue", "build", "--range", "HEAD~2..HEAD", "--name", "q", cwd=port, check_rc=2)
    assert f"cache folder {blocker / 'sub'} (PORTTRACK_CACHE_DIR) cannot be created" in r.stderr


def test_progress_is_plain_lines_off_a_terminal_and_a_bar_on_one(port):
    import io

    from rich.console import Console

    from porttrack.progress import queue_walk

    plain = Console(file=io.StringIO(), force_terminal=False, width=80)
    p = queue_walk(plain, every=2)
    for done in range(6):
        p(done, 5)
    p.close()
    assert plain.file.getvalue().splitlines() == ["walked 2/5 commits", "walked 4/5 commits", "walked 5/5 commits"]
    tty = Console(file=io.StringIO(), force_terminal=True, width=80)
    p = queue_walk(tty, every=2)
    for done in range(6):
        p(done, 5)
    p.close()
    assert "walking" in tty.file.getvalue() and "walked" not in tty.file.getvalue()
    # the real CLI, off a terminal: the last line reports the whole range
    r = run_cli("queue", "build", "--range", "HEAD~3..HEAD", "--name", "q", cwd=port, check_rc=0)
    assert r.stderr.strip().splitlines()[-1] == "walked 3/3 commits"


def test_scopes_nested_too_deep_to_walk_are_touched_without_symbols(tmp_path):
    from pathlib import Path

    from porttrack.queue.walk import walk

    up = init_repo(tmp_path / "deep")
    pin = commit_files(up, {"csrc/a.cpp": "int a();\n"}, "init")
    deep = b"namespace a { " * 3000 + b"int g();" + b" }" * 3000
    commit_files(up, {"csrc/deep.h": deep, "csrc/a.cpp": "int a();\nint b();\n"}, "deep (#1)")
    r = walk(up, f"{pin}..HEAD", ["csrc"], cache_dir=Path(tmp_path / "c"))
    (c,) = r.commits
    assert [f.path for f in c.files] == ["csrc/a.cpp", "csrc/deep.h"] and c.symbols.added == ["b"]
    assert r.skipped == 1
