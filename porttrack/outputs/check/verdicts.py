"""Findings on verdicts: what docs/design.md §5 requires of each, and new entries left untriaged."""

from __future__ import annotations

from pathlib import Path

from porttrack import gitio
from porttrack.queue import file as queuefile
from porttrack.errors import UserError
from porttrack.model import NEEDS_GATE, NEEDS_REASON, UNTRIAGED, Entry, Part, Queue
from porttrack.outputs.check.findings import Finding
from porttrack.outputs.check.context import _Ctx, _owners


def verdict_findings(ctx: _Ctx) -> list[Finding]:
    """Every verdict carries what docs/design.md §5 requires of it."""
    out = []
    for e in ctx.q.entries:
        for label, obj, part in _owners(e):
            ctx.checks.add(f"{label} verdict")
            need = _missing(obj)
            if need:
                out.append(
                    ctx.verdict_finding(
                        "verdict-incomplete",
                        e,
                        label,
                        part,
                        f"{label} is {obj.verdict!r} but has {need[0]}.",
                        f"Add {need[1]} to {label}, or change its verdict.",
                    )
                )
    return out


def _missing(obj: Entry | Part) -> tuple[str, str] | None:
    v = obj.verdict
    if v in NEEDS_GATE and not obj.gates:
        if obj.gate_text:  # an imported report named the gate in words only (docs/import.md)
            return (f"only a gate in words ({obj.gate_text!r})", "a [[entry.gate]] that tests it")
        return ("no gate", "a [[entry.gate]] whose condition keeps it deferred")
    # a member the port lacks in its class, while the name has hits elsewhere, is held by a count gate;
    # a file with no port counterpart, where the change names nothing, by an unmapped gate
    if v == "surface-absent" and not any(g.kind in ("absent", "count", "unmapped") for g in obj.gates):
        return ("no absent gate", "an `absent` gate naming the upstream surface the port lacks")
    if v == "blocked" and not obj.blocked_by:
        return ("an empty blocked_by", "blocked_by = [the entries it waits on]")
    if v == "owned" and not obj.owner:
        return ("no owner", "owner = the matrix row ID that tracks it")
    if v in NEEDS_REASON and not obj.reason.strip():
        return ("no reason", "a reason saying why")
    return None


def _base_queue(toplevel: Path, root: Path, queue_path: Path, base: str) -> tuple[Queue | None, str]:
    """The queue as it was at `base` (None when the file did not exist there)."""
    sha = gitio.rev_parse(root, base)
    if sha is None:
        raise UserError(f"--base {base!r} is no commit of the port repository {toplevel}.")
    rel = queue_path.resolve().relative_to(toplevel).as_posix()
    with gitio.CatFile(toplevel) as cat:
        blob = cat.read(f"{sha}:{rel}")
    label = f"{base} ({sha[:12]})"
    if blob is None:
        return None, label
    try:
        text = blob.decode("utf-8")
    except UnicodeDecodeError:
        raise UserError(f"{rel} at --base {base} is not UTF-8 text.") from None
    return queuefile.loads(text, Path(f"{rel}@{base}")).queue, label


def untriaged_findings(ctx: _Ctx) -> list[Finding]:
    """Entries added since the base (`--base`) must be triaged: no unclassified or untrusted verdict."""
    if ctx.base is None:
        return []
    base_q = ctx.base[0]
    old = {e.n for e in base_q.entries} if base_q else set()
    out = []
    for e in ctx.q.entries:
        if e.n in old:
            continue
        for label, obj, part in _owners(e):
            ctx.checks.add(f"{label} verdict")
            if obj.verdict in UNTRIAGED:
                why = (
                    "was added since the base and is not triaged"
                    if obj.verdict == "unclassified"
                    else "was added since the base with untrusted evidence (a positive control failed)"
                )
                out.append(
                    ctx.verdict_finding(
                        "untriaged",
                        e,
                        label,
                        part,
                        f"{label} ({e.short} {e.subject}) {why}.",
                        f"Run `porttrack audit --entries {e.n} --write`, then confirm or set a verdict for {label}.",
                    )
                )
    return out
