"""What a written queue already says, as an audit result: the reports' input when every entry is judged.

`report sync` and `report deferral` render verdicts; audit has written them (or a person
has). Re-running every rule for a report cost minutes on a real queue while `check` reads
the same queue in seconds, so a report of a written queue re-derives only what `check`
does: the port's tree, one scan of the gates' probes with their controls, and the pre-pin
gaps from the evidence audit recorded. A queue with an entry left unjudged is audited as
before (docs/reports.md).
"""

from __future__ import annotations

from collections.abc import Callable

from porttrack import gitio, probe
from porttrack.evidence import prepin
from porttrack.audit import Audit
from porttrack.config import Config
from porttrack.model import UNPROBED_GATES, UNTRIAGED, Entry, Queue


def judged(entries: list[Entry]) -> bool:
    """Does every entry (and part) carry a written verdict?"""
    return all(obj.verdict not in UNTRIAGED for e in entries for obj in e.and_parts)


def result(cfg: Config, queue: Queue, entries: list[Entry], progress: Callable[[int, int], None] | None) -> Audit:
    """The queue's own verdicts as an Audit: no rule runs."""
    root = cfg.port_root
    sha, dirty = gitio.head_state(root, list(cfg.code_scope)) if gitio.is_git_repo(root) else (None, False)
    tree = f"{sha or 'working tree'}{' (dirty)' if dirty else ''}"
    gates = [g for e in entries for obj in e.and_parts for g in obj.gates if g.kind not in UNPROBED_GATES and g.probe]
    symbols = sorted({g.probe for g in gates if not g.regex} | {g.control for g in gates if g.control})
    probes = []
    if symbols:
        scan = probe.scan(
            root, symbols, scope=list(cfg.code_scope), **probe.config_options(cfg), texts=False, progress=progress
        )
        controls = {g.probe: g.control or None for g in gates if not g.regex}
        probes = [probe.judge(scan, s, controls.get(s)) for s in symbols]
    return Audit(
        results=[],
        tree=tree,
        scope=list(cfg.code_scope),
        probes=probes,
        counts={p.symbol: p.count for p in probes},
        rows=[],
        entries=[e.n for e in entries],
        prepin=prepin.recorded(cfg, queue),
    )
