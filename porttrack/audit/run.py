"""The audit run: one scan plan, every chosen entry judged, then the pre-pin pass."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any
from collections.abc import Callable

from porttrack import gitio
from porttrack.evidence import headers as headers_mod
from porttrack.evidence import naming
from porttrack.stopwatch import Stage, untimed
from porttrack.evidence import owners as owners_mod
from porttrack.config import Config
from porttrack.errors import UserError
from porttrack.model import UNPROBED_GATES, Entry, Queue
from porttrack.audit.results import Audit, Result, _Probes, _code, _entry_symbols, _owner_class, _part_symbols
from porttrack.audit.graph import _needs, adders, entries_label, waited_on_first
from porttrack.audit.subject import _Ctx
from porttrack.audit.registry import judge


def _plan(cfg: Config, queue: Queue, chosen: list[Entry]) -> dict[tuple[str, ...], tuple[list[str], list[str]]]:
    """Every symbol and regex the audit will probe, grouped by scope, so each scope is scanned once."""
    code = tuple(cfg.code_scope)
    add = adders(queue)
    symbols: set[str] = set()
    plan: dict[tuple[str, ...], tuple[list[str], list[str]]] = {code: ([], [])}
    for e in chosen:
        for syms in [_entry_symbols(e)] + [_part_symbols(e, p) for p in e.parts]:
            symbols.update(syms.added, syms.changed, syms.removed)
            symbols.update(s for s in _needs(syms) if s in add)
            # the classes of added members too: the pre-pin check asks whether the whole class is absent
            symbols.update(filter(None, map(_owner_class, [*syms.changed, *syms.removed, *syms.added])))
    # every other spelling a port may use (snake, Pascal, camel, kPascal), in the same one scan
    symbols.update(sp for x in list(symbols) for sp in naming.spellings(x))
    plan[code][0].extend(sorted(symbols))
    # gates already recorded on the chosen entries are probed too, so reports can show their counts
    recorded = [g for e in chosen for obj in e.and_parts for g in obj.gates]
    for g in [*recorded, *(g for rule in queue.rules for g in rule.gates)]:
        if g.kind in UNPROBED_GATES or not g.probe:
            continue
        sym, rx = plan.setdefault(tuple(g.scope or code), ([], []))
        (rx if g.regex else sym).append(g.probe)
        if g.control:
            sym.append(g.control)
    return plan


def audit(
    cfg: Config,
    queue: Queue,
    *,
    entries: set[int] | None = None,
    where: Callable[[int], str] | None = None,
    progress: Callable[[int, int], None] | None = None,
    stage: Stage = untimed,
) -> Audit:
    """Judge the chosen entries (all by default) and each of their parts.

    `where(n)` gives the queue path:line of entry n, cited by entry-ported gates; `progress(done,
    total)` hears about the files a cold probe scan indexes (the long part of a first audit);
    `stage(name)` wraps the pre-pin pass ("pre-pin"), for a caller that times it (porttrack/stopwatch.py).
    """
    if entries is not None:
        missing = sorted(entries - {e.n for e in queue.entries})
        if missing and not (entries & {e.n for e in queue.entries}):
            raise UserError(f"--entries names no entry of this queue (asked for {entries_label(missing)}).")
    chosen = [e for e in queue.entries if entries is None or e.n in entries]
    rows = owners_mod.load_rows(cfg.port_root, cfg.matrices, id_pattern=cfg.id_pattern)
    probes = _Probes(cfg, _plan(cfg, queue, chosen), progress)
    ctx = _Ctx(cfg, queue, probes, rows, where, chosen)
    by_entry: dict[int, list[Result]] = {}
    by_n = {e.n: e for e in chosen}
    try:
        # an entry is judged after those it waits on, so it reads their verdicts from this run
        for n in waited_on_first(ctx.graph, [e.n for e in chosen]):
            e = by_n[n]
            by_entry[n] = [judge(ctx, e, e, _entry_symbols(e), e.files)]
            by_entry[n] += [judge(ctx, e, p, _part_symbols(e, p), p.files or e.files) for p in e.parts]
    finally:
        ctx.close()
    results = [r for e in chosen for r in by_entry[e.n]]
    # recorded gates are judged here so that reports can cite their counts
    for e in chosen:
        for obj in e.and_parts:
            for g in obj.gates:
                if g.kind not in UNPROBED_GATES and g.probe:
                    # a word control for a regex probe is a ValueError: check reports that mismatch
                    with contextlib.suppress(ValueError):
                        probes.judge(g.probe, g.control or None, tuple(g.scope or ctx.scope))
    counts: dict[str, Any] = {}
    for scope in sorted(probes.scans, key=lambda sc: sc != ctx.scope):
        for k, v in probes.scans[scope].counts.items():
            counts.setdefault(k, v)
    judged = [p for _, p in sorted(probes.judged.items(), key=lambda kv: (kv[0][0] != ctx.scope, kv[0]))]
    out = Audit(results, ctx.tree, list(ctx.scope), judged, counts, rows, [e.n for e in chosen])
    with stage("pre-pin"):
        out.prepin = _prepin(cfg, queue, out, ctx)
    out.notices = unplaced_pins(ctx)
    return out


def unplaced_pins(ctx: _Ctx) -> list[str]:
    """One sentence for the port's header pins that neither the queue nor the upstream checkout can
    place: until they are fetched, `ported` rests on content evidence, never on those pins."""
    if ctx._provs is None:  # no rule needed the headers: no pin was relied on
        return []
    _, pins = ctx.provenance()
    files: dict[str, list[str]] = {}
    for pf, ps in sorted(pins.items()):
        for pin in ps:
            files.setdefault(pin, []).append(pf)
    # one pin written at several lengths (e24d1b24, e24d1b24fe96, ...) is one pin, named in full
    for pin in sorted(files, key=len):
        longer = next((p for p in sorted(files, key=len, reverse=True) if p != pin and p.startswith(pin)), None)
        if longer is not None:
            files[longer] = sorted(set(files[longer]) | set(files.pop(pin)))
    q = ctx.queue
    known = [e.sha for e in q.entries] + [q.meta.pin, q.meta.target]
    repo = ctx.cfg.upstream_repo
    missing = []
    for pin, pfs in sorted(files.items()):
        if any(k and headers_mod.pin_matches(pin, k) for k in known):
            continue
        if repo is not None and Path(repo).is_dir() and gitio.rev_parse(Path(repo), pin) is not None:
            continue
        missing.append((pin, pfs))
    if not missing:
        return []
    shown = "; ".join(f"{pin} (stated by {len(pfs)} port file(s), e.g. {pfs[0]})" for pin, pfs in missing[:5])
    more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
    where = f"the upstream checkout {repo}" if repo is not None else "this queue (no [upstream] repo is set)"
    fetch = (
        f"fetch {'it' if len(missing) == 1 else 'them'} into {repo} (git -C {repo} fetch <remote> {missing[0][0]})"
        if repo is not None
        else "set [upstream] repo to a checkout that has them"
    )
    return [
        f"PINS NOT PLACED: {shown}{more} cannot be found in {where}; {fetch}. "
        "Until then no entry is called ported by its pins; content evidence decides."
    ]


def _prepin(cfg: Config, queue: Queue, out: Audit, ctx: _Ctx):
    """The pre-pin pass over the results (porttrack/evidence/prepin.py): verdicts stay, evidence grows."""
    from porttrack.evidence import prepin

    def pins_for(upstream: str) -> list[str]:
        pins = ctx.provenance()[1]
        return [pin for pf in ctx.port_files(upstream) for pin in pins.get(pf, [])]

    def absent(symbol: str) -> bool:
        """Probed in the code scope with a working control, and no code hit."""
        if ctx.probes.count(symbol) is None:
            return False
        return ctx.probes.judge(symbol).status == "absent" and _code(ctx.probes.count(symbol)) == 0

    return prepin.run(cfg, queue, out, pins_for=pins_for, absent=absent, rows=ctx.rows)
