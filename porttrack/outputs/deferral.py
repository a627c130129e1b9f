"""The deferral report (docs/reports.md): what waits, on what, and where each wait is proven.

It follows the team's own deferral write-ups: inert entries with the gate that makes each
real and the line that establishes it, blocked entries by what they wait on, landing sites,
one-read dispositions, owned entries recorded so nobody re-files them, surface-absent entries
counted by the surface they miss, pre-pin gaps by feature, and each probe with its own control.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from porttrack import audit as audit_mod
from porttrack.evidence import prepin
from porttrack.model import DEFERRED, UNPROBED_GATES, UNTRIAGED, Gate, Queue
from porttrack.outputs.report import View, _cell, _gate_text, _gates_text, _upstream_cell, upstream_name, views
from porttrack.visible import sanitized


@dataclass
class Gap:
    key: str  # what the entries share: a gate symbol or a blocker
    members: list[str] = field(default_factory=list)


def gaps(vs: list[View]) -> list[Gap]:
    """Deferred entries sharing a gate symbol or a blocker, where none of them is owned: a row is owed."""
    groups: dict[str, list[View]] = {}
    for v in vs:
        if v.verdict not in DEFERRED:
            continue
        keys = {f"gate symbol `{g.probe}`" for g in v.gates if g.kind not in UNPROBED_GATES and g.probe}
        keys |= {f"blocker entry {b}" for b in v.blocked_by}
        keys |= {f"blocker entry {g.entry}" for g in v.gates if g.kind == "entry-ported" and g.entry is not None}
        for k in keys:
            groups.setdefault(k, []).append(v)
    out = []
    for key in sorted(groups):
        members = groups[key]
        if len({(m.entry.n, m.part) for m in members}) >= 2 and not any(m.owner for m in members):
            out.append(Gap(key, sorted({m.label for m in members}, key=lambda s: (int(s.split()[0]), s))))
    return out


def _rows_section(deferred: list[View]) -> list[str]:
    rows: dict[str, list[str]] = {}
    for v in deferred:
        if v.owner:
            rows.setdefault(v.owner, []).append(v.label)
    lines = ["## Row it concerns", ""]
    if rows:
        lines += [
            f"- {owner}: entr{'y' if len(ls) == 1 else 'ies'} {', '.join(ls)}" for owner, ls in sorted(rows.items())
        ]
    else:
        lines.append('No matrix row owns these entries (see "A row is owed").')
    return lines


def _inert_section(inert: list[View], repo: str) -> list[str]:
    """Inert (and other gated) entries: the gate that makes each real, and the line that establishes it."""
    lines = [
        "",
        f"## Inert entries ({len(inert)})",
        "",
        "| entry | upstream | gate that makes it real | established at |",
        "|---|---|---|---|",
    ]
    for v in inert:
        gates: list[Gate | None] = list(v.gates) or [None]
        for g in gates:
            gate = f"{v.verdict}: {_gate_text(g)}" if g else f"{v.verdict}: {_gates_text(v)} (no gate recorded)"
            lines.append(f"| {_cell(v.label)} | {_upstream_cell(v.entry, repo)} | {_cell(gate)} | {_established(g)} |")
    if not inert:
        lines.append("| — | — | — | — |")
    return lines


def _blocked_section(blocked: list[View], queue: Queue, repo: str, verdicts: dict[int, str]) -> list[str]:
    """Blocked entries by the entry they wait on: one line per blocker, citing its line in the queue."""
    waiting: dict[int, list[str]] = {}
    cited: dict[int, str] = {}
    for v in blocked:
        for b in v.blocked_by:
            waiting.setdefault(b, []).append(v.label)
        for g in v.gates:
            if g.kind == "entry-ported" and g.entry is not None and g.established_at:
                cited.setdefault(g.entry, g.established_at)
    lines = ["", f"## Blocked entries ({len(blocked)}, waiting on {len(waiting)})", ""]
    for b in sorted(waiting, key=lambda b: (-len(waiting[b]), b)):
        e = queue.entry(b)
        verdict = verdicts.get(b) or (e.verdict if e is not None else "") or "not judged"
        what = f"{_upstream_cell(e, repo)}, {verdict}" if e is not None else "not in this queue"
        where = f" (`{cited[b]}`)" if b in cited else ""
        ns = waiting[b]
        who = f"entry {ns[0]} waits" if len(ns) == 1 else f"entries {', '.join(ns)} wait"
        lines.append(f"- entry {b}{where} {what}: {who} on it")
    return lines + (["None."] if not blocked else [])


def _landing_section(deferred: list[View]) -> list[str]:
    """Where each deferred entry's port change would go: a recorded `landing`, else the port definition an
    inert entry's gate holds (the code that is there and unread)."""
    lines = ["", "## Landing sites", ""]
    for v in deferred:
        if v.entry.landing:
            lines.append(f"- {v.label}: `{v.entry.landing}` (recorded)")
            continue
        held = [g for g in v.gates if g.kind in ("no-consumer", "present") and g.established_at]
        if v.verdict == "inert" and held:
            lines.append(f"- {v.label}: `{held[0].established_at}`, where `{held[0].probe}` is defined")
    return lines if len(lines) > 3 else [*lines, "None found."]


