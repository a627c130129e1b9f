"""Queue files (docs/design.md §4): load, validate and save them without losing a byte a person wrote.

The tomlkit document is the source of truth: edits go into it key by key, so
comments, spacing and key order elsewhere survive every rewrite. The dataclass
model (`QueueFile.queue`) is rebuilt from the document after each edit.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import bisect
import json
import os
import re
import tempfile
import time
import tomllib
from functools import lru_cache
from dataclasses import fields
from pathlib import Path
from typing import Any, NamedTuple
from collections.abc import Callable

import tomlkit
from tomlkit.items import AoT, Table

from porttrack import gitio
from porttrack import paths as pathrules
from porttrack.config import key_line, parse_toml
from porttrack.errors import UserError
from porttrack.model import (
    DISPOSITIONS,
    GATE_KINDS,
    UNPROBED_GATES,
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

_HEADER = re.compile(r"^\s*\[\[\s*([A-Za-z0-9_.\s]+?)\s*\]\]")
_KEY = r"^\s*[\"']?{}[\"']?\s*="


class QueueFile:
    """A queue file as read: its exact text, the model, and (on first edit) the tomlkit document.

    Reading uses the standard library's fast `tomllib`; the round-trip tomlkit
    document, which is an order of magnitude slower to build, is parsed only
    when something is about to be edited, so read-only commands stay fast.
    """

    def __init__(self, path: Path, doc: tomlkit.TOMLDocument | None, queue: Queue, text: str, data: dict | None = None):
        self.path = path
        self._doc = doc
        self.queue = queue
        self.text = text  # exactly what was read (or last written); save refuses if the disk moved on
        self.data = data if data is not None else (doc.unwrap() if doc is not None else {})
        self.is_new = False  # True for a file `new()` made that is not on disk yet
        # text appended by `append_entries` to a file whose document was never built: building
        # tomlkit tables costs about a millisecond a key, so a 10,000-table import writes text
        self.pending: str | None = None
        self.lock: _Held | None = None  # the writers' lock, when held from the read (`load(lock=True)`)
        # entry index -> (first line, end line, its own tomlkit document): entries edited without
        # parsing the whole file, spliced back by `dumps` (a 100k-entry queue, 5 entries written)
        self._chunks: dict[int, tuple[int, int, tomlkit.TOMLDocument]] = {}

    @property
    def doc(self) -> tomlkit.TOMLDocument:
        if self._doc is None:
            text = self.pending if self.pending is not None else _spliced(self) if self._chunks else self.text
            self._doc = parse_toml(self.path, text)
            self.pending, self._chunks = None, {}
        return self._doc


def edit_entry(qf: QueueFile, n: int) -> Table | None:
    """The editable [[entry]] table numbered `n`: from the whole document when it is parsed,
    else parsed alone from its own lines, so editing a few entries costs what they hold."""
    if qf._doc is not None or qf.pending is not None:  # appended text: edit the whole document
        return next((t for t in qf.doc.get("entry", []) if t.get("n") == n), None)
    index = _entry_index(qf.data).get(n)
    if index is None:
        return None
    if index not in qf._chunks:
        spans = _spans(qf.text, "entry")
        if index >= len(spans):
            return next((t for t in qf.doc.get("entry", []) if t.get("n") == n), None)
        start, end = spans[index]
        lines = qf.text.splitlines(keepends=True)
        qf._chunks[index] = (start, end, parse_toml(qf.path, "".join(lines[start - 1 : end - 1])))
    return qf._chunks[index][2]["entry"][0]


def _entry_index(data: dict) -> dict[int, int]:
    return {
        e["n"]: i for i, e in enumerate(data.get("entry", [])) if isinstance(e, dict) and isinstance(e.get("n"), int)
    }


def _spliced(qf: QueueFile) -> str:
    """The read text with each separately edited entry's new text in place of its old lines."""
    lines = qf.text.splitlines(keepends=True)
    for start, end, doc in sorted(qf._chunks.values(), key=lambda c: c[0], reverse=True):
        lines[start - 1 : end - 1] = [doc.as_string()]
    return "".join(lines)


# ---------------------------------------------------------------- reading


