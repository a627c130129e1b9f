"""Render a check result: rich text for people; JSON, GitHub annotations, SARIF 2.1.0 and JUnit for machines.

Every renderer takes a `check.CheckResult` and returns text (text renders to a rich Console).
Paths in findings are relative to the port root; the machine formats prefix them with the
port root's place in its git repository, since CI tools resolve paths from the repository root.
"""

from __future__ import annotations

import hashlib
import json
import re

from rich.console import Console
from rich.markup import escape

from porttrack import __version__ as _version
from porttrack.outputs.check import CODES, CheckResult, Finding
from porttrack.visible import sanitized

FORMATS = ("text", "json", "github", "sarif", "junit")
SARIF_SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
_STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}


def render(result: CheckResult, fmt: str, console: Console | None = None) -> str:
    """The result in format `fmt` as text; for "text" it is printed to `console` and "" returned.

    JSON and SARIF escape every control character by themselves; the other formats are given a
    copy whose strings are `visible`, so no value from a file starts a line or drives a terminal.
    """
    if fmt == "text":
        text(result, console or Console(emoji=False))
        return ""
    return {"json": to_json, "github": github, "sarif": sarif, "junit": junit}[fmt](result)


def summary(result: CheckResult) -> str:
    n = len(result.findings)
    by = {s: sum(f.severity == s for f in result.findings) for s in ("error", "warning", "info")}
    bits = [
        f"{n} finding{'s' if n != 1 else ''}" + (f" ({', '.join(f'{v} {k}' for k, v in by.items() if v)})" if n else "")
    ]
    if result.acknowledged:
        bits.append(f"{len(result.acknowledged)} acknowledged")
    if result.ignored:
        bits.append(f"{result.ignored} filtered by [check] config")
    st = result.stats
    bits.append(
        f"{st.get('entries', 0)} entries, {st.get('gates', 0)} gates in {st.get('scans', 0)} scan(s), {st.get('seconds', 0)} s"
    )
    return "; ".join(bits)


def _repo_path(result: CheckResult, path: str) -> str:
    return f"{result.repo_prefix}/{path}" if result.repo_prefix else path


# ---------------------------------------------------------------- text


def text(result: CheckResult, console: Console) -> None:
    result = sanitized(result)
    base = f" against base {result.base}" if result.base else ""
    console.print(
        f"porttrack check: {escape(result.queue_path)} at {escape(result.tree)}{escape(base)}", soft_wrap=True
    )
    for f in result.findings:
        style = _STYLE[f.severity]
        who = escape(f.check or f.subject)
        console.print(f"\n[{style}]{f.severity}[/] [bold]{f.code}[/] · {who}", soft_wrap=True)
        console.print(f"  at {escape(f.path)}:{f.line}  {escape(f.message)}", soft_wrap=True)
        for r in f.related[:5]:
            console.print(f"    also {escape(r)}", soft_wrap=True)
        console.print(f"  [green]→[/] {escape(f.action)}", soft_wrap=True)
    if result.acknowledged:
        console.print("\nacknowledged:")
        for f, reason in result.acknowledged:
            console.print(f"  {f.code} · {escape(f.check or f.subject)}: {escape(reason)}", soft_wrap=True)
    verdict = "[bold red]FAIL[/]" if result.findings else "[bold green]ok[/]"
    console.print(f"\n{verdict} {escape(summary(result))}", soft_wrap=True)


# ---------------------------------------------------------------- json


def to_json(result: CheckResult) -> str:
    data = {
        "tool": "porttrack",
        "version": _version,
        "queue": result.queue_path,
        "tree": result.tree,
        "base": result.base,
        "exit_code": result.exit_code,
        "summary": summary(result),
        "stats": result.stats,
        "findings": [f.to_json() for f in result.findings],
        "acknowledged": [{**f.to_json(), "reason": reason} for f, reason in result.acknowledged],
        "ignored": result.ignored,
        "evidence": result.evidence,
    }
    return json.dumps(data, indent=2) + "\n"


# ---------------------------------------------------------------- GitHub workflow commands


def _gh_data(s: str) -> str:
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _gh_prop(s: str) -> str:
    return _gh_data(s).replace(":", "%3A").replace(",", "%2C")


def github(result: CheckResult) -> str:
    """One `::error file=…,line=…,title=…::message` line per finding, then a plain summary line."""
    level = {"error": "error", "warning": "warning", "info": "notice"}
    result = sanitized(result)
    lines = []
    for f in result.findings:
        title = f"porttrack {f.code}" + (f" (entry {f.entry})" if f.entry is not None else "")
        props = f"file={_gh_prop(_repo_path(result, f.path))},line={f.line},title={_gh_prop(title)}"
        lines.append(f"::{level[f.severity]} {props}::{_gh_data(f.message + ' ' + f.action)}")
    lines.append(f"porttrack check: {summary(result)}")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- SARIF 2.1.0


def sarif_schema() -> dict:
    """The SARIF 2.1.0 JSON schema shipped with porttrack (OASIS errata01), for validating output offline."""
    from importlib import resources  # sarif only

    return json.loads(resources.files("porttrack").joinpath("data/sarif-schema-2.1.0.json").read_text(encoding="utf-8"))


