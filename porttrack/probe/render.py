"""Rich renderables of probes for people; the CLI prints them."""

from __future__ import annotations

from porttrack.probe.model import Probe


def render(probes: list[Probe], max_hits: int = 12) -> list:
    """Rich renderables for people: one table of probes, then each probe's hits (the first few)."""
    from rich.table import Table
    from rich.text import Text

    if not probes:
        return []
    first = probes[0]
    colour = {"present": "green", "absent": "cyan", "untrusted": "red", "incomplete": "yellow"}
    t = Table(
        title=f"probe of {first.tree} in {', '.join(first.scope) or '(no scope)'}: {first.files_scanned} files scanned (scope and tests)",
        title_justify="left",
    )
    for col in ("symbol", "status", "code", "raw", "files", "defs", "tests", "consumers", "control"):
        t.add_column(col, justify="right" if col in ("code", "raw", "files", "defs", "tests", "consumers") else "left")
    for p in probes:
        c = p.count
        ctrl = f"{p.control} ({p.control_count.code})" if p.control and p.control_count else "—"
        t.add_row(
            Text(p.symbol),
            Text(p.status, style=colour.get(p.status, "")),
            str(c.code),
            str(c.raw),
            str(c.files),
            str(c.definitions),
            str(c.tests),
            str(c.consumers),
            Text(ctrl),
        )
    out: list = [t]
    for p in probes:
        lines = Text()
        names = ", ".join(p.count.variants)
        lines.append(f"{p.symbol}", style="bold")
        lines.append(f" [{p.form}: {names}] control: {p.control_how}")
        if p.reason:
            lines.append(f"\n  {p.status}: {p.reason}", style=colour.get(p.status, ""))
        for h in p.count.hits[:max_hits]:
            kind = f"{h.kind} ({h.why})" if h.why else h.kind
            lines.append(f"\n  {h.path}:{h.line}  {kind:<22} {h.text[:100]}")
        if len(p.count.hits) > max_hits:
            lines.append(f"\n  … {len(p.count.hits) - max_hits} more hits (--json lists all)")
        out.append(lines)
    if first.incomplete:
        out.append(Text("incomplete: " + "; ".join(first.incomplete[:10]), style="yellow"))
    return out