def load(path: Path, *, lock: bool = False) -> QueueFile:
    """Read a queue file; with `lock`, hold the writers' lock from this read to `save`'s rename."""
    held = _lock(path) if lock else None
    try:
        raw = pathrules.read_regular(path, "queue file")
        if not raw.strip():
            raise UserError(
                f"{path}: empty queue file; a queue has at least a [queue] table (run `porttrack queue build`)."
            )
        qf = _decode(raw, path)
    except BaseException:
        _unlock(held)
        raise
    qf.lock = held
    return qf


def release(qf: QueueFile) -> None:
    """Give up a lock `load(lock=True)` took when the command ends without saving (an error, a no-op)."""
    held, qf.lock = qf.lock, None
    _unlock(held)


def _decode(raw: bytes, path: Path) -> QueueFile:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        line = raw[: e.start].count(b"\n") + 1
        raise UserError(f"{path}:{line}: queue file is not UTF-8 text.") from None
    return loads(text, path)


def loads(text: str, path: Path) -> QueueFile:
    data = _decode_toml(text, path)
    qf = QueueFile(path=path, doc=None, queue=Queue(QueueMeta(name="")), text=text, data=data)
    qf.queue = _to_model(qf)
    return qf


def _decode_toml(text: str, path: Path) -> dict:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        m = re.search(r"\(at line (\d+), column \d+\)", str(e))
        reason = re.sub(r"\s*\(at (line|end of document).*", "", str(e))
        if m is None and "end of document" in str(e):  # the file stops mid-value: say where, and why
            last = text.count("\n") + (0 if text.endswith("\n") else 1)
            raise UserError(
                f"{path}:{last}: malformed TOML: {reason.lower()} at the end of the file; it looks truncated "
                "(an interrupted copy or download?): restore it from git or a backup."
            ) from None
        line = f":{m.group(1)}" if m else ""
        raise UserError(f"{path}{line}: malformed TOML: {reason}.") from None
    except RecursionError:
        raise UserError(
            f"{path}{_deepest(text)}: a value is nested too deeply "
            "(hundreds of arrays or inline tables inside each other); no queue needs that."
        ) from None


def _deepest(text: str) -> str:
    """':line' of the first line that opens many brackets in a row, where too deep a nesting starts."""
    m = re.search(r"(?:[\[{]\s*){50}", text)
    return f":{text.count(chr(10), 0, m.start()) + 1}" if m else ""


@lru_cache(maxsize=8)
def _lines(text: str) -> list[str]:
    # memoised: locating keys calls this once per gate, and a 300-entry queue has 600 gates
    return text.splitlines()


@lru_cache(maxsize=8)
def _header_lines(text: str) -> list[tuple[int, str]]:
    """(line, name) of every `[[array.of.tables]]` header, in order."""
    out = []
    for i, line in enumerate(_lines(text), 1):
        m = _HEADER.match(line)
        if m:
            out.append((i, re.sub(r"\s+", "", m.group(1))))
    return out


def _spans(text: str, name: str) -> list[tuple[int, int]]:
    """[start, end) line spans of each `[[name]]` element, children included."""
    heads = _header_lines(text)
    nlines = text.count("\n") + 2
    tops = [ln for ln, nm in heads if nm == name]
    others = [ln for ln, nm in heads if "." not in nm and nm != name]
    # a plain [table] header also ends an element; one pass finds them all, a bisect each span's end
    plain = [
        j
        for j, line in enumerate(_lines(text), 1)
        if re.match(r"^\s*\[[^\[]", line) and not re.match(r"^\s*\[\s*" + re.escape(name) + r"\.", line)
    ]
    enders = sorted(set(tops + others + plain))
    spans = []
    for start in tops:
        k = bisect.bisect_right(enders, start)
        spans.append((start, enders[k] if k < len(enders) else nlines))
    return spans


def _key_in(text: str, span: tuple[int, int], key: str) -> int | None:
    lines = _lines(text)
    pat = re.compile(_KEY.format(re.escape(key)))
    for i in range(span[0], min(span[1] - 1, len(lines))):
        if pat.match(lines[i]):
            return i + 1
    return None


