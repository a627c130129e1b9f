"""audit: classify queue entries by the first-pass rules (docs/audit.md), recording the rule and its evidence.

The queue-only parts (the blocked-by graph from symbols and series, path rules) need
no port; the rest reads the port through ONE probe scan for every symbol of the audit.
Human verdicts are never replaced: audit only says where it would differ.

The package, by stage: `graph` (queue-only facts), `results` (what a judgement records and
the probe scan), `subject` (the context and one entry under judgement), `gating` (the gates
audit writes), the rules in `rules_records`, `rules_blocked` and `rules_content`, `registry`
(their order), `run` (one audit) and `write` (`--write` and the table).
"""

from porttrack.audit.graph import (
    actionable,
    adders,
    blocked_graph,
    closure,
    entries_label,
    pin_at_or_past,
    rule_matches,
    series,
    series_edges,
    series_of,
    symbol_edges,
    Stage,
)
from porttrack.audit.registry import RULES, judge, rule_by_id
from porttrack.audit.results import HIT_LIMIT, Audit, EntrySymbols, Result, _code, hit_lines, probe_line, tree_text
from porttrack.audit.run import audit, unplaced_pins
from porttrack.audit.subject import AuditRule, Subject, spelling_pattern
from porttrack.audit.write import DISPOSITION, disagreements, table, write

__all__ = [
    "DISPOSITION",
    "HIT_LIMIT",
    "RULES",
    "Audit",
    "AuditRule",
    "EntrySymbols",
    "Result",
    "Stage",
    "Subject",
    "_code",
    "actionable",
    "adders",
    "audit",
    "blocked_graph",
    "closure",
    "disagreements",
    "entries_label",
    "hit_lines",
    "judge",
    "pin_at_or_past",
    "probe_line",
    "rule_by_id",
    "rule_matches",
    "series",
    "series_edges",
    "series_of",
    "spelling_pattern",
    "symbol_edges",
    "table",
    "tree_text",
    "unplaced_pins",
    "write",
]
