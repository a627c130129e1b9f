"""Decoding and validating a queue file's tables into the model, each bad value named by file and line."""

from __future__ import annotations

from typing import TYPE_CHECKING

import datetime as dt
import re
from dataclasses import fields
from pathlib import Path
from typing import Any
from collections.abc import Callable


from porttrack import gitio
from porttrack import paths as pathrules
from porttrack.config import key_line
from porttrack.errors import UserError
from porttrack.model import (
    DISPOSITIONS,
    GATE_KINDS,
    VERDICT_BY,
    BEHAVIOUR_RESULTS,
    VERDICTS,
    Ack,
    Behaviour,
    Citation,
    Entry,
    Gate,
    Part,
    Queue,
    QueueMeta,
    Rule,
    Symbols,
)
from porttrack.queue.file.lines import _Lazy, _Where

if TYPE_CHECKING:  # the document module imports this one
    from porttrack.queue.file.document import QueueFile


def _expect(value: Any, types: type | tuple, where: str, what: str, human: str) -> Any:
    if not isinstance(value, types) or (
        isinstance(value, bool) and bool not in (types if isinstance(types, tuple) else (types,))
    ):
        raise UserError(f"{where}: {what} must be {human}, not {type(value).__name__}.")
    return value


def _str_list(value: Any, where: str, what: str) -> list[str]:
    _expect(value, list, where, what, "a list of strings")
    if not all(isinstance(v, str) for v in value):
        raise UserError(f"{where}: {what} must be a list of strings.")
    return list(value)


def _int_list(value: Any, where: str, what: str) -> list[int]:
    _expect(value, list, where, what, "a list of entry numbers")
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        raise UserError(f"{where}: {what} must be a list of entry numbers.")
    return list(value)


def _gate(raw: Any, where: str, owner: str) -> Gate:
    if not isinstance(raw, dict):
        raise UserError(f"{where}: {owner} gate must be a table.")
    kind = raw.get("kind", "")
    if kind not in GATE_KINDS:
        raise UserError(
            f"{where}: {owner} gate {raw.get('id', '?')!r} has unknown kind {kind!r} (one of {', '.join(GATE_KINDS)})."
        )
    g = Gate(id=str(raw.get("id", "")), kind=kind)
    for key in ("probe", "control", "established_at"):
        if key in raw:
            setattr(g, key, _expect(raw[key], str, where, f"{owner} gate {g.id!r} {key}", "a string"))
    if "scope" in raw:
        g.scope = _str_list(raw["scope"], where, f"{owner} gate {g.id!r} scope")
        for s in g.scope:
            bad = (
                "is an empty path"
                if not s.strip()
                else "is an absolute path"
                if s.startswith(("/", "\\", "~")) or re.match(r"[A-Za-z]:[\\/]", s)
                else "lies outside the port root"
                if ".." in re.split(r"[\\/]", s)
                else ""
            )
            if bad:
                raise UserError(
                    f"{where}: {owner} gate {g.id!r} scope {s!r} {bad}; scopes are paths under the port root."
                )
    if "expect" in raw:
        g.expect = _expect(raw["expect"], int, where, f"{owner} gate {g.id!r} expect", "an integer")
    if "entry" in raw:
        g.entry = _expect(raw["entry"], int, where, f"{owner} gate {g.id!r} entry", "an entry number")
    if "regex" in raw:
        g.regex = _expect(raw["regex"], bool, where, f"{owner} gate {g.id!r} regex", "true or false")
    if kind == "count" and g.expect is None:
        raise UserError(f"{where}: {owner} gate {g.id!r} of kind count needs expect = N.")
    if kind == "entry-ported" and g.entry is None:
        raise UserError(f"{where}: {owner} gate {g.id!r} of kind entry-ported needs entry = N.")
    if kind != "entry-ported" and not g.probe:
        raise UserError(f"{where}: {owner} gate {g.id!r} needs a probe.")
    if g.regex and g.probe:
        try:
            re.compile(g.probe, re.MULTILINE)
        except re.error as e:
            raise UserError(f"{where}: {owner} gate {g.id!r} regex {g.probe!r} does not compile ({e}).") from None
    return g


