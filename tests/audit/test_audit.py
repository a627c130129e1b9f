"""audit: every rule of docs/design.md §8 on a real port repository, a matrix and a queue, through the real CLI."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest

from conftest import commit_files, init_repo, run_cli
from porttrack import audit as audit_mod
from porttrack.queue import file as queuefile
from porttrack.errors import UserError


def sha(n: int) -> str:
    return hashlib.sha1(f"upstream commit {n}".encode()).hexdigest()


CONFIG = """\
[upstream]
paths = ["vllm/", "tests/"]

[port]
scopes = { code = ["src", "include"], tests = ["tests"] }

[[map]]
upstream = 'vllm/(?P<rest>.+)\\.py'
port = ["src/vllm/{rest}.cpp", "include/vllm/{rest}.h"]

[owners]
matrices = [".agents/*-matrix.md"]

[queue]
file = "queue/cycle.toml"
"""

MATRIX = """\
# Engine matrix

| ID | Item | Tier | Upstream code/tests | Our code | Our tests/evidence | Spike/spec | State | Owner |
|---|---|---|---|---|---|---|---|---|
| `KV-PREFIX-MATCH-UNIT` | prefix match unit | T0 | `vllm/v1/core/kv_cache_utils.py:640-707` @ `e24d1b24` | `src/vllm/v1/core/kv_cache_utils.cpp:3` | — | — | `ACTIVE` | kv |
| `MODEL-LAGUNA` | WidgetLM | T2 | `vllm/model_executor/models/widget_lm.py` | — | — | — | `INVENTORIED` | models |
| `KV-OLD` | done work | T0 | `vllm/v1/spec_decode/eagle.py` | — | — | — | `DONE` | kv |
"""


def port_files(pin40: str) -> dict[str, str]:
    return {
        "porttrack.toml": CONFIG,
        ".agents/engine-matrix.md": MATRIX,
        "include/vllm/v1/core/kv_cache_manager.h": (
            f"// Ported from: vllm/v1/core/kv_cache_manager.py @ {pin40[:10]}\n"
            "#pragma once\n"
            "namespace vllm {\n"
            "class KVCacheManager {\n"
            " public:\n"
            "  int allocate_slots(int n);\n"
            "  int take_new_block_ids();\n"
            "};\n"
            "}  // namespace vllm\n"
        ),
        "src/vllm/v1/core/kv_cache_manager.cpp": (
            "// See include/vllm/v1/core/kv_cache_manager.h.\n"
            '#include "vllm/v1/core/kv_cache_manager.h"\n'
            "namespace vllm {\n"
            "int KVCacheManager::allocate_slots(int n) { return n; }\n"
            "int KVCacheManager::take_new_block_ids() { return 0; }\n"
            "}  // namespace vllm\n"
        ),
        "src/vllm/v1/core/sched/scheduler.cpp": (
            "// Ported from: vllm/v1/core/sched/scheduler.py @ e24d1b24\n"
            '#include "vllm/v1/core/kv_cache_manager.h"\n'
            "namespace vllm {\n"
            "int resolve_kv_cache_block_sizes(int b);\n"
            "int Schedule(KVCacheManager& m) { return m.allocate_slots(resolve_kv_cache_block_sizes(4)); }\n"
            "}  // namespace vllm\n"
        ),
        "src/vllm/v1/core/kv_cache_utils.cpp": (
            "// Ported from: vllm/v1/core/kv_cache_utils.py:640-707 @ e24d1b24\n"
            "namespace vllm {\n"
            "int resolve_kv_cache_block_sizes(int b) { return b; }\n"
            "}  // namespace vllm\n"
        ),
        "tests/vllm/v1/core/test_kv_cache_manager.cpp": (
            '#include "vllm/v1/core/kv_cache_manager.h"\n'
            "int main() { vllm::KVCacheManager m; return m.take_new_block_ids(); }\n"
        ),
    }


def entry(
    n: int,
    subject: str,
    files: list[str],
    *,
    added=(),
    changed=(),
    removed=(),
    uses=(),
    extra: str = "",
    verdict: str = "",
    parts: str = "",
) -> str:
    lines = [
        "[[entry]]",
        f"n = {n}",
        f'sha = "{sha(n)}"',
        f"pr = {40000 + n}",
        f'subject = "{subject} (#{40000 + n})"',
        f"files = {json.dumps(files)}",
        'disposition = "PORT-NOW"',
    ]
    if verdict:
        lines.append(verdict)
    lines.append(extra) if extra else None
    lines += [
        "[entry.symbols]",
        f"added = {json.dumps(list(added))}",
        f"changed = {json.dumps(list(changed))}",
        f"removed = {json.dumps(list(removed))}",
        f"uses = {json.dumps(list(uses))}",
    ]
    text = "\n".join(lines) + "\n"
    return text + (parts or "") + "\n"


KVMGR = "vllm/v1/core/kv_cache_manager.py"


def queue_text() -> str:
    head = f'# the cycle queue\n[queue]\nname = "cycle"\nupstream = "vllm-project/vllm"\npin = "{sha(0)}"\ntarget = "{sha(999)}"\n\n'
    es = [
        entry(1, "[CI] Bump runners", [".buildkite/test.yml", "docs/usage.md"]),
        entry(2, "[CI] Tune the mirrored tree's CI config", ["vllm/ci/pipeline.yaml"]),
        entry(10, "[Core] Add KV block zeroer", ["vllm/v1/worker/utils.py"], added=["KVBlockZeroer"]),
        entry(
            11,
            "[Core] Zero blocks on reuse",
            ["vllm/v1/worker/gpu_model_runner.py"],
            added=["zero_block_ids"],
            uses=["KVBlockZeroer"],
        ),
        entry(12, "[Core] Zero on preemption", ["vllm/v1/worker/gpu_worker.py"], uses=["zero_block_ids"]),
        entry(
            20, "[Core] Prefix match unit", ["vllm/v1/core/kv_cache_utils.py"], changed=["resolve_kv_cache_block_sizes"]
        ),
        entry(30, "[Spec] Eagle proposer", ["vllm/v1/spec_decode/eagle.py"], changed=["EagleProposer.propose"]),
        entry(40, "[Core] allocate_slots", [KVMGR], added=["KVCacheManager.allocate_slots"]),
        entry(50, "[Core] Record new block ids", [KVMGR], changed=["KVCacheManager.take_new_block_ids"]),
        entry(60, "[Core] Fix allocate_slots", [KVMGR], changed=["KVCacheManager.allocate_slots"]),
        entry(
            61,
            "[Core] Tidy allocate_slots",
            [KVMGR],
            changed=["KVCacheManager.allocate_slots"],
            verdict='verdict = "no-op"\nverdict_by = "human"\nreason = "the loop always holds one spec here"',
        ),
        entry(
            70,
            "[Model] WidgetLM + KV zeroing",
            ["vllm/model_executor/models/widget_lm.py", "vllm/v1/core/single_type_kv_cache_manager.py"],
            uses=["KVBlockZeroer"],
            parts='[[entry.part]]\nname = "(a) model half"\nfiles = ["vllm/model_executor/models/widget_lm.py"]\nsymbols = ["WidgetLMForCausalLM"]\n'
            '[[entry.part]]\nname = "(b) KV half"\nfiles = ["vllm/v1/core/single_type_kv_cache_manager.py"]\nsymbols = ["KVBlockZeroer"]\n',
        ),
        entry(80, "[2/N][KV-Cache Layout Refactor] Move strides", ["vllm/v1/attention/backends/flash_attn.py"]),
        entry(81, "[1/N][KV-Cache Layout Refactor] Introduce layout", ["vllm/v1/attention/backends/flash_attn.py"]),
        entry(
            82,
            "[3/N][KV-Cache Layout Refactor] Drop old layout",
            ["vllm/v1/attention/backends/flash_attn.py"],
            verdict='verdict = "ported"\nverdict_by = "human"',
        ),
        entry(90, "[Offload] CPU tier", ["vllm/v1/kv_offload/cpu/manager.py"], changed=["CPUWidgetManager.lookup"]),
        entry(91, "[Offload] FS tier", ["vllm/v1/kv_offload/tiering/fs/backend.py", "vllm/v1/kv_offload/spec.py"]),
        entry(100, "[Mamba] align mode a", ["vllm/v1/core/mamba_utils.py"], changed=["mamba_get_block_table"]),
        entry(101, "[Mamba] align mode b", ["vllm/v1/core/mamba_utils.py"], changed=["mamba_get_block_table"]),
        entry(102, "[Mamba] align mode c", ["vllm/v1/core/mamba_utils.py"], changed=["mamba_get_block_table"]),
    ]
    rule = (
        "[[rule]]\n"
        'upstream = "vllm/v1/kv_offload/**"\n'
        'verdict = "inert"\n'
        'reason = "the worker half refuses every device"\n'
        "[[rule.gate]]\n"
        'id = "offload-worker-half"\n'
        'kind = "absent"\n'
        'probe = "EnsureWorkerTransferSupported"\n'
        'scope = ["src"]\n'
        'control = "allocate_slots"\n'
    )
    return head + "".join(es) + rule


def build_port(root: Path) -> Path:
    port = init_repo(root / "port")
    files = port_files(sha(40))
    files["queue/cycle.toml"] = queue_text()
    commit_files(port, files, "port", date="2026-01-01T00:00:00Z")
    return port


@pytest.fixture(scope="session")
def port(tmp_path_factory) -> Path:
    return build_port(tmp_path_factory.mktemp("audit"))


@pytest.fixture(scope="session")
def results(port) -> dict:
    proc = run_cli("audit", "--json", cwd=port, check_rc=0)
    data = json.loads(proc.stdout)
    return {(r["entry"], r["part"]): r for r in data["results"]} | {"_": data}


def test_rule_1_ignore(results):
    r = results[(1, None)]
    assert (r["verdict"], r["rule"]) == ("ignore", "ignore")
    assert r["reason"] == "touches no mirrored path (vllm/, tests/)"
    # under a mirrored path, but nothing maps it into the port
    r = results[(2, None)]
    assert (r["verdict"], r["rule"]) == ("ignore", "ignore")
    assert "no [[map]] or provenance header gives vllm/ci/pipeline.yaml a port counterpart" in r["reason"]


def test_rule_3_blocked_chain_of_three(results, port):
    assert results[(10, None)]["verdict"] == "real-gap"
    r11, r12 = results[(11, None)], results[(12, None)]
    assert (r11["verdict"], r11["rule"], r11["blocked_by"]) == ("blocked", "blocked", [10])
    assert (r12["verdict"], r12["blocked_by"]) == ("blocked", [11])
    assert (
        r12["gates"]
        == [
            {
                "id": "entry-11-ported",
                "kind": "entry-ported",
                "entry": 11,
                "established_at": f"queue/cycle.toml:{queue_line(port, 11)}",
                "scope": [],
            }
        ]
        or r12["gates"][0]["established_at"] == f"queue/cycle.toml:{queue_line(port, 11)}"
    )
    q = queuefile.load(port / "queue/cycle.toml").queue
    graph = audit_mod.blocked_graph(q)
    assert graph[12] == [11] and graph[11] == [10]
    assert audit_mod.closure(graph, 12) == [10, 11]


def queue_line(port: Path, n: int) -> int:
    return (
        next(i for i, ln in enumerate((port / "queue/cycle.toml").read_text().splitlines(), 1) if ln == f"n = {n}") - 1
    )


def test_rule_4_owned_by_a_row_citing_a_line_range(results, port):
    r = results[(20, None)]
    line = next(i for i, ln in enumerate(MATRIX.splitlines(), 1) if "KV-PREFIX-MATCH-UNIT" in ln)
    assert (r["verdict"], r["rule"]) == ("owned", "owned")
    assert r["owner"] == f"KV-PREFIX-MATCH-UNIT (.agents/engine-matrix.md:{line})"
    assert any(f".agents/engine-matrix.md:{line}" in e for e in r["evidence"])


def test_rule_5_surface_absent_with_control_citation(results):
    r = results[(30, None)]  # the DONE row that cites eagle.py owns nothing
    assert (r["verdict"], r["rule"]) == ("surface-absent", "surface-absent")
    (g,) = r["gates"]
    assert g["kind"] == "absent" and g["probe"] == "EagleProposer" and g["scope"] == ["src", "include"]
    assert g["control"] and g["established_at"]
    path, line = g["established_at"].rsplit(":", 1)
    assert path.startswith(("src/", "include/")) and int(line) > 0
    ev = "\n".join(r["evidence"])
    assert "probe EagleProposer.propose @" in ev and "code 0" in ev and f"control {g['control']}: code " in ev


def test_rule_6_ported_by_symbol_and_pin(results):
    r = results[(40, None)]
    assert (r["verdict"], r["rule"]) == ("ported", "ported")
    assert any("include/vllm/v1/core/kv_cache_manager.h @" in e and "at or past" in e for e in r["evidence"])


def test_rule_7_inert_no_consumer(results):
    r = results[(50, None)]
    assert (r["verdict"], r["rule"]) == ("inert", "inert")
    (g,) = r["gates"]
    assert g["kind"] == "no-consumer" and g["probe"] == "KVCacheManager.take_new_block_ids"
    assert g["established_at"] in (
        "include/vllm/v1/core/kv_cache_manager.h:7",
        "src/vllm/v1/core/kv_cache_manager.cpp:5",
    )


def test_rule_8_real_gap_cites_the_consumer(results):
    r = results[(60, None)]
    assert (r["verdict"], r["rule"]) == ("real-gap", "real-gap")
    assert any("src/vllm/v1/core/sched/scheduler.cpp:5" in e for e in r["evidence"])


def test_two_part_entry_gets_two_verdicts(results):
    a, b = results[(70, "(a) model half")], results[(70, "(b) KV half")]
    # the model half's surface is absent: a content rule, tried before a matrix row can own it
    assert a["verdict"] == "surface-absent" and a["gates"][0]["probe"] == "WidgetLMForCausalLM"
    assert b["verdict"] == "blocked" and b["blocked_by"] == [10]


def test_series_taken_out_of_order(results):
    assert results[(81, None)]["verdict"] == "real-gap"  # stage 1
    r80 = results[(80, None)]
    assert (r80["verdict"], r80["blocked_by"]) == ("blocked", [81])  # stage 2 waits on stage 1, queued after it
    r82 = results[(82, None)]
    assert (r82["verdict"], r82["blocked_by"]) == ("blocked", [80, 81])
    assert r82["recorded"] == "ported"
    assert any("entry 82" in d and "audit would say blocked" in d for d in results["_"]["disagreements"])


def test_path_rule_covers_two_entries(results):
    for n in (90, 91):
        r = results[(n, None)]
        assert (r["verdict"], r["rule"]) == ("inert", "path-rule vllm/v1/kv_offload/**")
        assert r["gates"][0]["id"] == "offload-worker-half" and r["gates"][0]["established_at"].startswith("src/")
        assert any("gate offload-worker-half (absent) holds" in e for e in r["evidence"])


def test_write_keeps_human_verdicts_and_is_stable(tmp_path):
    port = build_port(tmp_path)
    q = port / "queue/cycle.toml"
    before = q.read_text()
    proc = run_cli("audit", "--write", cwd=port, check_rc=0)
    assert "entry 61: audit would say real-gap" in proc.stdout.replace("\n", " ")
    after = queuefile.load(q)
    e61 = after.queue.entry(61)
    assert (e61.verdict, e61.verdict_by, e61.reason) == ("no-op", "human", "the loop always holds one spec here")
    assert after.queue.entry(82).verdict == "ported"
    e30 = after.queue.entry(30)
    assert (e30.verdict, e30.verdict_by, e30.rule) == ("surface-absent", "audit", "surface-absent")
    assert e30.evidence and e30.gates[0].kind == "absent"
    e12 = after.queue.entry(12)
    assert e12.gates[0].established_at == f"queue/cycle.toml:{queuefile.line_of(after, 11)}"
    part_b = next(p for p in after.queue.entry(70).parts if p.name == "(b) KV half")
    assert (part_b.verdict, part_b.blocked_by) == ("blocked", [10])
    assert "# the cycle queue" in q.read_text() and q.read_text() != before
    # audit again on the same tree: nothing moves (the queue is no part of the probed scope)
    written = q.read_text()
    run_cli("audit", "--write", cwd=port, check_rc=0)
    assert q.read_text() == written
    # the port's code changes: the evidence names the dirty tree
    (port / "src/extra.cpp").write_text("int unrelated_helper() { return 1; }\n")
    run_cli("audit", "--write", cwd=port, check_rc=0)
    assert "+dirty in src include" in q.read_text()


def test_entries_selection(port):
    data = json.loads(run_cli("audit", "--entries", "10-12,40", "--json", cwd=port, check_rc=0).stdout)
    assert [r["entry"] for r in data["results"]] == [10, 11, 12, 40]
    proc = run_cli("audit", "--entries", "12-10", cwd=port, check_rc=2)
    assert "runs backwards" in proc.stderr
    proc = run_cli("audit", "--entries", "500-510", cwd=port, check_rc=2)
    assert "names no entry" in proc.stderr


def test_rule_2_untrusted(tmp_path):
    port = build_port(tmp_path)
    cfg_text = CONFIG.replace('code = ["src", "include"]', 'code = ["lib"]')
    (port / "porttrack.toml").write_text(cfg_text)
    data = json.loads(run_cli("audit", "--entries", "30", "--json", cwd=port, check_rc=0).stdout)
    (r,) = data["results"]
    assert (r["verdict"], r["rule"]) == ("untrusted", "untrusted")
    assert "does not exist" in r["reason"]


def test_path_rule_with_a_failed_control_is_untrusted(tmp_path):
    port = build_port(tmp_path)
    q = port / "queue/cycle.toml"
    q.write_text(q.read_text().replace('control = "allocate_slots"', 'control = "NoSuchControl"'))
    data = json.loads(run_cli("audit", "--entries", "90-91", "--json", cwd=port, check_rc=0).stdout)
    assert [r["verdict"] for r in data["results"]] == ["untrusted", "untrusted"]


def test_actionable_when_blockers_are_ported(tmp_path):
    port = build_port(tmp_path)
    qf = queuefile.load(port / "queue/cycle.toml")
    queuefile.set_entry(qf, 11, verdict="blocked", verdict_by="audit", blocked_by=[10])
    queuefile.set_entry(qf, 12, verdict="blocked", verdict_by="audit", blocked_by=[11])
    assert audit_mod.actionable(qf.queue) == []
    queuefile.set_entry(qf, 10, verdict="no-op", verdict_by="human")  # settled: nothing left to wait for
    assert audit_mod.actionable(qf.queue) == [(11, [10])]
    queuefile.set_entry(qf, 10, verdict="ported", verdict_by="human")
    assert audit_mod.actionable(qf.queue) == [(11, [10])]
    queuefile.save(qf)
    data = json.loads(run_cli("audit", "--entries", "11", "--json", cwd=port, check_rc=0).stdout)
    assert data["actionable"] == [{"entry": 11, "blockers": [10]}]
    assert "entry 11 is actionable now: 10 settled." in run_cli("audit", "--entries", "11", cwd=port, check_rc=0).stdout


def test_parse_entries():
    from porttrack.queue.show import parse_entries

    assert parse_entries("121-123, 150") == {121, 122, 123, 150}
    assert parse_entries(None) is None
    with pytest.raises(UserError):
        parse_entries("12x")
    assert audit_mod.entries_label([3, 1, 2, 7]) == "1-3, 7"


def test_series_parse():
    assert audit_mod.series_of("[6/N][KV-Cache Layout Refactor] move (#1)") == ("KV-Cache Layout Refactor", 6, "N")
    assert audit_mod.series_of("[KV-Cache Layout Refactor][2/5] x") == ("KV-Cache Layout Refactor", 2, "5")
    assert audit_mod.series_of("[Bugfix][Core] x") is None


def test_rule_6_places_pins_with_the_upstream_repo(tmp_path):
    """A pin the queue cannot place (a commit between entries) is placed with the upstream repo's history."""
    up = init_repo(tmp_path / "upstream")
    base = commit_files(
        up,
        {"vllm/v1/core/kv_cache_manager.py": "class KVCacheManager:\n    pass\n"},
        "base",
        date="2026-01-01T00:00:00Z",
    )
    # the new side names a helper the port lacks, so content evidence is not enough and the pins decide
    c1 = commit_files(
        up,
        {
            "vllm/v1/core/kv_cache_manager.py": "class KVCacheManager:\n    def allocate_slots(self):\n        return self.reserve_blocks()\n"
        },
        "[Core] allocate_slots (#40040)",
        date="2026-01-02T00:00:00Z",
    )
    c2 = commit_files(up, {"README.md": "docs\n"}, "docs (#40041)", date="2026-01-03T00:00:00Z")
    port = build_port(tmp_path)
    q = port / "queue/cycle.toml"
    q.write_text(q.read_text().replace(sha(40), c1))
    hdr = port / "include/vllm/v1/core/kv_cache_manager.h"
    cfg = port / "porttrack.toml"
    cfg.write_text(cfg.read_text().replace("[upstream]\n", f'[upstream]\nrepo = "{up}"\n'))
    for pin, verdict in ((c2, "ported"), (base, "real-gap")):
        body = hdr.read_text().split("\n", 1)[1]  # all but the provenance line
        hdr.write_text(f"// Ported from: vllm/v1/core/kv_cache_manager.py @ {pin[:12]}\n" + body)
        data = json.loads(run_cli("audit", "--entries", "40", "--json", cwd=port, check_rc=0).stdout)
        (r,) = data["results"]
        assert r["verdict"] == verdict, r
        where = "at or past" if verdict == "ported" else "before"
        assert any(f"@ {pin[:12]} (vllm/v1/core/kv_cache_manager.py) is {where} {c1[:8]}" in e for e in r["evidence"])