def line_of(qf: QueueFile, n: int, key: str | None = None, part: str | None = None) -> int:
    """1-based line of entry `n`'s header, or of `key` inside it (or inside its part named `part`)."""
    entries = qf.data.get("entry", [])
    index = next((i for i, e in enumerate(entries) if e.get("n") == n), None)
    spans = _spans(qf.text, "entry")
    if index is None or index >= len(spans):
        return 1
    span = spans[index]
    if part is not None:
        for ln, nm in _header_lines(qf.text):
            if nm == "entry.part" and span[0] < ln < span[1]:
                name_line = _key_in(qf.text, (ln, span[1]), "name")
                if name_line and part in qf.text.splitlines()[name_line - 1]:
                    span = (ln, span[1])
                    break
    if key is None:
        return span[0]
    return _key_in(qf.text, span, key) or span[0]


class _Lazy:
    """A `file:line` worked out only when a message is formatted: locating a key scans the text,
    and a valid queue (thousands of keys, most of them checked) never needs one."""

    __slots__ = ("fn",)

    def __init__(self, fn):
        self.fn = fn

    def __str__(self) -> str:
        return self.fn()

    def __format__(self, spec: str) -> str:
        return format(self.fn(), spec)


class _Where:
    """Builds `file:line: entry N: ...` sentences while converting the document to the model."""

    def __init__(self, qf: QueueFile):
        self.qf = qf
        self._spans: dict | None = None

    @property
    def spans(self) -> dict:
        if self._spans is None:
            text = self.qf.text
            self._spans = {"entry": _spans(text, "entry"), "rule": _spans(text, "rule"), "ack": _spans(text, "ack")}
        return self._spans

    def child(self, table: str, index: int, child: str, k: int, key: str):
        return _Lazy(lambda: self._child(table, index, child, k, key))

    def at(self, table: str, index: int, key: str | None = None):
        return _Lazy(lambda: self._at(table, index, key))

    def _child(self, table: str, index: int, child: str, k: int, key: str) -> str:
        """Where `key` is inside the k-th `[[table.child]]` of the index-th `[[table]]`."""
        spans = self.spans.get(table, [])
        if index >= len(spans):
            return str(self.qf.path)
        start, end = spans[index]
        heads = [ln for ln, nm in _header_lines(self.qf.text) if nm == f"{table}.{child}" and start < ln < end]
        if k >= len(heads):
            return self._at(table, index, child)
        stop = min([ln for ln, _ in _header_lines(self.qf.text) if ln > heads[k]] + [end])
        line = _key_in(self.qf.text, (heads[k], stop), key)
        return f"{self.qf.path}:{line or heads[k]}"

    def _at(self, table: str, index: int, key: str | None = None) -> str:
        spans = self.spans.get(table, [])
        if index >= len(spans):
            return str(self.qf.path)
        line = _key_in(self.qf.text, spans[index], key) if key else None
        return f"{self.qf.path}:{line or spans[index][0]}"


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


# ---------------------------------------------------------------- writing


def new(path: Path, meta: QueueMeta) -> QueueFile:
    doc = tomlkit.document()
    doc.add(tomlkit.comment("porttrack queue: entries are numbered once and never renumbered."))
    doc.add(tomlkit.comment("Edit verdicts, reasons and gates freely; porttrack rewrites only the keys it owns."))
    doc.add(tomlkit.nl())
    head = tomlkit.table()
    for key in ("name", "upstream", "pin", "target", "paths", "range_commits"):
        head[key] = getattr(meta, key)
    doc["queue"] = head
    qf = QueueFile(path=path, doc=None, queue=Queue(meta=meta), text="")
    qf.pending = doc.as_string()  # entries are appended as text; the document is built only if edited
    qf.data = doc.unwrap()
    qf.is_new = True
    return qf


def set_meta(qf: QueueFile, **values: Any) -> None:
    head = qf.doc["queue"]
    for key, value in values.items():
        if head.get(key) != value:
            head[key] = value
    qf.queue = _to_model(_reparsed(qf))


def _toml_value(key: str, value: Any) -> Any:
    if key in ("evidence", "notes", "history") or (key == "files" and len(value) > 2):
        arr = tomlkit.array()
        arr.extend(value)
        arr.multiline(True)
        return arr
    if key == "symbols" and isinstance(value, Symbols):
        t = tomlkit.table()
        for f in fields(Symbols):
            t[f.name] = list(getattr(value, f.name))
        return t
    if key == "behaviour" and isinstance(value, Behaviour):
        t = tomlkit.table()
        t.update(value.as_dict())
        return t
    if key in ("renames", "stat"):
        inline = tomlkit.inline_table()
        inline.update(value)
        return inline
    return value


