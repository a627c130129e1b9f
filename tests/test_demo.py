"""The bundled demo end to end: every verdict, a clean check, a live gate, and no drift."""

from pathlib import Path

import pytest

from conftest import ROOT, run_cli

from porttrack import demo
from porttrack.queue import file as queuefile
from porttrack.model import VERDICTS


@pytest.fixture(scope="session")
def demo_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("demo") / "d"
    proc = run_cli("demo", "--out", str(out), cwd=out.parent)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return out, proc.stdout


@pytest.mark.xdist_group("demo")  # one worker builds the session fixture, once
def test_demo_prints_where_reports_went(demo_dir):
    out, stdout = demo_dir
    assert "report:" in stdout and str(out / "port") in stdout
    for line in stdout.splitlines():
        if line.startswith("report:"):
            assert Path(line.split(":", 1)[1].strip()).is_file()


@pytest.mark.xdist_group("demo")  # one worker builds the session fixture, once
def test_demo_exercises_every_verdict_but_untrusted(demo_dir):
    out, _ = demo_dir
    q = queuefile.load(out / "port" / "queue" / "demo.toml").queue
    seen = {e.verdict for e in q.entries} | {p.verdict for e in q.entries for p in e.parts}
    assert seen >= set(VERDICTS) - {"untrusted", "unclassified"}, seen
    by_pr = {e.pr: e for e in q.entries}
    assert by_pr[35219].verdict == "ported"
    assert by_pr[50276].verdict == "surface-absent"
    assert by_pr[52310].verdict == "inert"
    assert by_pr[53896].verdict == "blocked" and by_pr[51718].n in by_pr[53896].blocked_by
    assert by_pr[42000].verdict == "owned" and by_pr[42000].owner.startswith(
        "KV-HYBRID-COORD (.agents/engine-matrix.md:"
    )
    assert by_pr[43000].verdict == "no-op" and by_pr[43000].verdict_by == "human"
    assert by_pr[44000].verdict == "ignore"
    assert by_pr[41234].verdict == "real-gap"


@pytest.mark.xdist_group("demo")  # one worker builds the session fixture, once
def test_check_goes_red_when_the_port_gains_a_consumer(demo_dir, tmp_path):
    out, _ = demo_dir
    port = out / "port"
    assert run_cli("check", cwd=port).returncode == 0
    inert = next(e for e in queuefile.load(port / "queue" / "demo.toml").queue.entries if e.pr == 52310)
    added = demo.add_consumer(port, queuefile.load(port / "queue" / "demo.toml").queue.meta.pin)
    try:
        proc = run_cli("check", cwd=port)
        assert proc.returncode == 1, proc.stdout + proc.stderr
        assert f"entry {inert.n}" in proc.stdout or f"#{inert.n}" in proc.stdout
        assert demo.CONSUMER_PATH in proc.stdout
    finally:
        added.unlink()
    assert run_cli("check", cwd=port).returncode == 0


@pytest.mark.xdist_group("demo")  # one worker builds the session fixture, once
def test_checked_in_queue_and_reports_have_not_drifted(demo_dir):
    """queue/ and reports/ in this repo are the demo's output; regenerate with scripts/update-demo-outputs.sh."""
    out, _ = demo_dir
    port = out / "port"
    assert (ROOT / "queue" / "demo.toml").read_text() == (port / "queue" / "demo.toml").read_text()
    for name, generated in demo.report_files(port).items():
        assert (ROOT / "reports" / name).read_text() == generated.read_text(), f"reports/{name} drifted"
