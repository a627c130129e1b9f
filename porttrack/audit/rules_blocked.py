"""Rules that follow other entries and rows: blocked, absent blockers, owned."""

from __future__ import annotations


from porttrack.evidence import owners as owners_mod
from porttrack.model import SETTLED, Gate
from porttrack.audit.subject import AuditRule, Subject, _Ctx, _changed_lines, _what_row_cites
from porttrack.audit.facts import _blockers, _rule_of, _verdict_of
from porttrack.audit.gating import _absent_gates


def _absent_blockers(rule: AuditRule, s: Subject) -> bool:
    """Blocked only on entries whose surface the port lacks, or that the port records as left out: the
    entry's surface is absent too, and nothing schedules it until that choice is undone. A settled
    entry (ported, no-op, ignore) is nothing to wait on, as `blocked` says."""
    ctx = s.ctx
    why = _blockers(s)
    judged = {b: vg for b in why if (vg := _verdict_of(ctx, b))[0] not in SETTLED}
    if not judged:
        return False
    left_out = {b for b, (v, _) in judged.items() if v == "real-gap" and _rule_of(ctx, b) == "deferred"}
    if any(v != "surface-absent" and b not in left_out for b, (v, _) in judged.items()):
        return False
    lacked = sorted({x for b in left_out for x in s.lacked.get(b, [])})
    if left_out and not lacked and not any(g.kind == "absent" for _, gs in judged.values() for g in gs):
        return False  # nothing to gate on (a series stage names no symbol): it stays blocked
    for b, (_, gs) in sorted(judged.items()):
        state = "the port records as left out" if b in left_out else "is surface-absent"
        s.ev.append(f"waits on entry {b}, which {state}: {'; '.join(why[b])}")
        for g in gs:
            if g.kind == "absent" and all(x.id != g.id for x in s.res.gates):
                s.res.gates.append(Gate(**{**g.__dict__, "scope": list(g.scope)}))
    # what it uses of a left-out entry is absent here: gated like any surface the port lacks
    _absent_gates(s, [x for x in lacked if all(g.probe != x for g in s.res.gates)])
    s.res.gates += [_entry_gate(ctx, b) for b in sorted(left_out)]  # live once the port takes it after all
    absent = sorted(set(judged) - left_out)
    said = [f"surface-absent entries {', '.join(map(str, absent))}"] if absent else []
    said += [f"entries the port records as left out {', '.join(map(str, sorted(left_out)))}"] if left_out else []
    return s.fire(rule, "waits only on " + " and ".join(said))


def _entry_gate(ctx: _Ctx, b: int) -> Gate:
    return Gate(id=f"entry-{b}-ported", kind="entry-ported", entry=b, established_at=ctx.where(b) if ctx.where else "")


def _blocked(rule: AuditRule, s: Subject) -> bool:
    """Needs a symbol an earlier unsettled entry adds and the port lacks; or an earlier series stage.
    A settled entry has no work left to wait for: check finds its entry-ported gate live."""
    ctx, res = s.ctx, s.res
    blockers = {b: why for b, why in _blockers(s).items() if _verdict_of(ctx, b)[0] not in SETTLED}
    if not blockers:
        return False
    res.blocked_by = sorted(blockers)
    for b, why in sorted(blockers.items()):
        other = ctx.queue.entry_of(b)
        s.ev.append(f"blocked by entry {b} ({other.short}, not settled): {'; '.join(why)}")
        res.gates.append(_entry_gate(ctx, b))
    return s.fire(rule, "; ".join(f"entry {b}: {', '.join(why)}" for b, why in sorted(blockers.items())))


def _owned(rule: AuditRule, s: Subject) -> bool:
    ctx, syms, e, res = s.ctx, s.syms, s.e, s.res
    symbols = sorted(set(syms.changed) | set(syms.added) | set(syms.removed))
    hunks = ctx.hunks(e, s.mirrored)
    changed_lines = None if hunks is None else _changed_lines(hunks)
    row = owners_mod.find_owner(
        ctx.rows,
        paths=s.mirrored,
        symbols=symbols,
        pr=e.pr,
        done_states=ctx.cfg.done_states,
        parked_states=ctx.cfg.parked_states,
        changed_lines=changed_lines,
    )
    if row is None:
        return False
    res.owner = owners_mod.owner_text(row)
    cite = _what_row_cites(row, s.mirrored, syms, e.pr, changed_lines)
    s.ev.append(f"matrix row {row.id} at {row.where} ({row.state}) cites {cite}")
    return s.fire(rule, f"tracked by matrix row {row.id} ({row.state})")
