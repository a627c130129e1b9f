"""One sync cycle on a synthetic pair, as a team runs it: `audit --write`, then `check` on the
same tree must find nothing audit itself wrote wrong (docs/ci.md): the two judge with one code."""

from __future__ import annotations

import json

from conftest import run_cli
from audit_pair import SCHED, pair

POOL = """\
// Ported from: vllm/core/pool.py @ {pin}
class Pool {{
 public:
  int drain() {{ return 0; }}
}};
int UsePool(Pool& p) {{ return p.drain(); }}
"""


def test_check_right_after_audit_write_finds_no_error(tmp_path):
    base = (
        SCHED.replace(
            "    def free(self, request):\n", "    def drain(self):\n        return 0\n\n    def free(self, request):\n"
        )
        + "\n\n_PREVIOUSLY_SUPPORTED = {'a'}\n"
    )
    base = base.replace(
        "        self.budget = budget\n", "        self.budget = budget\n        self.stats_sink = StatsSink()\n"
    ).replace(
        "    def step(self, tokens):\n",
        "    def step(self, tokens):\n        assert tokens >= 0, 'tokens below zero'\n",
    )
    registry = "from vllm.parsers.base import register\n\nregister('kimi', 'vllm.parsers.{}')\n"
    steps = [
        # a member of a class the port has, where the port has the name only on another class
        ("[Core] Drain more", base.replace("        return 0\n", "        return 1\n")),
        # a constant the port spells its own way and reads nowhere: inert
        ("[Core] Support b too", base.replace("{'a'}", "{'a', 'b'}")),
        # a function the port has, changed only on lines that serve what the port lacks
        (
            "[Metrics] Flush on free",
            base.replace(
                "        return request\n", "        self.stats_sink.flush_pending()\n        return request\n"
            ),
        ),
    ]
    port_extra = {
        "src/core/pool.cpp": POOL.format(pin="0" * 10),
        "src/core/support.cpp": 'const char* PreviouslySupported[] = {"a"};\n',
    }
    # a message the port words its own way (neither side is there), in a function it has
    # (on top of the flush, so that the message is all the commit changes)
    flushed = steps[-1][1]
    steps.append(("[Core] Clearer message", flushed.replace("'tokens below zero'", "'negative token count'")))
    commits = [(subject, {"vllm/core/sched.py": text}) for subject, text in steps]
    # a string-only change to a file with no port counterpart: nothing to name, the file is the surface
    commits.append(("[Parsers] Rename a module", {"vllm/parsers/registry.py": registry.format("kimi_k2_parser")}))
    port, r = pair(
        tmp_path,
        commits,
        base_sched=base,
        base_extra={"vllm/parsers/registry.py": registry.format("kimi_parser")},
        port_extra=port_extra,
    )
    verdicts = {k: v["verdict"] for k, v in r.items()}
    assert verdicts["[Core] Drain more"] == "surface-absent" and verdicts["[Core] Support b too"] == "inert"
    assert verdicts["[Metrics] Flush on free"] == "surface-absent"
    # the port lacks no nameable surface here, so audit does not say it does
    assert verdicts["[Core] Clearer message"] != "surface-absent", r["[Core] Clearer message"]
    moved = r["[Parsers] Rename a module"]
    assert (moved["verdict"], moved["rule"]) == ("surface-absent", "unmapped")
    assert [(g["kind"], g["probe"]) for g in moved["gates"]] == [("unmapped", "vllm/parsers/registry.py")]
    run_cli("audit", "--write", cwd=port, check_rc=0)
    data = json.loads(run_cli("check", "--format", "json", cwd=port).stdout)
    errors = [f for f in data["findings"] if f["severity"] == "error"]
    assert errors == [], [(f["code"], f["message"]) for f in errors]

    # our own sync report, PORT-NOW entries filed under its carry-over too, imports back with counts that agree
    (port / ".agents" / "sync").mkdir()
    run_cli("report", "sync", "--out", ".agents/sync/2026-03-09-x.md", cwd=port, check_rc=0)
    out = run_cli("queue", "import", ".agents/sync/2026-03-09-x.md", "--queue", "queue/c.toml", cwd=port, check_rc=0)
    assert "### Deferred (1)" in (port / ".agents/sync/2026-03-09-x.md").read_text()
    assert "PORT-NOW: imported" in out.stdout and "DIFFERS" not in out.stdout, out.stdout

    # the day the port gets a counterpart, the unmapped gate goes live, naming it
    (port / "src/parsers").mkdir()
    (port / "src/parsers/registry.cpp").write_text("// Ported from: vllm/parsers/registry.py @ 0000000000\nint P;\n")
    data = json.loads(run_cli("check", "--format", "json", cwd=port).stdout)
    live = [f for f in data["findings"] if f["code"] == "gate-live"]
    assert len(live) == 1 and live[0]["path"] == "src/parsers/registry.cpp", data["findings"]
    assert "vllm/parsers/registry.py has a port counterpart now: src/parsers/registry.cpp" in live[0]["message"]