def _behaviour(raw: Any, where, owner: str) -> Behaviour:
    """[entry.behaviour]: what validate kv --record observed (docs/harness.md)."""
    _expect(raw, dict, where("behaviour"), f"{owner} behaviour", "a table")
    here = where("result")
    if raw.get("result") not in BEHAVIOUR_RESULTS:
        raise UserError(
            f"{here}: {owner} behaviour.result must be one of {', '.join(BEHAVIOUR_RESULTS)}, "
            f"not {raw.get('result')!r}."
        )
    b = Behaviour(
        result=raw["result"], switch=_expect(raw.get("switch", ""), str, here, f"{owner} behaviour.switch", "a string")
    )
    for key in ("semantics", "harness", "impl", "field", "expected", "got"):
        if key in raw:
            setattr(b, key, _expect(raw[key], str, here, f"{owner} behaviour.{key}", "a string"))
    for key in ("cases", "seed", "agree", "lack", "other", "case"):
        if key in raw:
            setattr(b, key, _expect(raw[key], int, here, f"{owner} behaviour.{key}", "an integer"))
    if "recorded" in raw:
        d = raw["recorded"]
        b.recorded = _expect(
            d.date() if isinstance(d, dt.datetime) else d,
            dt.date,
            here,
            f"{owner} behaviour.recorded",
            "a date (YYYY-MM-DD)",
        )
    return b


def _tables(value: Any, where: str, what: str) -> list[dict]:
    """An array of tables, each element checked to be a table."""
    _expect(value, list, where, what, "an array of tables")
    for v in value:
        if not isinstance(v, dict):
            raise UserError(f"{where}: {what} must be an array of tables, but holds {type(v).__name__} {v!r}.")
    return value


def _judgement(obj: Entry | Part, raw: dict, where, owner: str, gate_where=None) -> None:
    """The verdict fields entries and parts share."""
    verdict = raw.get("verdict", obj.verdict)
    if verdict not in VERDICTS:
        raise UserError(f"{where('verdict')}: {owner} has unknown verdict {verdict!r} (one of {', '.join(VERDICTS)}).")
    obj.verdict = verdict
    vby = raw.get("verdict_by", "")
    if vby and vby not in VERDICT_BY:
        raise UserError(f'{where("verdict_by")}: {owner} verdict_by must be "human" or "audit", not {vby!r}.')
    obj.verdict_by = vby
    for key in ("reason", "owner", "rule"):
        if key in raw:
            setattr(obj, key, _expect(raw[key], str, where(key), f"{owner} {key}", "a string"))
    if "blocked_by" in raw:
        obj.blocked_by = _int_list(raw["blocked_by"], where("blocked_by"), f"{owner} blocked_by")
    gates = raw.get("gate", [])
    _tables(gates, where("gate"), f"{owner} gate")
    obj.gates = [_gate(g, gate_where(k) if gate_where else where("gate"), owner) for k, g in enumerate(gates)]


