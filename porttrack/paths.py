"""Repository paths: one spelling of a path prefix, one "is under", one containment rule for reads.

Prefixes come from people (`paths = ["./vllm/"]`, `"."`, `"src//kv"`) and are normalised once,
at load, to git's spelling: no `./`, no trailing or doubled slash, and "" for the whole tree.
Every working-tree read goes through `Tree`, which resolves the path against the real root,
following every component, so a tracked folder replaced by a symlink cannot lead outside.
"""

from __future__ import annotations

import os
import posixpath
import stat
from collections.abc import Iterable
from pathlib import Path

from porttrack.errors import UserError


def norm(prefix: str) -> str:
    """A prefix in git's spelling: "./vllm/" -> "vllm", "." or "" -> "" (the whole tree)."""
    p = prefix.strip().replace("\\", "/")
    p = posixpath.normpath(p) if p else ""
    return "" if p in (".", "/") else p.strip("/")


def norm_all(prefixes: Iterable[str]) -> list[str]:
    """Normalised prefixes, duplicates dropped, order kept."""
    return list(dict.fromkeys(norm(p) for p in prefixes))


def folder(prefix: str) -> str:
    """A normalised prefix as a person reads a folder: "vllm" -> "vllm/", "" -> "."."""
    return prefix + "/" if prefix else "."


def whole_tree(prefixes: list[str]) -> bool:
    """No prefix, or one naming the root ("" after `norm`), means every path is mirrored."""
    return not prefixes or "" in prefixes


def under(path: str | None, prefixes: Iterable[str]) -> bool:
    """True when `path` is one of the (normalised) prefixes or lies below one; "" holds everything."""
    if path is None:
        return False
    return any(p == "" or path == p or path.startswith(p + "/") for p in prefixes)


def mirrored(path: str | None, prefixes: list[str]) -> bool:
    """Under a mirrored prefix, where an empty list mirrors the whole tree."""
    return path is not None and (whole_tree(prefixes) or under(path, prefixes))


class Outside(ValueError):
    """A working-tree path that resolves outside the root (a link, or a folder replaced by one)."""


def _open_regular(path: str | Path) -> int:
    """An fd for a regular file; anything else (a FIFO, a device, a folder) is refused before it can block."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise IsADirectoryError(0, "not a regular file", str(path))
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_file(path: str | Path) -> bytes:
    """The bytes of a regular file; OSError for anything else, raised before a FIFO can block the read."""
    with os.fdopen(_open_regular(path), "rb") as fh:
        return fh.read()


def read_regular(path: Path, what: str) -> bytes:
    """The bytes of a file named by a person (queue, config, report); exit 2 for anything not a regular file."""
    try:
        fd = _open_regular(path)
    except FileNotFoundError:
        raise UserError(f"{what} {path} does not exist.") from None
    except IsADirectoryError:
        kind = "a folder" if path.is_dir() else "not a regular file (a FIFO, socket or device)"
        raise UserError(f"{what} {path} is {kind}; porttrack reads regular files only.") from None
    except OSError as e:
        raise UserError(f"cannot read {what} {path}: {e.strerror}.") from None
    with os.fdopen(fd, "rb") as fh:
        return fh.read()


def refuse_irregular(path: Path, what: str) -> None:
    """Refuse to replace something that is not a regular file (a FIFO, a device, a folder) with a write."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return
    except OSError as e:
        raise UserError(f"cannot use {what} {path}: {e.strerror}.") from None
    if not stat.S_ISREG(mode):
        kind = "a folder" if stat.S_ISDIR(mode) else "not a regular file (a FIFO, socket or device)"
        raise UserError(f"{what} {path} is {kind}; porttrack writes regular files only.")


class Tree:
    """Reads of one working tree, each contained in its real root.

    A path is resolved component by component (a folder's real path is cached per run), so
    `src/sys/passwd` is refused when `src/sys` is a link to `/etc`, not only when the file is.
    """

    def __init__(self, root: Path):
        self.root = Path(root)
        self.real = os.path.realpath(self.root)
        self._dirs: dict[str, str | None] = {"": self.real}

    def _inside(self, real: str) -> bool:
        return real == self.real or real.startswith(self.real.rstrip("/") + "/")

    def _dir(self, rel_dir: str) -> str | None:
        if rel_dir not in self._dirs:
            real = os.path.realpath(os.path.join(self.real, rel_dir))
            self._dirs[rel_dir] = real if self._inside(real) else None
        return self._dirs[rel_dir]

    def resolve(self, rel: str) -> str:
        """The real path of `rel`; `Outside` when any component leads out of the root."""
        return self._resolve(rel)[0]

    def resolve_file(self, rel: str) -> str | None:
        """As `resolve`, but None where `rel` itself is a link: a file read through it never is."""
        real, link = self._resolve(rel)
        return None if link else real

    def _resolve(self, rel: str) -> tuple[str, bool]:
        """(real path, whether `rel` itself is a link): one lstat a file, folders once a run."""
        rel = rel.replace("\\", "/")
        if os.path.isabs(rel) or ".." in rel.split("/"):
            raise Outside(rel)
        head, _, name = rel.rpartition("/")
        real_dir = self._dir(head)
        if real_dir is None:
            raise Outside(rel)
        full = real_dir.rstrip("/") + "/" + name  # os.path.join, for a name without a "/"
        if not os.path.islink(full):
            return full, False
        full = os.path.realpath(full)
        if not self._inside(full):
            raise Outside(rel)
        return full, True

    def contains(self, rel: str) -> bool:
        try:
            self.resolve(rel)
        except Outside:
            return False
        return True

    def is_file(self, rel: str) -> bool:
        """`rel` is a regular file under the root, reached through no link out of it and not a link itself."""
        try:
            real = self.resolve_file(rel)
        except Outside:
            return False
        return real is not None and os.path.isfile(real)

    def read_bytes(self, rel: str) -> bytes:
        """The bytes of a regular file under the root; `Outside`, or OSError for a missing or odd file."""
        return read_file(self.resolve(rel))

    def read_text(self, rel: str, errors: str = "strict") -> str:
        return self.read_bytes(rel).decode("utf-8", errors)
