"""check on real port git repositories and real queue files: each finding code from a real change."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from conftest import run_cli

from porttrack.outputs import check
from porttrack.config import load_config
from porttrack.outputs.check.run import PRODUCERS
from porttrack.stopwatch import Stopwatch

CONFIG = """\
[port]
root = "."
scopes = { code = ["src", "include"], tests = ["tests"] }

[owners]
matrices = [".agents/*-matrix.md"]

[queue]
file = "queue/q.toml"
"""

HEADER = """\
// Ported from: vllm/v1/core/kv_cache_manager.py @ 5559679229
#pragma once
#include <vector>

class KVCacheManager {
 public:
  int allocate_slots(int n);
  std::vector<int> take_new_block_ids();
};
"""

SOURCE = """\
// Ported from: vllm/v1/core/kv_cache_manager.py @ 5559679229
#include "kv_cache_manager.h"

int KVCacheManager::allocate_slots(int n) { return n; }

std::vector<int> KVCacheManager::take_new_block_ids() { return {}; }
"""

SCHEDULER = """\
#include "kv_cache_manager.h"

int schedule(KVCacheManager& m) {
  return m.allocate_slots(4);
}
"""

TEST = """\
#include "kv_cache_manager.h"
void test_take(KVCacheManager& m) { m.take_new_block_ids(); }
"""

MATRIX = """\
# KV matrix

| ID | Item | Upstream code/tests | State | Owner |
|---|---|---|---|---|
| KV-ZERO | block zeroing | `vllm/v1/worker/utils.py` | `ACTIVE` | kv |
| KV-OLD | old work | `vllm/x.py` | `DONE` | kv |
"""

QUEUE = """\
[queue]
name = "test"
pin = "5559679229"
target = "e126687a9a"

[[entry]]
n = 1
sha = "1111111111111111111111111111111111111111"
subject = "Add KVBlockZeroer (#100)"
files = ["vllm/v1/worker/utils.py"]
verdict = "surface-absent"
reason = "the port has no zeroer"
[[entry.gate]]
id = "no-zeroer"
kind = "absent"
probe = "KVBlockZeroer"
scope = ["src", "include"]
control = "allocate_slots"

[[entry]]
n = 2
sha = "2222222222222222222222222222222222222222"
subject = "Record new block ids (#101)"
files = ["vllm/v1/core/kv_cache_manager.py"]
verdict = "inert"
reason = "nothing reads the ids"
[[entry.gate]]
id = "take-new-block-ids-consumer"
kind = "no-consumer"
probe = "take_new_block_ids"
scope = ["src", "include"]
control = "allocate_slots"
established_at = "include/kv_cache_manager.h:8"

[[entry]]
n = 3
sha = "3333333333333333333333333333333333333333"
subject = "Zero blocks on GPU (#102)"
verdict = "owned"
owner = "KV-ZERO"

[[entry]]
n = 4
sha = "4444444444444444444444444444444444444444"
subject = "Use the zeroer in the runner (#103)"
verdict = "blocked"
blocked_by = [5]

[[entry]]
n = 5
sha = "5555555555555555555555555555555555555555"
subject = "Zeroer core (#104)"
verdict = "real-gap"

