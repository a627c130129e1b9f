"""Acceptance-pass checks of audit through the real CLI."""

from __future__ import annotations

import json

from conftest import run_cli
from test_audit import build_port


def test_dry_run_and_write_say_the_same_about_a_human_verdict(tmp_path):
    port = build_port(tmp_path)
    dry = run_cli("audit", "--json", cwd=port, check_rc=0).stdout
    note = next(n for n in json.loads(dry)["disagreements"] if n.startswith("entry 61:"))
    assert note.startswith("entry 61: audit would say real-gap (real-gap: ") and note.endswith(
        "; the human verdict no-op stands."
    )
    wrote = run_cli("audit", "--write", "--json", cwd=port, check_rc=0).stdout
    assert note in json.loads(wrote)["disagreements"]
