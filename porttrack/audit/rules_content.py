"""Rules that read the changed lines against the port: surface-absent, content, ported, inert, real gap."""

from __future__ import annotations


from porttrack.evidence import hunks as hunks_mod, naming
from porttrack.model import Gate
from porttrack.audit.results import _definition, _owner_class, _slug
from porttrack.audit.subject import AuditRule, Judged, Subject, _changed, _pins_at_or_past
from porttrack.audit.gating import _absent_gates, _lacking_gates
from porttrack.audit.facts import _content_absent, _content_ported, _content_states, _names


def _surface_absent(rule: AuditRule, s: Subject) -> bool:
    """None of the changed/removed symbols exists, and the entry adds no member to a class the port has
    (a new member of a class the port has is new behaviour on a surface it has). An entry that only
    adds members to classes the port lacks grows a surface the port lacks."""
    changed = _changed(s)
    if not changed:
        added = sorted(set(s.syms.added))
        classes = sorted({c for x in added if (c := _owner_class(x))})
        if not added or any(_owner_class(x) is None for x in added):
            return False
        if any(s.has_class(c) for c in classes) or any(x in s.present for x in added):
            return False
        _absent_gates(s, added)
        return s.fire(rule, f"adds {', '.join(added)} only to classes the port lacks ({', '.join(classes)})")
    if any(x in s.present for x in changed):
        return False
    if _content_ported(s):  # the names are spelled otherwise, but the change's new side is there
        return False
    waiting = [x for x in changed if x in s.linked]
    if waiting:  # an earlier entry of the queue adds it: the entry waits on that one, see blocked
        return False
    grows = [x for x in s.syms.added if (cls := _owner_class(x)) and s.has_class(cls)]
    if grows:
        s.ev.append(f"adds {', '.join(grows)} to a class the port has, so the surface is there")
        return False
    _absent_gates(s, changed)
    return s.fire(rule, f"the port has none of {', '.join(changed)}")


def _content(rule: AuditRule, s: Subject) -> bool:
    """New side there and old side gone, in every hunk, is ported; neither side there means the port
    lacks the code it edits; a hunk with work left (or too little to tell) decides nothing."""
    states = _content_states(s)
    if _content_ported(s):
        rest = "".join(
            f"; {n} hunk(s) {what}"
            for kind, what in (
                ("superseded", "a later upstream commit rewrote (superseded)"),
                ("absent", "edit code the port never had (neither side is there)"),
                ("reaching", "only name what the port lacks"),
            )
            if (n := sum(j.kind == kind for j in states))
        )
        return s.fire(
            rule,
            f"every telling hunk's new side is in the port and its old side is gone "
            f"({sum(j.kind == 'ported' for j in states)} hunk(s)){rest}",
            verdict="ported",
            rule_text=f"{rule.id}-ported",
        )
    if not _content_absent(s):
        return False
    _absent_gates(s, [x for x in _changed(s) if x not in s.present] or [x for x in s.syms.added if x not in s.present])
    if not s.res.gates:  # the edited code is the port's: gate on what its changed lines lack instead
        _lacking_gates(s, states)
    if not s.res.gates:  # nothing the port lacks can be named (only text changed): no surface is absent
        return False
    said = []
    for kind, what in (
        ("absent", "the port has neither side of {n} hunk(s) in {files}"),
        ("guarded", "{n} hunk(s) in {files} can never run here"),
        ("foreign", "{n} hunk(s) in {files} change only lines that serve what the port lacks"),
        ("reaching", "{n} hunk(s) in {files} change only lines that each name something the port lacks"),
    ):
        files = sorted({j.hunk.path for j in states if j.kind == kind})
        if files:
            said.append(what.format(n=sum(j.kind == kind for j in states), files=", ".join(files)))
    return s.fire(
        rule,
        "; ".join(said) + ": it lacks the code the change edits",
        verdict="surface-absent",
        rule_text=f"{rule.id}-absent",
    )


def _ported(rule: AuditRule, s: Subject) -> bool:
    """The added symbols exist and the mapped files' pins are at or past the entry."""
    added = sorted(set(s.syms.added))
    if not added or not all(x in s.present for x in added):
        return False
    placed, lines = _pins_at_or_past(s.ctx, s.e, s.mirrored)
    s.ev.extend(lines)
    if not placed:
        return False
    return s.fire(rule, f"{', '.join(added)} exist and the port's pins are at or past {s.e.short}")


