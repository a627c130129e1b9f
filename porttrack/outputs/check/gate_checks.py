"""Findings on gates: every recorded gate re-run, one probe scan per scope, judged by porttrack.gates."""

from __future__ import annotations

from dataclasses import dataclass

from porttrack import audit, gates
from porttrack.config import Config, inside
from porttrack.errors import UserError
from porttrack.model import DEFERRED, Gate, Queue
from porttrack.outputs.check.findings import Finding, finding
from porttrack.outputs.check.context import _Ctx, _owners


@dataclass
class GateJob:
    gate: Gate
    label: str  # "entry 142", "entry 142 part 'x'", "rule 'vllm/x/**'"
    entry: int | None
    part: str
    qline: int  # the gate's line in the queue file
    to_port: list[int]  # the entries that become real when this gate goes live


def _gate_jobs(q: Queue, ctx: _Ctx) -> list[GateJob]:
    """Every gate of every deferred entry, part and rule."""
    jobs = []
    for e in q.entries:
        for label, obj, part in _owners(e):
            if obj.verdict not in DEFERRED:
                continue
            for g in obj.gates:
                jobs.append(GateJob(g, label, e.n, part or "", ctx.gate_line(("entry", e.n, part), g.id), [e.n]))
    for i, r in enumerate(q.rules):
        covered = [e.n for e in q.entries if e.verdict == r.verdict and audit.rule_matches(r, e.files)]
        for g in r.gates:
            jobs.append(GateJob(g, f"rule {r.upstream!r}", None, "", ctx.gate_line(("rule", i, None), g.id), covered))
    return jobs


def _scope_of(ctx: _Ctx, g: Gate) -> tuple[str, ...]:
    scope = tuple(g.scope) or tuple(ctx.cfg.code_scope)
    for s in scope:
        inside(ctx.root, s, f"gate {g.id!r} scope")
    return scope


def gate_findings(ctx: _Ctx) -> list[Finding]:
    """Re-run every gate: one scan per distinct scope, all of that scope's symbols at once."""
    from porttrack import probe

    jobs = ctx.jobs
    by_scope: dict[tuple[str, ...], list[GateJob]] = {}
    out: list[Finding] = []
    for j in jobs:
        ctx.checks.add(_job_subject(j))
        if j.gate.kind == "entry-ported":
            out += _entry_ported(ctx, j)
        elif j.gate.kind == "unmapped":
            out += _unmapped(ctx, j)
        else:
            by_scope.setdefault(_scope_of(ctx, j.gate), []).append(j)
    cfg = ctx.cfg
    for scope, group in by_scope.items():
        symbols = sorted(
            {j.gate.probe for j in group if not j.gate.regex} | {j.gate.control for j in group if j.gate.control}
        )
        regexes = sorted({j.gate.probe for j in group if j.gate.regex})
        for j in group:  # refuse a bad probe by its gate's line before scanning anything
            for sym, is_regex in ((j.gate.probe, j.gate.regex), (j.gate.control, False)):
                try:
                    probe.compile_regex(sym) if is_regex else (sym and _variants(sym, cfg))
                except UserError as e:
                    raise UserError(f"{ctx.qrel}:{j.qline}: gate {j.gate.id!r}: {e}") from None
        scan = probe.scan(  # texts=False: findings cite path:line, so no file is read for its lines
            ctx.root,
            symbols,
            regexes=regexes,
            scope=list(scope),
            **probe.config_options(cfg),
            texts=False,
            progress=ctx.progress,
        )
        ctx.scans[scope] = scan
        for j in group:
            out += _judge_gate(ctx, j, scan, probe.judge(scan, j.gate.probe, j.gate.control or None))
    ctx.scans_run = len(by_scope)
    return out


def _job_subject(j: GateJob) -> str:
    return f"{j.label} gate {j.gate.id}"


def _gate_kw(j: GateJob, suffix: str = "") -> dict:
    return {"entry": j.entry, "part": j.part, "gate": j.gate.id, "check": _job_subject(j) + suffix}


def _to_port(j: GateJob) -> str:
    if not j.to_port:
        return f"re-triage the entries {j.label} covers"
    return "port entr" + ("y " if len(j.to_port) == 1 else "ies ") + ", ".join(map(str, j.to_port))


def _entry_ported(ctx: _Ctx, j: GateJob) -> list[Finding]:
    waited = ctx.q.entry(j.gate.entry) if j.gate.entry is not None else None
    ctx.evidence[_job_subject(j)] = f"entry {j.gate.entry} is {waited.verdict if waited else 'missing'} in {ctx.qrel}"
    if waited is None or gates.entry_state(j.gate, waited).state == gates.HOLDS:  # a missing entry: it holds
        return []
    return [
        finding(
            "gate-live",
            f"{j.label} gate {j.gate.id!r} waited on entry {waited.n} ({waited.short} {waited.subject}), which is {waited.verdict} now.",
            f"The wait is over: {_to_port(j)} and re-triage it.",
            ctx.qrel,
            j.qline,
            **_gate_kw(j),
            related=[f"{ctx.qrel}:{ctx.entry_line(waited.n, 'verdict')}"],
        )
    ]


