"""queue show: pick entries and render them as a table or as JSON-ready data."""

from __future__ import annotations

import dataclasses

from rich.table import Table
from rich.text import Text

from porttrack.errors import UserError
from porttrack.model import Entry, Queue


def select(queue: Queue, numbers: list[int]) -> list[Entry]:
    if not numbers:
        return list(queue.entries)
    missing = [n for n in numbers if queue.entry(n) is None]
    if missing:
        raise UserError(f"queue {queue.meta.name!r} has no entry {', '.join(map(str, missing))}.")
    return [queue.entry(n) for n in numbers]


def as_json(entries: list[Entry]) -> list[dict]:
    return [dataclasses.asdict(e) for e in entries]


def _gates(e: Entry) -> str:
    parts = [f"{g.kind}:{g.probe or g.entry}" for g in e.gates]
    for p in e.parts:
        parts += [f"[{p.name}] {g.kind}:{g.probe or g.entry}" for g in p.gates]
    return "\n".join(parts)


def table(queue: Queue, entries: list[Entry]) -> Table:
    # every cell is plain Text: a subject like "Revert [/x]" is not rich markup
    t = Table(title=Text(f"{queue.meta.name} ({len(entries)} of {len(queue.entries)} entries)"), show_lines=False)
    for col in ("n", "sha", "PR"):
        t.add_column(col, no_wrap=True)
    t.add_column("subject", ratio=3, overflow="fold")
    t.add_column("verdict", no_wrap=True)
    for col in ("owner / blocked by", "gates", "rule"):
        t.add_column(col, ratio=1, overflow="fold")
    for e in entries:
        verdict = e.verdict + (f" ({e.verdict_by})" if e.verdict_by else "")
        for p in e.parts:
            verdict += f"\n{p.name}: {p.verdict}"
        rel = e.owner or (", ".join(f"#{b}" for b in e.blocked_by) if e.blocked_by else "")
        t.add_row(*(Text(c) for c in (str(e.n), e.short, f"#{e.pr}" if e.pr else "", e.subject, verdict, rel, _gates(e), e.rule)))
    return t
