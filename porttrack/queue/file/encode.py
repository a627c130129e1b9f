"""The model into TOML: new tables for new entries, key-by-key edits of existing ones, and the text of a whole file."""

from __future__ import annotations

import datetime as dt
import json
import re
import tomllib
from dataclasses import fields, replace
from pathlib import Path
from typing import Any

import tomlkit
from tomlkit.items import AoT, Table

from porttrack.errors import UserError
from porttrack.model import (
    UNPROBED_GATES,
    Behaviour,
    Citation,
    Entry,
    Gate,
    Part,
    Queue,
    QueueMeta,
    Symbols,
)
from porttrack.queue.file.lines import _lines, _spans, line_of, position
from porttrack.queue.file.decode import _to_model
from porttrack.queue.file.document import QueueFile, _spliced, chunk_doc, chunk_text, edit_entry


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


def _gate_dict(g: Gate) -> dict[str, Any]:
    """A gate's keys, in the order its table is written."""
    d: dict[str, Any] = {"id": g.id, "kind": g.kind}
    if g.kind != "entry-ported":
        d["probe"] = g.probe
    if g.kind not in UNPROBED_GATES:
        d["scope"] = list(g.scope)
        if g.control:
            d["control"] = g.control
    if g.regex:
        d["regex"] = True
    if g.expect is not None:
        d["expect"] = g.expect
    if g.entry is not None:
        d["entry"] = g.entry
    if g.established_at:
        d["established_at"] = g.established_at
    return d


def _gate_table(g: Gate) -> Table:
    t = tomlkit.table()
    for key, value in _gate_dict(g).items():
        t[key] = value
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
    qf.pending, qf._chunks, qf._as_built = text, {}, {}  # separately edited entries are in the text now
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
        t["gate"] = [_gate_dict(g) for g in e.gates]
    if e.parts:
        t["part"] = [
            {**_part_dict(p), **({"gate": [_gate_dict(g) for g in p.gates]} if p.gates else {})} for p in e.parts
        ]
    if e.citations:
        t["citation"] = [_citation_dict(c) for c in e.citations]
    return newline.join(_table_text("entry", t, True)) + newline


def _reparsed(qf: QueueFile) -> QueueFile:
    """A view of the edited document with line numbers that match its new text."""
    if qf._doc is None:  # only separately parsed entries were edited: only they are read again
        entries = list(qf.data.get("entry", []))
        for index, (_, _, doc) in qf._chunks.items():
            entries[index] = (tomllib.loads(doc) if isinstance(doc, str) else doc.unwrap())["entry"][0]
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
        texts: set[int] = set()
    else:  # entries edited one by one: the numbering is unchanged, so the read data still finds them
        if re.search(r"^\s*\[\[\s*rule\s*\.\s*gate\s*\]\]", qf.text, re.M):
            return follow_citations_whole(qf)
        spans = _spans(qf.text, "entry")
        lines = _lines(qf.text)
        cites = [i for i, (s, e) in enumerate(spans) if any("entry-ported" in ln for ln in lines[s - 1 : e - 1])]
        numbers_of = {i: e.get("n") for i, e in enumerate(qf.data.get("entry", []))}
        for i in cites:  # entries that had such gates when read; those edited since are loaded already
            if numbers_of.get(i) is not None and i not in qf._as_built:  # text from a model: followed below
                edit_entry(qf, numbers_of[i])
        texts = {i for i, c in qf._chunks.items() if isinstance(c[2], str) and i in qf._as_built}
        owners = []
        tables = [
            chunk_doc(qf, i)["entry"][0] for i, c in qf._chunks.items() if i not in texts and not _cites_none(c[2])
        ]
        view = QueueFile(qf.path, None, qf.queue, _spliced(qf), data=qf.data)
    numbers = {e.get("n") for e in view.data.get("entry", [])}
    _follow_as_built(qf, view, numbers, sorted(i for i in texts if not _cites_none(qf._chunks[i][2])))
    for t in tables:
        owners += [t, *t.get("part", [])]
    for owner in owners:
        for g in owner.get("gate", []):
            want = _followed(qf, view, numbers, g.get("kind"), g.get("established_at"), g.get("entry"))
            if want is not None:
                g["established_at"] = want


