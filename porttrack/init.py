"""porttrack init: a starter porttrack.toml from what the tree shows."""

from __future__ import annotations

import os
import re
from collections import Counter
from pathlib import Path

import tomlkit

from porttrack import paths as pathrules
from porttrack.config import CONFIG_NAME
from porttrack.errors import UserError

_PORTED = re.compile(r"(?:Ported from|Ports|Faithful port of)\s*:?\s*`?((?:vllm|tests|csrc)/[\w./-]+)`?(?:\s*@\s*(?:pin\s+)?`?([0-9a-f]{7,40}))?")
_SOURCE_SUFFIXES = {".c", ".cc", ".cpp", ".cxx", ".h", ".hh", ".hpp", ".cu", ".cuh", ".py", ".sh"}


def survey(root: Path, header_lines: int = 40) -> dict:
    """What the tree shows: code/test dirs, matrix files, upstream roots and pins named in headers."""
    code = [d for d in ("src", "include", "csrc", "lib") if (root / d).is_dir()]
    tests = [d for d in ("tests", "test") if (root / d).is_dir()]
    matrices = sorted(str(p.relative_to(root)) for p in root.glob(".agents/*matrix*.md"))
    roots: Counter[str] = Counter()
    pins: Counter[str] = Counter()
    tree = pathrules.Tree(root)
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if not d.startswith(".") and d not in ("third_party", "build", "node_modules")]
        for name in filenames:
            if Path(name).suffix not in _SOURCE_SUFFIXES:
                continue
            try:
                text = tree.read_text(Path(dirpath, name).relative_to(root).as_posix(), errors="replace")
                head = "".join(text.splitlines(keepends=True)[:header_lines])
            except (OSError, pathrules.Outside):
                continue
            for m in _PORTED.finditer(head):
                roots[m.group(1).split("/")[0] + "/"] += 1
                if m.group(2):
                    pins[m.group(2)] += 1
    return {"code": code, "tests": tests, "matrices": matrices, "roots": roots, "pins": pins}


def starter(root: Path, upstream: Path | None = None) -> tuple[str, list[str]]:
    s = survey(root)
    notes = []
    doc = tomlkit.document()
    doc.add(tomlkit.comment("porttrack configuration; see docs/config.md. Written by `porttrack init`."))
    up = tomlkit.table()
    if upstream is not None:
        up["repo"] = os.path.relpath(upstream.resolve(), root.resolve())
    else:
        up["repo"] = "../upstream"
        up["repo"].comment("a local upstream checkout; needed only by queue build / refresh")
    up["paths"] = sorted(s["roots"]) or ["vllm/", "tests/"]
    up["pr_pattern"] = r"\(#(\d+)\)"
    doc["upstream"] = up
    port = tomlkit.table()
    port["root"] = "."
    scopes = tomlkit.inline_table()
    scopes["code"] = s["code"] or ["src", "include"]
    scopes["tests"] = s["tests"] or ["tests"]
    port["scopes"] = scopes
    port["exclude"] = ["third_party/**"]
    port["header_scan_lines"] = 40
    doc["port"] = port
    naming = tomlkit.table()
    naming["strip_leading_underscore"] = True
    naming["renames"] = tomlkit.inline_table()
    doc["naming"] = naming
    owners = tomlkit.table()
    owners["matrices"] = s["matrices"] or [".agents/*-matrix.md"]
    owners["id_pattern"] = r"[A-Z][A-Z0-9]+(?:-[A-Z0-9]+)+"
    owners["done_states"] = ["DONE"]
    doc["owners"] = owners
    notes.append(f"code scope {scopes['code']}, tests scope {scopes['tests']}")
    notes.append(f"{sum(s['roots'].values())} provenance statements name upstream roots {sorted(s['roots']) or 'none'}")
    if s["pins"]:
        pin, count = s["pins"].most_common(1)[0]
        notes.append(f"most common header pin: {pin} ({count} files); use it as PIN in `queue build --range PIN..TARGET`")
    notes.append(f"matrices: {s['matrices'] or 'none found'}")
    return tomlkit.dumps(doc), notes


def write_starter(root: Path, *, upstream: Path | None = None, force: bool = False) -> tuple[Path, list[str]]:
    if not root.is_dir():
        raise UserError(f"--root {root} is not a directory.")
    if upstream is not None:
        from porttrack import gitio

        gitio.require_repo(upstream, "--upstream")  # "--upstream X is not a git repository."
    path = root / CONFIG_NAME
    if path.exists() and not force:
        raise UserError(f"{path} already exists; pass --force to overwrite it.")
    text, notes = starter(root, upstream)
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as e:
        raise UserError(f"cannot write {path}: {e.strerror}.") from None
    return path, notes
