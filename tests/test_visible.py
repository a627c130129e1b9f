"""No value from a file starts a line or carries a control character, in any output format
(porttrack/visible.py, docs/security.md): random strings through every renderer of `check`."""

from __future__ import annotations

import io
import re
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

from porttrack.outputs import formats
from porttrack.outputs.check import CODES, CheckResult, finding
from porttrack.visible import sanitized, visible

# What an attacker writes into a queue, a header or a matrix: workflow commands, escapes, separators.
HOSTILE = st.one_of(
    st.text(),
    st.text(alphabet=st.sampled_from(["\n", "\r", "\x1b", "\x07", "\x85", "\u2028", "\t", ":", "a", " ", "%", ","])),
    st.builds(lambda a, b: f"{a}\n::error file=x::{b}", st.text(max_size=8), st.text(max_size=8)),
)
CONTROL = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029]")


@given(HOSTILE)
def test_visible_leaves_no_control_character_and_changes_nothing_else(s: str):
    out = visible(s)
    assert not CONTROL.search(out) and "\n" not in out
    if not CONTROL.search(s) and "\n" not in s:
        assert out == s


def test_sanitized_copies_and_keeps_shared_objects_shared():
    f = finding("gate-live", "a\nb", "c", "p", 1)
    r = CheckResult(Path("/r"), "q", "t", None, [f], acknowledged=[(f, "x\x1by")])
    got = sanitized(r)
    assert got.findings[0].message == "a\\nb" and got.acknowledged[0][1] == "x\\x1by"
    assert got.findings[0] is got.acknowledged[0][0] and f.message == "a\nb"


def hostile_result(values: list[str]) -> CheckResult:
    def v(i: int) -> str:
        return "::" + values[i % len(values)]  # every value tries to start a line with a command

    findings = [
        finding(
            code,
            v(i),
            v(i + 1),
            v(i + 2),
            i + 1,
            entry=i,
            part=v(i + 3),
            gate=v(i + 4),
            related=[v(i + 5)],
            check=v(i + 6),
        )
        for i, code in enumerate(list(CODES)[:4])
    ]
    return CheckResult(
        root=Path("/repo"),
        queue_path=v(7),
        tree=v(8),
        base=v(9),
        findings=findings[:3],
        acknowledged=[(findings[3], v(10))],
        checks=[v(11)],
        evidence={v(11): v(12)},
        stats={"entries": 1, "gates": 1, "scans": 1, "seconds": 0.1},
    )


def rendered(result: CheckResult) -> dict[str, str]:
    console = Console(file=io.StringIO(), width=100, color_system=None, force_terminal=False, emoji=False)
    formats.text(result, console)
    out = {"text": console.file.getvalue()}  # type: ignore[attr-defined]
    for fmt in ("json", "github", "sarif", "junit"):
        out[fmt] = formats.render(result, fmt)
    return out


@settings(max_examples=60, deadline=None)
@given(st.lists(HOSTILE, min_size=1, max_size=13))
def test_no_value_starts_a_line_or_carries_a_control_character_in_any_format(values: list[str]):
    result = hostile_result(values)
    for fmt, text in rendered(result).items():
        assert not CONTROL.search(text), fmt
        lines = text.splitlines()
        if fmt == "github":
            commands = [line for line in lines if line.lstrip().startswith("::")]
            assert len(commands) == len(result.findings) and len(lines) == len(commands) + 1
            for line in commands:
                assert re.match(r"::(error|warning|notice) file=[^,\n]*,line=\d+,title=porttrack [^:]*::", line)
        else:
            assert not [line for line in lines if line.lstrip().startswith("::")], fmt


def hostile_queue(values: list[str]):
    from porttrack.audit import Audit
    from porttrack.model import VERDICTS, Entry, Gate, Queue, QueueMeta

    def v(i: int) -> str:
        return "::" + values[i % len(values)]

    entries = []
    for i, verdict in enumerate(VERDICTS):
        gate = Gate(id=v(i), kind="absent", probe=v(i + 1), scope=["src"], control=v(i + 2), established_at=v(i + 3))
        entries.append(
            Entry(
                n=i + 1,
                sha="0123456789abcdef",
                subject=v(i + 4),
                pr=i,
                verdict=verdict,
                verdict_by="human",
                reason=v(i + 5),
                owner=v(i + 6),
                blocked_by=[1] if verdict == "blocked" else [],
                landing=v(i + 7),
                gates=[gate],
                files=[v(i + 8)],
            )
        )
    queue = Queue(meta=QueueMeta(name=v(0), upstream=v(1), pin="0123456", target="89abcdef"), entries=entries)
    result = Audit(results=[], tree=v(2), scope=[v(3)], probes=[], counts={}, rows=[], entries=[e.n for e in entries])
    result.notices = [v(4)]
    return queue, result


@settings(max_examples=30, deadline=None)
@given(st.lists(HOSTILE, min_size=1, max_size=9))
def test_no_value_starts_a_line_or_carries_a_control_character_in_the_reports(values: list[str]):
    from porttrack.outputs import deferral
    from porttrack.outputs import report

    queue, result = hostile_queue(values)
    for text in (
        report.sync(queue, result, command="porttrack report sync", name=values[0]),
        deferral.deferral(queue, result, command="porttrack report deferral", queue_rel="queue/q.toml"),
    ):
        assert not CONTROL.search(text)
        assert not [line for line in text.splitlines() if line.lstrip().startswith("::")]