def _imported(e: Entry, raw: dict, where, label: str, cwhere) -> None:
    """The keys `queue import` writes (docs/import.md): provenance, history and structured citations.

    `where`/`cwhere` locate a key by scanning the text, so they are called only to word an error:
    an imported queue holds thousands of citations.
    """
    for key in ("source", "label", "gate_text"):
        if key in raw:
            setattr(e, key, _expect(raw[key], str, where(key), f"{label} {key}", "a string"))
    if "issues" in raw:
        e.issues = _int_list(raw["issues"], where("issues"), f"{label} issues")
    for key in ("notes", "history"):
        if key in raw:
            setattr(e, key, _str_list(raw[key], where(key), f"{label} {key}"))
    if "upstream_missing" in raw:
        e.upstream_missing = _expect(
            raw["upstream_missing"], bool, where("upstream_missing"), f"{label} upstream_missing", "true or false"
        )
    cits = raw.get("citation", [])
    if not isinstance(cits, list) or not all(isinstance(c, dict) for c in cits):
        _tables(cits, where("citation"), f"{label} citation")
    for k, c in enumerate(cits):
        path, line, end = c.get("path"), c.get("line"), c.get("end", 0)
        ok = (
            isinstance(path, str)
            and path.strip()
            and type(line) is int
            and line >= 1
            and type(end) is int
            and all(isinstance(c.get(x, ""), str) for x in ("tree", "source", "text"))
            and (not c.get("tree") or gitio.is_sha(c["tree"]))
            and all(
                isinstance(c.get(x, []), list) and all(isinstance(v, str) for v in c.get(x, []))
                for x in ("anchor", "previous")
            )
        )
        if not ok:
            _citation_error(c, k, label, cwhere)
        e.citations.append(
            Citation(
                path=path,
                line=line,
                end=end,
                tree=c.get("tree", ""),
                source=c.get("source", ""),
                anchor=list(c.get("anchor", [])),
                text=c.get("text", ""),
                previous=list(c.get("previous", [])),
            )
        )


def _citation_error(c: dict, k: int, label: str, cwhere) -> None:
    """Raise the sentence naming what is wrong with one citation table, and where."""
    path, line = c.get("path"), c.get("line")
    if not isinstance(path, str) or not path.strip():
        raise UserError(f'{cwhere(k, "path")}: {label} citation needs path = "file" under the port root.')
    if type(line) is not int or line < 1:
        raise UserError(f"{cwhere(k, 'line')}: {label} citation needs line = a line number of 1 or more.")
    for key in ("end",):
        _expect(c.get(key, 0), int, cwhere(k, key), f"{label} citation {key}", "a line number")
    for key in ("tree", "source", "text"):
        _expect(c.get(key, ""), str, cwhere(k, key), f"{label} citation {key}", "a string")
    _commit_id(c.get("tree", ""), cwhere(k, "tree"), f"{label} citation tree")
    for key in ("anchor", "previous"):
        _str_list(c.get(key, []), cwhere(k, key), f"{label} citation {key}")


def _meta(head: Any, path: Path, where: Callable[[str], str]) -> QueueMeta:
    if not isinstance(head, dict):
        raise UserError(f"{path}: [queue] must be a table.")
    meta = QueueMeta(name=str(head.get("name", path.stem)))
    if "upstream" in head:
        meta.upstream = _expect(head["upstream"], str, f"{path}", "queue.upstream", "a string")
    for key in ("pin", "target"):
        if key in head:
            setattr(meta, key, _commit_id(head[key], where(key), f"queue.{key}"))
    if "paths" in head:
        meta.paths = pathrules.norm_all(_str_list(head["paths"], str(path), "queue.paths"))
    if "range_commits" in head:
        meta.range_commits = _expect(head["range_commits"], int, str(path), "queue.range_commits", "an integer")
    return meta


def _commit_id(value: Any, where: str, what: str) -> str:
    """A commit id as git and reports write one, or "" for none: never anything git could read as an option."""
    value = _expect(value, str, where, what, "a string")
    if value and not gitio.is_sha(value):
        raise UserError(f"{where}: {what} {value!r} is not a commit id (7 to 40, or 64, hex digits).")
    return value


def _a_string(value: Any, where: str, what: str) -> str:
    return _expect(value, str, where, what, "a string")


def _optional(obj: Any, raw: dict, where, label: str, keys: tuple[str, ...], convert: Callable) -> None:
    """Set each of `keys` that `raw` has on `obj`, checked and converted by `convert(value, where, what)`."""
    for key in keys:
        if key in raw:
            setattr(obj, key, convert(raw[key], where(key), f"{label} {key}"))