def test_path_rule_with_a_regex_gate(tmp_path):
    port = build_port(tmp_path)
    q = port / "queue/cycle.toml"
    text = q.read_text()
    q.write_text(text.replace('probe = "EnsureWorkerTransferSupported"', 'probe = "Ensure\\\\w+"\nregex = true'))
    (r,) = json.loads(run_cli("audit", "--entries", "90", "--json", cwd=port, check_rc=0).stdout)["results"]
    assert r["rule"] == "path-rule vllm/v1/kv_offload/**" and r["gates"][0]["regex"] is True
    # a gate that no longer holds: the rule stands aside and the entry is judged on its own
    q.write_text(text.replace('probe = "EnsureWorkerTransferSupported"', 'probe = "allocate_\\\\w+"\nregex = true'))
    (r,) = json.loads(run_cli("audit", "--entries", "90", "--json", cwd=port, check_rc=0).stdout)["results"]
    assert r["rule"] == "surface-absent"
    assert any("gate offload-worker-half (absent) is LIVE" in e for e in r["evidence"])


def test_docs_show_the_rules_table_rendered_from_the_registry():
    from porttrack.audit import registry

    doc = (Path(audit_mod.__file__).parents[2] / "docs/audit.md").read_text()
    assert registry.rules_table() in doc, "stale: run scripts/update-rule-docs.py"
    listed = re.findall(r"^\| `([a-z-]+)` \|", registry.rules_table(), flags=re.M)
    assert listed == [r.id for r in audit_mod.RULES]
    # the maintainer's command replaces what lies between the markers, and only that
    stale = f"# a\n\n{registry.TABLE_START}\n| old |\n{registry.TABLE_END}\n\ntail\n"
    assert registry.write_rules_table(stale) == f"# a\n\n{registry.rules_table()}\n\ntail\n"
    # and the design, the project's contract, in the same order
    design = (Path(audit_mod.__file__).parents[2] / "docs/design.md").read_text()
    eight = design.split("## 8. audit: first-pass rules", 1)[1].split("\n## ", 1)[0]
    ids = [re.sub(r" GLOB$", "", x) for x in re.findall(r"^- `([a-z-]+(?: GLOB)?)` —", eight, flags=re.M)]
    assert ids == [r.id for r in audit_mod.RULES]