def _gate_table(g: Gate) -> Table:
    t = tomlkit.table()
    t["id"] = g.id
    t["kind"] = g.kind
    if g.kind != "entry-ported":
        t["probe"] = g.probe
    if g.kind not in UNPROBED_GATES:
        t["scope"] = list(g.scope)
        if g.control:
            t["control"] = g.control
    if g.regex:
        t["regex"] = True
    if g.expect is not None:
        t["expect"] = g.expect
    if g.entry is not None:
        t["entry"] = g.entry
    if g.established_at:
        t["established_at"] = g.established_at
    return t


def set_fields(table: Table, values: dict[str, Any]) -> None:
    """Set keys of one entry or part table in place; follow a batch of these with `rebuild(qf)`."""
    _set_fields(table, values)


def rebuild(qf: QueueFile) -> None:
    """Refresh the model after direct table edits (one rebuild for a whole batch)."""
    qf.queue = _to_model(_reparsed(qf))


def _set_fields(table: Table, values: dict[str, Any]) -> None:
    for key, value in values.items():
        if key == "gates":
            _set_gates(table, value)
            continue
        if key == "parts":
            raise ValueError("parts are edited one at a time with set_entry(..., part=name)")
        current = table.get(key)
        plain = (
            value.__dict__ if isinstance(value, Symbols) else value.as_dict() if isinstance(value, Behaviour) else value
        )
        if current is not None and (current.unwrap() if hasattr(current, "unwrap") else current) == plain:
            continue
        if value is None:
            if key in table:
                del table[key]
            continue
        table[key] = _toml_value(key, value)


def _set_gates(table: Table, gates: list[Gate]) -> None:
    """Gate tables edited in place, position by position, so a person's comments inside and after them stay.

    Replacing the whole array of tables would drop every comment tomlkit keeps in a gate's body:
    one after a gate, one between gates, and the file's last lines when the gate ends the file.
    """
    new = [_gate_table(g) for g in gates]
    old = table.get("gate")
    if [t.unwrap() for t in new] == [t.unwrap() for t in (old or [])]:
        return
    if not isinstance(old, AoT):
        if old is not None:
            del table["gate"]
        if new:
            table["gate"] = _gates_aot(gates)
        return
    for t, want in zip(old, new, strict=False):
        for key in [k for k in t if k not in want]:
            del t[key]
        for key, value in want.items():
            if t.get(key) is None or t[key].unwrap() != value.unwrap():
                t[key] = value
    for want in new[len(old) :]:
        old.append(want)
    while len(old) > len(new):  # a removed gate hands its comments to the table before it
        keep = [item for k, item in old[-1].value.body if k is None]
        del old[-1]
        heir = old[-1] if len(old) else table
        for item in keep:
            heir.value.append(None, item)
    if not len(old):
        del table["gate"]


def set_entry(qf: QueueFile, n: int, part: str | None = None, **values: Any) -> None:
    """Set keys of entry `n` (or of its part named `part`); keys already equal are left untouched."""
    table = next((t for t in qf.doc.get("entry", []) if t.get("n") == n), None)
    if table is None:
        raise UserError(f"{qf.path}: no entry n = {n}.")
    if part is not None:
        table = next((p for p in table.get("part", []) if p.get("name") == part), None)
        if table is None:
            raise UserError(f"{qf.path}:{line_of(qf, n)}: entry {n} has no part named {part!r}.")
    _set_fields(table, values)
    qf.queue = _to_model(_reparsed(qf))


# Keys of a new [[entry]], in reading order; those in _ALWAYS are written even when empty,
# so a person sees every field there is to fill in.
_ENTRY_KEYS = (
    "n",
    "sha",
    "pr",
    "reverts",
    "subject",
    "date",
    "upstream_missing",
    "files",
    "renames",
    "stat",
    "unreadable",
    "disposition",
    "verdict",
    "verdict_by",
    "label",
    "gate_text",
    "reason",
    "source",
    "issues",
    "owner",
    "blocked_by",
    "size",
    "landing",
    "rule",
    "evidence",
    "notes",
    "history",
    "symbols",
)
_ALWAYS = {
    "n",
    "sha",
    "subject",
    "files",
    "disposition",
    "verdict",
    "verdict_by",
    "reason",
    "owner",
    "blocked_by",
    "symbols",
}


