"""Rules that follow other entries and rows: blocked, absent blockers, owned."""

from __future__ import annotations


from porttrack.evidence import owners as owners_mod
from porttrack.model import Gate
from porttrack.audit.subject import AuditRule, Subject, _changed_lines, _what_row_cites
from porttrack.audit.facts import _blockers, _verdict_of


def _absent_blockers(rule: AuditRule, s: Subject) -> bool:
    """Blocked only on entries whose surface the port lacks: the entry's surface is absent too. An
    entry judged ported is nothing to wait on, as `blocked` says."""
    ctx = s.ctx
    blockers = {b: why for b, why in _blockers(s).items() if _verdict_of(ctx, b)[0] != "ported"}
    if not blockers:
        return False
    judged = {b: _verdict_of(ctx, b) for b in blockers}
    if any(v != "surface-absent" for v, _ in judged.values()):
        return False
    for b, (_, gs) in sorted(judged.items()):
        s.ev.append(f"waits on entry {b}, which is surface-absent: {'; '.join(blockers[b])}")
        for g in gs:
            if g.kind == "absent" and all(x.id != g.id for x in s.res.gates):
                s.res.gates.append(Gate(**{**g.__dict__, "scope": list(g.scope)}))
    return s.fire(rule, "waits only on surface-absent entries " + ", ".join(map(str, sorted(judged))))


def _blocked(rule: AuditRule, s: Subject) -> bool:
    """Needs a symbol an earlier unported entry adds and the port lacks; or an earlier series stage."""
    ctx, res = s.ctx, s.res
    # an entry this run judged ported waits on nothing: check would find its entry-ported gate live
    blockers = {b: why for b, why in _blockers(s).items() if _verdict_of(ctx, b)[0] != "ported"}
    if not blockers:
        return False
    res.blocked_by = sorted(blockers)
    for b, why in sorted(blockers.items()):
        other = ctx.queue.entry_of(b)
        s.ev.append(f"blocked by entry {b} ({other.short}, not ported): {'; '.join(why)}")
        res.gates.append(
            Gate(id=f"entry-{b}-ported", kind="entry-ported", entry=b, established_at=ctx.where(b) if ctx.where else "")
        )
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
