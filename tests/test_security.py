"""A pull request is untrusted (docs/security.md): each attack on a committed checkout, tried as an
attacker would, on a copy of the demo port whose queue was built and audited. Each test checks
the attack's own effect: no file created, nothing outside the checkout read or written."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from conftest import commit_files, git, init_repo, run_cli
from porttrack import demo

pytestmark = pytest.mark.xdist_group("security")  # one worker builds the audited demo pair, once


@pytest.fixture(scope="session")
def audited(tmp_path_factory) -> Path:
    """The demo pair after `queue build` and `audit --write`, every file committed: what a PR starts from."""
    base = tmp_path_factory.mktemp("secure")
    shas = demo.build_upstream(base / "upstream")
    demo.build_port(base / "port", shas)
    port = base / "port"
    run_cli("queue", "build", "--range", f"{shas[0][:10]}..{shas[-1][:10]}", "--name", "demo", cwd=port, check_rc=0)
    run_cli("audit", "--write", cwd=port, check_rc=0)
    commit_files(port, {}, "queue")
    return base


@pytest.fixture
def pair(audited: Path, tmp_path: Path) -> Path:
    """A fresh copy of the audited pair; returns the port (the checkout under review)."""
    shutil.copytree(audited, tmp_path / "pair", symlinks=True)
    return tmp_path / "pair" / "port"


def set_config(port: Path, old: str, new: str) -> None:
    path = port / "porttrack.toml"
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


def planted_git_dir(port: Path, tmp_path: Path, folder: str, config: list[tuple[str, str]]) -> Path:
    """A folder laid out like a git directory, committed into the checkout, its config the attacker's."""
    donor = init_repo(tmp_path / "donor")
    commit_files(donor, {"a": "hi\n"}, "x")
    evil = port / folder
    shutil.copytree(donor / ".git", evil)
    shutil.rmtree(evil / "hooks", ignore_errors=True)
    for key, value in config:
        git(port, "config", "-f", str(evil / "config"), key, value)
    return evil


def test_a_planted_git_directory_as_port_root_runs_no_command(pair: Path, tmp_path: Path):
    pwned = tmp_path / "PWNED"
    evil = planted_git_dir(
        pair,
        tmp_path,
        "evil",
        [("core.bare", "false"), ("core.worktree", ".."), ("core.fsmonitor", f"touch {pwned}; echo")],
    )
    shutil.copytree(pair / "queue", evil / "queue")
    set_config(pair, 'root = "."', 'root = "evil"')
    commit_files(pair, {}, "pr")
    for args in (("check",), ("probe", "take_new_block_ids")):
        proc = run_cli(*args, cwd=pair, check_rc=2)
        assert "port.root 'evil'" in proc.stderr and "porttrack.toml:" in proc.stderr
        assert not pwned.exists()


@pytest.mark.parametrize("root", ["/", "../..", "../upstream"])
def test_a_port_root_outside_the_checkout_is_refused(pair: Path, root: str):
    set_config(pair, 'root = "."', f'root = "{root}"')
    commit_files(pair, {}, "pr")
    proc = run_cli("check", cwd=pair, check_rc=2)
    assert f"port.root '{root}'" in proc.stderr and "outside the repository" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_a_port_root_through_a_committed_link_is_refused(pair: Path):
    (pair / "up").symlink_to("/")
    set_config(pair, 'root = "."', 'root = "up"')
    commit_files(pair, {}, "pr")
    proc = run_cli("check", cwd=pair, check_rc=2)
    assert "port.root 'up'" in proc.stderr


def test_a_queue_sha_that_is_a_git_option_is_refused_at_load(pair: Path, tmp_path: Path):
    queue = pair / "queue" / "demo.toml"
    text = queue.read_text()
    first = text.index('sha = "')
    end = text.index('"', first + 7)
    target = tmp_path / "PWNED_diff"
    queue.write_text(text[:first] + f'sha = "--output={target}"' + text[end + 1 :])
    line = queue.read_text()[:first].count("\n") + 1
    proc = run_cli("audit", "--entries", "1", cwd=pair, check_rc=2)
    assert not target.exists()
    assert f"demo.toml:{line}:" in proc.stderr and "hex" in proc.stderr


def test_an_upstream_repository_committed_in_the_checkout_is_refused(pair: Path, tmp_path: Path):
    pwned = tmp_path / "PWNED_textconv"
    bare = pair / "vendor" / "up.git"
    git(pair.parent / "upstream", "clone", "-q", "--bare", str(pair.parent / "upstream"), str(bare))
    git(bare, "config", "diff.x.textconv", f"touch {pwned}; cat")
    (bare / "info").mkdir(exist_ok=True)
    (bare / "info" / "attributes").write_text("* diff=x\n")
    set_config(pair, 'repo = "../upstream"', 'repo = "vendor/up.git"')
    commit_files(pair, {}, "pr")
    proc = run_cli("audit", "--entries", "1", cwd=pair, check_rc=2)
    assert "upstream.repo 'vendor/up.git'" in proc.stderr and "committed inside this checkout" in proc.stderr
    assert not pwned.exists()


