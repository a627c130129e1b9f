"""Rules that read the changed lines against the port: surface-absent, content, ported, inert, real gap."""

from __future__ import annotations


from porttrack.evidence import hunks as hunks_mod
from porttrack.model import Gate
from porttrack.audit.results import _code, _definition, _hits, _owner_class, _slug
from porttrack.audit.subject import AuditRule, Judged, Subject, _changed, _pins_at_or_past, spelling_pattern
from porttrack.audit.gating import _absent_gates, _holder


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
        if any(_code(s.ctx.probes.count(c)) > 0 for c in classes) or any(x in s.present for x in added):
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
    grows = [x for x in s.syms.added if (cls := _owner_class(x)) and _code(s.ctx.probes.count(cls)) > 0]
    if grows:
        s.ev.append(f"adds {', '.join(grows)} to a class the port has, so the surface is there")
        return False
    _absent_gates(s, changed)
    return s.fire(rule, f"the port has none of {', '.join(changed)}")


def _content_states(s: Subject) -> list[Judged]:
    """Hunk by hunk (once per subject), the change's telling tokens (identifiers in any spelling,
    literals) against the port files that map its file and the files defining its symbols; each
    hunk's state goes into the evidence. Neutral hunks (nothing telling) are left out, unless each of
    their changed lines names something the port lacks (`reaching`)."""
    if s.content is not None:
        return s.content
    s.content = []
    hunks = s.ctx.hunks(s.e, s.mirrored)
    if not hunks:
        return s.content
    s.probe()
    defining = {h.path for x in s.probed for h in _hits(s.counts[x], ("definition",))}
    for h in hunks:
        if not s.ctx.is_code(h.path):
            continue
        files = sorted(set(s.ctx.port_files(h.path)) | defining) if h.path not in s.unmapped else []
        port: set[str] = set().union(*(s.ctx.port_tokens(f) for f in files)) if files else set()
        # a file the change adds or deletes has no other side: its every token is new (or gone)
        before = s.ctx.upstream_tokens(f"{s.e.sha}^", h.path) or frozenset()
        after = s.ctx.upstream_tokens(s.e.sha, h.path) or frozenset()
        st = hunks_mod.compare(h, port, s.ctx.cfg.language_only, before, after)
        if st.state != "neutral":
            s.content.append(Judged(h, st.state, st, bool(files)))
        elif lacking := _every_line_lacks(s, h):
            # nothing new to tell by, but each changed line reaches for something the port lacks
            s.content.append(Judged(h, "reaching", st._replace(new_missing=lacking), bool(files)))
            s.ev.append(
                f"hunk {h.path}:{h.new_start} changes only lines that each name something the port's code names "
                f"nowhere ({', '.join(lacking[:6])}): they serve what the port lacks"
            )
        where = f"{h.path}:{h.new_start}" + (f" vs {', '.join(files[:4])}" if files else " (no port counterpart)")
        s.ev.append(
            f"hunk {where}: {st.state}; new side found {st.new_found[:6]} missing {st.new_missing[:6]}; "
            f"old side still there {st.old_found[:6]} gone {st.old_missing[:6]}"
        )
    s.content = _guards(s, s.content)
    return s.content


def _guards(s: Subject, judged: list[Judged]) -> list[Judged]:
    """Gap hunks that are no work for this port: a block guarded by a name that this change does
    not define and the port has nowhere (`guarded`: it can never run here); then hunks whose every
    new name the port lacks serves only such blocks or hunks the port lacks altogether (`plumbing`)."""
    ctx, e = s.ctx, s.e
    added = [x for h in (ctx.hunks(e, e.files) or []) for x in h.new]
    out: list[Judged] = []
    for j in judged:
        names = [] if j.kind != "gap" else hunks_mod.guard_names(j.hunk)
        # a guard the change defines itself is a new switch: the port may need it, with its block
        lacking = [] if any(hunks_mod.defines(added, n) for n in names) else [n for n in names if ctx.port_lacks(n)]
        if lacking:
            greps = "; ".join(
                f"git grep -i -E '{spelling_pattern(n)}' -- {' '.join(ctx.cfg.code_scope)}" for n in lacking
            )
            holder = next((x for x in _changed(s) if x in s.present), None)
            control = (
                f" (control: {holder}, which the change edits, is at {_definition(s.counts[holder])})" if holder else ""
            )
            s.ev.append(
                f"hunk {j.hunk.path}:{j.hunk.new_start} only adds (or rewrites) a block guarded by {', '.join(lacking)}, "
                f"which this change does not define and the port's code names nowhere ({greps}: no line outside "
                f"comments){control}: it can never run here"
            )
            j = j._replace(kind="guarded")
        out.append(j)
    # code in a file the port has no counterpart of may live elsewhere in the port: only what the
    # port's own files lack, or can never run, makes a name plumbing
    unreachable = set().union(
        *(hunks_mod.tokens(j.hunk.new) for j in out if j.mapped and j.kind in ("guarded", "absent"))
    )
    for i, j in enumerate(out):
        names = _names(j.state.new_missing)
        serves = names and all(t in unreachable for t in names)
        if j.kind == "gap" and serves and not j.state.old_found:
            s.ev.append(
                f"hunk {j.hunk.path}:{j.hunk.new_start} adds {', '.join(names)} only for code the port "
                "lacks or can never run"
            )
            out[i] = j._replace(kind="plumbing")
    for i, j in enumerate(out):
        if j.kind == "gap" and _foreign(s, j):
            names = _names(j.state.new_missing)
            s.ev.append(
                f"hunk {j.hunk.path}:{j.hunk.new_start} touches only {', '.join(names)}, which the port's code "
                "names nowhere: the lines it changes belong to something the port lacks"
            )
            out[i] = j._replace(kind="foreign")
    return out