def _gates_aot(gates: list[Gate]) -> AoT:
    aot = tomlkit.aot()
    for g in gates:
        aot.append(_gate_table(g))
    return aot


def entry_table(e: Entry) -> Table:
    """A new [[entry]] table with every key a person may want to fill in, in reading order."""
    t = tomlkit.table()
    for key in _ENTRY_KEYS:
        value = getattr(e, key)
        if key in _ALWAYS or value:
            t[key] = _toml_value(key, value)
    if e.gates:
        t["gate"] = _gates_aot(e.gates)
    if e.parts:
        t["part"] = _aot([part_table(p) for p in e.parts])
    if e.citations:
        t["citation"] = _aot([citation_table(c) for c in e.citations])
    return t


def _aot(tables: list[Table]) -> AoT:
    aot = tomlkit.aot()
    for t in tables:
        aot.append(t)
    return aot


def _part_dict(p: Part) -> dict[str, Any]:
    """The keys a new [[entry.part]] gets, in order (gates apart)."""
    d: dict[str, Any] = {"name": p.name}
    for key in (
        "verdict",
        "verdict_by",
        "label",
        "gate_text",
        "reason",
        "owner",
        "blocked_by",
        "files",
        "symbols",
        "rule",
    ):
        value = getattr(p, key)
        if value or key == "verdict":
            d[key] = list(value) if isinstance(value, list) else value
    return d


def part_table(p: Part) -> Table:
    t = tomlkit.table()
    t.update(_part_dict(p))
    if p.gates:
        t["gate"] = _gates_aot(p.gates)
    return t


def _citation_dict(c: Citation) -> dict[str, Any]:
    """The keys a new [[entry.citation]] gets, in order."""
    d: dict[str, Any] = {"path": c.path, "line": c.line}
    if c.end > c.line:
        d["end"] = c.end
    for key in ("tree", "source", "anchor", "text", "previous"):
        value = getattr(c, key)
        if value:
            d[key] = list(value) if isinstance(value, list) else value
    return d


def citation_table(c: Citation) -> Table:
    t = tomlkit.table()
    t.update(_citation_dict(c))
    return t


def entry_doc_table(qf: QueueFile, n: int) -> Table:
    """The tomlkit table of entry `n`, for edits that `set_entry` does not cover (whole arrays of tables)."""
    table = next((t for t in qf.doc.get("entry", []) if t.get("n") == n), None)
    if table is None:
        raise UserError(f"{qf.path}: no entry n = {n}.")
    return table


def set_tables(qf: QueueFile, n: int, key: str, tables: list[Table]) -> None:
    """Make entry `n`'s `[[entry.<key>]]` array (parts, citations) hold `tables`; no rebuild.

    Existing tables are edited in place, key by key, so a comment inside or after one survives;
    only surplus tables at the end are removed.
    """
    set_aot(entry_doc_table(qf, n), key, tables)


def set_aot(table: Table, key: str, tables: list[Table]) -> None:
    """`set_tables` on a table already in hand (a batch looks each entry up once)."""
    if [t.unwrap() for t in tables] == [t for t in table.unwrap().get(key, [])]:
        return
    if key not in table or not isinstance(table[key], AoT):
        if key in table:
            del table[key]
        if tables:
            table[key] = _aot(tables)
        return
    aot = table[key]
    for old, new in zip(aot, tables, strict=False):
        wanted = new.unwrap()
        for k in [k for k in old if k not in wanted]:
            del old[k]
        _set_fields(old, wanted)
    for new in tables[len(aot) :]:
        aot.append(new)
    while len(aot) > len(tables):
        del aot[len(aot) - 1]
    if not tables:
        del table[key]


def set_citation(qf: QueueFile, n: int, index: int, values: dict[str, Any]) -> None:
    """Set keys of entry `n`'s index-th citation in place (comments around it survive); no rebuild."""
    cits = entry_doc_table(qf, n).get("citation", [])
    if index >= len(cits):
        raise UserError(f"{qf.path}:{line_of(qf, n)}: entry {n} has no citation number {index + 1}.")
    t = cits[index]
    for key, value in values.items():
        current = t.get(key)
        if current is not None and (current.unwrap() if hasattr(current, "unwrap") else current) == value:
            continue
        if value in (None, 0, "", []) and key in ("end", "text"):
            if key in t:
                del t[key]
            continue
        t[key] = value


