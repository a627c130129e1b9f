"""The team's markdown reports (docs/design.md §9.2, §9.4): sync and deferral, generated from a queue and an audit.

What a person recorded in the queue wins; audit's conclusion fills in where nothing is
recorded yet. Both reports name the port commit probed and end with the command that
reproduces them. No clock, no randomness: the same queue and tree give the same bytes.
"""

from __future__ import annotations

import re

import shlex
from dataclasses import dataclass

from porttrack.outputs import marks
from porttrack.visible import sanitized
from porttrack import audit as audit_mod
from porttrack.model import DEFERRED, UNTRIAGED, Entry, Gate, Part, Queue


@dataclass
class View:
    """One entry or part as the report shows it: the recorded judgement, else audit's."""

    entry: Entry
    part: str | None
    verdict: str
    reason: str
    owner: str
    blocked_by: list[int]
    gates: list[Gate]
    source: str  # "human", "audit" (recorded by audit) or "audit (not written)"
    result: audit_mod.Result | None = None

    @property
    def label(self) -> str:
        return str(self.entry.n) + (f" {self.part}" if self.part else "")


def views(queue: Queue, result: audit_mod.Audit) -> list[View]:
    by_key = {(r.n, r.part): r for r in result.results}
    out = []
    for n in result.entries:
        e = queue.entry_of(n)
        rows: list[tuple[Entry | Part, str | None]] = [(e, None), *((p, p.name) for p in e.parts)]
        for obj, part in rows:
            r = by_key.get((n, part))
            if obj.verdict not in ("", "unclassified") or r is None:
                out.append(
                    View(
                        e,
                        part,
                        obj.verdict,
                        obj.reason,
                        obj.owner,
                        list(obj.blocked_by),
                        list(obj.gates),
                        obj.verdict_by or "human",
                        r,
                    )
                )
            else:
                out.append(
                    View(
                        e,
                        part,
                        r.verdict,
                        r.reason,
                        r.owner,
                        list(r.blocked_by),
                        list(r.gates),
                        "audit (not written)",
                        r,
                    )
                )
    return out


def upstream_name(queue: Queue, configured: str = "") -> str:
    """The `vllm` of `vllm#123`: `[upstream] name` from the config as it is now, else what the queue
    recorded at build time. `vllm-project/vllm`, `../vllm` and a bare clone `vllm.git` all read as `vllm`."""
    full = configured or queue.meta.upstream
    name = full.rstrip("/").rsplit("/", 1)[-1].removesuffix(".git") if full else ""
    return name or "upstream"


def _sentence(text: str) -> str:
    text = " ".join(text.split())
    return text if text.endswith((".", "!", "?")) else text + "."


def entry_line(e: Entry, reason: str, repo: str) -> str:
    """``- vllm#46853 `Subject (#46853)` (`4c3c64fc`) — reason.`` (docs/design.md §9.2)."""
    subject = " ".join(e.subject.split()).replace("`", "\\`")
    ref = f"{repo}#{e.pr}" if e.pr is not None else f"{repo}@{e.sha[:8]}" if e.sha else repo
    if e.reverts is not None:
        reason = f"reverts {repo}#{e.reverts}; {reason}"
    sha = f" (`{e.sha[:8]}`)" if e.sha else ""  # a hand-written entry may have no sha yet
    return f"- {ref} `{subject}`{sha} — {_sentence(reason)}"


def _why(v: View) -> str:
    """The reason a line gives: verdict, then what was recorded or concluded, each fact once."""
    text = v.verdict
    if v.reason:
        text += f": {v.reason}"
    row = v.owner.split(" ", 1)[0]
    if v.owner and row not in v.reason:
        text += f"; owned by {v.owner}"
    if v.blocked_by and v.verdict == "blocked" and not all(f"entry {b}" in v.reason for b in v.blocked_by):
        text += f"; blocked by {', '.join(map(str, v.blocked_by))}"
    return text


def _line_reason(vs: list[View]) -> str:
    main, parts = vs[0], vs[1:]
    text = _why(main)
    if parts:
        text += "; parts: " + "; ".join(f"{p.part} {_why(p)}" for p in parts)
    return text