def _inert(rule: AuditRule, s: Subject) -> bool:
    """Changed symbols exist but nothing consumes them."""
    ctx, res = s.ctx, s.res
    changed = _changed(s)
    existing = [x for x in changed if x in s.present]
    if not existing or any(_reached(s, x) for x in existing):
        return False
    for x in existing:
        res.gates.append(
            Gate(
                id=f"{_slug(x)}-consumer",
                kind="no-consumer",
                probe=s.spelled.get(x, x),  # what check probes must be what audit counted
                scope=list(ctx.scope),
                control=s.judged[x].control or "",
                established_at=_definition(s.counts[x]),
            )
        )
    _absent_gates(s, [x for x in changed if x not in s.present])
    return s.fire(
        rule,
        f"{', '.join(existing)} {'is' if len(existing) == 1 else 'are'} read by nothing outside tests and delegations",
    )


def _reached(s: Subject, symbol: str) -> bool:
    """Production reaches the port's `symbol`: code reads it, or it is the program's entry point."""
    return naming.is_entry_point(symbol) or int(getattr(s.counts[symbol], "consumers", 0) or 0) > 0


def _untouched(rule: AuditRule, s: Subject) -> bool:
    """No hunk leaves work in a file the port maps: each there only removes what the port lacks,
    serves what the port lacks, or is made in the port already; what the change adds lies in files
    with no port counterpart, and names only what the port lacks. So the code it adds waits on a
    surface the port does not have, and a part the port made does not outweigh it (a reader's label
    takes the part that needs the most). Hunks with nothing telling say nothing either way; a change
    made only of them is left to the rules below."""
    states = _content_states(s)
    if any(j.kind == "gap" and j.mapped for j in states):
        return False
    if any(_made(j) for j in states) and not any(j.kind == "gap" for j in states):
        return False  # the change made in the port, all of it that tells: not absent
    names = []
    for j in states:
        if _made(j):
            continue
        if j.kind == "ported":  # only removed lines, of which the port has none
            names += _lacked(s, j.hunk, j.state.old_missing, f"{s.e.sha}^")
        elif j.kind == "gap":  # in a file with no counterpart: what it adds the port lacks, or it is work
            lacking = _lacked(s, j.hunk, j.state.new_missing, s.e.sha) + _lacked_holder(s, j.hunk)
            if not lacking:
                return False
            names += lacking
    _lacking_gates(s, states, names)
    if not s.res.gates:  # nothing absent can be named: no gate could ever say the entry became real
        return False
    kinds = sorted({_told(j) for j in states})
    return s.fire(
        rule,
        f"no hunk leaves work in a file the port maps ({', '.join(kinds)}); "
        f"what the change names the port lacks: {', '.join(g.probe for g in s.res.gates)}",
    )


def _made(j: Judged) -> bool:
    """Is the hunk's new side in the port (a `ported` state with something found, not one whose old
    side is gone only because the port never had it)?"""
    return j.kind == "ported" and bool(j.state.new_found)


def _told(j: Judged) -> str:
    """What one hunk's state says, for `_untouched`'s reason."""
    if j.kind != "ported":
        return j.kind
    return "made in the port" if _made(j) else "removes only what the port lacks"


def _lacked(s: Subject, h, tokens: list[str], rev: str) -> list[str]:
    """The names among a hunk's tokens that the port's code names nowhere, less the language's and
    the libraries' words (`torch`, `enumerate`), whose absence from a port says nothing."""
    outside = hunks_mod.outside_names(s.ctx.upstream_text(rev, h.path) or "", h.path.split("/", 1)[0])
    names = dict.fromkeys([*_names(tokens), *hunks_mod.spelled_names(tokens)])
    return [t for t in names if not hunks_mod.language_word(t, outside) and s.ctx.port_lacks(t)]


def _lacked_holder(s: Subject, h) -> list[str]:
    """The top-level class or function holding a hunk's new lines, when the port's code names it
    nowhere: a method added to a class the port lacks needs that class."""
    holder = hunks_mod.def_above(s.ctx.upstream_text(s.e.sha, h.path) or "", h.new_start - 1)
    top = naming.parts(holder)[0] if holder else None
    return [top] if top and top not in s.ctx.adders and s.ctx.port_lacks(top) else []


def _real_gap(rule: AuditRule, s: Subject) -> bool:
    existing = [x for x in _changed(s) if x in s.present]
    added = sorted(set(s.syms.added))
    used = [x for x in existing if int(getattr(s.counts[x], "consumers", 0) or 0) > 0]
    if used:
        reason = "changes code the port has and reads: " + ", ".join(
            f"{x} ({s.counts[x].consumers} consumer{'' if s.counts[x].consumers == 1 else 's'})" for x in used
        )
    elif added:
        missing = [x for x in added if x not in s.present]
        reason = (
            f"adds {', '.join(missing or added)}, which the port does not have yet"
            if missing
            else (f"adds {', '.join(added)}; the port has the names but its pins do not place it past {s.e.short}")
        )
    else:
        reason = "touches mirrored code and no rule defers it"
    return s.fire(rule, reason)
