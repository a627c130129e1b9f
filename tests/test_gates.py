"""gates: one meaning for every gate kind, read by audit's path rules and by check alike."""

from __future__ import annotations

import re
from pathlib import Path

from porttrack import audit, gates
from porttrack.model import Entry, Gate
from porttrack.probe import Count, Hit


def count(code: int = 0, consumers: int = 0, definitions: int = 0, hits=()) -> Count:
    return Count(
        "X",
        "word",
        ["X"],
        code=code,
        raw=code,
        files=int(code > 0),
        definitions=definitions,
        tests=0,
        consumers=consumers,
        hits=list(hits),
    )


def test_absent_gate_holds_on_zero_with_a_control_and_is_live_on_a_hit():
    g = Gate(id="g", kind="absent", probe="X")
    assert gates.probe_state(g, count(), "absent", "Ctl", 3, "src").state == gates.HOLDS
    hit = Hit("src/a.cpp", 4, "consumer")
    live = gates.probe_state(g, count(code=1, consumers=1, hits=[hit]), "present", "Ctl", 3, "src")
    assert live.state == gates.LIVE and live.hits == [hit] and "no longer absent from src" in live.why


def test_a_zero_without_a_working_control_is_untrusted_not_holding():
    g = Gate(id="g", kind="absent", probe="X")
    st = gates.probe_state(g, count(), "absent", "Ctl", 0, "src")
    assert st.state == gates.UNTRUSTED and "'Ctl' has 0 code hit(s) in src" in st.why
    assert gates.probe_state(g, count(), "incomplete", "Ctl", 3, "src").state == gates.INCOMPLETE


def test_no_consumer_present_and_count_kinds():
    nc = Gate(id="g", kind="no-consumer", probe="X")
    assert gates.probe_state(nc, count(code=1, definitions=1), "present", "C", 1, "src").state == gates.HOLDS
    assert (
        gates.probe_state(nc, count(code=2, definitions=1, consumers=1), "present", "C", 1, "src").state == gates.LIVE
    )
    assert gates.probe_state(nc, count(), "absent", "C", 1, "src").state == gates.LIVE  # undefined proves nothing
    pr = Gate(id="g", kind="present", probe="X")
    assert gates.probe_state(pr, count(code=1), "present", None, 0, "src").state == gates.HOLDS
    assert gates.probe_state(pr, count(), "absent", "C", 1, "src").state == gates.LIVE
    ct = Gate(id="g", kind="count", probe="X", expect=2)
    assert gates.probe_state(ct, count(code=2), "present", None, 0, "src").state == gates.HOLDS
    assert gates.probe_state(ct, count(code=3), "present", None, 0, "src").state == gates.LIVE


def test_a_no_consumer_gate_on_a_program_entry_point_never_holds():
    """The runtime calls `main`: a queue that recorded it as read by nothing is re-judged, as audit
    no longer calls such an entry inert."""
    for probe in ("main", "cli.main"):
        g = Gate(id="g", kind="no-consumer", probe=probe)
        st = gates.probe_state(g, count(code=1, definitions=1), "present", "C", 1, "src")
        assert st.state == gates.LIVE and "entry point" in st.why, st
    g = Gate(id="g", kind="no-consumer", probe="main_loop")
    assert gates.probe_state(g, count(code=1, definitions=1), "present", "C", 1, "src").state == gates.HOLDS


def test_entry_ported_gate():
    g = Gate(id="g", kind="entry-ported", entry=3)
    assert gates.entry_state(g, None).state == gates.HOLDS
    assert gates.entry_state(g, Entry(3, "a" * 40, "s", verdict="blocked")).state == gates.HOLDS
    assert gates.entry_state(g, Entry(3, "a" * 40, "s", verdict="ported")).state == gates.LIVE


def test_audit_and_check_read_gates_from_one_place():
    src = Path(audit.__file__).parent.parent
    for mod in ("audit/rules_records.py", "outputs/check/gate_checks.py"):
        text = (src / mod).read_text()
        assert "gates.probe_state(" in text and "gates.entry_state(" in text, mod
    # nobody else decides what a gate kind means
    assert not re.search(
        r'g\.kind == "absent" and c\.code > 0', (src / "outputs" / "check" / "gate_checks.py").read_text()
    )
