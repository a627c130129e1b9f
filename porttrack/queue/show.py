"""queue show: pick entries and render them as a table or as JSON-ready data."""

from __future__ import annotations

import dataclasses
import re

from rich.table import Table
from rich.text import Text

from porttrack.errors import UserError
from porttrack.model import Entry, Queue


def parse_entries(spec: str | None, queue: Queue | None = None, what: str = "--entries") -> set[int] | None:
    """`121-160,170` -> {121..160, 170}; None or "" -> None (all entries).

    With a queue, each range is clipped to the queue's highest entry number first, so
    `1-99999999999` does not build a set of 10^11 numbers."""
    if not spec:
        return None
    top = max((e.n for e in queue.entries), default=0) if queue is not None else None
    out: set[int] = set()
    for part in spec.replace(" ", "").split(","):
        m = re.fullmatch(r"(\d+)(?:-(\d+))?", part)
        if not m:
            raise UserError(f"{what} {spec!r}: {part!r} is not a number or a range like 121-160.")
        lo, hi = int(m.group(1)), int(m.group(2) or m.group(1))
        if hi < lo:
            raise UserError(f"{what} {spec!r}: the range {part} runs backwards.")
        if m.group(2) and top is not None:
            hi = max(lo, min(hi, top))
        out.update(range(lo, hi + 1))
    return out


def select(queue: Queue, spec: str | None, what: str = "entries") -> list[Entry]:
    """The entries `spec` names (`queue show 1-5,9`), in queue order. A single number the queue
    lacks is an error; a range takes what the queue has in it, and must take something."""
    numbers = parse_entries(spec, queue, what)
    if numbers is None:
        return list(queue.entries)
    singles = {int(p) for p in spec.replace(" ", "").split(",") if p.isdigit()} if spec else set()
    missing = sorted(n for n in singles if queue.entry(n) is None)
    if missing:
        raise UserError(f"queue {queue.meta.name!r} has no entry {', '.join(map(str, missing))}.")
    picked = [e for e in queue.entries if e.n in numbers]
    if not picked:
        raise UserError(f"queue {queue.meta.name!r} has no entry in {spec}.")
    return picked


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
        t.add_row(
            *(
                Text(c)
                for c in (str(e.n), e.short, f"#{e.pr}" if e.pr else "", e.subject, verdict, rel, _gates(e), e.rule)
            )
        )
    return t
