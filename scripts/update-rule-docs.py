#!/usr/bin/env python3
"""Render docs/audit.md's table of the rules from porttrack.audit.RULES (a test fails when it is stale)."""

from pathlib import Path

from porttrack.audit import registry

doc = Path(__file__).resolve().parents[1] / "docs" / "audit.md"
doc.write_text(registry.write_rules_table(doc.read_text(encoding="utf-8")), encoding="utf-8")