def test_evidence_cites_at_most_the_hit_limit_and_counts_the_rest(tmp_path):
    from porttrack import probe

    for n in (audit_mod.HIT_LIMIT - 1, audit_mod.HIT_LIMIT):  # definition + n uses: HIT_LIMIT and HIT_LIMIT + 1 hits
        port = init_repo(tmp_path / f"port{n}")
        uses = "".join(f"int use{i}() {{ return drain_all(); }}\n" for i in range(n))
        commit_files(port, {"src/a.cpp": "int drain_all() { return 0; }\n" + uses}, "port")
        [p] = probe.probe(port, ["drain_all"], scope=["src"], tests_scope=[])
        total = len(p.count.hits)
        lines = audit_mod.hit_lines("drain_all", p.count)
        cited = [line for line in lines if line.startswith("  drain_all ")]
        assert total == n + 1 and len(cited) == min(total, audit_mod.HIT_LIMIT)
        # the definition first, then the uses in file order
        assert cited[0] == "  drain_all definition src/a.cpp:1"
        assert [int(x.rsplit(":", 1)[1]) for x in cited] == list(range(1, len(cited) + 1))
        more = [line for line in lines if "more hits" in line]
        assert more == (
            [f"  drain_all: {total - audit_mod.HIT_LIMIT} more hits"] if total > audit_mod.HIT_LIMIT else []
        )


