"""Results, probes and evidence lines: what a judgement records, and the one scan it reads."""

from __future__ import annotations

import heapq
import re
from dataclasses import dataclass, field
from typing import Any

from porttrack.evidence import naming, owners as owners_mod
from porttrack.config import Config
from porttrack.errors import UserError
from porttrack.model import Entry, Gate, Part
from porttrack.symbols.defs import probe_name


HIT_LIMIT = 5  # hits cited per probe in evidence; the count says how many there are in all


@dataclass
class EntrySymbols:
    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    uses: list[str] = field(default_factory=list)


def _probe_names(names: list[str]) -> list[str]:
    """Names as a probe can look for them (`Impl<ISA::AMX, T>::run` is `Impl::run`), once each; a
    name no identifier spells (`Impl::~Impl`, which queues built by earlier versions hold) is
    left out rather than stopping the audit."""
    return list(dict.fromkeys(n for n in map(probe_name, names) if n))


def _entry_symbols(e: Entry) -> EntrySymbols:
    s = e.symbols
    return EntrySymbols(_probe_names(s.added), _probe_names(s.changed), _probe_names(s.removed), _probe_names(s.uses))


def _part_symbols(e: Entry, p: Part) -> EntrySymbols:
    """A part's symbols, sorted into the entry's categories; a name the entry never listed counts as changed."""
    if not p.symbols:
        return _entry_symbols(e)
    part = _probe_names(p.symbols)
    mine = set(part)
    whole = _entry_symbols(e)
    known = {*whole.added, *whole.changed, *whole.removed, *whole.uses}
    return EntrySymbols(
        [s for s in whole.added if s in mine],
        [s for s in whole.changed if s in mine] + [s for s in part if s not in known],
        [s for s in whole.removed if s in mine],
        [s for s in whole.uses if s in mine],
    )


@dataclass
class Result:
    """What audit concludes for one entry, or one part of it."""

    n: int
    part: str | None
    verdict: str
    rule: str  # e.g. "8.5 surface-absent" or "path-rule vllm/v1/kv_offload/**"
    reason: str
    evidence: list[str] = field(default_factory=list)
    gates: list[Gate] = field(default_factory=list)
    owner: str = ""
    blocked_by: list[int] = field(default_factory=list)
    recorded: str = "unclassified"  # the verdict the queue holds now
    recorded_by: str = ""
    probes: list[str] = field(default_factory=list)  # symbols probed for this result

    @property
    def label(self) -> str:
        return f"entry {self.n}" + (f" part {self.part!r}" if self.part else "")

    @property
    def human(self) -> bool:
        """A verdict a person set: verdict_by = "human", or a verdict written with no verdict_by at all."""
        return self.recorded_by == "human" or (not self.recorded_by and self.recorded not in ("", "unclassified"))

    @property
    def disagrees(self) -> bool:
        return self.human and self.recorded != self.verdict

    def as_json(self) -> dict:
        return {
            "entry": self.n,
            "part": self.part,
            "verdict": self.verdict,
            "rule": self.rule,
            "reason": self.reason,
            "owner": self.owner,
            "blocked_by": self.blocked_by,
            "gates": [{k: v for k, v in g.__dict__.items() if v not in (None, "", [], False)} for g in self.gates],
            "evidence": self.evidence,
            "recorded": self.recorded,
            "recorded_by": self.recorded_by,
        }


@dataclass
class Audit:
    results: list[Result]
    tree: str  # port commit probed, plus " (dirty)"
    scope: list[str]
    probes: list[Any]  # every probe.Probe judged, by scope then symbol
    counts: dict[str, Any]  # symbol -> probe.Count (code scope first)
    rows: list[owners_mod.Row]
    entries: list[int]  # the entries judged
    prepin: Any = None  # prepin.Outcome: pre-pin gaps and net-zero pairs (docs/audit.md)
    notices: list[str] = field(default_factory=list)  # said once, loudly: e.g. pins the upstream lacks