def test_a_textconv_driver_of_an_outside_upstream_never_runs(pair: Path, tmp_path: Path):
    """An upstream outside the checkout is the user's choice; its config still runs nothing."""
    pwned = tmp_path / "PWNED_textconv"
    up = pair.parent / "upstream"
    git(up, "config", "diff.x.textconv", f"touch {pwned}; cat")
    git(up, "config", "diff.external", f"sh -c 'touch {pwned}'")
    (up / ".git" / "info").mkdir(exist_ok=True)
    (up / ".git" / "info" / "attributes").write_text("* diff=x\n")
    run_cli("audit", cwd=pair, check_rc=0)
    assert not pwned.exists()


@pytest.mark.parametrize("kind", ["absolute", "parent", "home"])
def test_a_cache_dir_outside_the_checkout_is_refused(pair: Path, tmp_path: Path, kind: str):
    import uuid

    target = {
        "absolute": str(tmp_path / "outside-cache"),
        "parent": "../outside-cache",
        "home": f"~/porttrack-pr-cache-{uuid.uuid4().hex[:8]}",
    }[kind]
    set_config(
        pair, '[queue]\nfile = "queue/demo.toml"', f'[queue]\nfile = "queue/demo.toml"\n[cache]\ndir = "{target}"'
    )
    commit_files(pair, {}, "pr")
    before = sorted(p.name for p in pair.parent.iterdir())
    proc = run_cli("check", cwd=pair, check_rc=2)
    assert f"cache.dir '{target}'" in proc.stderr and "PORTTRACK_CACHE_DIR" in proc.stderr
    assert sorted(p.name for p in pair.parent.iterdir()) == before
    assert not (pair / target).resolve().exists() and not Path(target).expanduser().exists()


def test_a_cache_file_planted_as_a_link_is_never_written_through(pair: Path, tmp_path: Path):
    from porttrack import cache

    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    old = tmp_path / "old"
    old.mkdir()
    (old / "cache-v1.sqlite").write_text("someone else's\n")
    folder = pair / "ptcache"
    folder.mkdir()
    (folder / cache.DB_FILE).symlink_to(victim)
    (folder / "cache-v1.sqlite").symlink_to(old / "cache-v1.sqlite")
    set_config(pair, '[queue]\nfile = "queue/demo.toml"', '[queue]\nfile = "queue/demo.toml"\n[cache]\ndir = "ptcache"')
    commit_files(pair, {}, "pr")
    proc = run_cli("check", cwd=pair)
    assert proc.returncode in (0, 1)
    assert "ptcache" in proc.stderr and "symbolic link" in proc.stderr and "in memory" in proc.stderr
    assert victim.read_text() == "precious\n" and (old / "cache-v1.sqlite").read_text() == "someone else's\n"


def test_cleanup_touches_only_a_folder_porttrack_made(pair: Path):
    folder = pair / "ptcache"
    folder.mkdir()
    (folder / "cache-v1.sqlite-mine").write_text("not porttrack's\n")
    (pair / ".gitignore").write_text("ptcache/\n")
    set_config(pair, '[queue]\nfile = "queue/demo.toml"', '[queue]\nfile = "queue/demo.toml"\n[cache]\ndir = "ptcache"')
    commit_files(pair, {}, "config")
    run_cli("check", cwd=pair, check_rc=0)
    assert (folder / "cache-v1.sqlite-mine").exists()  # the folder was not porttrack's when it ran


HOSTILE = r"x\n::error file=a,line=1::pwned\r\n::set-output name=x::y \u001b[31mred\u0007 \u0085next"
CONTROL = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029]")


def test_queue_text_never_starts_a_line_or_drives_a_terminal_in_any_output(pair: Path):
    queue = pair / "queue" / "demo.toml"
    text = queue.read_text()
    text = re.sub(r'^subject = ".*"$', lambda m: f'subject = "{HOSTILE}"', text, count=3, flags=re.M)
    text = re.sub(r'^reason = ".*"$', lambda m: f'reason = "{HOSTILE}"', text, count=3, flags=re.M)
    text = re.sub(r'^id = "(.*)"$', lambda m: f'id = "{m[1]}{HOSTILE}"', text, count=1, flags=re.M)
    text = re.sub(
        r'^established_at = ".*"$', lambda m: 'established_at = "src/gone\\u001b.cpp:1"', text, count=1, flags=re.M
    )
    queue.write_text(text)
    commit_files(pair, {".gitignore": "reports/\n"}, "pr")
    outputs = {}
    for args in (
        ("check",),
        ("check", "--format", "github"),
        ("check", "--format", "junit"),
        ("check", "--format", "sarif"),
        ("audit",),
        ("report", "sync"),
        ("report", "deferral"),
        ("queue", "show"),
    ):
        proc = run_cli(*args, cwd=pair)
        assert proc.returncode in (0, 1), (args, proc.stderr)
        outputs[" ".join(args)] = proc.stdout + proc.stderr
    for name, out in outputs.items():
        if name in ("check", "check --format github", "report sync"):
            assert "pwned" in out, name  # the text is shown, escaped
        assert not CONTROL.search(out), name
        starts = [line for line in out.splitlines() if line.lstrip().startswith("::")]
        if name.endswith("github"):
            assert all(re.match(r"::(error|warning|notice) file=[^,]*,line=\d+,title=porttrack ", s) for s in starts)
        else:
            assert starts == [], name


