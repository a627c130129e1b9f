"""progress: the one reporter the probe's first scan, queue build's walk and validate's cases share."""

from __future__ import annotations

import io

from rich.console import Console

from porttrack import progress
import re
from conftest import small_mirror, commit_files, run_cli


def _plain() -> Console:
    return Console(file=io.StringIO(), force_terminal=False, width=100)


def _lines(console: Console) -> list[str]:
    return console.file.getvalue().splitlines()  # type: ignore[attr-defined]


def test_off_a_terminal_a_line_at_each_quarter_and_one_at_the_end():
    c = _plain()
    p = progress.probe_scan(c)
    for done in range(0, 11):
        p(done, 10)
    assert _lines(c) == [f"probe: indexed {n}/10 files (first scan only)" for n in (3, 5, 8, 10)]


def test_a_jump_past_several_quarters_is_one_line():
    c = _plain()
    p = progress.validate_cases(c)
    p(1, 8)
    p(7, 8)  # past the half and three quarters at once
    p(8, 8)
    p(8, 8)  # the end is said once
    assert _lines(c) == ["validate kv: 7/8 cases sent", "validate kv: 8/8 cases sent"]


def test_every_n_items_when_asked_and_the_total_unknown():
    c = _plain()
    p = progress.queue_walk(c, every=3)
    for done in range(1, 8):
        p(done, None)
    assert _lines(c) == ["walked 3 commits", "walked 6 commits"]


def test_on_a_terminal_a_bar_with_its_label_that_stops_at_the_end():
    tty = Console(file=io.StringIO(), force_terminal=True, width=100)
    p = progress.validate_cases(tty)
    for done in range(1, 5):
        p(done, 4)
    assert p._bar is None  # stopped by itself at the end: nothing left drawing
    text = tty.file.getvalue()  # type: ignore[attr-defined]
    assert "validate kv" in text and "cases sent" not in text  # the bar, not the plain lines


def test_close_takes_an_unfinished_bar_down():
    tty = Console(file=io.StringIO(), force_terminal=True, width=100)
    p = progress.queue_walk(tty)
    p(1, 10)
    assert p._bar is not None
    p.close()
    assert p._bar is None
    p.close()  # twice is harmless


def test_audit_report_and_check_show_scan_progress_off_a_terminal(tmp_path, monkeypatch):
    s = small_mirror(tmp_path)
    port = s["port"]
    commit_files(port, {f"src/gen{i}.cpp": f"int gen{i}();\n" for i in range(60)}, "more files")
    run_cli("queue", "build", "--range", f"{s['pin']}..{s['target']}", cwd=port, check_rc=0)
    qpath = next((port / "queue").glob("*.toml"))
    text = qpath.read_text()
    last = text.rindex('verdict = "unclassified"')  # the last entry: deferred, so check re-runs its gate
    qpath.write_text(text[:last] + 'verdict = "surface-absent"' + text[last + len('verdict = "unclassified"') :])
    with qpath.open("a") as fh:  # a gate for check to re-run (it scans only for gates)
        fh.write('\n[[entry.gate]]\nid = "b-absent"\nkind = "absent"\nprobe = "B"\nscope = ["src"]\ncontrol = "f"\n')
    for i, args in enumerate((["audit"], ["report", "sync"], ["check"])):
        monkeypatch.setenv("PORTTRACK_CACHE_DIR", str(tmp_path / f"cold{i}"))  # a cold cache each time
        proc = run_cli(*args, cwd=port)
        assert proc.returncode in (0, 1), proc.stderr
        lines = [ln for ln in proc.stderr.splitlines() if "indexed" in ln]
        # grep-first: only files that hold a probed name are parsed, so the total is theirs, not 61
        assert lines and re.fullmatch(r"probe: indexed (\d+)/\1 files \(first scan only\)", lines[-1]), (
            args,
            proc.stderr,
        )
        assert "\x1b[" not in proc.stderr  # plain lines, no terminal codes
        warm = run_cli(*args, cwd=port)
        assert "indexed" not in warm.stderr  # a warm scan reads no file: nothing to report


def test_audit_shows_a_bar_on_a_terminal(tmp_path):
    import os
    import pty
    import subprocess
    import sys

    from conftest import ROOT

    s = small_mirror(tmp_path)
    port = s["port"]
    commit_files(port, {f"src/gen{i}.cpp": f"int gen{i}();\n" for i in range(60)}, "more files")
    run_cli("queue", "build", "--range", f"{s['pin']}..{s['target']}", cwd=port, check_rc=0)
    master, slave = pty.openpty()
    env = dict(
        os.environ, PYTHONPATH=str(ROOT), COLUMNS="100", TERM="xterm", PORTTRACK_CACHE_DIR=str(tmp_path / "cold-tty")
    )
    env.pop("NO_COLOR", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "porttrack", "audit"], cwd=port, env=env, stdin=slave, stdout=slave, stderr=slave
    )
    os.close(slave)
    seen = b""
    while True:
        try:
            chunk = os.read(master, 1 << 16)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        seen += chunk
    assert proc.wait(timeout=120) == 0
    os.close(master)
    text = seen.decode("utf-8", "replace")
    assert "indexing files" in text  # the bar's label, drawn (and then cleared) on the terminal
    assert "probe: indexed" not in text  # not the plain lines meant for logs