def _rule_of(v: View) -> str:
    return v.result.rule if v.result is not None else (v.entry.rule if v.part is None else "")


def _one_read_section(queue: Queue, vs: list[View]) -> list[str]:
    """The queue's path rules: one gate read settles every entry under a folder while it holds."""
    lines = ["", "## One-read dispositions", ""]
    for r in queue.rules:
        settled = [v.label for v in vs if _rule_of(v).endswith(f" {r.upstream}") and "path-rule" in _rule_of(v)]
        gates = " or ".join(_gate_text(g) for g in r.gates) or "no gate"
        who = (
            f"settles entr{'y' if len(settled) == 1 else 'ies'} {', '.join(settled)}"
            if settled
            else "settles none here"
        )
        lines.append(f"- `{r.upstream}` → {r.verdict} until {gates}; {who}")
    return lines + (["None: the queue has no [[rule]]."] if not queue.rules else [])


def _established(g: Gate | None) -> str:
    """Where the gate's symbol stands in the port. An absent gate's symbol stands nowhere: its
    citation is its control's definition, and the cell says so rather than pass it off as the symbol's."""
    if g is None or not g.established_at:
        return "—"
    if g.kind == "absent" or (g.kind == "count" and g.expect == 0):
        return f"— (control `{g.control}` at `{g.established_at}`)" if g.control else "—"
    return f"`{g.established_at}`"


