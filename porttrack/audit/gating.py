"""The gates audit writes: which names to gate on, and a control from where each name would be."""

from __future__ import annotations


from porttrack.evidence import hunks as hunks_mod
from porttrack.evidence import naming
from porttrack.model import Gate
from porttrack.audit.results import _code, _definition, _owner_class, _slug
from porttrack.audit.subject import Judged, Subject, _Ctx, _changed
from porttrack.audit.facts import _names


def _absent_gates(s: Subject, symbols: list[str]) -> None:
    """An absent gate per symbol; members of a class the port lacks share one gate on the class,
    which is what would appear first."""
    ctx = s.ctx
    gated: dict[str, object] = {}
    for x in symbols:
        cls = _owner_class(x)
        if cls and ctx.probes.judge(cls).status == "absent":
            gated.setdefault(cls, ctx.probes.judge(cls))
        else:
            gated.setdefault(x, s.judged[x])
    for x, p in gated.items():
        cls = _owner_class(x)
        if cls and _code(ctx.probes.count(cls)) > 0:
            # audit counts a member only where its class is (Subject._in_place), which a probe of the
            # bare name does not: the gate holds its count as it is now, and goes live when it moves
            gate = _member_gate(ctx, x, cls)
            s.ev.append(
                f"control for {x}: {cls}, its class, defined at {_definition(ctx.probes.count(cls))}: a zero "
                "means not in the place it would be"
                + (f"; the name counts {gate.expect} elsewhere, which the gate holds to" if gate.expect else "")
            )
            s.res.gates.append(gate)
            continue
        sibling, at = _sibling_control(s, x), ""
        if sibling is not None:
            try:
                p = ctx.probes.judge(x, sibling[0])
                s.ev.append(f"control for {x}: {sibling[0]}, {sibling[1]}: a zero means not in the place it would be")
                at = sibling[2]
            except ValueError:  # not part of this scan's words: keep the automatic control
                pass
        s.res.gates.append(_absent_gate(ctx, x, p, at))


def _member_gate(ctx: _Ctx, member: str, cls: str) -> Gate:
    """The gate on `Class.member` where the port has the class but not the member in it: absent while
    the name has no code hit at all, else a count gate that holds the hits it has elsewhere. Either
    is what check's probe of the name sees today; the class is the control."""
    ccount, count = ctx.probes.count(cls), ctx.probes.count(member)
    n = _code(count)
    return Gate(
        id=f"{_slug(member)}-{'count' if n else 'absent'}",
        kind="count" if n else "absent",
        probe=member,
        scope=list(ctx.scope),
        control=cls,
        established_at=_definition(count if n else ccount),  # check cites the probe's hit, or the control's
        expect=n if n else None,
    )


def _sibling_control(s: Subject, symbol: str) -> tuple[str, str, str] | None:
    """A control for one absent probe, chosen for it: its class when the port has the class; else a
    sibling (a symbol of the same upstream file, from this queue) that the port defines in that
    file's counterpart; with where it is defined. None when neither is found: the scan's automatic
    control stands."""
    ctx = s.ctx
    cls = _owner_class(symbol)
    if cls and _code(ctx.probes.count(cls)) > 0:
        at = _definition(ctx.probes.count(cls))
        return cls, f"its class, defined at {at}", at
    # the same upstream file first; then the nearest files of its folder that the port has
    for near, how in [
        *((up, "a sibling") for up in s.mirrored),
        *((f, "a neighbour") for f in ctx.neighbours(tuple(s.mirrored))),
    ]:
        counterparts = set(ctx.port_files(near))
        # classes and plain names first: a class is one definition, a bare member name many
        names = ctx.siblings(near) if counterparts else []
        for cand in dict.fromkeys([*(_owner_class(c) or c for c in names), *names]):
            if cand == symbol or _owner_class(symbol) == cand or _owner_class(cand) == symbol:
                continue
            for spelled in dict.fromkeys([cand, *naming.spellings(cand)]):  # as the port spells it, too
                hits = [h for h in ctx.probes.definitions(spelled) if h.path in counterparts]
                if hits:
                    where = f"{hits[0].path}:{hits[0].line}"
                    return spelled, f"{how} from {near}, defined in its port counterpart at {where}", where
    return None


def _holder(s: Subject) -> str | None:
    """A name the entry changes or probes that the port has, to control its gates: a member's class
    (a bare member name has hits in other classes too, so its first definition proves nothing and is
    no citation check can re-find), never a member of a class the port lacks."""
    for x in [*_changed(s), *s.probed]:
        if x not in s.present:
            continue
        cls = _owner_class(x)
        if cls is None:
            return s.spelled.get(x, x)  # as the port spells it: check probes that name
        if _code(s.ctx.probes.count(cls)) > 0:
            return cls
    return None


def _absent_gate(ctx: _Ctx, s: str, p, at: str = "") -> Gate:
    """An absent gate cites where its control is defined (`at`, the definition it was chosen by, when
    given): the proof that the scope holds code where the name would be."""
    control = p.control or ""
    c = p.control_count
    return Gate(
        id=f"{_slug(s)}-absent",
        kind="absent",
        probe=s,
        scope=list(ctx.scope),
        control=control,
        established_at=at or _definition(c),
    )


def _lacking_gates(s: Subject, states: list[Judged], names: list[str] | None = None) -> None:
    """An `absent` gate per name the port lacks that made a hunk absent, guarded or foreign (at most
    three; `names` come first), controlled by a symbol the entry names that the port has (else the
    scan's automatic control): the day the port names one, check says the entry is real."""
    ctx = s.ctx
    names = list(names or [])
    for j in states:
        if j.kind == "guarded":
            names += [n for n in hunks_mod.guard_names(j.hunk) if ctx.port_lacks(n)]
        elif j.kind in ("foreign", "absent", "reaching"):
            names += [t for t in _names(j.state.new_missing) if ctx.port_lacks(t)]
    holder = _holder(s)
    count = ctx.probes.count(holder) if holder is not None else None
    for n in list(dict.fromkeys(names))[:3]:
        s.res.gates.append(
            Gate(
                id=f"{_slug(n)}-absent",
                kind="absent",
                probe=n,
                scope=list(ctx.scope),
                control=holder or "",
                established_at=_definition(count) if count is not None else "",
            )
        )