[[entry]]
n = 6
sha = "6666666666666666666666666666666666666666"
subject = "Old untriaged entry (#105)"
"""


def git(repo: Path, *args: str) -> str:
    env = {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
        "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
        "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
        "PATH": "/usr/bin:/bin",
    }
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True, env=env).stdout


@pytest.fixture
def port(tmp_path: Path, monkeypatch) -> Path:
    root = tmp_path / "port"
    files = {
        "porttrack.toml": CONFIG,
        "include/kv_cache_manager.h": HEADER,
        "src/kv_cache_manager.cpp": SOURCE,
        "src/scheduler.cpp": SCHEDULER,
        "tests/test_kv.cpp": TEST,
        ".agents/kv-matrix.md": MATRIX,
        "queue/q.toml": QUEUE,
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "port")
    monkeypatch.setenv("PORTTRACK_CACHE_DIR", str(tmp_path / "cache"))
    return root


def run(root: Path, **kw) -> check.CheckResult:
    cfg = load_config(root / "porttrack.toml")
    return check.run(cfg, root / "queue/q.toml", **kw)


def codes(result: check.CheckResult) -> list[tuple[str, int | None]]:
    return [(f.code, f.entry) for f in result.findings]


def edit(root: Path, rel: str, old: str, new: str) -> None:
    p = root / rel
    text = p.read_text()
    assert old in text, (rel, old)
    p.write_text(text.replace(old, new, 1))


def cli(root: Path, *args: str) -> subprocess.CompletedProcess:
    return run_cli("check", *args, cwd=root)


def test_clean_queue_passes(port):
    result = run(port)
    assert result.findings == [], [f.message for f in result.findings]
    assert result.exit_code == 0
    assert result.stats["gates"] == 2 and result.stats["scans"] == 1
    assert "entry 2 gate take-new-block-ids-consumer citation" in result.checks
    # every gate's verdict carries its counts, its control's count and the tree they came from
    ev = result.evidence["entry 1 gate no-zeroer"]
    assert "code 0" in ev and "control allocate_slots code 3" in ev and "absent" in ev
    proc = cli(port)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "ok" in proc.stdout


def test_the_caller_times_each_stage_and_the_summary_says_the_total(port):
    watch = Stopwatch()
    result = run(port, stage=watch)
    assert set(watch.seconds) == {"load", *(p.name for p in PRODUCERS)}
    assert "seconds" not in result.stats  # the engine reads no clock
    assert json.loads(cli(port, "--format", "json").stdout)["stats"]["seconds"] > 0  # the CLI's stopwatch


def test_new_consumer_makes_gate_live_naming_the_entry(port):
    edit(
        port,
        "src/scheduler.cpp",
        "  return m.allocate_slots(4);",
        "  m.take_new_block_ids();\n  return m.allocate_slots(4);",
    )
    result = run(port)
    live = [f for f in result.findings if f.code == "gate-live"]
    assert [(f.entry, f.gate) for f in live] == [(2, "take-new-block-ids-consumer")]
    assert (live[0].path, live[0].line) == ("src/scheduler.cpp", 4)
    assert "src/scheduler.cpp:4" in live[0].message and "port entry 2" in live[0].action
    proc = cli(port, "--format", "json")
    assert proc.returncode == 1
    data = json.loads(proc.stdout)
    assert data["findings"][0]["code"] == "gate-live" and data["findings"][0]["entry"] == 2


def test_new_definition_makes_absent_gate_live(port):
    (port / "src/zeroer.cpp").write_text("class KVBlockZeroer {};\n")
    result = run(port)
    assert ("gate-live", 1) in codes(result)
    f = next(f for f in result.findings if f.entry == 1)
    assert (f.path, f.line) == ("src/zeroer.cpp", 1)


def test_deleting_the_control_makes_gates_untrusted(port):
    for rel in ("include/kv_cache_manager.h", "src/kv_cache_manager.cpp", "src/scheduler.cpp"):
        p = port / rel
        p.write_text(p.read_text().replace("allocate_slots", "reserve"))
    result = run(port)
    untrusted = sorted(f.entry for f in result.findings if f.code == "gate-untrusted")
    assert untrusted == [1, 2]
    assert all("allocate_slots" in f.message for f in result.findings if f.code == "gate-untrusted")


def test_moved_citation_is_stale_with_the_new_line(port):
    edit(port, "include/kv_cache_manager.h", "class KVCacheManager {\n", "// the manager\n\nclass KVCacheManager {\n")
    result = run(port)
    assert codes(result) == [("citation-stale", 2)]
    f = result.findings[0]
    assert (f.path, f.line) == ("include/kv_cache_manager.h", 10)
    assert 'established_at = "include/kv_cache_manager.h:10"' in f.action


def test_vanished_citation_says_where_the_probe_is_now(port):
    edit(port, "include/kv_cache_manager.h", "  std::vector<int> take_new_block_ids();\n", "")
    result = run(port)
    f = next(f for f in result.findings if f.code == "citation-vanished")
    assert f.entry == 2 and "no longer mentions take_new_block_ids" in f.message
    assert "src/kv_cache_manager.cpp:6" in f.message


def test_removed_owner_row_is_a_finding(port):
    edit(port, ".agents/kv-matrix.md", "| KV-ZERO | block zeroing | `vllm/v1/worker/utils.py` | `ACTIVE` | kv |\n", "")
    result = run(port)
    assert codes(result) == [("owner-missing", 3)]
    assert result.findings[0].path == "queue/q.toml"


def test_done_owner_row_is_a_finding(port):
    edit(port, "queue/q.toml", 'owner = "KV-ZERO"', 'owner = "KV-OLD"')
    assert codes(run(port)) == [("owner-done", 3)]


def test_porting_a_blocker_makes_dependants_actionable(port):
    edit(
        port,
        "queue/q.toml",
        'subject = "Zeroer core (#104)"\nverdict = "real-gap"',
        'subject = "Zeroer core (#104)"\nverdict = "ported"',
    )
    result = run(port)
    assert codes(result) == [("actionable", 4)]
    assert "blocked by 5" in result.findings[0].message


@pytest.mark.parametrize("settled", ['verdict = "ported"', 'verdict = "no-op"\nreason = "a refactor"'])
def test_entry_ported_gate_goes_live(port, settled):
    """Once the entry waited on is ported, or needs nothing (no-op), no work is left to wait for:
    check says so as audit would."""
    edit(
        port,
        "queue/q.toml",
        "blocked_by = [5]\n",
        'blocked_by = [5]\n[[entry.gate]]\nid = "wait-core"\nkind = "entry-ported"\nentry = 5\n',
    )
    assert run(port).findings == []
    edit(
        port,
        "queue/q.toml",
        'subject = "Zeroer core (#104)"\nverdict = "real-gap"',
        f'subject = "Zeroer core (#104)"\n{settled}',
    )
    result = run(port)
    assert codes(result) == [("gate-live", 4)]  # the actionable finding is not repeated
    assert f"which is {settled.split(chr(34))[1]} now" in result.findings[0].message


def test_untriaged_entry_after_base_fails_old_one_does_not(port):
    with (port / "queue/q.toml").open("a") as fh:
        fh.write('\n[[entry]]\nn = 7\nsha = "7777777777777777777777777777777777777777"\nsubject = "New thing (#106)"\n')
    result = run(port, base="HEAD")
    assert codes(result) == [("untriaged", 7)]  # entry 6 is unclassified too, but it was there at the base
    proc = cli(port, "--base", "HEAD", "--format", "github")
    assert proc.returncode == 1
    assert proc.stdout.startswith("::error file=queue/q.toml,line=")
    edit(
        port,
        "queue/q.toml",
        'subject = "New thing (#106)"',
        'subject = "New thing (#106)"\nverdict = "ignore"\nreason = "CI only"',
    )
    assert run(port, base="HEAD").findings == []


def test_verdict_missing_what_it_must_carry(port):
    edit(port, "queue/q.toml", 'verdict = "owned"\nowner = "KV-ZERO"', 'verdict = "owned"')
    assert codes(run(port)) == [("verdict-incomplete", 3)]


def test_acknowledgements_cover_expire_and_go_unused(port):
    edit(
        port,
        "src/scheduler.cpp",
        "  return m.allocate_slots(4);",
        "  m.take_new_block_ids();\n  return m.allocate_slots(4);",
    )
    ack = '\n[[ack]]\ncode = "gate-live"\nentry = 2\ngate = "take-new-block-ids-consumer"\nreason = "porting next sprint"\nexpires = {}\n'
    q = port / "queue/q.toml"
    base = q.read_text()
    q.write_text(base + ack.format("2099-01-01"))
    result = run(port)
    assert result.findings == [] and [f.code for f, _ in result.acknowledged] == ["gate-live"]
    q.write_text(base + ack.format("2020-01-01"))
    result = run(port)
    assert sorted(codes(result)) == [("ack-expired", 2), ("gate-live", 2)]
    assert cli(port).returncode == 1
    # once the consumer goes away the acknowledgement matches nothing: that is a finding too
    q.write_text(base + ack.format("2099-01-01"))
    edit(port, "src/scheduler.cpp", "  m.take_new_block_ids();\n", "")
    assert codes(run(port)) == [("ack-unused", 2)]


def test_config_filters_codes_and_severity(port):
    edit(port, "include/kv_cache_manager.h", "class KVCacheManager {\n", "\nclass KVCacheManager {\n")
    assert codes(run(port)) == [("citation-stale", 2)]
    cfg_path = port / "porttrack.toml"
    cfg_path.write_text(CONFIG + '\n[check]\nmin_severity = "error"\n')
    result = run(port)
    assert result.findings == [] and result.ignored == 1
    cfg_path.write_text(CONFIG + '\n[check]\nignore = ["citation-stale"]\n')
    assert run(port).findings == []


def test_landing_sites_are_checked_like_citations(port):
    edit(
        port,
        "queue/q.toml",
        'verdict = "real-gap"',
        'verdict = "real-gap"\nlanding = "src/kv_cache_manager.cpp:4 (allocate_slots)"',
    )
    assert run(port).findings == []
    edit(
        port,
        "src/kv_cache_manager.cpp",
        "\nint KVCacheManager::allocate_slots",
        "\n\n\nint KVCacheManager::allocate_slots",
    )
    result = run(port)
    assert codes(result) == [("landing-stale", 5)]
    assert (result.findings[0].path, result.findings[0].line) == ("src/kv_cache_manager.cpp", 6)


def test_citations_escaping_the_port_root_are_refused(port):
    edit(port, "queue/q.toml", 'established_at = "include/kv_cache_manager.h:8"', 'established_at = "../outside.h:8"')
    proc = cli(port)
    assert proc.returncode == 2
    assert "outside the port root" in proc.stderr and "Traceback" not in proc.stderr


def test_bad_input_exits_2_with_one_sentence(port):
    proc = cli(port, "--format", "xml")
    assert proc.returncode == 2 and "--format" in proc.stderr
    proc = cli(port, "--base", "no-such-ref")
    assert proc.returncode == 2 and "no-such-ref" in proc.stderr and "Traceback" not in proc.stderr
    (port / "queue/q.toml").write_text(QUEUE + '\n[[ack]]\ncode = "no-such-code"\nreason = "x"\n')
    proc = cli(port)
    assert proc.returncode == 2 and "no-such-code" in proc.stderr


def test_rule_gates_are_rerun(port):
    with (port / "queue/q.toml").open("a") as fh:
        fh.write(
            '\n[[rule]]\nupstream = "vllm/v1/kv_offload/**"\nverdict = "inert"\nreason = "worker half absent"\n'
            '[[rule.gate]]\nid = "offload-worker"\nkind = "absent"\nprobe = "OffloadWorker"\nscope = ["src"]\n'
            'control = "allocate_slots"\n'
        )
    assert run(port).findings == []
    (port / "src/offload.cpp").write_text("struct OffloadWorker {};\n")
    result = run(port)
    assert [(f.code, f.gate) for f in result.findings] == [("gate-live", "offload-worker")]


def test_queue_line_index_agrees_with_queuefile(port):
    from porttrack.queue import file as queuefile

    text = QUEUE + (
        '\n[[entry]]\nn = 9\nsha = "9999999"\nsubject = "parts"\nverdict = "inert"\n[entry.symbols]\nchanged = ["x"]\n'
        '[[entry.gate]]\nid = "g9"\nkind = "absent"\nprobe = "Nope"\n'
        '[[entry.part]]\nname = "(b) second half"\nverdict = "blocked"\nblocked_by = [5]\n'
        '[[entry.part.gate]]\nid = "pg"\nkind = "entry-ported"\nentry = 5\n'
    )
    qf = queuefile.loads(text, Path("q.toml"))
    index = check._QueueIndex(text)
    for e in qf.queue.entries:
        for key in (None, "verdict", "subject", "n"):
            assert index.line(("entry", e.n, None), key) == queuefile.line_of(qf, e.n, key), (e.n, key)
    part = ("entry", 9, "(b) second half")
    assert index.line(part, "blocked_by") == queuefile.line_of(qf, 9, "blocked_by", part="(b) second half")
    lines = text.splitlines()
    assert lines[index.gate(part, "pg") - 1] == 'id = "pg"'
    assert lines[index.gate(("entry", 9, None), "g9") - 1] == 'id = "g9"'
    assert (
        lines[index.gate(("entry", 2, None), "take-new-block-ids-consumer") - 1] == 'id = "take-new-block-ids-consumer"'
    )


def test_unreadable_file_makes_a_zero_incomplete_not_absent(port):
    (port / "src/broken.cpp").write_bytes(b"// \xff\xfe not UTF-8\nint x;\n")
    result = run(port)
    assert ("scan-incomplete", 1) in codes(result)  # KVBlockZeroer's zero is unknown, not proven
    f = next(f for f in result.findings if f.code == "scan-incomplete")
    assert "src/broken.cpp" in f.message and f.path == "queue/q.toml"


def test_gates_of_deferred_parts_are_rerun(port):
    edit(
        port,
        "queue/q.toml",
        'subject = "Zeroer core (#104)"\nverdict = "real-gap"\n',
        'subject = "Zeroer core (#104)"\nverdict = "real-gap"\n[[entry.part]]\nname = "(b) layout"\nverdict = "inert"\n'
        '[[entry.part.gate]]\nid = "layout-count"\nkind = "count"\nprobe = "allocate_slots"\nexpect = 3\n'
        'control = "take_new_block_ids"\n',
    )
    assert run(port).findings == []
    edit(
        port,
        "src/scheduler.cpp",
        "  return m.allocate_slots(4);",
        "  m.allocate_slots(1);\n  return m.allocate_slots(4);",
    )
    result = run(port)
    assert [(f.code, f.entry, f.part, f.gate) for f in result.findings] == [
        ("gate-live", 5, "(b) layout", "layout-count")
    ]
    assert "now has 4 code hit(s)" in result.findings[0].message


def test_scopes_escaping_the_port_root_are_refused(port):
    edit(
        port,
        "queue/q.toml",
        'probe = "KVBlockZeroer"\nscope = ["src", "include"]',
        'probe = "KVBlockZeroer"\nscope = ["../elsewhere"]',
    )
    proc = cli(port)
    assert proc.returncode == 2 and "outside the port root" in proc.stderr and "Traceback" not in proc.stderr


def test_absent_gate_citation_anchors_on_its_control(port):
    # a symbol that is absent has no line to cite: audit cites where the positive control is
    edit(
        port,
        "queue/q.toml",
        'probe = "KVBlockZeroer"\nscope = ["src", "include"]\ncontrol = "allocate_slots"\n',
        'probe = "KVBlockZeroer"\nscope = ["src", "include"]\ncontrol = "allocate_slots"\n'
        'established_at = "include/kv_cache_manager.h:7"\n',
    )
    assert run(port).findings == []
    edit(port, "include/kv_cache_manager.h", " public:\n", " public:\n  // slots\n")
    result = run(port)
    assert sorted((f.code, f.entry, f.line) for f in result.findings) == [
        ("citation-stale", 1, 8),
        ("citation-stale", 2, 9),
    ]
    assert "allocate_slots is mentioned at include/kv_cache_manager.h:8" in result.findings[0].message


def test_bad_gate_probes_are_refused_by_line(port):
    edit(port, "queue/q.toml", 'probe = "KVBlockZeroer"\n', 'probe = "KV(Block"\nregex = true\n')
    proc = cli(port)
    assert proc.returncode == 2 and "queue/q.toml:" in proc.stderr and "no-zeroer" in proc.stderr
    assert "does not compile" in proc.stderr and "Traceback" not in proc.stderr


def test_every_finding_code_has_a_registered_producer_that_raises_it():
    import inspect

    from porttrack.outputs.check import CODES
    from porttrack.outputs.check.run import ACK_CODES, PRODUCERS

    registered = {c for p in PRODUCERS for c in p.codes} | set(ACK_CODES)
    assert registered == set(CODES)
    for p in PRODUCERS:
        source = inspect.getsource(inspect.getmodule(p.produce))
        for code in p.codes:
            assert f'"{code}"' in source, (p.name, code)


def _ack(port, expires_line: str):
    (port / "queue/q.toml").write_text(
        QUEUE + '\n[[ack]]\ncode = "gate-live"\nentry = 2\nreason = "x"\n' + expires_line
    )
    return cli(port)


def test_ack_with_a_date_time_expiry_is_bad_input_naming_the_line(port):
    proc = _ack(port, "expires = 2099-01-01T10:00:00\n")
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr and "queue/q.toml:" in proc.stderr and "expires" in proc.stderr


def test_ack_without_an_expiry_is_bad_input(port):
    proc = _ack(port, "")
    assert proc.returncode == 2, proc.stderr
    assert "queue/q.toml:" in proc.stderr and "expires" in proc.stderr