def test_our_own_sync_report_re_imports_unchanged_and_a_persons_edit_is_theirs(tmp_path):
    port, _ = pair(
        tmp_path,
        [
            ("[Core] Drain more", {"vllm/core/sched.py": SCHED.replace("return request\n", "return request or 0\n")}),
            ("[Core] Step less", {"vllm/core/sched.py": SCHED.replace("self.budget)", "self.budget - 1)")}),
        ],
    )
    run_cli("audit", "--write", cwd=port, check_rc=0)
    (port / ".agents" / "sync").mkdir()
    run_cli("report", "sync", "--out", ".agents/sync/2026-03-09-x.md", cwd=port, check_rc=0)
    queue = port / "queue" / "c.toml"
    before = queue.read_bytes()
    for _ in range(2):  # however often
        out = run_cli(
            "queue", "import", ".agents/sync/2026-03-09-x.md", "--queue", "queue/c.toml", cwd=port, check_rc=0
        )
        assert "0 new entries, 0 updated" in out.stdout and queue.read_bytes() == before
        assert "DIFFERS" not in out.stdout, out.stdout  # the report's own counts agree with what it holds
    report = port / ".agents" / "sync" / "2026-03-09-x.md"
    lines = report.read_text().splitlines()
    k = next(i for i, line in enumerate(lines) if "Step less" in line)
    verdict = lines[k].split(" — ", 1)[1].split(":", 1)[0]
    lines[k] = lines[k].replace(f" — {verdict}:", " — no-op: a person read it;", 1)
    report.write_text("\n".join(lines) + "\n")
    run_cli("queue", "import", ".agents/sync/2026-03-09-x.md", "--queue", "queue/c.toml", cwd=port, check_rc=0)
    from porttrack.queue import file as queuefile

    step = next(e for e in queuefile.load(queue).queue.entries if "Step less" in e.subject)
    assert (step.verdict, step.verdict_by) == ("no-op", "human") and step.reason.startswith("a person read it")


def test_reports_of_a_written_queue_render_what_it_says_and_probe_only_its_gates(tmp_path):
    from porttrack.queue import file as queuefile

    port, _ = pair(
        tmp_path,
        [("[Core] Drain more", {"vllm/core/sched.py": SCHED.replace("return request\n", "return request or 0\n")})],
    )
    run_cli("audit", "--write", cwd=port, check_rc=0)
    q = queuefile.load(port / "queue" / "c.toml").queue
    gates = [g for e in q.entries for g in e.gates if g.kind != "entry-ported"]
    deferral = run_cli("report", "deferral", cwd=port, check_rc=0).stdout
    probes = deferral.split("## Verification state", 1)[1].split("- Reproduce", 1)[0]
    listed = [line for line in probes.splitlines() if line.startswith("  - `")]
    assert len(listed) == len({g.probe for g in gates} | {g.control for g in gates if g.control})
    for g in gates:
        assert any(f"`{g.probe}`" in line and (not g.control or f"control `{g.control}`" in line) for line in listed)
    # a person's verdict in the queue is what the report says, with no rule run over it
    qpath = port / "queue" / "c.toml"
    qpath.write_text(qpath.read_text().replace('verdict_by = "audit"', 'verdict_by = "human"', 1))
    sync = run_cli("report", "sync", cwd=port, check_rc=0).stdout
    assert "Drain more" in sync


def test_an_unmapped_gate_on_a_renamed_file_goes_live_when_its_old_name_gets_a_counterpart(tmp_path):
    """check follows the queue's renames as audit does: a header citing the old name maps the new one."""
    registry = "from vllm.parsers.base import register\n\nregister('kimi', 'vllm.parsers.{}')\n"
    old, new = "vllm/parsers/registry.py", "vllm/parsers/table/registry.py"
    commits = [
        ("[Parsers] Move the registry", {old: None, new: registry.format("kimi_parser")}),
        ("[Parsers] Rename a module", {new: registry.format("kimi_k2_parser")}),
    ]
    port, r = pair(tmp_path, commits, base_extra={old: registry.format("kimi_parser")})
    gates = [(g["kind"], g["probe"]) for g in r["[Parsers] Rename a module"]["gates"]]
    assert gates == [("unmapped", new)], r["[Parsers] Rename a module"]
    run_cli("audit", "--write", cwd=port, check_rc=0)
    (port / "src/parsers").mkdir()
    (port / "src/parsers/registry.cpp").write_text(f"// Ported from: {old} @ 0000000000\nint P;\n")
    data = json.loads(run_cli("check", "--format", "json", cwd=port).stdout)
    live = [f for f in data["findings"] if f["code"] == "gate-live"]
    assert live and all(f["path"] == "src/parsers/registry.cpp" for f in live), data["findings"]
    assert any(
        f["entry"] == 2 and f"{new} has a port counterpart now: src/parsers/registry.cpp" in f["message"] for f in live
    ), [f["message"] for f in live]


def test_check_after_audit_agrees_on_a_renamed_file_in_a_port_mapped_by_templates_alone(tmp_path):
    """No provenance header anywhere, only [[map]]: a file renamed out of the mapped folder keeps the
    counterpart its old name maps to, in audit as in check, so check finds no gate audit wrote live."""
    registry = "from vllm.parsers.base import register\n\nregister('kimi', 'vllm.parsers.{}')\n"
    old, new = "vllm/core/registry.py", "vllm/parsers/registry.py"
    commits = [
        ("[Parsers] Move the registry", {old: None, new: registry.format("kimi_parser")}),
        ("[Parsers] Rename a module", {new: registry.format("kimi_k2_parser")}),
    ]
    port, r = pair(
        tmp_path,
        commits,
        base_extra={old: registry.format("kimi_parser")},
        port_sched="int Budget(int t) {{ return t; }}\n",
        port_extra={"src/core/registry.cpp": "int Registry() { return 0; }\n"},
    )
    assert not [g for g in r["[Parsers] Rename a module"]["gates"] if g["kind"] == "unmapped"], r
    run_cli("audit", "--write", cwd=port, check_rc=0)
    data = json.loads(run_cli("check", "--format", "json", cwd=port).stdout)
    assert [f for f in data["findings"] if f["code"] == "gate-live"] == [], data["findings"]
