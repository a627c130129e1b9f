"""Behavioural evidence: what a port's harness did on each kvref semantics switch, and where it goes.

`validate kv` sends cases and compares replies with kvref at one semantics.
Here each switch is judged on its own: against the semantics of the run (the
`--as-of` point, or the point detection found closest), a switch is toggled
on and off; the cases whose kvref answers differ between the two are the ones
that can tell, and the harness's replies to them say whether the port behaves
as with the switch (`matches`), as without it (`lacks`), or both (`mixed`).
`validate kv --record` writes that into the queue entries whose upstream
commit is the switch's (docs/harness.md), where audit and check read it.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from porttrack.errors import UserError
from porttrack.model import Behaviour, Entry

NOT_PORTED = "NotPorted"  # a harness's error for an input the port cannot express (docs/protocol.md)


def is_not_ported(reply: Any) -> bool:
    return isinstance(reply, dict) and reply.get("ok") is False and reply.get("error") == NOT_PORTED


@dataclass
class SwitchEvidence:
    switch: str
    sha: str
    pr: int | None
    agree: int = 0  # cases that can tell, answered as with the switch on
    lack: int = 0  # ... as with it off
    other: int = 0  # ... as neither (another divergence hides this one)
    case: int | None = None  # the case cited: the first lacking one, else the first agreeing one
    field: str = ""  # where that case's reply differs from kvref with the switch on
    expected: Any = None
    got: Any = None

    @property
    def result(self) -> str:
        """matches | lacks | mixed | undetermined (no case could tell)."""
        if self.agree and self.lack:
            return "mixed"
        if self.lack:
            return "lacks"
        if self.agree:
            return "matches"
        return "undetermined"

    def as_json(self) -> dict:
        return {
            "switch": self.switch,
            "sha": self.sha,
            "pr": self.pr,
            "result": self.result,
            "agree": self.agree,
            "lack": self.lack,
            "other": self.other,
            "case": self.case,
            "field": self.field or None,
            "expected": self.expected,
            "got": self.got,
        }


class _Answers:
    """kvref's answers per (case, switch set), computed once each."""

    def __init__(self, kcases, semantics):
        self.kcases, self.semantics = kcases, semantics
        self._memo: dict[tuple[int, frozenset], Any] = {}

    def __call__(self, case: dict, on: frozenset) -> dict | None:
        key = (case["id"], on)
        if key not in self._memo:
            self._memo[key] = self.kcases.answer(case, self.semantics.Semantics(on, "+".join(sorted(on))))
        return self._memo[key]


def _same(expected: dict | None, reply: Any) -> bool:
    from porttrack.validation.validate import compare

    return expected is not None and isinstance(reply, dict) and compare(expected, reply)[0] is None


def switch_evidence(sent: list[tuple[dict, Any]], sem, kcases, semantics) -> list[SwitchEvidence]:
    """Per switch: toggled on and off around `sem`, how the harness answered the cases that can tell."""
    from porttrack.validation.validate import compare

    answers = _Answers(kcases, semantics)
    out = []
    for s in semantics.SWITCHES:
        ev = SwitchEvidence(s.name, s.sha, s.pr)
        on, off = frozenset(sem.on | {s.name}), frozenset(sem.on - {s.name})
        first_agree = None
        for case, reply in sent:
            if not isinstance(reply, dict) or is_not_ported(reply):
                continue
            a_on, a_off = answers(case, on), answers(case, off)
            if a_on is None or a_off is None or a_on == a_off:
                continue  # this case cannot tell the switch apart
            if _same(a_on, reply):
                ev.agree += 1
                first_agree = first_agree or case["id"]
                continue
            if _same(a_off, reply):
                ev.lack += 1
            else:
                ev.other += 1
            if ev.case is None and _same(a_off, reply):
                ev.case = case["id"]
                where, ev.expected, ev.got = compare(a_on, reply)
                ev.field = where or ""
        if ev.case is None:
            ev.case = first_agree
        out.append(ev)
    return out


def failure_switches(case: dict, reply: Any, sem, kcases, semantics) -> list[str]:
    """The switches whose toggling alone makes kvref answer as the harness did: what a failure belongs to."""
    hits = []
    for s in semantics.SWITCHES:
        on = frozenset(sem.on ^ {s.name})
        if _same(kcases.answer(case, semantics.Semantics(on, s.name)), reply):
            hits.append(s.name)
    return hits


# ---------------------------------------------------------------- into the queue


def entries_for(entries: list[Entry], sha: str, pr: int | None) -> list[Entry]:
    """Queue entries whose upstream commit is a switch's: same sha prefix, or the same PR."""
    return [
        e
        for e in entries
        if (sha and e.sha and (e.sha.startswith(sha) or sha.startswith(e.sha))) or (pr is not None and e.pr == pr)
    ]


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True)  # None is `null`: a reply's missing list is a value here


def behaviour_of(ev: SwitchEvidence, report, today: dt.date) -> Behaviour:
    return Behaviour(
        result=ev.result,
        switch=ev.switch,
        semantics=report.semantics or "",
        harness=str(report.harness.get("name", "")),
        impl=report.impl,
        cases=report.cases,
        seed=report.seed,
        agree=ev.agree,
        lack=ev.lack,
        other=ev.other,
        case=ev.case,
        field=ev.field or "",
        expected=_json(ev.expected) if ev.field else "",
        got=_json(ev.got) if ev.field else "",
        recorded=today,
    )


@dataclass
class Recorded:
    queue: Path
    written: list[tuple[int, str, str]]  # (entry, switch, result)
    unchanged: int  # entries whose evidence was already the same
    no_entry: list[str]  # switches with evidence but no queue entry
    undetermined: list[str]  # switches no sent case could tell apart


def record(queue_path: Path, report, evidence: list[SwitchEvidence], today: dt.date | None = None) -> Recorded:
    """Write each decided switch's evidence into the queue entries of its commit (queuefile keeps the rest)."""
    from porttrack.queue import file as queuefile

    qf = queuefile.load(queue_path)
    today = today or dt.date.today()
    written, no_entry, undetermined, unchanged = [], [], [], 0
    tables = {t.get("n"): t for t in qf.doc.get("entry", [])}
    for ev in evidence:
        if ev.result == "undetermined":
            undetermined.append(ev.switch)
            continue
        hits = entries_for(qf.queue.entries, ev.sha, ev.pr)
        if not hits:
            no_entry.append(ev.switch)
            continue
        for e in hits:
            new = behaviour_of(ev, report, today)
            if e.behaviour is not None and e.behaviour.same_observation(new):
                unchanged += 1
                continue
            queuefile.set_fields(tables[e.n], {"behaviour": new})
            written.append((e.n, ev.switch, ev.result))
    if written:
        queuefile.rebuild(qf)
        queuefile.save(qf)
    return Recorded(queue_path, written, unchanged, no_entry, undetermined)


def recorded_queue(explicit: Path | None) -> Path:
    """The queue `--record` writes: --queue, else the porttrack.toml's queue found from here."""
    from porttrack import config as config_mod

    if explicit is not None and not explicit.is_file():
        raise UserError(f"--queue {explicit} is not a file.")
    try:
        cfg = config_mod.resolve_config(None)
    except UserError:
        if explicit is not None:
            return explicit
        raise UserError(
            "--record needs a queue: pass --queue FILE, or run from a port with a porttrack.toml."
        ) from None
    return config_mod.queue_path(cfg, explicit) if explicit is None else explicit
