"""Acceptance-pass checks of the renderers: queue text with control characters still gives well-formed JUnit."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from porttrack.outputs import formats
from test_formats import result


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