def append_entries(qf: QueueFile, entries: list[Entry]) -> None:
    """Append new entries; numbers already used are refused so numbering stays stable."""
    if not entries:
        return  # an empty array of tables would be written as `entry = []`, which later entries cannot join
    used = {e.n for e in qf.queue.entries}
    if qf._doc is None and not re.search(r"(?m)^\s*entry\s*=", dumps(qf)):
        _append_text(qf, entries, used)
        return
    if "entry" in qf.doc and not isinstance(qf.doc["entry"], AoT) and not qf.doc["entry"]:
        del qf.doc["entry"]  # a file an older porttrack wrote with `entry = []`
    if "entry" not in qf.doc:
        qf.doc.add(tomlkit.nl())
        qf.doc["entry"] = tomlkit.aot()
    aot = qf.doc["entry"]
    for e in entries:
        if e.n in used:
            raise UserError(f"{qf.path}: entry number {e.n} is already used; numbers are never reused.")
        used.add(e.n)
        aot.append(entry_table(e))
    qf.queue = _to_model(_reparsed(qf))


def _append_text(qf: QueueFile, entries: list[Entry], used: set[int]) -> None:
    """`append_entries` for a file whose document was never built: the same tables, written as text.

    The rendering is `entry_table`'s (a test parses both and compares), so a later edit through
    the document sees exactly what the tables would have held.
    """
    for e in entries:
        if e.n in used:
            raise UserError(f"{qf.path}: entry number {e.n} is already used; numbers are never reused.")
        used.add(e.n)
    base = dumps(qf)
    nl = "\r\n" if "\r\n" in base else "\n"  # a CRLF file stays CRLF
    text = base + ("" if not base or base.endswith(nl * 2) else nl if base.endswith(nl) else nl * 2)
    text += nl.join(entry_text(e, nl) for e in entries)
    qf.pending, qf._chunks = text, {}  # separately edited entries are in the text now
    qf.data = tomllib.loads(text)
    view = QueueFile(path=qf.path, doc=None, queue=qf.queue, text=text, data=qf.data)
    qf.queue = _to_model(view)


def _toml(value: Any) -> str:
    """A TOML value as `tomlkit` writes it for the keys entries use (strings, numbers, lists, dates)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, str):
        # a JSON string is a TOML basic string, but for DEL, which TOML wants escaped
        return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat()
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_key(k)} = {_toml(v)}" for k, v in value.items()) + "}"
    return "[" + ", ".join(_toml(v) for v in value) + "]"


def _key(k: str) -> str:
    return k if re.fullmatch(r"[A-Za-z0-9_-]+", k) else _toml(k)


def _table_text(name: str, t: dict, aot: bool) -> list[str]:
    out = [f"[[{name}]]" if aot else f"[{name}]"]
    subs = []
    for k, v in t.items():
        if isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
            subs += [line for x in v for line in ["", *_table_text(f"{name}.{k}", x, True)]]
        elif isinstance(v, dict) and k == "symbols":
            subs += ["", *_table_text(f"{name}.{k}", v, False)]
        elif isinstance(v, list) and (k in ("evidence", "notes", "history") or (k == "files" and len(v) > 2)):
            out += [f"{_key(k)} = ["] + [f"    {_toml(x)}," for x in v] + ["]"]
        else:
            out.append(f"{_key(k)} = {_toml(v)}")
    return out + subs


def entry_text(e: Entry, newline: str = "\n") -> str:
    """`entry_table(e)` as TOML text, without building tomlkit items."""
    t: dict[str, Any] = {}
    for key in _ENTRY_KEYS:
        value = getattr(e, key)
        if key in _ALWAYS or value:
            t[key] = value.__dict__ if isinstance(value, Symbols) else value
    if e.gates:
        t["gate"] = [_gate_table(g).unwrap() for g in e.gates]
    if e.parts:
        t["part"] = [
            {**_part_dict(p), **({"gate": [_gate_table(g).unwrap() for g in p.gates]} if p.gates else {})}
            for p in e.parts
        ]
    if e.citations:
        t["citation"] = [_citation_dict(c) for c in e.citations]
    return newline.join(_table_text("entry", t, True)) + newline


def _reparsed(qf: QueueFile) -> QueueFile:
    """A view of the edited document with line numbers that match its new text."""
    if qf._doc is None:  # only separately parsed entries were edited: only they are read again
        entries = list(qf.data.get("entry", []))
        for index, (_, _, doc) in qf._chunks.items():
            entries[index] = doc.unwrap()["entry"][0]
        qf.data = {**qf.data, "entry": entries}
        return QueueFile(path=qf.path, doc=None, queue=qf.queue, text=dumps(qf), data=qf.data)
    qf.data = qf.doc.unwrap()
    return QueueFile(path=qf.path, doc=qf.doc, queue=qf.queue, text=qf.doc.as_string(), data=qf.data)


def dumps(qf: QueueFile) -> str:
    if qf._doc is None:
        if qf.pending is not None:
            return qf.pending
        return _spliced(qf) if qf._chunks else qf.text
    return qf._doc.as_string()


def write_atomic(path: Path, text: str, before_rename: Callable[[], None] | None = None) -> None:
    """Write text to path through a fresh temp file in the same folder and a rename, so a reader never
    sees half a file and a failure leaves the old bytes and no temp file. Queue files and reports.
    `before_rename` runs between the temp write and the rename; raising there writes nothing."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as e:
        raise UserError(f"cannot write {path}: {e.strerror or e}.") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        if path.exists():
            os.chmod(tmp, path.stat().st_mode & 0o777)
        else:  # mkstemp makes 0600; a new file gets the mode any new file would
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)
        if before_rename is not None:
            before_rename()
        os.replace(tmp, path)
    except BaseException as e:
        if os.path.exists(tmp):
            os.unlink(tmp)
        if isinstance(e, OSError):  # a full disk or a size limit: the old bytes stay, the file is named
            raise UserError(f"cannot write {path}: {e.strerror or e}; it was left as it was.") from None
        raise


