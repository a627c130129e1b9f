"""`audit --write`: verdicts into the queue file (a person's stand), and the terminal table."""

from __future__ import annotations

import functools

from porttrack.errors import UserError
from porttrack.visible import visible
from porttrack.audit.results import Audit


# The sync report's section for an audit verdict: CI/docs go to IGNORE, surface the port
# lacks entirely is inventoried for a roadmap row, everything else is work for this cycle.
DISPOSITION = {"ignore": "IGNORE", "surface-absent": "INVENTORY"}


def _table(qf, n: int, part: str | None):
    from porttrack.queue import file as queuefile

    table = queuefile.edit_entry(qf, n)
    if table is not None and part is not None:
        table = next((p for p in table.get("part", []) if p.get("name") == part), None)
    if table is None:
        raise UserError(f"{qf.path}:{queuefile.line_of(qf, n)}: entry {n} has no part named {part!r}.")
    return table


def write(qf, result: Audit, qrel: str) -> tuple[int, list[str]]:
    """Store audit verdicts where none is set or audit set it; never over a human verdict.

    `qrel` is the queue path relative to the port root, for entry-ported gates' citations.
    Returns (how many entries/parts changed, messages for the human verdicts audit disagrees with).
    Edits go key by key into the document (queuefile's own field writer), and the model is
    rebuilt once at the end rather than after every entry: 300 rebuilds would cost seconds.
    """
    from porttrack.queue import file as queuefile

    notes: list[str] = []
    changed = 0
    mine = [r for r in result.results if not r.human]
    for r in result.results:
        if r.disagrees:
            notes.append(
                f"{r.label}: audit would say {r.verdict} ({r.rule}: {r.reason}); the human verdict {r.recorded} stands."
            )
    by_n = {e.n: e for e in qf.queue.entries}
    for r in mine:
        fields = dict(
            verdict=r.verdict,
            verdict_by="audit",
            rule=r.rule,
            reason=r.reason,
            owner=r.owner,
            blocked_by=r.blocked_by,
            gates=r.gates,
            evidence=r.evidence,
        )
        if r.part is None:
            fields["disposition"] = DISPOSITION.get(r.verdict, "PORT-NOW")
            # an entry nobody has edited since it was written is rewritten as text (the same bytes)
            wrote = queuefile.write_entry_text(qf, by_n[r.n], **fields)
            if wrote is not None:
                changed += wrote
                continue
        table = _table(qf, r.n, r.part)
        before = table.as_string()
        queuefile.set_fields(table, fields)
        changed += table.as_string() != before
    # Entry-ported gates cite the waited-on entry's line, which the writes above may have moved;
    # rewriting one-line values moves no line, so one more pass settles them.
    view = queuefile.QueueFile(qf.path, None, qf.queue, queuefile.dumps(qf), data=qf.data)  # numbering unchanged
    line = functools.lru_cache(maxsize=None)(lambda n: queuefile.line_of(view, n))
    for r in mine:
        for g in r.gates:
            if g.kind == "entry-ported" and g.entry is not None:
                g.established_at = f"{qrel}:{line(g.entry)}"
    queuefile.follow_citations(qf)  # the file's copies, human-owned entries' gates included
    queuefile.rebuild(qf)
    return changed, notes


def disagreements(result: Audit) -> list[str]:
    return [
        f"{r.label}: audit would say {r.verdict} ({r.rule}: {r.reason}); the human verdict {r.recorded} stands."
        for r in result.results
        if r.disagrees
    ]


def table(result: Audit):
    """A rich table of the results for people."""
    from rich.table import Table
    from rich.text import Text

    t = Table(show_lines=False)
    for col in ("entry", "verdict", "rule", "reason", "owner / blocked by", "gates"):
        t.add_column(col, overflow="fold")
    for r in result.results:
        verdict = r.verdict + (f" (human: {r.recorded})" if r.disagrees else "")
        who = r.owner or (", ".join(map(str, r.blocked_by)) if r.blocked_by else "")
        cells = [
            str(r.n) + (f" {r.part}" if r.part else ""),
            verdict,
            r.rule,
            r.reason,
            who,
            ", ".join(f"{g.id} @ {g.established_at}" if g.established_at else g.id for g in r.gates),
        ]
        t.add_row(*(Text(visible(c)) for c in cells))  # plain text: "[[map]]" is no markup; no control character
    return t
