"""Findings on rows and evidence: owners, blocked entries now actionable, pre-pin features, recorded behaviour."""

from __future__ import annotations


from porttrack import audit
from porttrack.model import SETTLED
from porttrack.outputs.check.findings import Finding, finding
from porttrack.outputs.check.context import _Ctx, _owners


def behaviour_findings(ctx: _Ctx) -> list[Finding]:
    """An entry whose recorded behaviour lacks its switch, while a port header claims upstream at or past it.

    The evidence is what `validate kv --record` wrote ([entry.behaviour]); the claim is a
    provenance header of a port file mapped from the entry's files whose pin the queue (or the
    upstream repo) places at or past the entry's commit.
    """
    lacking = [(e, e.behaviour) for e in ctx.q.entries if e.behaviour is not None and e.behaviour.result == "lacks"]
    if not lacking:
        return []
    provs = ctx.provs()
    out = []
    for e, b in lacking:
        label = f"entry {e.n} behaviour"
        ctx.checks.add(label)
        claims = [
            (p.path, src)
            for p in provs
            for src in p.sources
            if src.pin and src.upstream in e.files and audit.pin_at_or_past(src.pin, ctx.q, ctx.cfg, e)
        ]
        if not claims:
            continue
        (path, src), more = claims[0], claims[1:]
        cite = f"; case {b.case} {b.field}: expected {b.expected}, got {b.got}" if b.field else ""
        out.append(
            finding(
                "behaviour-behind-pin",
                f"entry {e.n} ({e.short} {e.subject}) is kvref switch {b.switch}; the port's harness "
                f"({b.harness}) answered {b.lack} case(s) as without it and {b.agree} as with it "
                f"(validate kv --as-of {b.semantics} --cases {b.cases} --seed {b.seed}{cite}), yet {path}:{src.line} "
                f"claims {src.upstream} @ {src.pin}, at or past it.",
                f"Port {e.short}'s change into {path} (or correct its pin), then re-run validate kv --record.",
                path,
                src.line,
                entry=e.n,
                check=label,
                related=[f"{p}:{s.line}" for p, s in more] + [f"{ctx.qrel}:{ctx.entry_line(e.n)}"],
            )
        )
    return out


def owner_findings(ctx: _Ctx) -> list[Finding]:
    """Owners are rows of the configured matrices, and not in a done state while the entry waits."""
    wanted = [
        (e, label, obj, part)
        for e in ctx.q.entries
        for label, obj, part in _owners(e)
        if obj.owner and obj.verdict not in SETTLED
    ]
    if not wanted:
        return []
    from porttrack.evidence import owners

    rows: dict[str, owners.Row] = {}
    for r in owners.load_rows(ctx.root, ctx.cfg.matrices, id_pattern=ctx.cfg.id_pattern):
        rows.setdefault(r.id, r)
    done = {s.upper() for s in ctx.cfg.done_states}
    out = []
    for e, label, obj, part in wanted:
        ctx.checks.add(f"{label} owner")
        kw = {"entry": e.n, "part": part or "", "check": f"{label} owner"}
        qline = ctx.entry_line(e.n, "owner", part)
        row_id = owners.owner_id(obj.owner)
        row = rows.get(row_id)
        if row is None:
            globs = ", ".join(ctx.cfg.matrices) or "(no [owners] matrices configured)"
            out.append(
                finding(
                    "owner-missing",
                    f"{label} is owned by {row_id}, which is no row of {globs}.",
                    f"Restore row {row_id} or set {label}'s owner to the row that tracks it now (or re-triage it).",
                    ctx.qrel,
                    qline,
                    **kw,
                )
            )
        elif row.state.upper() in done:
            out.append(
                finding(
                    "owner-done",
                    f"{label} is owned by {row_id}, which is {row.state} at {row.where}, yet the entry is still {obj.verdict!r}.",
                    f"Check whether the row's work ported {label}; mark it ported or re-triage it.",
                    ctx.qrel,
                    qline,
                    **kw,
                    related=[row.where],
                )
            )
    return out


def actionable_findings(ctx: _Ctx) -> list[Finding]:
    """Blocked entries whose blockers are all settled now (skipping those an entry-ported gate already named)."""
    already = {(f.entry, f.part) for f in ctx.found if f.code == "gate-live"}
    for e in ctx.q.entries:
        for label, obj, _ in _owners(e):
            if obj.verdict == "blocked":
                ctx.checks.add(f"{label} blocked_by")
    out = []
    for n, blockers in audit.actionable(ctx.q):
        e = ctx.q.entry_of(n)
        # point at the blocked_by that says so: the entry's own, else its first blocked part's
        part = next((p.name for p in e.parts if p.verdict == "blocked"), None) if e.verdict != "blocked" else None
        if (n, part or "") in already or (n, "") in already:
            continue
        label = f"entry {n}" + (f" part {part!r}" if part else "")
        ctx.checks.add(f"{label} blocked_by")
        out.append(
            finding(
                "actionable",
                f"{label} ({e.short} {e.subject}) is blocked by {', '.join(map(str, blockers))}, and all of them are settled now (ported, no-op or ignore).",
                f"Port {label} (or re-triage it) and clear its blocked_by.",
                ctx.qrel,
                ctx.entry_line(n, "blocked_by", part),
                entry=n,
                part=part or "",
                check=f"{label} blocked_by",
            )
        )
    return out


def prepin_findings(ctx: _Ctx) -> list[Finding]:
    """Pre-pin gaps (from the `pre-pin:` evidence audit --write recorded), by feature: a module whose
    absent names 2+ entries point at while no open row cites any of them."""
    from porttrack.evidence import prepin

    out = []
    for f in prepin.recorded(ctx.cfg, ctx.q).features:
        chk = f"pre-pin gap {f.path}"
        ctx.checks.add(chk)
        entries = f.entries
        if f.owner or len(entries) < 2:
            continue
        first = entries[0]
        names = ", ".join(g.symbol for g in f.gaps)
        out.append(
            finding(
                "pre-pin-gap-unowned",
                f"{f.path} had {names} upstream at the pin ({f.pin[: prepin.PIN_CHARS]}), and the port lacks "
                f"{'it' if len(f.gaps) == 1 else 'them'}; entries {', '.join(map(str, entries))} point at "
                f"{'it' if len(f.gaps) == 1 else 'them'} and no open matrix row cites any.",
                f"Add one matrix row for the feature that cites {names} (not one issue per entry).",
                ctx.qrel,
                ctx.entry_line(first, "evidence"),
                entry=first,
                check=chk,
                related=[f"{ctx.qrel}:{ctx.entry_line(n, 'evidence')}" for n in entries[1:]],
            )
        )
    return out