def follow_citations(qf: QueueFile) -> None:
    """Point every entry-ported gate's `established_at` into this queue at the waited-on entry's line again.

    The citation names a line of this very file, which a person's edit (a comment above it) or
    a rewrite moves; `save` calls this so the citation follows the line it cites. Only one-line
    values change, so no line moves and one pass settles them all.
    """
    if qf._doc is None and not qf._chunks:
        return
    if qf._doc is not None:
        view = QueueFile(qf.path, qf._doc, qf.queue, qf._doc.as_string(), data=qf._doc.unwrap())
        owners = [*qf._doc.get("rule", [])]
        tables = list(qf._doc.get("entry", []))
    else:  # entries edited one by one: the numbering is unchanged, so the read data still finds them
        if re.search(r"^\s*\[\[\s*rule\s*\.\s*gate\s*\]\]", qf.text, re.M):
            return follow_citations_whole(qf)
        spans = _spans(qf.text, "entry")
        lines = _lines(qf.text)
        cites = [i for i, (s, e) in enumerate(spans) if any("entry-ported" in ln for ln in lines[s - 1 : e - 1])]
        numbers_of = {i: e.get("n") for i, e in enumerate(qf.data.get("entry", []))}
        for i in cites:  # entries that had such gates when read; those edited since are loaded already
            if numbers_of.get(i) is not None:
                edit_entry(qf, numbers_of[i])
        owners, tables = [], [doc["entry"][0] for _, _, doc in qf._chunks.values()]
        view = QueueFile(qf.path, None, qf.queue, _spliced(qf), data=qf.data)
    numbers = {e.get("n") for e in view.data.get("entry", [])}
    for t in tables:
        owners += [t, *t.get("part", [])]
    for owner in owners:
        for g in owner.get("gate", []):
            cited, n = g.get("established_at"), g.get("entry")
            if g.get("kind") != "entry-ported" or not isinstance(cited, str) or n not in numbers:
                continue
            path, sep, line = cited.rpartition(":")
            if sep and line.isdigit() and (path == qf.path.name or path.endswith("/" + qf.path.name)):
                want = f"{path}:{line_of(view, n)}"
                if cited != want:
                    g["established_at"] = want


# How long a writer waits for another porttrack writing the same queue (an audit of a large
# queue holds the lock for its whole run), and the hook only tests use to hold a write open.
LOCK_WAIT_S = float(os.environ.get("PORTTRACK_LOCK_WAIT", "600") or 600)
_TEST_HOLD = "PORTTRACK_TEST_HOLD_BEFORE_RENAME"


def _lock_path(path: Path) -> Path:
    return path.with_name(f".{path.name}.lock")


