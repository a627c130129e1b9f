"""One check: every producer of the registry in turn, then acknowledgements and filters."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from collections.abc import Callable
from pathlib import Path

from porttrack import gitio
from porttrack.queue import file as queuefile
from porttrack.config import Config
from porttrack.errors import UserError
from porttrack.model import SEVERITIES
from porttrack.stopwatch import Stage, untimed
from porttrack.outputs.check.findings import CheckResult, Finding
from porttrack.outputs.check.context import _Ctx, _rel, _subject_order, _toplevel
from porttrack.outputs.check.verdicts import _base_queue, untriaged_findings, verdict_findings
from porttrack.outputs.check.gate_checks import _gate_jobs, gate_findings
from porttrack.outputs.check.citations import citation_findings, landing_findings
from porttrack.outputs.check.imported import imported_citation_findings
from porttrack.outputs.check.rows import actionable_findings, behaviour_findings, owner_findings, prepin_findings
from porttrack.outputs.check.acks import apply_acks, filter_findings


@dataclass(frozen=True)
class Producer:
    """One family of findings: the codes it may raise and the function over the check's context."""

    name: str
    codes: tuple[str, ...]
    produce: Callable[[_Ctx], list[Finding]]


# The producers in the order they run: a later one may read what an earlier one left on the context
# (the gate producer's live gates, which `actionable` does not repeat). A new finding is a module
# with its function and a line here; tests hold every code in CODES to the producers that raise it.
PRODUCERS: tuple[Producer, ...] = (
    Producer("verdicts", ("verdict-incomplete",), verdict_findings),
    Producer("new entries", ("untriaged",), untriaged_findings),
    Producer("gates", ("gate-live", "gate-untrusted", "scan-incomplete"), gate_findings),
    Producer("gate citations", ("citation-stale", "citation-vanished"), citation_findings),
    Producer(
        "imported citations", ("citation-stale", "citation-vanished", "citation-unanchored"), imported_citation_findings
    ),
    Producer("landing notes", ("landing-stale", "landing-vanished"), landing_findings),
    Producer("owners", ("owner-missing", "owner-done"), owner_findings),
    Producer("actionable", ("actionable",), actionable_findings),
    Producer("pre-pin features", ("pre-pin-gap-unowned",), prepin_findings),
    Producer("behaviour", ("behaviour-behind-pin",), behaviour_findings),
)
ACK_CODES = ("ack-expired", "ack-unused")  # raised by the acknowledgements themselves (check/acks.py)


def run(
    cfg: Config,
    queue_path: Path,
    *,
    base: str | None = None,
    today: dt.date | None = None,
    progress: Callable[[int, int], None] | None = None,
    stage: Stage = untimed,
) -> CheckResult:
    """Check the queue at `queue_path` against the port tree at `cfg.port_root`; `progress(done, total)`
    hears about the files a cold probe scan indexes, and `stage(name)` wraps the queue's load
    ("load") and each producer (by its name), for a caller that times them (porttrack/stopwatch.py)."""
    with stage("load"):
        qf = queuefile.load(queue_path)
    root = cfg.port_root.resolve()
    ctx = _Ctx(cfg, root, qf, _rel(root, queue_path))
    ctx.progress = progress
    toplevel = _toplevel(root)
    tree = "working tree (not a git repository)"
    if toplevel is not None:
        sha, dirty = gitio.head_state(root, list(dict.fromkeys(cfg.code_scope + cfg.tests_scope)))
        tree = f"{sha or '(no commits)'}{' dirty' if dirty else ''}"
        ctx.head = gitio.rev_parse(root, "HEAD")
    if base is not None:
        if toplevel is None:
            raise UserError(f"--base {base}: the port root {root} is not a git repository.")
        ctx.base = _base_queue(toplevel, root, queue_path, base)
    ctx.jobs = _gate_jobs(ctx.q, ctx)
    for p in PRODUCERS:
        with stage(p.name):
            ctx.found += p.produce(ctx)
    kept, acked, ack_out = apply_acks(ctx, ctx.found, today or dt.date.today())
    shown, ignored = filter_findings(kept + ack_out, cfg.check_ignore, cfg.check_min_severity)
    shown.sort(
        key=lambda f: (-SEVERITIES.index(f.severity), f.entry if f.entry is not None else -1, f.code, f.path, f.line)
    )
    return CheckResult(
        root=root,
        queue_path=ctx.qrel,
        tree=tree,
        base=ctx.base[1] if ctx.base else None,
        findings=shown,
        acknowledged=acked,
        ignored=ignored,
        checks=sorted(ctx.checks, key=_subject_order),
        evidence=ctx.evidence,
        stats={
            "entries": len(ctx.q.entries),
            "gates": len(ctx.jobs),
            "scans": ctx.scans_run,
        },
        repo_prefix=root.relative_to(toplevel).as_posix() if toplevel is not None and toplevel != root else "",
        reanchors=ctx.reanchors,
    )