def _location(result: CheckResult, where: str, index: int | None = None) -> dict:
    path, _, line = where.rpartition(":")
    loc: dict = {
        "physicalLocation": {
            "artifactLocation": {"uri": _repo_path(result, path), "uriBaseId": "%SRCROOT%"},
            "region": {"startLine": max(int(line), 1) if line.isascii() and line.isdigit() else 1},
        }
    }
    if index is not None:
        loc["id"] = index
    return loc


def _sarif_result(result: CheckResult, f: Finding, rule_index: dict[str, int], reason: str | None = None) -> dict:
    level = {"error": "error", "warning": "warning", "info": "note"}[f.severity]
    key = f"{f.code}|{f.entry}|{f.part}|{f.gate}|{f.check}"
    out = {
        "ruleId": f.code,
        "ruleIndex": rule_index[f.code],
        "level": level,
        "message": {"text": f"{f.message} {f.action}"},
        "locations": [_location(result, f"{f.path}:{f.line}")],
        # stable across runs and line moves, so code scanning tracks one alert per entry/gate
        "partialFingerprints": {"porttrackFinding/v1": hashlib.sha256(key.encode()).hexdigest()[:32]},
        "properties": {"entry": f.entry, "part": f.part, "gate": f.gate, "check": f.check},
    }
    if f.related:
        out["relatedLocations"] = [_location(result, r, i + 1) for i, r in enumerate(f.related)]
    if reason is not None:
        out["suppressions"] = [{"kind": "inSource", "justification": reason}]
    return out


def sarif(result: CheckResult) -> str:
    codes = list(CODES)
    rule_index = {c: i for i, c in enumerate(codes)}
    rules = [
        {
            "id": c,
            "name": "".join(w.capitalize() for w in c.split("-")),
            "shortDescription": {"text": CODES[c][1]},
            "defaultConfiguration": {"level": {"error": "error", "warning": "warning", "info": "note"}[CODES[c][0]]},
            "help": {"text": f"See docs/ci.md, code `{c}`."},
        }
        for c in codes
    ]
    root = result.root.as_posix()
    toplevel = root[: -len(result.repo_prefix) - 1] if result.repo_prefix else root
    doc = {
        "$schema": SARIF_SCHEMA_URI,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {"driver": {"name": "porttrack", "version": _version, "rules": rules}},
                "originalUriBaseIds": {"%SRCROOT%": {"uri": "file://" + toplevel.rstrip("/") + "/"}},
                "invocations": [{"executionSuccessful": True, "exitCode": result.exit_code}],
                "results": [_sarif_result(result, f, rule_index) for f in result.findings]
                + [_sarif_result(result, f, rule_index, reason) for f, reason in result.acknowledged],
                "properties": {
                    "queue": result.queue_path,
                    "tree": result.tree,
                    "base": result.base,
                    "stats": result.stats,
                },
            }
        ],
    }
    return json.dumps(doc, indent=2) + "\n"


# ---------------------------------------------------------------- JUnit XML


def junit(result: CheckResult) -> str:
    """One test case per check made (each gate, citation, owner, verdict, ack), failing where a finding is."""
    result = sanitized(result)
    by_check: dict[str, list[Finding]] = {}
    for f in result.findings:
        by_check.setdefault(f.check or f.subject, []).append(f)
    names = list(result.checks) + [c for c in by_check if c not in result.checks]
    failures = sum(1 for c in names if c in by_check)
    import xml.etree.ElementTree as ET  # junit only

    suites = ET.Element("testsuites", name="porttrack check", tests=str(len(names)), failures=str(failures), errors="0")
    suite = ET.SubElement(
        suites,
        "testsuite",
        name=f"porttrack check {result.queue_path}",
        tests=str(len(names)),
        failures=str(failures),
        errors="0",
        skipped="0",
        time=str(result.stats.get("seconds", 0)),
    )
    props = ET.SubElement(suite, "properties")
    ET.SubElement(props, "property", name="tree", value=result.tree)
    if result.base:
        ET.SubElement(props, "property", name="base", value=result.base)
    for name in names:
        case = ET.SubElement(
            suite, "testcase", classname=f"porttrack.outputs.check.{result.queue_path}", name=name, time="0"
        )
        if name in result.evidence:
            ET.SubElement(case, "system-out").text = result.evidence[name]
        for f in by_check.get(name, []):
            fail = ET.SubElement(case, "failure", message=f.message, type=f.code)
            fail.text = (
                f"{f.severity} {f.code} at {_repo_path(result, f.path)}:{f.line}\nwhat: {f.message}\ndo: {f.action}"
                + ("\nalso: " + ", ".join(f.related) if f.related else "")
            )
    ET.indent(suites)
    body = _XML_ILLEGAL.sub(lambda m: f"\\x{ord(m.group()):02x}", ET.tostring(suites, encoding="unicode"))
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + body + "\n"


# characters XML 1.0 cannot carry even escaped (ElementTree writes them raw): queue text may hold them
_XML_ILLEGAL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
