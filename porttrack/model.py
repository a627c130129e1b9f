"""The data model every stage shares: queue entries, their verdicts and gates.

Dataclasses only; reading and writing them lives in queuefile/
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import NamedTuple


class VerdictKind(NamedTuple):
    """What a verdict means to every stage: check's completeness rules, report's sections, audit."""

    deferred: bool  # waits on something the port lacks; check re-runs its gates
    needs_gate: bool  # must carry a gate whose condition keeps it deferred
    needs_reason: bool  # must say why in `reason`
    settled: bool  # no work left: owners and landing notes no longer matter
    untriaged: bool  # nobody (person or rule) has judged it yet


T, F = True, False
# The one verdict table every module reads.
#                                  deferred needs_gate needs_reason settled untriaged
VERDICT_TABLE: dict[str, VerdictKind] = {
    "real-gap": VerdictKind(F, F, F, F, F),
    "inert": VerdictKind(T, T, F, F, F),
    "blocked": VerdictKind(T, F, F, F, F),
    "owned": VerdictKind(T, F, F, F, F),
    "surface-absent": VerdictKind(T, T, F, F, F),
    "no-op": VerdictKind(F, F, T, T, F),
    "ported": VerdictKind(F, F, F, T, F),
    "ignore": VerdictKind(F, F, T, T, F),
    "untrusted": VerdictKind(F, F, F, F, T),
    "unclassified": VerdictKind(F, F, F, F, T),
}
del T, F
VERDICTS = tuple(VERDICT_TABLE)


def _verdicts(flag: str) -> frozenset[str]:
    return frozenset(v for v, kind in VERDICT_TABLE.items() if getattr(kind, flag))


DEFERRED = _verdicts("deferred")
NEEDS_GATE = _verdicts("needs_gate")
NEEDS_REASON = _verdicts("needs_reason")
SETTLED = _verdicts("settled")
UNTRIAGED = _verdicts("untriaged")
SEVERITIES = ("info", "warning", "error")  # check findings, lowest first; config's min_severity names one
GATE_KINDS = ("absent", "no-consumer", "count", "present", "entry-ported", "unmapped")
UNPROBED_GATES = ("entry-ported", "unmapped")  # kinds that count no symbol: the rest are probed
DISPOSITIONS = ("PORT-NOW", "INVENTORY", "IGNORE")
VERDICT_BY = ("human", "audit")


@dataclass
class Gate:
    """A recorded probe plus the condition that keeps its entry deferred (docs/design.md §6)."""

    id: str
    kind: str
    probe: str = ""  # symbol (or regex when `regex`); for unmapped, the upstream path; for entry-ported, unused
    scope: list[str] = field(default_factory=list)
    control: str = ""
    established_at: str = ""  # path:line citation, checked for staleness
    expect: int | None = None  # for kind == "count"
    entry: int | None = None  # for kind == "entry-ported": the entry waited on
    regex: bool = False


@dataclass
class Symbols:
    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    uses: list[str] = field(default_factory=list)  # identifiers the added lines use


@dataclass
class Citation:
    """A `path:line` an imported report cites as evidence, re-verified by `check` (docs/import.md).

    `tree` is the port tree the report read; `anchor` holds the identifiers the report's sentence
    names around the citation, and `text` the cited line as it read at `tree` when that tree was
    available at import: `check` looks for these to tell a moved line from a vanished one.
    """

    path: str
    line: int
    end: int = 0  # last line of a `path:l1-l2` range; 0 for a single line
    tree: str = ""
    source: str = ""  # report path:line the citation came from
    anchor: list[str] = field(default_factory=list)
    text: str = ""
    previous: list[str] = field(default_factory=list)  # "path:l1-l2 @ tree" before each re-anchoring

    @property
    def last(self) -> int:
        return max(self.end, self.line)

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}" + (f"-{self.end}" if self.end > self.line else "")


@dataclass
class Part:
    """One half of an entry that is judged on its own (e.g. "(b) per-state prefix alignment")."""

    name: str
    verdict: str = "unclassified"
    verdict_by: str = ""
    reason: str = ""
    owner: str = ""
    blocked_by: list[int] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    symbols: list[str] = field(default_factory=list)
    rule: str = ""
    gates: list[Gate] = field(default_factory=list)
    label: str = ""  # the imported report's label for this half, verbatim
    gate_text: str = ""  # an imported `inert:<gate>` gate, in the report's words


BEHAVIOUR_RESULTS = ("matches", "lacks", "mixed")


@dataclass
class Behaviour:
    """What the port's harness did on the kvref switch this entry's commit made (`validate kv --record`)."""

    result: str  # matches (supports ported) | lacks (supports real-gap) | mixed
    switch: str  # kvref's name for the switch
    semantics: str = ""  # the semantics the switch was toggled around
    harness: str = ""  # the name the harness gave in hello
    impl: str = ""  # the command that ran it
    cases: int = 0  # random cases after the edge cases, and their seed: the run can be repeated
    seed: int = 0
    agree: int = 0  # cases that tell the switch apart, answered as with it
    lack: int = 0  # ... as without it
    other: int = 0  # ... as neither
    case: int | None = None  # the case cited
    field: str = ""  # where its reply differs from kvref with the switch on
    expected: str = ""  # JSON
    got: str = ""  # JSON
    recorded: dt.date | None = None

    @property
    def supports(self) -> str:
        return {"matches": "ported", "lacks": "real-gap"}.get(self.result, "")

    def as_dict(self) -> dict:
        """The [entry.behaviour] table: empty citations and dates left out."""
        return {k: v for k, v in self.__dict__.items() if v is not None and v != ""}

    def same_observation(self, other: Behaviour) -> bool:
        mine, theirs = self.as_dict(), other.as_dict()
        mine.pop("recorded", None)
        theirs.pop("recorded", None)
        return mine == theirs


@dataclass
class Entry:
    n: int
    sha: str
    subject: str
    date: dt.date | None = None
    pr: int | None = None
    reverts: int | None = None  # the PR a revert reverts
    files: list[str] = field(default_factory=list)
    renames: dict[str, str] = field(default_factory=dict)  # new path -> old path
    stat: dict[str, list[int]] = field(default_factory=dict)  # path -> [insertions, deletions]; binary: [-1, -1]
    unreadable: list[str] = field(default_factory=list)  # files queue build could not read (missing from the mirror)
    disposition: str = "PORT-NOW"
    verdict: str = "unclassified"
    verdict_by: str = ""
    reason: str = ""
    owner: str = ""
    blocked_by: list[int] = field(default_factory=list)
    size: str = ""
    landing: str = ""
    rule: str = ""  # the audit rule that fired, e.g. "surface-absent"
    evidence: list[str] = field(default_factory=list)  # re-checkable probe lines written by audit
    symbols: Symbols = field(default_factory=Symbols)
    gates: list[Gate] = field(default_factory=list)
    parts: list[Part] = field(default_factory=list)
    # set by `queue import` (docs/import.md)
    source: str = ""  # report path:line the current verdict or disposition came from
    label: str = ""  # the report's label cell, verbatim
    gate_text: str = ""
    issues: list[int] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # continuation paragraphs (CORRECTED …), verbatim
    history: list[str] = field(default_factory=list)  # earlier reports' readings, oldest first
    upstream_missing: bool = False  # the sha was not found in the upstream checkout at import
    citations: list[Citation] = field(default_factory=list)
    behaviour: Behaviour | None = None  # written by validate kv --record

    @property
    def short(self) -> str:
        return self.sha[:8]

    @property
    def and_parts(self) -> list[Entry | Part]:
        """The entry, then its parts: everything that carries a verdict."""
        return [self, *self.parts]


@dataclass
class Rule:
    """A standing disposition: every entry touching only `upstream` gets `verdict` while gates hold."""

    upstream: str
    verdict: str
    reason: str = ""
    gates: list[Gate] = field(default_factory=list)


@dataclass
class Ack:
    """An acknowledged check finding, with a reason and an expiry date."""

    code: str
    reason: str
    entry: int | None = None
    expires: dt.date | None = None
    gate: str = ""


@dataclass
class QueueMeta:
    name: str
    upstream: str = ""
    pin: str = ""
    target: str = ""
    paths: list[str] = field(default_factory=list)
    range_commits: int = 0  # commits in the whole range, mirrored or not


@dataclass
class Queue:
    meta: QueueMeta
    entries: list[Entry] = field(default_factory=list)
    rules: list[Rule] = field(default_factory=list)
    acks: list[Ack] = field(default_factory=list)

    def entry(self, n: int) -> Entry | None:
        return next((e for e in self.entries if e.n == n), None)

    def entry_of(self, n: int) -> Entry:
        """The entry numbered n, which the caller took from this queue (a KeyError otherwise)."""
        e = self.entry(n)
        if e is None:
            raise KeyError(f"entry {n} is not in queue {self.meta.name!r}")
        return e

    def moves(self) -> dict[str, list[tuple[str, int]]]:
        """upstream path -> (the path an entry renamed it to or from, that entry's number), both ways
        and in queue order: a file the upstream moved keeps its port counterpart under either name."""
        out: dict[str, list[tuple[str, int]]] = {}
        for e in self.entries:
            for new, old in e.renames.items():
                out.setdefault(old, []).append((new, e.n))
                out.setdefault(new, []).append((old, e.n))
        return out

    @property
    def next_n(self) -> int:
        return max((e.n for e in self.entries), default=0) + 1
