"""Findings on citations audit wrote (`established_at`) and on landing notes: each still holds what it names."""

from __future__ import annotations

import re

from porttrack import gates
from porttrack.errors import UserError
from porttrack.model import SETTLED, Gate
from porttrack.outputs.check.findings import Finding, finding
from porttrack.outputs.check.context import _Ctx
from porttrack.outputs.check.gate_checks import GateJob, _gate_kw, _hits, _job_subject, _variants


def _mention_re(names: list[str], regex: bool = False) -> re.Pattern:
    if regex:  # a person's pattern: RE2, which cannot hang on a catastrophic one
        from porttrack.probe import compile_regex

        return compile_regex("|".join(f"(?:{n})" for n in names), text=True)
    return re.compile("|".join(r"(?<!\w)" + re.escape(n) + r"(?!\w)" for n in names))


_CITE = re.compile(
    r"^(?P<path>[^:\s][^:]*?):(?P<line>\d+)(?:[-,]\d+)*(?:\s*\((?P<anchor>[^)]+)\)|\s+(?P<anchor2>\S+))?\s*$"
)


def parse_citation(text: str) -> tuple[str, int, str]:
    """`path:line`, optionally followed by an anchor: `path:line (Symbol)` or `path:line Symbol`."""
    m = _CITE.match(text.strip())
    if not m:
        raise ValueError(text)
    return m["path"], int(m["line"]), (m["anchor"] or m["anchor2"] or "").strip()


def _locate(ctx: _Ctx, cited: str, names: list[str], regex: bool, what: str):
    """('ok'|'moved'|'vanished'|'missing', path, old line, new line, note) for a citation of `names`."""
    path, line, _ = parse_citation(cited)
    lines = ctx.lines(path, what)
    if lines is None:
        return "missing", path, line, None
    pat = _mention_re(names, regex)
    if 1 <= line <= len(lines) and pat.search(lines[line - 1]):
        return "ok", path, line, line
    found = [i + 1 for i, t in enumerate(lines) if pat.search(t)]
    if not found:
        return "vanished", path, line, None
    return "moved", path, line, min(found, key=lambda n: (abs(n - line), n))


def _cited_symbol(ctx: _Ctx, j: GateJob) -> str:
    """What a gate's established_at must mention: its probe, or for a zero-gate the control that proved the zero.

    An absent symbol has no line to cite, so audit cites where the positive control is defined.
    """
    g = j.gate
    if gates.relies_on_zero(g) and g.kind != "no-consumer":
        return g.control or ctx.controls.get(_job_subject(j)) or g.probe
    return g.probe


def citation_findings(ctx: _Ctx) -> list[Finding]:
    """Each established_at still points at a line that mentions its probe (or, for zero-gates, its control)."""
    out = []
    for j in ctx.jobs:
        g = j.gate
        if not g.established_at or g.kind == "entry-ported":
            continue
        ctx.checks.add(f"{j.label} gate {g.id} citation")
        sym = _cited_symbol(ctx, j)
        regex = g.regex and sym == g.probe
        try:
            state, path, old, new = _locate(
                ctx,
                g.established_at,
                [sym] if regex else _variants(sym, ctx.cfg),
                regex,
                f"{ctx.qrel}:{j.qline}: gate {g.id!r} established_at",
            )
        except ValueError:
            raise UserError(
                f"{ctx.qrel}:{j.qline}: gate {g.id!r} established_at {g.established_at!r} is not path:line."
            ) from None
        kw = _gate_kw(j, " citation")
        if state == "moved":
            out.append(
                finding(
                    "citation-stale",
                    f"{j.label} gate {g.id!r} cites {path}:{old}, but {sym} is mentioned at {path}:{new} now.",
                    f'Set established_at = "{path}:{new}" for gate {g.id!r}.',
                    path,
                    new,
                    **kw,
                    related=[f"{ctx.qrel}:{j.qline}"],
                )
            )
        elif state in ("vanished", "missing"):
            elsewhere = _elsewhere(ctx, g, sym)
            gone = f"{path} no longer exists" if state == "missing" else f"{path} no longer mentions {sym}"
            hint = f"; it is mentioned at {', '.join(elsewhere)}" if elsewhere else ""
            out.append(
                finding(
                    "citation-vanished",
                    f"{j.label} gate {g.id!r} cites {path}:{old}, but {gone}{hint}.",
                    f"Re-establish gate {g.id!r}: point established_at at a line that mentions {sym}, "
                    "or re-triage the entry if the symbol went away.",
                    ctx.qrel,
                    j.qline,
                    **kw,
                    related=elsewhere,
                )
            )
    return out


def _elsewhere(ctx: _Ctx, g: Gate, sym: str) -> list[str]:
    """Where the gate's own scan saw the cited symbol now (first few places), to help re-establish a citation."""
    scan = ctx.scans.get(tuple(g.scope) or tuple(ctx.cfg.code_scope))
    if scan is None:
        return []
    count = scan.counts.get(sym) or scan.control_counts.get(sym)
    if count is None:
        return []
    return _hits(count, limit=3)


def landing_findings(ctx: _Ctx) -> list[Finding]:
    """`landing = "path:line [(Symbol)]"`: the file and line are still there and still mention their anchor.

    The anchor is the symbol named after the line, else the entry's changed, removed and added
    symbols under their port variants; with no anchor at all only the file and line are checked.
    """
    out = []
    for e in ctx.q.entries:
        if not e.landing or e.verdict in SETTLED:
            continue
        ctx.checks.add(f"entry {e.n} landing")
        qline = ctx.entry_line(e.n, "landing")
        try:
            path, line, anchor = parse_citation(e.landing)
        except ValueError:
            raise UserError(f"{ctx.qrel}:{qline}: entry {e.n} landing {e.landing!r} is not path:line.") from None
        names = [
            v
            for s in ([anchor] if anchor else e.symbols.changed + e.symbols.removed + e.symbols.added)
            for v in _variants(s, ctx.cfg)
        ]
        what = f"{ctx.qrel}:{qline}: entry {e.n} landing"
        lines = ctx.lines(path, what)
        kw = {"entry": e.n, "check": f"entry {e.n} landing"}
        if lines is None or line > len(lines):
            gone = f"{path} no longer exists" if lines is None else f"{path} has only {len(lines)} lines"
            out.append(
                finding(
                    "landing-vanished",
                    f"entry {e.n} lands at {path}:{line}, but {gone}.",
                    f"Update entry {e.n}'s landing to where the port change goes now.",
                    ctx.qrel,
                    qline,
                    **kw,
                )
            )
            continue
        if not names:
            continue
        state, _, _, new = _locate(ctx, f"{path}:{line}", names, False, what)
        label = anchor or "/".join(names[:3])
        if state == "moved":
            out.append(
                finding(
                    "landing-stale",
                    f"entry {e.n} lands at {path}:{line}, but {label} is at {path}:{new} now.",
                    f'Set landing = "{path}:{new}{f" ({anchor})" if anchor else ""}" for entry {e.n}.',
                    path,
                    new,
                    **kw,
                    related=[f"{ctx.qrel}:{qline}"],
                )
            )
        elif state == "vanished":
            out.append(
                finding(
                    "landing-vanished",
                    f"entry {e.n} lands at {path}:{line}, but {path} no longer mentions {label}.",
                    f"Update entry {e.n}'s landing to where the port change goes now.",
                    ctx.qrel,
                    qline,
                    **kw,
                )
            )
    return out