def _every_line_lacks(s: Subject, h) -> list[str]:
    """The names the port lacks when every changed code line of a hunk (either side) names at least
    one of them, else []: such lines serve something the port lacks, whatever function holds them.
    Names an entry of the queue adds, or the change defines on a surface the port has, do not count;
    nor do Python's builtins and what the file imports from outside its package."""
    ctx, lacking, seen = s.ctx, [], False
    before, after = ctx.upstream_text(f"{s.e.sha}^", h.path) or "", ctx.upstream_text(s.e.sha, h.path) or ""
    package = h.path.split("/", 1)[0]
    outside = hunks_mod.outside_names(before, package) | hunks_mod.outside_names(after, package)
    sides = [(h.old, h.old_start, before), (h.new, h.new_start, after)]
    lines = [(x, text, start + i) for side, start, text in sides for i, x in enumerate(side)]
    for line, text, number in [x for x in lines if hunks_mod.is_code_line(x[1], x[2])]:
        names = hunks_mod.feature_names(line, outside)
        if not names:
            if hunks_mod.continues_statement(text, number) or not any(
                t[0].isalnum() or t[0] == "_" for t in hunks_mod.tokens([line])
            ):
                continue  # an argument of a call that spans lines, `)`, `else:`, `pass`: part of another line
            return []  # `return n + 1`: behaviour of its own, on no feature at all
        seen = True
        missing = [n for n in names if n not in ctx.adders and ctx.port_lacks(n) and not _defined_on_port_surface(s, n)]
        if not missing:
            return []
        lacking += [n for n in missing if n not in lacking]
    return lacking if seen else []


def _names(tokens: list[str]) -> list[str]:
    """The identifiers among a hunk's telling tokens (a literal is a value a name takes)."""
    return [t for t in tokens if t[0].isalpha() or t[0] == "_"]


def _foreign(s: Subject, j: Judged) -> bool:
    """A gap hunk whose every telling name, on the changed lines, the port's code names nowhere, in
    any spelling, and no entry of the queue adds, while nothing of its old side is there: the
    enclosing function may be the port's, but the lines changed serve something the port lacks. A name the change itself defines on a
    surface the port has (a new field of a class it has, a function in a file it maps) is new
    behaviour for that surface: work, not foreign."""
    names = _names(j.state.new_missing)
    if not names or j.state.new_found or j.state.old_found:
        return False
    # a name an entry of this queue adds is one the port may be about to get: the blocked rule's
    return all(n not in s.ctx.adders and s.ctx.port_lacks(n) and not _defined_on_port_surface(s, n) for n in names)


def _defined_on_port_surface(s: Subject, name: str) -> bool:
    """Does this change define `name` where the port has the surface: in a class the port has, or at
    the top of a file with a port counterpart?"""
    ctx = s.ctx
    for h in ctx.hunks(s.e, s.e.files) or []:
        if not hunks_mod.defines(h.new, name):
            continue
        owners = ctx.upstream_members(s.e.sha, h.path).get(name, set())
        if owners:
            if any(not ctx.port_lacks(c) for c in owners):
                return True
        elif h.path not in s.unmapped and ctx.maps_to_port(h.path):
            return True
    return False


def _content_ported(s: Subject) -> bool:
    """Every telling hunk is ported, with enough telling tokens over the whole change."""
    # a hunk with nothing telling that only reaches for what the port lacks says nothing against the rest
    states = [j for j in _content_states(s) if j.kind != "reaching"]
    telling = sum(hunks_mod.weight(t) for j in states for t in [*j.state.new_found, *j.state.old_missing])
    # an old side gone alone is also what a port that never had the code shows: some new side must be there
    found = any(j.state.new_found for j in states)
    return bool(states) and {j.kind for j in states} == {"ported"} and found and telling >= hunks_mod.MIN_TELLING


def _content_absent(s: Subject) -> bool:
    """No hunk leaves work, and at least one is absent or guarded (see `_guards`)."""
    kinds = {j.kind for j in _content_states(s)}
    return bool(kinds & {"absent", "guarded", "foreign", "reaching"}) and "gap" not in kinds and not _content_ported(s)


def _content(rule: AuditRule, s: Subject) -> bool:
    """New side there and old side gone, in every hunk, is ported; neither side there means the port
    lacks the code it edits; a hunk with work left (or too little to tell) decides nothing."""
    states = _content_states(s)
    if _content_ported(s):
        return s.fire(
            rule,
            f"every changed hunk's new side is in the port and its old side is gone ({len(states)} hunk(s))",
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


def _lacking_gates(s: Subject, states: list[Judged]) -> None:
    """An `absent` gate per name the port lacks that made a hunk absent, guarded or foreign (at most
    three), controlled by a symbol the entry names that the port has (else the scan's automatic
    control): the day the port names one, check says the entry is real."""
    ctx = s.ctx
    names: list[str] = []
    for j in states:
        if j.kind == "guarded":
            names += [n for n in hunks_mod.guard_names(j.hunk) if ctx.port_lacks(n)]
        elif j.kind in ("foreign", "absent", "reaching"):
            names += [t for t in _names(j.state.new_missing) if ctx.port_lacks(t)]
    holder = _holder(s)
    count = (s.counts.get(holder) or ctx.probes.count(holder)) if holder is not None else None
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
    if not existing or any(int(getattr(s.counts[x], "consumers", 0) or 0) for x in existing):
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