def test_dry_run_and_write_say_the_same_about_a_human_verdict(tmp_path):
    port = build_port(tmp_path)
    dry = run_cli("audit", "--json", cwd=port, check_rc=0).stdout
    note = next(n for n in json.loads(dry)["disagreements"] if n.startswith("entry 61:"))
    assert note.startswith("entry 61: audit would say real-gap (real-gap: ") and note.endswith(
        "; the human verdict no-op stands."
    )
    wrote = run_cli("audit", "--write", "--json", cwd=port, check_rc=0).stdout
    assert note in json.loads(wrote)["disagreements"]


PORT_IMPL = (
    "class Impl {\n public:\n  int forward(int x) { return x; }\n};\nint Run(Impl& i) { return i.forward(1); }\n"
)
KERNEL_CONFIG = (
    '[upstream]\nrepo = "../up"\npaths = ["csrc/"]\n\n[port]\nscopes = { code = ["src"] }\n\n'
    "[[map]]\nupstream = 'csrc/(?P<rest>.+)\\.cpp'\nport = [\"src/{rest}.cpp\"]\n"
)


def kernel_pair(tmp_path: Path, kernel: str, changed: str) -> Path:
    """An upstream whose csrc/attn.cpp goes from `kernel` to `changed` in one commit, and a port
    with its own Impl that maps it; the queue built with the real CLI. Returns the port."""
    up = init_repo(tmp_path / "up")
    base = commit_files(up, {"csrc/attn.cpp": kernel}, "[Kernel] base (#1)", date="2026-03-01T00:00:00+00:00")
    commit_files(up, {"csrc/attn.cpp": changed}, "[Kernel] Forward one more (#2)", date="2026-03-02T00:00:00+00:00")
    port = init_repo(tmp_path / "port")
    ported = f"// Ported from: csrc/attn.cpp @ {base[:10]}\n{PORT_IMPL}"
    commit_files(port, {"porttrack.toml": KERNEL_CONFIG, "src/attn.cpp": ported}, "port")
    run_cli("queue", "build", "--range", f"{base}..HEAD", "--name", "c", cwd=port, check_rc=0)
    return port


