"""Reports: the sync report of docs/design.md §9.2 (parsed back with the team's own entry regex) and the deferral report of §9.4."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import MIRROR_CONFIG, small_mirror, git, run_cli
from porttrack.model import Entry, Queue, QueueMeta
from porttrack.outputs.report import entry_line, upstream_name
from test_audit import build_port, queue_line, sha

# The regex the team's tooling reads sync reports with: PR, subject with \` escapes, short sha, em dash, reason.
ENTRY_RE = re.compile(
    r"^- (?P<repo>[\w.-]+)#(?P<pr>\d+) `(?P<subject>(?:[^`\\]|\\.)*)` \(`(?P<sha>[0-9a-f]{7,40})`\) — (?P<reason>.+\.)$"
)
REAL_WORLD = (
    "- vllm#46853 `Add WidgetLM XS.2.1 DFlash drafter support (#46853)` (`4c3c64fc`) — adds the WidgetLM DFlash draft "
    "architecture; add the model-registry row."
)


@pytest.fixture(scope="session")
def port(tmp_path_factory) -> Path:
    return build_port(tmp_path_factory.mktemp("report"))


@pytest.fixture(scope="session")
def sync_text(port) -> str:
    return run_cli("report", "sync", cwd=port, check_rc=0).stdout


@pytest.fixture(scope="session")
def deferral_text(port) -> str:
    return run_cli("report", "deferral", cwd=port, check_rc=0).stdout


def assert_counts_agree(text: str) -> dict[str, int]:
    """Every `## NAME (n)` / `### NAME (n)` holds n entry lines, each entry is listed once, and the
    header's cycle state gives the same counts: real gaps to port are the PORT-NOW section alone."""
    import re

    counts: dict[str, int] = {}
    listed: list[str] = []
    current = None
    for line in text.splitlines():
        m = re.match(r"#{2,3} (.+) \((\d+)\)$", line)
        if m:
            current = m[1]
            counts[current] = int(m[2])
            continue
        if line.startswith("## "):
            current = None
        if current and line.startswith("- "):
            counts[current + " seen"] = counts.get(current + " seen", 0) + 1
            listed.append(line.split(" `")[0])
    for name in [k for k in counts if not k.endswith(" seen") and k != "Carry-over"]:
        assert counts.get(name + " seen", 0) == counts[name], name
    assert counts["Carry-over"] == sum(counts.get(k, 0) for k in ("Owned", "Blocked", "Deferred"))
    assert len(listed) == len(set(listed)), "an entry is listed twice"
    state = next(ln for ln in text.splitlines() if ln.startswith("- **Cycle state:**"))
    gaps = counts["PORT-NOW"]
    assert (f"{gaps} real gap" in state) if gaps else "real gap" not in state, state
    assert (
        f"carry-over {counts['Carry-over']} (owned {counts.get('Owned', 0)}, blocked {counts.get('Blocked', 0)}, "
        f"deferred {counts.get('Deferred', 0)})" in state
    ), state
    assert f"INVENTORY {counts['INVENTORY']}" in state and f"IGNORE {counts['IGNORE']}" in state
    return counts


def test_regex_reads_the_real_world_line():
    m = ENTRY_RE.match(REAL_WORLD)
    assert m and m["pr"] == "46853" and m["sha"] == "4c3c64fc"


def test_entry_line_round_trips_backticks_and_reverts():
    e = Entry(n=1, sha="4c3c64fc" + "0" * 32, subject="Revert `KVBlockZeroer` change (#51800)", pr=51800, reverts=51749)
    line = entry_line(e, "undoes the zeroer", "vllm")
    m = ENTRY_RE.match(line)
    assert m, line
    assert m["subject"].replace("\\`", "`") == e.subject
    assert m["reason"] == "reverts vllm#51749; undoes the zeroer."


def test_sync_report_sections_and_lines(sync_text, port):
    lines = sync_text.splitlines()
    assert lines[0].startswith("# vllm upstream-sync audit")
    heads = [ln.split(" (")[0] for ln in lines if ln.startswith("## ")]
    assert heads[0] == "## PORT-NOW" and heads[-1] == "## Carry-over"
    assert {"## INVENTORY", "## IGNORE"} <= set(heads)
    assert_counts_agree(sync_text)
    head = git(port, "rev-parse", "HEAD")
    assert f"- **Port commit probed:** `{head}`" in sync_text
    assert f"- **Current pin:** `{sha(0)}`" in sync_text
    entries = [ln for ln in lines if ln.startswith("- vllm#")]
    assert entries
    for ln in entries:
        m = ENTRY_RE.match(ln)
        assert m, ln
    parsed = {int(m["pr"]): m for m in map(ENTRY_RE.match, entries)}
    assert parsed[40030]["subject"] == "[Spec] Eagle proposer (#40030)"
    assert parsed[40030]["sha"] == sha(30)[:8]
    assert lines[-3] == "Reproduce: `porttrack report sync --queue queue/cycle.toml`"
    assert lines[-1].startswith("<!-- porttrack lines: ") and f"{sha(30)[:8]}=" in lines[-1]


