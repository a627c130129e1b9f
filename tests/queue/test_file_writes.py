"""Queue writes under faults and concurrency, through real porttrack processes on a real port repository."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

from conftest import ROOT, run_cli
from test_audit import build_port

from porttrack.queue import file as queuefile

QUEUE = "queue/cycle.toml"


def start_cli(*args: str, cwd: Path, env: dict | None = None) -> subprocess.Popen:
    """The real CLI as a separate process that runs alongside the test."""
    full = dict(os.environ, NO_COLOR="1", COLUMNS="200", PYTHONPATH=str(ROOT), **(env or {}))
    return subprocess.Popen(
        [sys.executable, "-m", "porttrack", *args],
        cwd=cwd,
        env=full,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_for(path: Path, proc: subprocess.Popen, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.02)


def verdict_bys(queue: Path, numbers: list[int]) -> list[str]:
    q = queuefile.load(queue).queue
    return [q.entry(n).verdict_by for n in numbers]


def test_an_editor_save_inside_the_write_window_is_kept(tmp_path):
    port = build_port(tmp_path)
    queue = port / QUEUE
    hold = tmp_path / "hold"
    hold.mkdir()
    proc = start_cli("audit", "--write", cwd=port, env={queuefile._TEST_HOLD: str(hold)})
    wait_for(hold / "held", proc)  # the temp file is written; the rename has not happened
    assert any(re.fullmatch(r"\.cycle\.toml\.\w{8}\.tmp", p.name) for p in queue.parent.iterdir())
    edited = queue.read_text() + "# saved by an editor while porttrack was writing\n"
    queue.write_text(edited)
    (hold / "release").touch()
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 2, out + err
    assert "changed on disk since porttrack read it; nothing was written" in err and "Traceback" not in err
    assert queue.read_text() == edited
    assert sorted(p.name for p in queue.parent.iterdir()) == ["cycle.toml"]  # no temp, no lock file left


def test_two_writers_on_different_entries_both_land(tmp_path):
    port = build_port(tmp_path)
    queue = port / QUEUE
    assert verdict_bys(queue, [12, 30]) != ["audit", "audit"]
    hold = tmp_path / "hold"
    hold.mkdir()
    first = start_cli("audit", "--write", "--entries", "12", cwd=port, env={queuefile._TEST_HOLD: str(hold)})
    wait_for(hold / "held", first)
    second = start_cli("audit", "--write", "--entries", "30", cwd=port)
    time.sleep(1.5)
    assert second.poll() is None  # it waits for the first writer's lock rather than reading a file about to change
    (hold / "release").touch()
    for proc in (first, second):
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, out + err
    assert verdict_bys(queue, [12, 30]) == ["audit", "audit"]


def test_many_concurrent_writers_lose_nothing(tmp_path):
    port = build_port(tmp_path)
    queue = port / QUEUE
    numbers = [12, 30, 40, 50, 90]
    procs = [start_cli("audit", "--write", "--entries", str(n), cwd=port) for n in numbers]
    for proc in procs:
        out, err = proc.communicate(timeout=180)
        assert proc.returncode == 0, out + err
    assert verdict_bys(queue, numbers) == ["audit"] * len(numbers)


def test_a_stale_temp_file_of_ours_is_cleaned_on_the_next_write(tmp_path):
    port = build_port(tmp_path)
    stale = port / "queue" / ".cycle.toml.k9x_2abc.tmp"  # what kill -9 inside a write leaves
    stale.write_text("half a queue")
    other = port / "queue" / ".cycle.toml.notes"  # not a name porttrack makes: kept
    other.write_text("mine")
    run_cli("audit", "--write", cwd=port, check_rc=0)
    assert not stale.exists() and other.read_text() == "mine"


def test_comments_everywhere_survive_a_rewrite_and_queue_citations_follow(tmp_path):
    port = build_port(tmp_path)
    queue = port / QUEUE
    run_cli("audit", "--write", cwd=port, check_rc=0)
    lines = queue.read_text().splitlines()
    out, notes = [], []

    def note(where: str) -> None:
        text = f"# team note {len(notes)} ({where})"
        notes.append(text)
        out.append(text)

    for i, line in enumerate(lines):
        nxt = lines[i + 1] if i + 1 < len(lines) else None
        if line.startswith("[[") and out and out[-1] != "" and not out[-1].startswith("#"):
            note("between tables")  # right before a table header
        out.append(line)
        if i == 2:
            note("near the top")
        if line.startswith("established_at"):
            note("after a gate")
        if line.startswith("kind = ") and nxt and nxt.startswith("entry = "):
            note("inside an entry-ported gate")
        if nxt is not None and nxt.startswith("[[entry]]") and out[-2].startswith("established_at"):
            note("after an array of tables")
    note("at the end of the file")
    queue.write_text("\n".join(out) + "\n")
    # the port moves a definition down a line: audit rewrites gates' citations into it
    header = port / "include/vllm/v1/core/kv_cache_manager.h"
    header.write_text("// a new first line\n" + header.read_text())
    run_cli("audit", "--write", cwd=port, check_rc=0)
    after = queue.read_text()
    assert after != "\n".join(out) + "\n"  # the rewrite did change something
    assert re.search(r'established_at = "include/vllm/v1/core/kv_cache_manager\.h:5"', after)
    positions = [after.find(n + "\n") for n in notes]
    assert all(p >= 0 for p in positions), [n for n, p in zip(notes, positions, strict=False) if p < 0]
    assert positions == sorted(positions)  # none moved past another
    assert after.endswith(notes[-1] + "\n")
    qf = queuefile.load(queue)
    cited = [
        (g.entry, g.established_at)
        for e in qf.queue.entries
        for owner in [e, *e.parts]
        for g in owner.gates
        if g.kind == "entry-ported"
    ]
    assert cited
    for n, at in cited:
        line = int(at.rpartition(":")[2])
        assert after.splitlines()[line - 1] == "[[entry]]" and after.splitlines()[line] == f"n = {n}"


def test_an_empty_queue_file_is_refused(tmp_path):
    port = build_port(tmp_path)
    (port / QUEUE).write_bytes(b"")
    proc = run_cli("check", cwd=port)
    assert proc.returncode == 2 and "empty queue file" in proc.stderr and "Traceback" not in proc.stderr


def test_a_fifo_is_refused_before_it_is_opened(tmp_path):
    port = build_port(tmp_path)
    os.mkfifo(port / "queue" / "pipe.toml")
    os.mkfifo(port / "pipe-config.toml")
    cases = [
        (["check", "--queue", "queue/pipe.toml"], "queue file"),
        (["audit", "--write", "--queue", "queue/pipe.toml"], "queue file"),
        (["check", "--config", "pipe-config.toml"], "config"),
        (["report", "sync", "--out", "queue/pipe.toml"], "report --out"),
    ]
    for args, what in cases:
        try:
            proc = subprocess.run(
                [sys.executable, "-m", "porttrack", *args],
                cwd=port,
                capture_output=True,
                text=True,
                env=dict(os.environ, PYTHONPATH=str(ROOT), NO_COLOR="1"),
                timeout=60,
            )
        except subprocess.TimeoutExpired:
            raise AssertionError(f"{args} blocked on a FIFO") from None
        assert proc.returncode == 2, (args, proc.stdout, proc.stderr)
        assert what in proc.stderr and "not a regular file" in proc.stderr and "Traceback" not in proc.stderr


def test_non_ascii_identifiers_are_accepted_and_probed(tmp_path):
    from conftest import commit_files, init_repo

    up = init_repo(tmp_path / "up")
    pin = commit_files(up, {"vllm/blocks.py": "def old(n):\n    return n\n"}, "base (#1)")
    target = commit_files(
        up,
        {"vllm/blocks.py": "def old(n):\n    return n\n\n\ndef größe_der_blöcke(n):\n    return n * 2\n"},
        "[Core] Add größe_der_blöcke (#2)",
    )
    port = init_repo(tmp_path / "port")
    (port / "porttrack.toml").write_text('[upstream]\nrepo = "../up"\npaths = ["vllm/"]\n\n[port]\nroot = "."\n')
    commit_files(
        port,
        {
            "src/blocks.cpp": "// Ported from: vllm/blocks.py\nint old(int n) { return n; }\n"
            "int größe_der_blöcke(int n) { return n * 2; }\n"
            "int use() { return größe_der_blöcke(3); }\n"
        },
        "port",
    )
    run_cli("queue", "build", "--range", f"{pin}..{target}", "--name", "c", cwd=port, check_rc=0)
    assert queuefile.load(port / "queue" / "c.toml").queue.entries[0].symbols.added == ["größe_der_blöcke"]
    probe = run_cli("probe", "größe_der_blöcke", "--scope", "src", "--json", cwd=port, check_rc=0).stdout
    import json

    counts = json.loads(probe)[0]
    assert (counts["status"], counts["code"], counts["definitions"]) == ("present", 2, 1), probe
    audit = run_cli("audit", "--json", cwd=port, check_rc=0)
    assert json.loads(audit.stdout)["results"][0]["verdict"] not in ("surface-absent", "untrusted"), audit.stdout
    run_cli("report", "sync", cwd=port, check_rc=0)


def test_a_deeply_nested_queue_value_is_one_sentence(tmp_path):
    port = build_port(tmp_path)
    queue = port / QUEUE
    lines = queue.read_text().splitlines()
    at = lines.index("n = 1") + 1
    lines.insert(at, "size = " + "[" * 1000 + "]" * 1000)
    queue.write_text("\n".join(lines) + "\n")
    proc = run_cli("check", cwd=port)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"{QUEUE}:{at + 1}: a value is nested too deeply" in proc.stderr
    assert "Traceback" not in proc.stderr and "RecursionError" not in proc.stderr


def test_file_line_text_is_printed_without_emoji(tmp_path):
    port = build_port(tmp_path)
    head = ["[queue]", 'name = "c"', ""]
    entry = ["[[entry]]", "n = 1", f'sha = "{"a" * 40}"', 'subject = "s"', 'verdict = "maybe"']
    padding = ["# padding, so the bad verdict sits on line 100"] * (100 - len(head) - len(entry))
    (port / QUEUE).write_text("\n".join(head + padding + entry) + "\n")
    proc = run_cli("check", cwd=port)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"{QUEUE}:100:" in proc.stderr and "\N{HUNDRED POINTS SYMBOL}" not in proc.stderr