def _slug(s: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", s).strip("-").lower() or "probe"


def _code(count) -> int:
    return int(getattr(count, "code", 0) or 0) if count is not None else 0


def _hits(count, kinds: tuple[str, ...] | None = None) -> list:
    if count is None:
        return []
    return [h for h in getattr(count, "hits", []) if kinds is None or h.kind in kinds]


def _definition(count) -> str:
    """path:line of a definition hit, else of the first code hit outside tests."""
    for kinds in (("definition",), ("consumer", "delegation"), ("test",), None):
        hs = _hits(count, kinds)
        if hs:
            return f"{hs[0].path}:{hs[0].line}"
    return ""


class _Probes:
    """One scan per distinct scope (the whole audit normally has one), judged lazily per symbol."""

    def __init__(self, cfg: Config, scans: dict[tuple[str, ...], tuple[list[str], list[str]]], progress=None):
        from porttrack import probe

        self._probe = probe
        self.cfg = cfg
        self.scans = {}
        self.judged: dict[tuple[tuple[str, ...], str, str], Any] = {}
        self._defined: dict[str, list] = {}
        for scope, (symbols, regexes) in scans.items():
            try:
                self.scans[scope] = probe.scan(
                    cfg.port_root,
                    sorted(set(symbols)),
                    regexes=tuple(sorted(set(regexes))),
                    scope=list(scope),
                    **probe.config_options(cfg),
                    texts=False,  # evidence cites path:line, never a hit's text: a warm scan reads no file
                    progress=progress,
                )
            except re.error as e:
                raise UserError(f"a gate regex in scope {' '.join(scope)} does not compile ({e}).") from None

    def judge(self, symbol: str, control: str | None = None, scope: tuple[str, ...] | None = None):
        scope = scope or tuple(self.cfg.code_scope)
        key = (scope, symbol, control or "")
        if key not in self.judged:
            self.judged[key] = self._probe.judge(self.scans[scope], symbol, control or None)
        return self.judged[key]

    def count(self, symbol: str, scope: tuple[str, ...] | None = None):
        scan = self.scans[scope or tuple(self.cfg.code_scope)]
        return scan.counts.get(symbol)

    def definitions(self, symbol: str) -> list:
        """The definition hits of `symbol` in the code scope: controls are chosen among the same few
        candidates for every absent name, so each is filtered once."""
        if symbol not in self._defined:
            self._defined[symbol] = _hits(self.count(symbol), ("definition",))
        return self._defined[symbol]

    @property
    def tree(self) -> str:
        scan = self.scans.get(tuple(self.cfg.code_scope)) or next(iter(self.scans.values()), None)
        return tree_text(scan.tree) if scan is not None else ""


def tree_text(tree) -> str:
    """The port commit probed, in full, plus "+dirty" for a modified working tree."""
    if getattr(tree, "commit", None) is None:
        return str(tree)
    return tree.commit + ("+dirty" if tree.dirty else "")


def probe_line(symbol: str, p, c, scope: tuple[str, ...], tree: str) -> str:
    """One re-checkable evidence line: tree, scope, probe, counts, and the control's count."""
    ctl = f"control {p.control}: code {_code(p.control_count)}" if p.control else "no control"
    how = f" ({p.control_how})" if p.control_how else ""
    extra = ""
    if c is not None:
        extra = f", raw {c.raw}, files {c.files}, definitions {c.definitions}, consumers {c.consumers}, tests {c.tests}"
    return f"probe {symbol} @ {tree} in {' '.join(scope)}: {p.status}, code {_code(c)}{extra}; {ctl}{how}"


_CODE_KINDS = ("definition", "consumer", "delegation")
_KIND_ORDER = {"definition": 0, "consumer": 1, "delegation": 2, "test": 3, "comment": 4}


def hit_lines(symbol: str, c) -> list[str]:
    hs = _hits(c)
    # the first few in order, without sorting the thousands of hits a common name has
    first = heapq.nsmallest(HIT_LIMIT, hs, key=lambda h: (_KIND_ORDER.get(h.kind, 5), h.path, h.line))
    lines = [f"  {symbol} {h.kind} {h.path}:{h.line}" for h in first]
    if len(hs) > HIT_LIMIT:
        lines.append(f"  {symbol}: {len(hs) - HIT_LIMIT} more hits")
    return lines


def _owner_class(symbol: str) -> str | None:
    """`KVBlockZeroer` for `KVBlockZeroer.zero_block_ids` (or `A::b`), None for a bare name."""
    parts = naming.parts(symbol)
    return parts[-2] if len(parts) > 1 else None