def _entry_head(raw: dict, i: int, where, seen: dict[int, str]) -> Entry:
    """An entry's number, sha and subject, with the number checked against those seen before."""
    n = raw.get("n")
    if not isinstance(n, int) or isinstance(n, bool):
        raise UserError(f"{where('n')}: entry number {i + 1} needs n = an integer.")
    if n in seen:
        raise UserError(f"{where('n')}: duplicate entry number n = {n} (first at {seen[n]}).")
    seen[n] = where("n")
    label = f"entry {n}"
    return Entry(
        n=n,
        sha=_commit_id(raw.get("sha", ""), where("sha"), f"{label} sha"),
        subject=_expect(raw.get("subject", ""), str, where("subject"), f"{label} subject", "a string"),
    )


def _entry_commit(e: Entry, raw: dict, where, label: str) -> None:
    """What queue build wrote about the commit: date, PR, files, renames and diffstat."""
    if "date" in raw:
        d = raw["date"]
        if isinstance(d, dt.datetime):
            d = d.date()
        e.date = _expect(d, dt.date, where("date"), f"{label} date", "a date (YYYY-MM-DD)")
    _optional(e, raw, where, label, ("pr", "reverts"), lambda v, at, what: _expect(v, int, at, what, "an integer"))
    _optional(e, raw, where, label, ("files", "unreadable"), _str_list)
    _optional(
        e, raw, where, label, ("renames", "stat"), lambda v, at, what: dict(_expect(v, dict, at, what, "a table"))
    )
    for new, old in e.renames.items():
        _expect(old, str, where("renames"), f"{label} renames.{new!r}", "the old path, a string")
    for f, counts in e.stat.items():
        if not (
            isinstance(counts, list)
            and len(counts) == 2
            and all(isinstance(c, int) and not isinstance(c, bool) for c in counts)
        ):
            raise UserError(f"{where('stat')}: {label} stat.{f!r} must be [insertions, deletions], not {counts!r}.")


def _entry_triage(e: Entry, raw: dict, where, label: str) -> None:
    """Disposition, size, landing, evidence and symbols."""
    disp = raw.get("disposition", e.disposition)
    if disp not in DISPOSITIONS:
        raise UserError(
            f"{where('disposition')}: {label} has unknown disposition {disp!r} (one of {', '.join(DISPOSITIONS)})."
        )
    e.disposition = disp
    _optional(e, raw, where, label, ("size", "landing"), _a_string)
    _optional(e, raw, where, label, ("evidence",), _str_list)
    syms = raw.get("symbols", {})
    _expect(syms, dict, where("symbols"), f"{label} symbols", "a table")
    e.symbols = Symbols(
        **{
            fl.name: _str_list(syms.get(fl.name, []), where("symbols"), f"{label} symbols.{fl.name}")
            for fl in fields(Symbols)
        }
    )
    for fl in fields(Symbols):
        if any(not name.strip() for name in getattr(e.symbols, fl.name)):
            raise UserError(f"{where('symbols')}: {label} symbols.{fl.name} holds an empty name.")


def _parts(e: Entry, raw: dict, w: _Where, i: int, where, label: str) -> None:
    for k, part in enumerate(_tables(raw.get("part", []), where("part"), f"{label} part")):

        def pwhere(key=None, i=i, k=k):  # a key inside this [[entry.part]], not the entry's own
            return w.child("entry", i, "part", k, key or "name")

        p = Part(name=str(part.get("name", "")))
        if any(q.name == p.name for q in e.parts):
            raise UserError(f"{pwhere()}: {label} has two parts named {p.name!r}; a part is found by its name.")
        _judgement(p, part, pwhere, f"{label} part {p.name!r}")
        _optional(p, part, pwhere, f"{label} part", ("files", "symbols"), _str_list)
        _optional(p, part, pwhere, f"{label} part", ("label", "gate_text"), _a_string)
        e.parts.append(p)


def _entry(raw: dict, i: int, w: _Where, seen: dict[int, str]) -> Entry:
    def where(key=None):
        return w.at("entry", i, key)

    e = _entry_head(raw, i, where, seen)
    label = f"entry {e.n}"
    _entry_commit(e, raw, where, label)
    _entry_triage(e, raw, where, label)
    if "behaviour" in raw:
        e.behaviour = _behaviour(raw["behaviour"], lambda key: w.at("entry", i, key), label)
    _judgement(e, raw, where, label, lambda k: w.child("entry", i, "gate", k, "kind"))
    _parts(e, raw, w, i, where, label)
    _imported(e, raw, where, label, lambda k, key: w.child("entry", i, "citation", k, key))
    return e


