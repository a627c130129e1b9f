"""A queue file in memory (QueueFile): its tomlkit document, read lazily, and the model decoded from it."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import tomlkit
from tomlkit.items import Table

from porttrack import paths as pathrules, tomlmap
from porttrack.config import parse_toml
from porttrack.errors import UserError
from porttrack.model import (
    Entry,
    Queue,
    QueueMeta,
)
from porttrack.queue.file.lines import _kept_lines, _spans, position
from porttrack.queue.file.decode import _to_model
from porttrack.queue.file.lock import _Held, _lock, _unlock


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
        # entry index -> (first line, end line, its own tomlkit document, or its new text): entries
        # edited without parsing the whole file, spliced back by `dumps` (a 100k-entry queue, 5
        # entries written). Text is what `encode.write_entry_text` rewrote; it is parsed if edited again.
        self._chunks: dict[int, tuple[int, int, tomlkit.TOMLDocument | str]] = {}
        self._as_built: dict[int, tuple[Entry, str]] = {}  # such text: the entry it renders, and what follows it
        self._index: tuple[dict, dict[int, int]] | None = None

    @property
    def doc(self) -> tomlkit.TOMLDocument:
        if self._doc is None:
            text = self.pending if self.pending is not None else _spliced(self) if self._chunks else self.text
            self._doc = parse_toml(self.path, text)
            self.pending, self._chunks, self._as_built = None, {}, {}
        return self._doc


def edit_entry(qf: QueueFile, n: int) -> Table | None:
    """The editable [[entry]] table numbered `n`: from the whole document when it is parsed,
    else parsed alone from its own lines, so editing a few entries costs what they hold."""
    if qf._doc is not None or qf.pending is not None:  # appended text: edit the whole document
        return next((t for t in qf.doc.get("entry", []) if t.get("n") == n), None)
    index = position(qf, n)
    if index is None:
        return None
    if index not in qf._chunks:
        spans = _spans(qf.text, "entry")
        if index >= len(spans):
            return next((t for t in qf.doc.get("entry", []) if t.get("n") == n), None)
        start, end = spans[index]
        qf._chunks[index] = (start, end, chunk_text(qf, index))
    return chunk_doc(qf, index)["entry"][0]


def chunk_text(qf: QueueFile, index: int) -> str:
    """The text of the `index`th [[entry]] (its children and the blank lines after it included):
    as edited, where it was, else as read."""
    if index in qf._chunks:
        doc = qf._chunks[index][2]
        return doc if isinstance(doc, str) else doc.as_string()
    start, end = _spans(qf.text, "entry")[index]
    return "".join(_kept_lines(qf.text)[start - 1 : end - 1])


def chunk_doc(qf: QueueFile, index: int) -> tomlkit.TOMLDocument:
    """The tomlkit document of an entry edited on its own (parsed now where it is still text)."""
    start, end, doc = qf._chunks[index]
    if isinstance(doc, str):
        doc = parse_toml(qf.path, doc)
        qf._chunks[index] = (start, end, doc)
        qf._as_built.pop(index, None)
    return doc


def _spliced(qf: QueueFile) -> str:
    """The read text with each separately edited entry's new text in place of its old lines."""
    lines = list(_kept_lines(qf.text))  # a copy: the memoised list stays as read
    for start, end, doc in sorted(qf._chunks.values(), key=lambda c: c[0], reverse=True):
        lines[start - 1 : end - 1] = [doc if isinstance(doc, str) else doc.as_string()]
    return "".join(lines)


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
        at = tomlmap.error_line(e)
        reason = re.sub(r"\s*\(at (line|end of document).*", "", str(e))
        if at is None and "end of document" in str(e):  # the file stops mid-value: say where, and why
            last = text.count("\n") + (0 if text.endswith("\n") else 1)
            raise UserError(
                f"{path}:{last}: malformed TOML: {reason.lower()} at the end of the file; it looks truncated "
                "(an interrupted copy or download?): restore it from git or a backup."
            ) from None
        line = f":{at}" if at else ""
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
