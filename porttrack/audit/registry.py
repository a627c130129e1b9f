"""The rules in the order they are tried (docs/audit.md is this table), and judging one entry by them."""

from __future__ import annotations


from porttrack.model import NEEDS_GATE, Entry, Part
from porttrack.audit.results import EntrySymbols, Result
from porttrack.audit.subject import AuditRule, Subject, _Ctx
from porttrack.audit.rules_blocked import _absent_blockers, _blocked, _owned
from porttrack.audit.rules_content import (
    _content,
    _content_states,
    _inert,
    _lacking_gates,
    _ported,
    _real_gap,
    _surface_absent,
)
from porttrack.audit.rules_records import _behaviour, _deferred, _ignore, _no_op, _path_rule, _unmapped, _untrusted


# The rules in the order they are tried. docs/audit.md lists them in this order (a test checks).
RULES: tuple[AuditRule, ...] = (
    AuditRule(
        "behaviour",
        "ported or real-gap",
        _behaviour,
        "the entry's commit is a kvref switch and `validate kv --record` saw the port's harness answer as "
        "with it (ported) or as without it (real-gap); above every static probe",
        "the harness, the run that repeats it, the case counts and the case that decides",
    ),
    AuditRule(
        "ignore",
        "ignore",
        _ignore,
        "no file of the entry lies under the mirrored paths, or those that do have no port counterpart and are no code",
        "the files and the mirrored paths",
    ),
    AuditRule(
        "path-rule",
        "(the rule's)",
        _path_rule,
        "every mirrored file matches a `[[rule]]` glob and all of the rule's gates hold",
        "the rule's gates, each with its probe line",
    ),
    AuditRule(
        "no-op",
        "no-op",
        _no_op,
        "every changed line of the mirrored code is a comment, a docstring or a construct of `[audit] language_only`",
        "the constructs met",
    ),
    AuditRule(
        "untrusted",
        "untrusted",
        _untrusted,
        "a probe of the entry (or a gate of a matching path rule) is untrusted or incomplete, "
        "or queue build --skip-missing could not read one of its files",
        "the probe's reason",
    ),
    AuditRule(
        "unmapped",
        "surface-absent",
        _unmapped,
        "every mirrored code file lacks a port counterpart and none of the entry's symbols is in the port",
        "the files and an `absent` gate per symbol",
    ),
    AuditRule(
        "surface-absent",
        "surface-absent",
        _surface_absent,
        "none of the changed/removed symbols has a code hit where it would be and content evidence does not find "
        "the change ported; or the entry only adds members to classes the port lacks",
        "an `absent` gate per symbol (one per class the port lacks)",
    ),
    AuditRule(
        "deferred",
        "real-gap",
        _deferred,
        "a deferral record (a comment or doc line with a deferral word) names one of the entry's symbols, a class the port lacks, or its PR; "
        "unless content evidence finds the port has none of what the change edits",
        "the record, by path:line",
    ),
    AuditRule(
        "content",
        "ported or surface-absent",
        _content,
        "hunk by hunk, the new side's telling tokens are in the port files that map it and the old side's are gone (`content-ported`), or a hunk has neither side there, is guarded by a name the port lacks, or changes only lines that serve what the port lacks (`content-absent`); no hunk leaves work",
        "each hunk's state with the tokens found and missing, and the port files compared",
    ),
    AuditRule(
        "ported",
        "ported",
        _ported,
        "every added symbol exists and the mapped port files' pins are at or past the entry",
        "each pin and where it stands",
    ),
    AuditRule(
        "inert", "inert", _inert, "the changed symbols that exist have no consumers", "a `no-consumer` gate per symbol"
    ),
    AuditRule(
        "absent-blockers",
        "surface-absent",
        _absent_blockers,
        "every entry it would be blocked on is surface-absent",
        "the blockers and their `absent` gates",
    ),
    AuditRule(
        "blocked",
        "blocked",
        _blocked,
        "the entry needs a symbol an earlier unported entry adds and the port lacks, or an earlier series stage is not ported",
        "`blocked_by` and an `entry-ported` gate per blocker",
    ),
    AuditRule(
        "owned",
        "owned",
        _owned,
        "an open matrix row cites the entry's PR, one of its symbols, or a line range overlapping the change",
        "`owner` and what the row cites",
    ),
    AuditRule("real-gap", "real-gap", _real_gap, "otherwise", "the consumers that make it real"),
)


def rule_by_id(rule_id: str) -> AuditRule:
    return next(r for r in RULES if r.id == rule_id)


def judge(ctx: _Ctx, e: Entry, obj: Entry | Part, syms: EntrySymbols, files: list[str]) -> Result:
    """Try the rules in table order on one entry or part; the first that fires decides."""
    label_part = obj.name if isinstance(obj, Part) else None
    res = Result(e.n, label_part, "unclassified", "", "", recorded=obj.verdict, recorded_by=obj.verdict_by)
    subject = Subject(ctx, e, obj, syms, files, res)
    for rule in RULES:
        if rule.fires(rule, subject):
            break
    if res.verdict in NEEDS_GATE and not res.gates:  # check requires one: gate on what the lines lack
        _lacking_gates(subject, _content_states(subject))
    # prior triage: the port's own citation of this PR or commit, for the person reading the verdict
    cited = ctx.records.triage_for(e.pr, e.sha) if res.verdict not in ("ignore",) else None
    if cited is not None:
        res.evidence.append(
            f"prior triage: the port cites {'#' + str(e.pr) if e.pr in cited.prs else e.short} "
            f"at {cited.where}: {cited.text}"
        )
    if label_part is None:
        ctx.results[e.n] = res
    return res