def _surface_absent_section(absent: list[View]) -> list[str]:
    """Surface-absent entries counted by the surface they miss (the class an absent gate names, or the
    name itself): what the port lacks, and how often upstream touched it, not a row per generic gate."""
    by_surface: dict[str, set[str]] = {}
    for v in absent:
        gated = [g.probe for g in v.gates if g.kind in ("absent", "count") and g.probe]
        surfaces = {prepin.owner_class(p) or p for p in gated}
        surfaces |= {
            g.probe for g in v.gates if g.kind == "unmapped"
        }  # an upstream file the port has no counterpart of
        for s in surfaces or {"(no gate recorded)"}:
            by_surface.setdefault(s, set()).add(v.label)
    n, k = len(absent), len(by_surface)
    head = f"{n} entr{'y' if n == 1 else 'ies'}, {k} surface{'' if k == 1 else 's'} the port lacks"
    lines = ["", f"## Surface-absent ({head})", ""]
    order = sorted(by_surface.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    singles = [(surface, labels) for surface, labels in order if len(labels) == 1]
    for surface, labels in order:
        ns = sorted(labels, key=lambda x: (int(x.split()[0]), x))
        if len(ns) > 1 or len(singles) <= _SINGLES:
            lines.append(f"- `{surface}`: {len(ns)} entr{'y' if len(ns) == 1 else 'ies'} ({', '.join(ns)})")
    if len(singles) > _SINGLES:  # a long tail of one-entry surfaces reads as one line, not a page
        tail = ", ".join(f"`{surface}` ({next(iter(labels))})" for surface, labels in singles)
        lines.append(f"- {len(singles)} surfaces with one entry each: {tail}")
    return lines + (["None."] if not absent else [])


_SINGLES = 5  # one-entry surfaces listed a line each; more than this share one line


def _series_section(queue: Queue, result: audit_mod.Audit, verdict: dict[int, str]) -> list[str]:
    chosen = set(result.entries)
    ser = {name: st for name, st in audit_mod.series(queue).items() if any(s.n in chosen for s in st)}
    if not ser:
        return []
    audit_says = {r.n: r for r in result.results if r.part is None and r.disagrees}
    lines = ["", "## Series", ""]
    for name, stages in ser.items():
        states = []
        for s in stages:
            e = queue.entry_of(s.n)
            state = verdict.get(s.n, e.verdict)
            if s.n in audit_says:
                state += f" (audit would say {audit_says[s.n].verdict}: {audit_says[s.n].reason})"
            states.append(f"{s.k}/{s.of} entry {s.n} {state}")
        lines.append(f"- {name}: " + "; ".join(states))
    return lines


def _prepin_section(result: audit_mod.Audit) -> list[str]:
    lines = ["", "## Pre-pin gaps", ""]
    pp = result.prepin
    if pp is not None and pp.gaps:
        lines += [f"{pp.count()}, grouped by the upstream module that had them at the pin.", ""]
        probes = {p.symbol: p for p in result.probes}
        for f in pp.features:
            lines += _feature_lines(f, probes, pp.candidates.get(f.path, []))
    else:
        lines.append(
            "None: no absent symbol was defined upstream at the pin." if pp is None or not pp.note else "None found."
        )
    if pp is not None and pp.note:
        lines.append(f"- Note: {pp.note}.")
    return lines


def _feature_lines(f: prepin.Feature, probes: dict, candidates: list[str]) -> list[str]:
    """One feature the port never got: what is absent (with its probe and control, where this run probed
    it), who points at it, the rows that cite its module, and whether a row owns it."""
    ns = f.entries
    point = f"entry {ns[0]}" if len(ns) == 1 else f"entries {', '.join(map(str, ns))}"
    lines = [f"- `{f.path}` (at `{f.pin[: prepin.PIN_CHARS]}`), pointed at by {point}:"]
    for g in f.gaps:
        p = probes.get(g.symbol)
        how = ""
        if p is not None:
            ctl = f"control `{p.control}`: code {audit_mod._code(p.control_count)}" if p.control else "no control"
            how = f"; probe in `{' '.join(p.scope)}`: code {audit_mod._code(p.count)} ({ctl})"
        lines.append(f"  - absent: `{g.symbol}` ({g.kind}, upstream line {g.site.line}){how}")
    if f.owner:
        lines.append(f"  - owned by {f.owner}")
    else:
        near = f"; rows citing its module: {', '.join(candidates)}" if candidates else ""
        lines.append(f"  - a row is owed{near}")
    return lines


def _unknown_section(vs: list[View], result: audit_mod.Audit) -> list[str]:
    lines = ["", "## What could not be determined", ""]
    unknown = [v for v in vs if v.verdict in UNTRIAGED]
    bad_probes = [p for p in result.probes if p.status in ("untrusted", "incomplete")]
    for v in unknown:
        lines.append(f"- {v.label}: {v.verdict}" + (f": {v.reason}" if v.reason else ""))
    for p in bad_probes:
        lines.append(f"- probe `{p.symbol}` in `{' '.join(p.scope)}`: {p.status}: {p.reason}")
    if not unknown and not bad_probes:
        lines.append("Nothing: every probe had a working positive control.")
    return lines


def _verification_section(vs: list[View], result: audit_mod.Audit, command: str) -> list[str]:
    lines = [
        "",
        "## Verification state",
        "",
        f"- Port commit probed: `{result.tree}`",
        f"- Scope: `{' '.join(result.scope)}`",
        "- Probes:",
    ]
    wanted = {g.probe for v in vs for g in v.gates if g.probe} | {s for r in result.results for s in r.probes}
    shown = [p for p in result.probes if p.symbol in wanted]
    seen: set[str] = set()
    for p in shown:
        ctl = f"control `{p.control}`: code {audit_mod._code(p.control_count)}" if p.control else "no control"
        line = f"  - `{p.symbol}` in `{' '.join(p.scope)}`: code {audit_mod._code(p.count)} ({ctl}) — {p.status}"
        if line not in seen:  # a gate's explicit control is often the one audit chose itself
            seen.add(line)
            lines.append(line)
    if not shown:
        lines.append("  - none")
    lines += [f"- Reproduce: `{command}`", ""]
    return lines


def deferral(queue: Queue, result: audit_mod.Audit, *, command: str, queue_rel: str = "", name: str = "") -> str:
    """The deferral report of docs/design.md §9.4; `name` is `[upstream] name`."""
    queue, result, name = sanitized((queue, result, name))  # no value from a file starts a markdown line
    every = views(queue, result)
    verdicts = {v.entry.n: v.verdict for v in every if v.part is None}  # each entry's own, parts aside
    repo = upstream_name(queue, name)
    # an entry split into parts is judged by its parts
    vs = [v for v in every if v.part is not None or not v.entry.parts]
    deferred = [v for v in vs if v.verdict in DEFERRED]
    gated = [v for v in deferred if v.verdict not in ("owned", "surface-absent", "blocked")]
    blocked = [v for v in deferred if v.verdict == "blocked"]
    absent = [v for v in deferred if v.verdict == "surface-absent"]
    owned = [v for v in deferred if v.verdict == "owned"]
    numbers = sorted({v.entry.n for v in deferred})
    title = f"# Deferral: entries {audit_mod.entries_label(numbers)}" if numbers else "# Deferral: no deferred entries"
    lines = [
        title,
        "",
        f"Queue `{queue_rel or queue.meta.name}` ({queue.meta.name}); port commit probed `{result.tree}`.",
        "",
    ]
    lines += _rows_section(deferred)
    lines += _inert_section(gated, repo)
    lines += _blocked_section(blocked, queue, repo, verdicts)
    lines += _landing_section(deferred)
    lines += _one_read_section(queue, vs)
    lines += ["", "## Already owned (recorded so nobody re-files them)", ""]
    lines += [f"- {v.label} {_upstream_cell(v.entry, repo)} → {v.owner}" for v in owned] or ["None."]
    lines += _surface_absent_section(absent)
    lines += _series_section(queue, result, verdicts)
    lines += _prepin_section(result)
    lines += ["", "## A row is owed", ""]
    lines += [f"- {g.key}: entries {', '.join(g.members)}; no matrix row owns any of them." for g in gaps(vs)] or [
        "None: every shared gate or blocker has an owning row."
    ]
    lines += _unknown_section(vs, result)
    lines += _verification_section(vs, result, command)
    return "\n".join(lines)