def _unmapped(ctx: _Ctx, j: GateJob) -> list[Finding]:
    """An unmapped gate goes live when a provenance header or [[map]] gives its upstream path a port file."""
    from porttrack.evidence import headers

    if ctx.umap is None:
        ctx.umap = headers.upstream_map(ctx.provs())
    files = headers.counterparts(ctx.cfg, ctx.umap, j.gate.probe, ctx.moves)
    st = gates.counterpart_state(j.gate, files)
    ctx.evidence[_job_subject(j)] = f"{j.gate.probe}: port counterparts {', '.join(files) or 'none'}"
    if st.state == gates.HOLDS:
        return []
    return [
        finding(
            "gate-live",
            f"{j.label} gate {j.gate.id!r}: {st.why}, so the surface it was deferred for may exist.",
            f"Re-triage the entries {j.label} covers against {files[0]}.",
            files[0],
            1,
            **_gate_kw(j),
            related=[f"{ctx.qrel}:{j.qline}"],
        )
    ]


_CODE_KINDS = {"definition", "consumer", "delegation"}


def _hits(count, kinds=_CODE_KINDS, limit: int = 20) -> list[str]:
    """Code hits (never comment-only ones) as path:line, the first `limit` of them."""
    hits = [h for h in count.hits if h.kind in kinds]
    return [f"{h.path}:{h.line}" for h in hits[:limit]]


def _judge_gate(ctx: _Ctx, j: GateJob, scan, p) -> list[Finding]:
    """Turn a probe's judgement into a finding when the gate no longer holds or cannot be trusted."""
    g = j.gate
    what = f"/{g.probe}/" if g.regex else g.probe
    scope = " ".join(g.scope or ctx.cfg.code_scope)
    kw = _gate_kw(j)
    c = p.count
    cc = p.control_count
    if p.control:
        ctx.controls[_job_subject(j)] = p.control
    # what was counted, where, on which tree, and the control that makes a zero mean something
    ctx.evidence[_job_subject(j)] = (
        f"{what} in {scope} at {scan.tree}: "
        f"code {c.code}, raw {c.raw}, definitions {c.definitions}, consumers {c.consumers}, tests {c.tests}; "
        f"control {p.control or '(none)'} code {cc.code if cc is not None else 0} ({p.control_how}); "
        f"{scan.files_scanned} files scanned; {p.status}"
    )
    control_code = p.control_count.code if p.control_count is not None else 0
    st = gates.probe_state(g, c, p.status, p.control, control_code, scope)
    if st.state == gates.INCOMPLETE:
        return [
            finding(
                "scan-incomplete",
                f"{j.label} gate {g.id!r}: the scan of {scope} could not read everything "
                f"({_incomplete_text(scan)}), so the count of {what} is unknown, not zero.",
                "Fetch the missing objects (unshallow the clone) or fix the unreadable files, then re-run check.",
                ctx.qrel,
                j.qline,
                **kw,
            )
        ]
    if st.state == gates.LIVE:
        hits = [f"{h.path}:{h.line}" for h in st.hits[:20]]
        where_hits = f" at {', '.join(hits)}" if hits else ""
        # look first at the new hit (a PR annotation lands on the line that made the gate live)
        if hits:
            path, at = hits[0].rsplit(":", 1)
            line, related = int(at), [*hits[1:], f"{ctx.qrel}:{j.qline}"]
        else:
            path, line, related = ctx.qrel, j.qline, []
        return [
            finding(
                "gate-live",
                f"{j.label} gate {g.id!r} ({g.kind}) no longer holds: {st.why}{where_hits}.",
                f"The entry is real now: {_to_port(j)}, or re-triage it and update the gate.",
                path,
                line,
                **kw,
                related=related,
            )
        ]
    if st.state == gates.UNTRUSTED:
        # a zero (no hit, no consumer) is evidence only while the control shows the scan sees code
        why = (
            st.why
            if p.control or p.status != "untrusted"
            else f"no positive control ({p.reason or 'none recorded or found'})"
        )
        return [
            finding(
                "gate-untrusted",
                f"{j.label} gate {g.id!r}: {what} counts {c.code}, but {why}, so the count is no evidence.",
                f"Give gate {g.id!r} a control symbol that exists in {scope} (or fix the scope), then re-run check.",
                ctx.qrel,
                j.qline,
                **kw,
            )
        ]
    return []


def _incomplete_text(scan) -> str:
    inc = list(getattr(scan, "incomplete", []) or [])
    shown = ", ".join(str(x) for x in inc[:3])
    return f"{len(inc)} unreadable: {shown}{' …' if len(inc) > 3 else ''}" if inc else "unreadable objects"


def _variants(name: str, cfg: Config) -> list[str]:
    """The forms an upstream name may take in the port (docs/design.md §6), as the probe searches them."""
    from porttrack import probe

    return probe.variants(name, renames=cfg.renames, strip_leading_underscore=cfg.strip_leading_underscore)
