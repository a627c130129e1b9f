"""The check renderers: SARIF valid against the shipped 2.1.0 schema, JUnit well-formed, GitHub annotations escaped."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
from rich.console import Console

from porttrack.outputs import formats
from porttrack.outputs.check import CODES, CheckResult, finding


def result(prefix: str = "") -> CheckResult:
    live = finding(
        "gate-live",
        "entry 142 gate 'take-new-block-ids-consumer' (no-consumer) no longer holds: take_new_block_ids has 1 consumer(s) now "
        "at src/scheduler.cpp:88, tests:2.",
        "The entry is real now: port entry 142, or re-triage it and update the gate.",
        "src/scheduler.cpp",
        88,
        entry=142,
        gate="take-new-block-ids-consumer",
        related=["queue/q.toml:40"],
        check="entry 142 gate take-new-block-ids-consumer",
    )
    stale = finding(
        "citation-stale",
        "entry 142 cites include/a.h:8, but take_new_block_ids is at include/a.h:10 now.",
        'Set established_at = "include/a.h:10".',
        "include/a.h",
        10,
        entry=142,
        gate="take-new-block-ids-consumer",
        check="entry 142 gate take-new-block-ids-consumer citation",
    )
    untriaged = finding(
        "untriaged",
        "entry 7 (77777777 New <thing>, 100% & more) was added since the base.",
        "Run `porttrack audit --entries 7 --write`.",
        "queue/q.toml",
        61,
        entry=7,
        check="entry 7 verdict",
    )
    acked = finding(
        "owner-done",
        "entry 3 is owned by KV-OLD, which is DONE.",
        "Re-triage it.",
        "queue/q.toml",
        30,
        entry=3,
        check="entry 3 owner",
    )
    return CheckResult(
        root=Path("/repo/port") if prefix else Path("/repo"),
        queue_path="queue/q.toml",
        tree="0123456789abcdef0123456789abcdef01234567 dirty",
        base="origin/main (0123456789ab)",
        findings=[live, untriaged, stale],
        acknowledged=[(acked, "row reopened next week")],
        checks=[
            "entry 3 owner",
            "entry 7 verdict",
            "entry 142 gate take-new-block-ids-consumer",
            "entry 142 gate take-new-block-ids-consumer citation",
            "entry 142 verdict",
        ],
        stats={"entries": 3, "gates": 1, "scans": 1, "seconds": 0.01},
        repo_prefix=prefix,
    )


def test_sarif_is_valid_against_the_shipped_schema():
    doc = json.loads(formats.sarif(result()))
    schema = formats.sarif_schema()
    assert schema["title"].startswith("Static Analysis Results Format (SARIF) Version 2.1.0")
    jsonschema.Draft4Validator(schema).validate(doc)
    run = doc["runs"][0]
    assert doc["version"] == "2.1.0"
    assert [r["id"] for r in run["tool"]["driver"]["rules"]] == list(CODES)
    first = run["results"][0]
    assert first["ruleId"] == "gate-live" and first["level"] == "error"
    assert first["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "src/scheduler.cpp"
    assert first["locations"][0]["physicalLocation"]["region"]["startLine"] == 88
    assert run["results"][-1]["suppressions"][0]["justification"] == "row reopened next week"


def test_sarif_paths_are_relative_to_the_repository_when_the_port_is_a_subfolder():
    doc = json.loads(formats.sarif(result(prefix="port")))
    jsonschema.Draft4Validator(formats.sarif_schema()).validate(doc)
    run = doc["runs"][0]
    assert run["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "port/src/scheduler.cpp"
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == "file:///repo/"


def test_sarif_of_a_clean_run_is_valid():
    clean = result()
    clean.findings, clean.acknowledged = [], []
    doc = json.loads(formats.sarif(clean))
    jsonschema.Draft4Validator(formats.sarif_schema()).validate(doc)
    assert doc["runs"][0]["results"] == []


def test_junit_parses_with_one_case_per_check_and_failures_where_findings_are():
    root = ET.fromstring(formats.junit(result()))
    suite = root.find("testsuite")
    cases = suite.findall("testcase")
    assert len(cases) == 5 and suite.get("tests") == "5" and suite.get("failures") == "3"
    failed = {c.get("name"): c.find("failure").get("type") for c in cases if c.find("failure") is not None}
    assert failed == {
        "entry 7 verdict": "untriaged",
        "entry 142 gate take-new-block-ids-consumer": "gate-live",
        "entry 142 gate take-new-block-ids-consumer citation": "citation-stale",
    }
    assert "src/scheduler.cpp:88" in next(c for c in cases if c.get("name").endswith("consumer")).find("failure").text


def test_github_annotations_are_workflow_commands_with_escaping():
    lines = formats.github(result(prefix="port")).splitlines()
    assert lines[0].startswith("::error file=port/src/scheduler.cpp,line=88,title=porttrack gate-live (entry 142)::")
    assert lines[2].startswith("::warning file=port/include/a.h,line=10,")
    # %, newlines, and in properties , and : are escaped so the runner reads one annotation per line
    assert "100%25 & more" in lines[1]
    for line in lines[:3]:
        assert re.fullmatch(r"::(error|warning|notice) file=[^,:]+,line=\d+,title=[^:]+::.+", line), line
    assert lines[-1].startswith("porttrack check: 3 findings (2 error, 1 warning); 1 acknowledged")


def test_json_and_text():
    data = json.loads(formats.to_json(result()))
    assert data["exit_code"] == 1 and len(data["findings"]) == 3
    assert data["acknowledged"][0]["reason"] == "row reopened next week"
    console = Console(record=True, width=200, color_system=None)
    formats.text(result(), console)
    out = console.export_text()
    assert "gate-live" in out and "src/scheduler.cpp:88" in out and "FAIL" in out
    assert "New <thing>, 100% & more" in out  # user text is printed as written, never read as rich markup


def test_junit_is_well_formed_when_queue_text_holds_control_characters():
    r = result()
    f = r.findings[0]
    f.message = "entry 142 (Drain \x1b[31mids\x07 <b>&amp;) gate 'a\x00b' no longer holds."
    f.gate = "a\x00b"
    r.evidence[f.check] = "probe take_new_block_ids\x0b: code 1"
    root = ET.fromstring(formats.junit(r))
    failure = next(
        c
        for c in root.iter("testcase")
        if c.find("failure") is not None and "Drain" in c.find("failure").get("message")
    )
    assert (
        failure.find("failure").get("message")
        == "entry 142 (Drain \\x1b[31mids\\x07 <b>&amp;) gate 'a\\x00b' no longer holds."
    )
    assert "\\x0b" in failure.find("system-out").text