class _Held(NamedTuple):
    fd: int
    path: Path


def _lock(path: Path) -> _Held:
    """An exclusive `flock` on the queue's sidecar lock file, shared by every porttrack writer.

    The holder removes the lock file when it is done, so none is left beside the queue; a
    waiter that then wins the lock of a removed file sees the name gone (or a new file under
    it) and locks again.
    """
    import fcntl

    lock = _lock_path(path)
    deadline = time.monotonic() + LOCK_WAIT_S
    while True:
        try:
            lock.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
        except OSError as e:
            raise UserError(f"cannot create the write lock {lock}: {e.strerror}.") from None
        try:
            _wait_for(fd, path, lock, deadline)
        except BaseException:  # a timeout or a signal while waiting: the file goes when nobody holds it
            with contextlib.suppress(OSError):
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                os.unlink(lock)
            with contextlib.suppress(OSError):
                os.close(fd)
            raise
        mine = os.fstat(fd)
        try:
            now = os.stat(lock)
        except FileNotFoundError:
            now = None
        if now is not None and (now.st_dev, now.st_ino) == (mine.st_dev, mine.st_ino):
            return _Held(fd, lock)
        os.close(fd)  # the previous holder removed the file we waited on: lock the current one


def _wait_for(fd: int, path: Path, lock: Path, deadline: float) -> None:
    import fcntl

    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() > deadline:
                raise UserError(
                    f"{path}: another porttrack held the write lock {lock} for over "
                    f"{LOCK_WAIT_S:g} s; nothing was written."
                ) from None
            time.sleep(0.05)


def _unlock(held: _Held | None) -> None:
    if held is not None:
        with contextlib.suppress(OSError):
            os.unlink(held.path)  # before closing: nobody can lock this inode and believe it current
        os.close(held.fd)


def _on_disk(path: Path) -> str | None:
    try:
        return path.read_bytes().decode("utf-8")  # bytes, not read_text: "\r\n" must stay "\r\n"
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError):
        return "\0unreadable"


def _clean_stale_temps(path: Path) -> None:
    """Remove temp files an interrupted porttrack write left (kill -9); called with the lock held,
    so no cooperating writer is between its temp write and its rename."""
    stale = re.compile(re.escape(f".{path.name}.") + r"[a-z0-9_]{8}\.tmp")
    try:
        names = os.listdir(path.parent)
    except OSError:
        return
    for name in names:
        if stale.fullmatch(name):
            with contextlib.suppress(OSError):  # another user's file we may not remove: it is only litter
                os.unlink(path.parent / name)


def _hold_for_test(path: Path) -> None:
    """Tests only: announce the temp file is written, then wait for the test's go before renaming."""
    where = os.environ.get(_TEST_HOLD)
    if not where:
        return
    Path(where, "held").write_text(str(path))
    deadline = time.monotonic() + 30
    while not Path(where, "release").exists() and time.monotonic() < deadline:
        time.sleep(0.02)


def follow_citations_whole(qf: QueueFile) -> None:
    qf.doc  # noqa: B018 - parses the whole document (splicing edited entries in), then follows there
    follow_citations(qf)


def save(qf: QueueFile) -> bool:
    """Write atomically under the writers' lock; refuse when the file changed on disk since it was read.

    The check runs twice: before the temp file is written and again just before the rename, so
    an editor's save that lands while the temp file is written is kept and nothing is written.
    True when bytes changed.
    """
    held = qf.lock if qf.lock is not None else _lock(qf.path)
    qf.lock = None
    try:
        return _save_locked(qf)
    finally:
        _unlock(held)


def _save_locked(qf: QueueFile) -> bool:
    follow_citations(qf)
    text = dumps(qf)
    expected = None if qf.is_new else qf.text
    changed = f"{qf.path} changed on disk since porttrack read it; nothing was written, run the command again."
    if _on_disk(qf.path) != expected:
        raise UserError(changed)
    if text == qf.text:
        return False
    _clean_stale_temps(qf.path)

    def unchanged() -> None:
        _hold_for_test(qf.path)
        if _on_disk(qf.path) != expected:  # a writer that does not take the lock (an editor) saved meanwhile
            raise UserError(changed)

    write_atomic(qf.path, text, before_rename=unchanged)
    qf.text = text
    qf.pending = None
    qf.is_new = False
    return True
