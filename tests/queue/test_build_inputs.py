"""queue build on the inputs a first real use meets: a mirror that lacks blobs, an existing queue,
an empty queue beside a full one."""

from __future__ import annotations
import json
from pathlib import Path
from conftest import small_mirror, commit_files, run_cli
from porttrack.queue import file as queuefile


def drop_object(repo: Path, sha: str) -> None:
    """Delete a loose object, as a partial or filtered mirror would lack it."""
    (repo / ".git" / "objects" / sha[:2] / sha[2:]).unlink()


def test_a_blob_missing_outside_the_mirrored_paths_is_never_read(tmp_path):
    s = small_mirror(tmp_path)
    drop_object(s["up"], s["docs_blob"])
    proc = run_cli("queue", "build", "--range", f"{s['pin']}..{s['target']}", "--name", "q", cwd=s["port"], check_rc=0)
    assert "wrote" in proc.stdout and "3 entries" in proc.stdout
    q = queuefile.load(s["port"] / "queue" / "q.toml").queue
    assert [e.files for e in q.entries] == [["vllm/a.py"], ["vllm/lost.py"], ["vllm/b.py"]]
    assert q.entries[0].symbols.added == ["g"] and not any(e.unreadable for e in q.entries)


def test_a_blob_missing_inside_names_commit_file_path_rule_and_the_ways_out(tmp_path):
    s = small_mirror(tmp_path)
    drop_object(s["up"], s["lost_blob"])
    proc = run_cli("queue", "build", "--range", f"{s['pin']}..{s['target']}", "--name", "q", cwd=s["port"])
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    line = [ln for ln in proc.stderr.splitlines() if ln.startswith("porttrack:")]
    assert len(line) == 1, proc.stderr
    msg = line[0]
    for needle in (
        s["lost_blob"],
        "vllm/lost.py",
        s["lost"][:10],
        "[Core] Add Lost (#3)",
        "'vllm/'",
        "Narrow [upstream] paths",
        "fetch",
        "--skip-missing",
    ):
        assert needle in msg, (needle, msg)
    assert not (s["port"] / "queue" / "q.toml").exists()


def test_skip_missing_records_the_file_unreadable_and_audit_calls_it_untrusted(tmp_path):
    s = small_mirror(tmp_path)
    drop_object(s["up"], s["lost_blob"])
    drop_object(s["up"], s["docs_blob"])
    proc = run_cli(
        "queue",
        "build",
        "--range",
        f"{s['pin']}..{s['target']}",
        "--name",
        "q",
        "--skip-missing",
        cwd=s["port"],
        check_rc=0,
    )
    assert "1 file could not be read" in proc.stdout and "vllm/lost.py" in proc.stdout and "untrusted" in proc.stdout
    q = queuefile.load(s["port"] / "queue" / "q.toml").queue
    lost = next(e for e in q.entries if e.sha == s["lost"])  # its only file is unreadable: it keeps its entry
    assert lost.unreadable == ["vllm/lost.py"] and lost.files == ["vllm/lost.py"] and lost.stat == {}
    assert [e.n for e in q.entries if e.unreadable] == [lost.n]
    assert [e.sha for e in q.entries] == [s["mixed"], s["lost"], s["target"]]  # upstream order kept
    assert q.entries[0].symbols.added == ["g"]  # the readable files still get their symbols
    text = (s["port"] / "queue" / "q.toml").read_text()
    assert 'unreadable = ["vllm/lost.py"]' in text
    audit = json.loads(run_cli("audit", "--json", cwd=s["port"], check_rc=0).stdout)
    verdicts = {r["entry"]: (r["verdict"], r["rule"], r["reason"]) for r in audit["results"]}
    assert verdicts[lost.n][0] == "untrusted" and "vllm/lost.py" in verdicts[lost.n][2]
    assert verdicts[q.entries[0].n][0] != "untrusted"  # only the entry with the unreadable file


def test_an_existing_queue_is_refused_before_any_walking(tmp_path):
    s = small_mirror(tmp_path)
    rng = f"{s['pin']}..{s['target']}"
    run_cli("queue", "build", "--range", rng, cwd=s["port"], check_rc=0)  # the default name, from the target
    again = run_cli("queue", "build", "--range", rng, cwd=s["port"])
    assert again.returncode == 2 and "already exists" in again.stderr
    assert "walked" not in again.stderr  # the progress line of a walk never appeared
    named = run_cli("queue", "build", "--range", rng, "--name", f"sync-{s['target'][:10]}", cwd=s["port"])
    assert named.returncode == 2 and "already exists" in named.stderr and "walked" not in named.stderr


def test_an_empty_queue_does_not_make_the_full_one_ambiguous(tmp_path):
    s = small_mirror(tmp_path)
    run_cli("queue", "build", "--range", f"{s['pin']}..{s['target']}", "--name", "main", cwd=s["port"], check_rc=0)
    up = s["up"]
    docs_only = commit_files(up, {"docs/other.html": "<p>x</p>\n"}, "[Doc] only docs (#5)")
    tiny = run_cli(
        "queue", "build", "--range", f"{s['target']}..{docs_only}", "--name", "tiny", cwd=s["port"], check_rc=0
    )
    assert "0 entries" in tiny.stdout and "no commit of the range touches [upstream] paths" in tiny.stdout
    assert "queue refresh --queue queue/tiny.toml" in tiny.stdout  # no audit to suggest on nothing
    shown = json.loads(run_cli("queue", "show", "--json", cwd=s["port"], check_rc=0).stdout)
    assert len(shown) == 3
    run_cli("audit", cwd=s["port"], check_rc=0)
    # two queues with entries are ambiguous, and the sentence says what to do
    run_cli("queue", "build", "--range", f"{s['pin']}..{s['mixed']}", "--name", "other", cwd=s["port"], check_rc=0)
    proc = run_cli("queue", "show", cwd=s["port"])
    assert proc.returncode == 2 and "several queue files" in proc.stderr and "--queue" in proc.stderr