def _grouped(vs: list[View]) -> list[list[View]]:
    out: dict[int, list[View]] = {}
    for v in vs:
        out.setdefault(v.entry.n, []).append(v)
    return list(out.values())


# Where an entry of the PORT-NOW level goes in the sync report, by its verdict: each entry is
# listed once, and the header counts what each section holds.
_CARRY = (
    ("Owned", frozenset({"owned"})),
    ("Blocked", frozenset({"blocked"})),
    ("Deferred", DEFERRED - {"owned", "blocked"}),
)


def _section_of(v: View) -> str:
    if v.entry.disposition != "PORT-NOW":
        return v.entry.disposition  # INVENTORY or IGNORE: the level a person (or audit) set
    if v.verdict == "real-gap":
        return "PORT-NOW"
    if v.verdict in UNTRIAGED:
        return "TO TRIAGE"
    for name, verdicts in _CARRY:
        if v.verdict in verdicts:
            return name
    return "SETTLED"


def _cycle_state(counts: dict[str, int]) -> str:
    to_port, triage = counts.get("PORT-NOW", 0), counts.get("TO TRIAGE", 0)
    head = (
        f"**OPEN**: {to_port} real gap{'s' if to_port != 1 else ''} to port"
        if to_port
        else "**OPEN**: entries still to triage"
        if triage
        else "**CLOSED**: nothing left to port"
    )
    carry = sum(counts.get(name, 0) for name, _ in _CARRY)
    parts = [
        f"to triage {triage}",
        f"carry-over {carry} (" + ", ".join(f"{name.lower()} {counts.get(name, 0)}" for name, _ in _CARRY) + ")",
        f"settled {counts.get('SETTLED', 0)}",
        f"INVENTORY {counts.get('INVENTORY', 0)}",
        f"IGNORE {counts.get('IGNORE', 0)}",
    ]
    return f"{head}; " + ", ".join(parts) + "."


def _carry_reason(g: list[View]) -> str:
    """An entry waiting on something: why, then what ends the wait (each part's after its own reason)."""

    def waits(v: View) -> str:
        text = _why(v).rstrip(".")
        sep = ", " if ":" in text else ": "  # `verdict: reason`, the form a report line is read back in
        return f"{text}{sep}until {_gates_text(v)}" if v.verdict in DEFERRED else text

    main, parts = g[0], g[1:]
    text = waits(main)
    if parts:
        text += "; parts: " + "; ".join(f"{p.part} {waits(p)}" for p in parts)
    return text