def test_a_change_to_a_specialised_cpp_template_is_audited_under_the_templates_name(tmp_path):
    """Template arguments may hold `::` (`Impl<ISA::AMX, T>`): the entry names the template, which a
    probe can look for, and the audit runs instead of stopping on a name no identifier spells."""
    kernel = (
        "namespace attn {\ntemplate <typename T>\nclass Impl<ISA::AMX, T> {\n public:\n"
        "  int forward(int x) { return x; }\n  ~Impl() {}\n};\n}  // namespace attn\n"
    )
    changed = kernel.replace("return x;", "return x + 1;").replace("~Impl() {}", "~Impl() { x_ = 0; }")
    port = kernel_pair(tmp_path, kernel, changed)
    e = queuefile.load(port / "queue/c.toml").queue.entries[0]
    assert sorted(e.symbols.changed) == ["attn::Impl", "attn::Impl::forward"], e.symbols
    data = json.loads(run_cli("audit", "--json", cwd=port, check_rc=0).stdout)
    assert [r["verdict"] for r in data["results"] if r["part"] is None] == ["real-gap"], data["results"]


def test_a_queue_that_names_cpp_definitions_as_written_is_still_audited(tmp_path):
    """Queues built before porttrack named definitions for a probe hold `Impl::~Impl` and
    `Holder<ISA::AMX,T>::run`: audit probes the template's name and leaves the destructor out,
    instead of stopping on the first."""
    kernel = "namespace attn {\nclass Impl {\n public:\n  int forward(int x) { return x; }\n};\n}\n"
    port = kernel_pair(tmp_path, kernel, kernel.replace("return x;", "return x + 1;"))
    q = port / "queue/c.toml"
    old = q.read_text().replace(
        '"attn::Impl::forward"', '"attn::Impl::forward", "attn::Impl::~Impl", "attn::Holder<ISA::AMX,T>::run"'
    )
    q.write_text(old)
    data = json.loads(run_cli("audit", "--json", cwd=port, check_rc=0).stdout)
    (r,) = [r for r in data["results"] if r["part"] is None]
    assert r["verdict"] == "real-gap", r
    probed = [e.split(" @ ")[0] for e in r["evidence"] if e.startswith("probe ")]
    assert any(p.lower() == "probe attn::holder::run" for p in probed), probed  # in any spelling
    assert not any("~" in p or "<" in p for p in probed), probed
    assert q.read_text() == old  # the queue's own names are the queue's: audit without --write changes nothing
