"""Saving a queue file: atomic writes, under the lock, refusing a file changed on disk since it was read."""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
from pathlib import Path
from collections.abc import Callable


from porttrack.errors import UserError
from porttrack.queue.file.lock import _hold_for_test, _lock, _unlock
from porttrack.queue.file.document import QueueFile
from porttrack.queue.file.encode import dumps, follow_citations


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
