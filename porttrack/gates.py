"""What a gate means: whether its condition still holds, is live, or cannot be judged.

Audit (path rules' gates) and check (every recorded gate) both ask here, so a gate
means the same thing wherever it is read.
"""

from __future__ import annotations

from typing import NamedTuple

from porttrack.evidence import naming
from porttrack.model import SETTLED, Entry, Gate

HOLDS, LIVE, UNTRUSTED, INCOMPLETE = "holds", "live", "untrusted", "incomplete"


class GateState(NamedTuple):
    state: str  # HOLDS | LIVE | UNTRUSTED | INCOMPLETE
    why: str  # for LIVE: what changed; for UNTRUSTED: why the count is no evidence
    hits: list  # for LIVE: the probe's hits that make it live (Hit objects), most telling first


def relies_on_zero(g: Gate) -> bool:
    """A gate whose holding is a zero (no hit, no consumer): evidence only with a control that counts code."""
    return g.kind in ("absent", "no-consumer") or (g.kind == "count" and g.expect == 0)


def _code_hits(count, kinds=("definition", "consumer", "delegation")) -> list:
    return [h for h in count.hits if h.kind in kinds]


def probe_state(g: Gate, count, status: str, control: str | None, control_code: int, scope: str) -> GateState:
    """One probed gate (absent, present, count, no-consumer) judged from its probe's count and status.

    `status` is the probe's ("present", "absent", "untrusted", "incomplete"); `control_code` the
    code hits of its positive control; `scope` the scope as text, for the sentences.
    """
    what = f"/{g.probe}/" if g.regex else g.probe
    if status == INCOMPLETE:
        return GateState(INCOMPLETE, f"part of {scope} could not be read, so the count of {what} is unknown", [])
    code = count.code
    live: tuple[str, list] | None = None
    if g.kind == "absent" and code > 0:
        live = (f"{what} is no longer absent from {scope}: {code} code hit(s)", _code_hits(count))
    elif g.kind == "present" and code == 0 and status != UNTRUSTED:
        live = (f"{what} is no longer present in {scope}", [])
    elif g.kind == "count" and code != g.expect and (code or status != UNTRUSTED):
        live = (f"{what} now has {code} code hit(s) in {scope}, not {g.expect}", _code_hits(count))
    elif g.kind == "no-consumer":
        if naming.is_entry_point(g.probe):  # audit's `inert` asks the same (audit/rules_content.py `_reached`)
            live = (f"{what} is a program's entry point: the runtime calls it, whoever reads it", [])
        elif count.consumers > 0:
            n = count.consumers
            live = (f"{what} has {n} consumer{'' if n == 1 else 's'} now", _code_hits(count, ("consumer",)))
        elif count.definitions == 0 and code == 0 and status != UNTRUSTED:
            live = (f'{what} is no longer defined in {scope}, so "no consumer" proves nothing', [])
    if live:
        return GateState(LIVE, *live)
    if status == UNTRUSTED or (relies_on_zero(g) and control_code == 0):
        why = (
            f"its positive control {control!r} has {control_code} code hit(s) in {scope}"
            if control
            else "no positive control"
        )
        return GateState(UNTRUSTED, why, [])
    return GateState(HOLDS, "", [])


def counterpart_state(g: Gate, counterparts: list[str]) -> GateState:
    """An unmapped gate holds while no provenance header or [[map]] gives its upstream path a port file."""
    if counterparts:
        return GateState(LIVE, f"{g.probe} has a port counterpart now: {', '.join(counterparts)}", [])
    return GateState(HOLDS, "", [])


def entry_state(g: Gate, waited: Entry | None) -> GateState:
    """An entry-ported gate holds while the entry it waits on is missing or not settled: once it is
    ported, no-op or ignore, no work is left to wait for."""
    if waited is not None and waited.verdict in SETTLED:
        return GateState(LIVE, f"entry {waited.n} is {waited.verdict} now", [])
    return GateState(HOLDS, "", [])