def test_sync_report_by_disposition(tmp_path):
    port = build_port(tmp_path)
    q = port / "queue/cycle.toml"
    text = q.read_text()
    text = text.replace(
        'files = [".buildkite/test.yml", "docs/usage.md"]\ndisposition = "PORT-NOW"',
        'files = [".buildkite/test.yml", "docs/usage.md"]\ndisposition = "IGNORE"',
    )
    q.write_text(text)
    out = run_cli("report", "sync", "--entries", "1,30", cwd=port, check_rc=0).stdout
    ignore = out.split("## IGNORE (1)")[1].split("##")[0]
    assert "vllm#40001" in ignore and "vllm#40030" not in ignore
    assert "`porttrack report sync --entries 1,30 --queue queue/cycle.toml`" in out


def test_deferral_report(deferral_text, port):
    t = deferral_text
    assert t.startswith("# Deferral: entries 11-12, 20, 30, 50, 70, 80, 90-91, 100-102\n")
    assert "| entry | upstream | gate that makes it real | established at |" in t
    # blocked entries by what they wait on, citing the blocker's line in the queue
    blocked = t.split("## Blocked entries (")[1].split("\n## ")[0]
    assert f"- entry 11 (`queue/cycle.toml:{queue_line(port, 11)}`) vllm#40011 " in blocked
    assert re.search(r"- entry 11 .*, blocked: entry 12 waits on it", blocked), blocked
    assert "| 50 | " in t and "`include/vllm/v1/core/kv_cache_manager.h:7`" in t
    # an inert entry lands where the code it leaves unread is defined
    landing = t.split("## Landing sites")[1].split("\n## ")[0]
    assert "- 50: `include/vllm/v1/core/kv_cache_manager.h:7`, where `" in landing, landing
    # the queue's path rule: one read of its gate settles both offload entries
    one = t.split("## One-read dispositions")[1].split("\n## ")[0]
    assert "- `vllm/v1/kv_offload/**` → inert until `EnsureWorkerTransferSupported` appears in src; " in one
    assert "settles entries 90, 91" in one, one
    owned = t.split("## Already owned (recorded so nobody re-files them)")[1].split("##")[0]
    assert "20 vllm#40020" in owned and "KV-PREFIX-MATCH-UNIT (.agents/engine-matrix.md:5)" in owned
    # the model half's surface is absent (audit's content rules come before a row can own it)
    assert "70 (a) model half" not in owned
    # surface-absent entries are counted by the surface they miss, not listed with generic gates
    absent = t.split("## Surface-absent (")[1].split("\n## ")[0]
    assert "- `WidgetLMForCausalLM`: " in absent and "70 (a) model half" in absent
    assert "| 70 (a) model half | " not in t
    # an established-at citation holds its row's symbol; an absent gate's cites only its control, and says so
    checked = 0
    for row in t.split("## Inert entries")[1].split("\n## ")[0].splitlines()[4:]:
        gate, cell = (c.strip() for c in row.rsplit("|", 3)[1:3])
        m = re.fullmatch(r"`([^`:]+):(\d+)`", cell)
        if m is None or m[1].startswith("queue/"):
            assert cell == "—" or cell.startswith("— (control `") or m is not None, row
            continue
        symbol = re.findall(r"`([^`]+)`", gate)[0]
        line = (port / m[1]).read_text().splitlines()[int(m[2]) - 1]
        assert re.split(r"\.|::", symbol)[-1].lower() in line.lower(), (row, line)
        checked += 1
    assert checked
    assert "## Row it concerns\n\n- KV-PREFIX-MATCH-UNIT (.agents/engine-matrix.md:5): entry 20" in t
    series = t.split("## Series")[1].split("##")[0]
    assert "1/N entry 81 real-gap; 2/N entry 80 blocked; 3/N entry 82 ported (audit would say blocked" in series
    owed = t.split("## A row is owed")[1].split("##")[0]
    assert "- gate symbol `mamba_get_block_table`: entries 100, 101, 102; no matrix row owns any of them." in owed
    assert "- blocker entry 10: entries 11, 70 (b) KV half;" in owed
    assert "## What could not be determined\n\nNothing" in t
    verify = t.split("## Verification state")[1]
    head = git(port, "rev-parse", "HEAD")
    assert f"- Port commit probed: `{head}`" in verify
    assert re.search(
        r"- `mamba_get_block_table` in `src include`: code 0 \(control `[\w.:]+`: code [1-9]\d*\) — absent", verify
    )
    assert t.rstrip("\n").splitlines()[-1] == "- Reproduce: `porttrack report deferral --queue queue/cycle.toml`"