def sync(queue: Queue, result: audit_mod.Audit, *, command: str, name: str = "") -> str:
    """The sync report of docs/design.md §9.2 for the audited entries; `name` is `[upstream] name`."""
    queue, result, name = sanitized((queue, result, name))  # no value from a file starts a markdown line
    vs = views(queue, result)
    groups = _grouped(vs)
    repo = upstream_name(queue, name)
    by_section: dict[str, list[list[View]]] = {}
    for g in groups:
        by_section.setdefault(_section_of(g[0]), []).append(g)
    counts = {k: len(v) for k, v in by_section.items()}
    m = queue.meta
    entries = [g[0].entry for g in groups]
    files = sorted({f for e in entries for f in e.files})
    ins = sum(s[0] for e in entries for s in e.stat.values() if len(s) == 2 and s[0] >= 0)
    dels = sum(s[1] for e in entries for s in e.stat.values() if len(s) == 2 and s[1] >= 0)
    range_commits = m.range_commits or len(queue.entries)
    lines = [
        f"# {repo} upstream-sync audit: {m.name}",
        "",
        f"- **Current pin:** `{m.pin or 'unknown'}`",
        f"- **Target:** `{m.target or 'unknown'}`",
        f"- **Range:** `{m.pin[:8]}..{m.target[:8]}` — {range_commits} commits, {len(entries)} queued here "
        f"({audit_mod.entries_label([e.n for e in entries]) or 'none'}), {len(files)} changed files, "
        f"{ins:,} insertions and {dels:,} deletions.",
        f"- **Cycle state:** {_cycle_state(counts)}",
        f"- **Port commit probed:** `{result.tree}` (scope `{' '.join(result.scope)}`).",
        f"- **Pre-pin gaps:** {_prepin_count(result)}",
        *(f"- **{n.split(':', 1)[0].capitalize()}:**{n.split(':', 1)[1]}" for n in result.notices),
    ]
    for section in ("PORT-NOW", "TO TRIAGE", "SETTLED", "INVENTORY", "IGNORE"):
        chosen = by_section.get(section, [])
        if section in ("TO TRIAGE", "SETTLED") and not chosen:
            continue
        lines += ["", f"## {section} ({len(chosen)})", ""]
        lines += [entry_line(g[0].entry, _line_reason(g), repo) for g in chosen] or ["No entries."]
    carry = sum(counts.get(name, 0) for name, _ in _CARRY)
    lines += ["", f"## Carry-over ({carry})"]
    for name, _ in _CARRY:
        chosen = by_section.get(name, [])
        if chosen:
            lines += ["", f"### {name} ({len(chosen)})", ""]
            lines += [entry_line(g[0].entry, _carry_reason(g), repo) for g in chosen]
    if not carry:
        lines += ["", "Nothing carries over."]
    pairs = result.prepin.net_zero if result.prepin else []
    if pairs:
        lines += ["", f"## Net-zero pairs ({len(pairs)})", ""]
        lines += [f"- {z.text()}." for z in pairs]
    shas = (re.search(r" \(`([0-9a-f]{8})`\) — ", line) if line.startswith("- ") else None for line in lines)
    written = {m.group(1): line for m, line in zip(shas, lines, strict=True) if m}
    lines += ["", f"Reproduce: `{command}`", "", marks.block(written), ""]
    return "\n".join(lines)


def _prepin_count(result: audit_mod.Audit) -> str:
    """The header's count of pre-pin gaps (the deferral report lists them), or why none were looked for."""
    pp = result.prepin
    if pp is None or (pp.note and not pp.gaps and "not run" in pp.note):
        return f"not checked ({pp.note if pp else 'no pre-pin pass'})."
    return f"{pp.count()}." if pp.gaps else "0."


def _gate_text(g: Gate) -> str:
    scope = " ".join(g.scope) or "the code scope"
    what = f"/{g.probe}/" if g.regex else f"`{g.probe}`"
    return {
        "absent": f"{what} appears in {scope}",
        "no-consumer": f"something outside tests reads {what}",
        "count": f"{what} no longer counts {g.expect} in {scope}",
        "present": f"{what} disappears from {scope}",
        "entry-ported": f"entry {g.entry} is ported",
        "unmapped": f"a header or [[map]] gives `{g.probe}` a port counterpart",
    }.get(g.kind, f"gate {g.id} goes live")


def _gates_text(v: View) -> str:
    if v.gates:
        # blockers must all land; any other gate going live on its own makes the entry real
        joiner = " and " if all(g.kind == "entry-ported" for g in v.gates) else " or "
        return joiner.join(_gate_text(g) for g in v.gates)
    if v.owner:
        return f"row {v.owner} lands"
    if v.blocked_by:
        return " and ".join(f"entry {b} is ported" for b in v.blocked_by)
    return "a gate is recorded"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _upstream_cell(e: Entry, repo: str) -> str:
    ref = f"{repo}#{e.pr}" if e.pr is not None else repo
    return _cell(f"{ref} {' '.join(e.subject.split())}" + (f" (`{e.sha[:8]}`)" if e.sha else ""))


def command_line(kind: str, entries: str | None, queue_rel: str, out: str | None) -> str:
    """The exact command that regenerates a report."""
    parts = ["porttrack", "report", kind]
    if entries:
        parts += ["--entries", entries]
    parts += ["--queue", queue_rel]
    if out:
        parts += ["--out", out]
    return " ".join(shlex.quote(p) for p in parts)  # a path with spaces still pastes as one argument