def _follow_as_built(qf: QueueFile, view: QueueFile, numbers: set, indices: list[int]) -> None:
    """`follow_citations` for entries rewritten as text from their model: rendered again from it."""
    for i in indices:
        e, tail = qf._as_built[i]
        gates = [
            replace(
                g, established_at=_followed(qf, view, numbers, g.kind, g.established_at, g.entry) or g.established_at
            )
            for g in e.gates
        ]
        if gates != e.gates:
            qf._as_built[i] = (replace(e, gates=gates), tail)
            qf._chunks[i] = (*qf._chunks[i][:2], entry_text(qf._as_built[i][0]) + tail)


def _followed(qf: QueueFile, view: QueueFile, numbers: set, kind: Any, cited: Any, n: Any) -> str | None:
    """The citation an entry-ported gate should hold when it names a line of this queue that has moved."""
    if kind != "entry-ported" or not isinstance(cited, str) or n not in numbers:
        return None
    path, sep, line = cited.rpartition(":")
    if sep and line.isdigit() and (path == qf.path.name or path.endswith("/" + qf.path.name)):
        want = f"{path}:{line_of(view, n)}"
        return want if cited != want else None
    return None


def _cites_none(chunk: tomlkit.TOMLDocument | str) -> bool:
    """An entry rewritten as text with no entry-ported gate: nothing in it to follow, nothing to parse."""
    return isinstance(chunk, str) and "entry-ported" not in chunk


def write_entry_text(qf: QueueFile, e: Entry, **values: Any) -> bool | None:
    """`set_fields` of entry `e`'s own keys, as text, where the file still holds `e` exactly as
    `entry_text` writes it (no person's edit, comment or spacing to keep): then the new text is
    `entry_text` of the entry with `values`, which is what the tomlkit edit writes, at a fraction of
    its cost. Returns whether the text changed, or None where the entry is not as written, or the
    edit would reorder a gate's keys (edit it through its table instead)."""
    index = position(qf, e.n)
    if qf._doc is not None or qf.pending is not None or index is None or index in qf._chunks:
        return None
    # the table edit writes an empty value of a key entry_text leaves out when empty (`evidence = []`)
    if any(v is None or (not v and k not in _ALWAYS and k != "gates") for k, v in values.items()):
        return None
    if index >= len(_spans(qf.text, "entry")):
        return None
    old = chunk_text(qf, index)
    # as `queue build` writes it (one blank line before the next entry), or as this function or the
    # table edit wrote it since: tomlkit appends gate tables after that blank line, and none follows them
    if e.parts or "\r" in old or old != entry_text(e) + _tail(e.gates):
        return None
    # gates edited in place keep their keys' order and spacing; added or removed keys, more or fewer
    # gates, or none left (the blank lines around them stay), would not
    new_gates = values.get("gates", e.gates)
    if e.gates and [_gate_keys(g) for g in e.gates] != [_gate_keys(g) for g in new_gates]:
        return None
    tail = _tail(new_gates)
    written = replace(e, **values)  # its own gates: the text and the model it renders stay one
    written.gates = [replace(g, scope=list(g.scope)) for g in written.gates]
    new = entry_text(written) + tail
    start, end = _spans(qf.text, "entry")[index]
    qf._chunks[index] = (start, end, new)
    qf._as_built[index] = (written, tail)
    return new != old


def _tail(gates: list[Gate]) -> str:
    """What follows an entry as written: a blank line, or nothing after its last gate table."""
    return "" if gates else "\n"


def _gate_keys(g: Gate) -> list[str]:
    return list(_gate_dict(g))


def follow_citations_whole(qf: QueueFile) -> None:
    qf.doc  # noqa: B018 - parses the whole document (splicing edited entries in), then follows there
    follow_citations(qf)