def test_sigterm_during_audit_write_leaves_no_lock_and_a_whole_queue(pair: Path, tmp_path: Path):
    import os
    import signal
    import subprocess
    import sys
    import time

    from conftest import CLI_ENV, ROOT
    from porttrack.queue import file as queuefile

    queue = pair / "queue" / "demo.toml"
    queue.write_text(re.sub(r'^verdict = ".*"\nverdict_by = "audit"\n', "", queue.read_text(), count=1, flags=re.M))
    before = queue.read_text()
    hold = tmp_path / "hold"
    hold.mkdir()
    # the writer stops between its temp write and its rename, holding the lock: SIGTERM lands there
    env = dict(os.environ, **CLI_ENV, PYTHONPATH=str(ROOT), PORTTRACK_TEST_HOLD_BEFORE_RENAME=str(hold))
    proc = subprocess.Popen(
        [sys.executable, "-m", "porttrack", "audit", "--write"],
        cwd=pair,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while not (hold / "held").exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert (pair / "queue" / ".demo.toml.lock").exists()
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 143 and err.strip().splitlines()[-1] == "porttrack: terminated.", err
    assert not (pair / "queue" / ".demo.toml.lock").exists()
    assert queue.read_text() == before and not list(queue.parent.glob(".*.tmp"))
    queuefile.load(queue)


def test_a_full_disk_names_the_queue_and_keeps_it(pair: Path):
    import os
    import resource
    import subprocess
    import sys

    from conftest import CLI_ENV, ROOT

    queue = pair / "queue" / "demo.toml"
    text = queue.read_text()
    queue.write_text(re.sub(r'^verdict = ".*"\nverdict_by = "audit"\n', "", text, count=1, flags=re.M))  # one to write
    before = queue.read_text()
    limit = len(before.encode()) - 1

    def small_files() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    env = dict(os.environ, **CLI_ENV, PYTHONPATH=str(ROOT))
    proc = subprocess.run(
        [sys.executable, "-m", "porttrack", "audit", "--write"],
        cwd=pair,
        env=env,
        capture_output=True,
        text=True,
        preexec_fn=small_files,
    )
    assert proc.returncode == 2, proc.stderr
    assert f"cannot write {queue}" in proc.stderr and "left as it was" in proc.stderr
    assert queue.read_text() == before and not list(queue.parent.glob(".*.tmp"))


_RUNS = ["a/" * 50_000, "a-" * 50_000, "a." * 50_000, "a" * 100_000, " " * 100_000, "x=True, " * 12_500]


def test_a_port_file_of_hostile_long_lines_is_read_in_one_pass(pair: Path):
    # Each line would make a pattern that may start inside a run rescan the rest of the run from
    # every character: minutes for these, hours for a megabyte. No time is asserted; the old
    # patterns made this test run for many minutes.
    lines = ["// Ported from: " + _RUNS[0], "// " + _RUNS[1]]
    lines += [f"// DEFERRED: {run} #12345 vllm/x.py" for run in _RUNS]
    lines += [f"// see PR {run}" for run in _RUNS]
    commit_files(pair, {"src/vllm/v1/core/hostile.cpp": "\n".join(lines) + "\n"}, "pr")
    for args in (("check",), ("audit",), ("report", "deferral")):
        proc = run_cli(*args, cwd=pair)
        assert proc.returncode in (0, 1), (args, proc.stderr)


@pytest.mark.parametrize(
    "module, name, text, bare",
    [
        ("porttrack.evidence.headers", "_SOURCE_RE", "a/b/c.py", None),
        ("porttrack.evidence.headers", "_SOURCE_RE", "ab.py", None),
        ("porttrack.evidence.records", "_FILE_PATH", "a/b/c.py", None),
        ("porttrack.evidence.records", "_PR", "a-b#12345", None),
        ("porttrack.evidence.echoes", "_LINK", "ab://c", None),
        ("porttrack.evidence.deprecations", "_DEPRECATION_CLASS", "aDeprecationWarning", None),
        ("porttrack.evidence.wrappers", "_MESSAGE", "a.b.trace_structured(", "trace_structured("),
        ("porttrack.evidence.switches", "_PASSED", "  x=True", "x=True"),
    ],
)
def test_no_evidence_pattern_starts_a_match_inside_a_token(module: str, name: str, text: str, bare: str | None):
    # What keeps the patterns above linear on a hostile line: a match starts where its token
    # starts, so a search from inside the token (lookbehind still sees what came before) finds
    # none, or only the bare form a prefix (a dotted name, leading spaces) may lead to.
    import importlib

    pattern = getattr(importlib.import_module(module), name)
    assert pattern.search(text), "the token itself matches"
    inside = pattern.search(text, 1)
    assert (inside and inside.group(0)) == bare