def _rule(raw: dict, i: int, w: _Where) -> Rule:
    def where(key=None):
        return w.at("rule", i, key)

    r = Rule(
        upstream=_expect(raw.get("upstream", ""), str, where("upstream"), "rule upstream", "a glob string"),
        verdict=raw.get("verdict", ""),
    )
    if r.verdict not in VERDICTS:
        raise UserError(f"{where('verdict')}: rule for {r.upstream!r} has unknown verdict {r.verdict!r}.")
    r.reason = str(raw.get("reason", ""))
    rgates = _tables(raw.get("gate", []), where("gate"), f"rule {r.upstream!r} gate")
    r.gates = [_gate(g, w.child("rule", i, "gate", k, "kind"), f"rule {r.upstream!r}") for k, g in enumerate(rgates)]
    return r


def _ack(raw: dict, at_ack) -> Ack:
    a = Ack(
        code=_expect(raw.get("code", ""), str, at_ack, "ack code", "a string"),
        reason=_expect(raw.get("reason", ""), str, at_ack, "ack reason", "a string"),
    )
    if not a.reason:
        raise UserError(f"{at_ack}: an acknowledgement needs a reason.")
    if "entry" in raw:
        a.entry = _expect(raw["entry"], int, at_ack, "ack entry", "an entry number")
    if "expires" in raw:
        a.expires = _expect(raw["expires"], dt.date, at_ack, "ack expires", "a date (YYYY-MM-DD)")
    a.gate = str(raw.get("gate", ""))
    return a


def _check_references(q: Queue, w: _Where, seen: dict[int, str]) -> None:
    """References between entries (blocked_by, entry-ported gates), once all numbers are known."""
    for i, e in enumerate(q.entries):
        owners: list[tuple[str, Entry | Part, Callable[..., str]]] = [
            (f"entry {e.n}", e, lambda key, i=i: w.at("entry", i, key))
        ]
        owners += [
            (f"entry {e.n} part {p.name!r}", p, lambda key, i=i, k=k: w.child("entry", i, "part", k, key))
            for k, p in enumerate(e.parts)
        ]
        for owner, obj, at in owners:
            for b in obj.blocked_by:
                if b not in seen:
                    raise UserError(f"{at('blocked_by')}: {owner} is blocked_by {b}, which is no entry of this queue.")
            for g in obj.gates:
                if g.kind == "entry-ported" and g.entry not in seen:
                    raise UserError(
                        f"{at('gate')}: {owner} gate {g.id!r} waits on entry {g.entry}, which is no entry of this queue."
                    )


def _to_model(qf: QueueFile) -> Queue:
    doc = qf.data
    w = _Where(qf)
    path = qf.path
    q = Queue(meta=_meta(doc.get("queue", {}), path, lambda key: f"{path}:{key_line(qf.text, 'queue', key) or '?'}"))

    def top(key: str):  # where a top-level `key = ...` (not an array of tables) was written
        def find() -> str:
            line = key_line(qf.text, None, key)
            return f"{path}:{line}" if line else str(path)

        return _Lazy(find)

    raw_entries = doc.get("entry", [])
    _tables(raw_entries, top("entry"), "entry")
    seen: dict[int, str] = {}
    q.entries = [_entry(raw, i, w, seen) for i, raw in enumerate(raw_entries)]
    q.rules = [_rule(raw, i, w) for i, raw in enumerate(_tables(doc.get("rule", []), top("rule"), "rule"))]
    q.acks = [_ack(raw, w.at("ack", i)) for i, raw in enumerate(_tables(doc.get("ack", []), top("ack"), "ack"))]
    _check_references(q, w, seen)
    return q
