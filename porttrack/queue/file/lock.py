"""The queue file's lock: one writer at a time, a stale lock broken, a test hook to hold a write open."""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path
from typing import NamedTuple


from porttrack.errors import UserError


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


def _hold_for_test(path: Path) -> None:
    """Tests only: announce the temp file is written, then wait for the test's go before renaming."""
    where = os.environ.get(_TEST_HOLD)
    if not where:
        return
    Path(where, "held").write_text(str(path))
    deadline = time.monotonic() + 30
    while not Path(where, "release").exists() and time.monotonic() < deadline:
        time.sleep(0.02)