def test_reports_are_deterministic_and_written_to_a_file(port, deferral_text, sync_text, tmp_path):
    assert run_cli("report", "sync", cwd=port, check_rc=0).stdout == sync_text
    target = tmp_path / "out" / "deferral.md"  # outside the port, so the tree probed stays clean
    target.parent.mkdir()
    out = run_cli("report", "deferral", "--out", str(target), cwd=port, check_rc=0)
    assert f"wrote {target}" in out.stdout
    assert target.read_text().replace(f" --out {target}", "") == deferral_text


def test_deferral_names_what_could_not_be_determined(tmp_path):
    port = build_port(tmp_path)
    (port / "porttrack.toml").write_text(
        (port / "porttrack.toml").read_text().replace('code = ["src", "include"]', 'code = ["lib"]')
    )
    t = run_cli("report", "deferral", "--entries", "30", cwd=port, check_rc=0).stdout
    unknown = t.split("## What could not be determined")[1].split("##")[0]
    assert "- 30: untrusted: cannot judge" in unknown and "does not exist" in unknown


def test_bad_kind(port):
    assert "sync or deferral" in run_cli("report", "weekly", cwd=port, check_rc=2).stderr


def test_surface_absent_is_a_counted_summary_whose_one_entry_tail_is_one_line():
    from porttrack.outputs import deferral
    from porttrack.model import Gate
    from porttrack.outputs.report import View

    def view(n: int, probe: str, kind: str = "absent") -> View:
        gate = Gate(id=f"g{n}", kind=kind, probe=probe)
        return View(Entry(n=n, sha="", subject=f"s{n}"), None, "surface-absent", "", "", [], [gate], "audit")

    vs = [view(1, "Zeroer.init"), view(2, "Zeroer"), view(3, "vllm/x/registry.py", "unmapped")]
    vs += [view(10 + i, f"Lone{i}") for i in range(7)]
    lines = deferral._surface_absent_section(vs)
    assert lines[1] == "## Surface-absent (10 entries, 9 surfaces the port lacks)"
    assert "- `Zeroer`: 2 entries (1, 2)" in lines
    assert any(ln.startswith("- 8 surfaces with one entry each: ") and "`vllm/x/registry.py` (3)" in ln for ln in lines)
    assert not any(ln.startswith("- `Lone") for ln in lines)
    assert len(lines) == 5, lines


@pytest.mark.parametrize(
    "upstream, name",
    [
        ("vllm-project/vllm", "vllm"),
        ("vllm", "vllm"),
        ("vllm.git", "vllm"),  # queue build names an upstream by its folder when config gives no name: a bare clone
        ("/srv/mirrors/vllm.git/", "vllm"),
        ("", "upstream"),
        (".git", "upstream"),
    ],
)
def test_upstream_name_drops_a_bare_clones_git_suffix(upstream, name):
    assert upstream_name(Queue(QueueMeta(name="q", upstream=upstream))) == name


def test_reproduce_command_quotes_paths_with_spaces():
    from porttrack.outputs.report import command_line

    assert (
        command_line("sync", "1-3", "queue/demo.toml", "out/s.md")
        == "porttrack report sync --entries 1-3 --queue queue/demo.toml --out out/s.md"
    )
    assert (
        command_line("deferral", None, "queue/my queue.toml", "/tmp/My Reports/d.md")
        == "porttrack report deferral --queue 'queue/my queue.toml' --out '/tmp/My Reports/d.md'"
    )


def test_an_entry_without_a_sha_prints_no_empty_code_span():
    from porttrack.model import Entry
    from porttrack.outputs.report import _upstream_cell, entry_line

    e = Entry(n=1, sha="", subject="Drain recorded block ids (#52310)", pr=52310)
    assert (
        entry_line(e, "nothing reads them", "vllm")
        == "- vllm#52310 `Drain recorded block ids (#52310)` — nothing reads them."
    )
    assert _upstream_cell(e, "vllm") == "vllm#52310 Drain recorded block ids (#52310)"
    assert entry_line(Entry(n=2, sha="", subject="x", pr=None), "y", "vllm") == "- vllm `x` — y."


def test_report_reads_upstream_name_from_the_config_now_and_counts_agree(tmp_path):
    s = small_mirror(tmp_path)
    port = s["port"]
    run_cli("queue", "build", "--range", f"{s['pin']}..{s['target']}", cwd=port, check_rc=0)
    before = run_cli("report", "sync", cwd=port, check_rc=0).stdout
    assert "- up#2 " in before  # the queue recorded the folder's name at build time
    (port / "porttrack.toml").write_text(
        MIRROR_CONFIG.replace('paths = ["vllm/"]', 'paths = ["vllm/"]\nname = "acme/vllm"')
    )
    after = run_cli("report", "sync", cwd=port, check_rc=0).stdout
    assert "- vllm#2 " in after and "up#" not in after  # set afterwards, read at report time
    deferral = run_cli("report", "deferral", cwd=port, check_rc=0).stdout
    assert "up#" not in deferral
    from test_report import assert_counts_agree

    counts = assert_counts_agree(after)
    assert sum(v for k, v in counts.items() if not k.endswith(" seen") and k != "Carry-over") == 3
