"""Provenance headers (docs/design.md §9.1): which upstream files each port file says it came from, at which pin.

The port's own statements beat path arithmetic, so the upstream→port map starts here.
Only comment text is read: the first `scan_lines` lines for the file's header, and
the whole file for body-level `Ported from: path:NN (Symbol)` lines.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import re
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from collections import deque
from collections.abc import Iterable
from typing import TYPE_CHECKING

from porttrack import cache as cache_mod
from porttrack import gitio
from porttrack import paths as pathrules

if TYPE_CHECKING:
    from porttrack.config import Config

# Files whose comments we read; `#` comments for scripts, `//` and `/* */` for the C family.
_HASH = {".py", ".sh", ".cmake", ".pyi", ".bash"}
_SLASH = {
    ".c",
    ".cc",
    ".cpp",
    ".cxx",
    ".h",
    ".hh",
    ".hpp",
    ".hxx",
    ".cu",
    ".cuh",
    ".inl",
    ".ipp",
    ".metal",
    ".m",
    ".mm",
}
HEADER_SUFFIXES = _HASH | _SLASH

_PIN_RE = re.compile(
    r"(?:@\s*(?:pin\s+)?|\bat\s+(?:pin\s+)?(?=`?[0-9a-fA-F]*[0-9][0-9a-fA-F]*\b))`?([0-9a-fA-F]{7,40})`?(?![0-9a-zA-Z])"
)
# A path: dirs/name.ext, or a bare name.ext of a source language; then an optional qualifier.
# A path starts where a token starts: tried from inside a long run of path characters (a hostile
# line of "a/a/a/..."), it would rescan the rest of the run from each of them.
# a source language's file extension, after its dot (deferral records read bare file names by it too)
SOURCE_EXT = r"(?:py|pyi|cu|cuh|cpp|cc|hpp|h|c|sh|rs)"
_PATH = (
    r"(?<![A-Za-z0-9_.\-/])(?:(?:[A-Za-z0-9_.\-]+/)+[A-Za-z0-9_.\-]*[A-Za-z0-9_\-]\.[A-Za-z]\w*"
    r"|[A-Za-z0-9_\-][A-Za-z0-9_.\-]*\." + SOURCE_EXT + ")"
)
_QUAL = r"(?::\d+(?:-\d+)?(?:[,/]\d+(?:-\d+)?)*|::[A-Za-z_][\w.]*)"
_SOURCE_RE = re.compile(
    r"`?(?P<path>" + _PATH + r")(?P<qual>" + _QUAL + r")?`?(?:\s*\(`?(?P<sym>[A-Za-z_][\w.:]*)`?\))?"
)
# The statements that name sources; "Ports" only counts when a path follows at once.
_LABEL_RE = re.compile(
    r"(?i)(?P<label>REIMPLEMENTED[- ]FROM(?:[- ]THE)?[- ]WIRE[- ]FORMAT(?:\s+of)?|faithful\s+(?:1:1\s+)?ports?\s+of|ported\s+from|\(?upstream(?=\s*:\s*`?[\w.\-]+/)|\bgrounding(?=\s*:\s*`?[\w.\-]+/)|\bports(?=\s+`?[\w.\-]+/))\s*(?:\([^)]*\))?\s*:?\s*"
)
_LABEL_WORDS = ("reimplemented", "faithful", "ported", "upstream", "grounding", "ports")  # one per label
_REIMPL_RE = re.compile(r"(?i)REIMPLEMENTED[- ]FROM(?:[- ]THE)?[- ]WIRE[- ]FORMAT")
_ORIGINAL_RE = re.compile(
    r"(?i:\bno\s+(?:direct\s+)?upstream\s+(?:vllm\s+)?(?:mirror|counterpart|equivalent)\b)"
    r"|(?i:^\s*[\w.+\-]+\s+original\b)|(?i:(?<![\w\-])[\w\-]+\.(?:cpp|rs|go|js|ts)\s+original\b)|\bORIGINAL\b"
)
_SEE_RE = re.compile(r"(?i)\bsee\s+`?((?:[\w.\-]+/)*[\w.\-]+\.(?:h|hpp|hh|cuh))`?")
_SEP_AFTER_PIN = re.compile(r"\s*(?:\+|,|;|\band\b)\s*")
# A path broken before its extension: "dir/name" ends one line, a source extension (".py @ pin")
# opens the next; any other dotted word there (".github") is prose.
_SPLIT_NAME = re.compile(r"(?:[A-Za-z0-9_.\-]+/)+[A-Za-z0-9_\-]+")
_SPLIT_EXT = re.compile(r"\." + SOURCE_EXT + r"(?![\w/.\-])")


@dataclass
class Source:
    upstream: str  # normalised upstream path (vllm/tests/... becomes tests/...)
    pin: str = ""  # 7-40 hex, as written; "" when the statement names none
    qualifier: str = ""  # ":225-420", "::Symbol", or a body line's "(Symbol)"
    line: int = 0  # 1-based line of the statement in the port file


@dataclass
class Provenance:
    path: str  # port path relative to the root, "/" separated
    sources: list[Source]
    original: bool = False
    inherits: str = ""  # "See include/x.h": the header whose provenance this file shares
    symbol_lines: list[Source] = field(default_factory=list)  # body-level "Ported from: path:NN (Symbol)"
    reimplemented: bool = False  # REIMPLEMENTED-FROM-WIRE-FORMAT: sources are the format, not code

    @property
    def kind(self) -> str:
        """ported | reimplemented | original | inherits | none."""
        if self.reimplemented:
            return "reimplemented"
        if self.sources:
            return "ported"
        if self.original:
            return "original"
        if self.inherits:
            return "inherits"
        return "none"

    @property
    def unpinned(self) -> list[Source]:
        return [s for s in self.sources if not s.pin]


def normalise_upstream(path: str) -> str:
    path = path.strip("`")
    if path.startswith("vllm/tests/"):
        return path[len("vllm/") :]
    return path


def comment_lines(text: str, suffix: str, limit: int | None) -> list[tuple[int, str]]:
    """(1-based line, comment text without its markers) for comment lines among the first `limit` lines."""
    hash_style = suffix in _HASH
    out: list[tuple[int, str]] = []
    in_block = False
    if limit is not None:  # split only the head: it ends at the limit-th "\n", a line break to splitlines too
        text = text[: _offset_of_line(text, limit + 1)]
    for i, raw in enumerate(text.splitlines(), 1):
        if limit is not None and i > limit:
            break
        s = raw.strip()
        if hash_style:
            if s.startswith("#!") and i == 1:
                continue
            if s.startswith("#"):
                out.append((i, s.lstrip("#").strip()))
            elif s.startswith(('"""', "'''")) and i <= 3:
                # a module docstring at the top reads like a header comment
                out.append((i, s.strip("\"'").strip()))
            continue
        if in_block:
            end = s.find("*/")
            body = s[:end] if end >= 0 else s
            out.append((i, body.lstrip("*").strip()))
            in_block = end < 0
        elif s.startswith("//"):
            out.append((i, s.lstrip("/").lstrip("!<").strip()))
        elif s.startswith("/*"):
            end = s.find("*/", 2)
            body = s[2:end] if end >= 0 else s[2:]
            out.append((i, body.lstrip("*!").strip()))
            in_block = end < 0
    return out


def _statement(lines: list[tuple[int, str]], k: int, start: int) -> tuple[str, int]:
    """The text of the statement whose label ends at column `start` of lines[k], joined over continuations.

    A line ending in "/", or one ending in a name whose next line starts with its extension
    (".py @ ..."), continues without a space (a path split over two lines); a line ending in
    "@", "+", "," or "and", or a next line starting with "@", continues with one.
    A bare label takes the following lines that start with a path or "@", one source per line.
    Returns the text and the index of the last line used.
    """
    text = lines[k][1][start:].strip()
    if text.endswith(":") and not _SOURCE_RE.search(text):
        text = ""  # "UPSTREAM (ported FROM, ground-every-impl rule):" is a bare label
    j = k
    bare = not text
    while j + 1 < len(lines) and lines[j + 1][0] == lines[j][0] + 1:
        nxt = lines[j + 1][1]
        if not nxt:
            break
        if text.endswith("/") or (_SPLIT_EXT.match(nxt) and _SPLIT_NAME.fullmatch(text.rpartition(" ")[2])):
            text += nxt
        elif (
            re.search(r"(?:@|\+|,|\band|\bat)$", text)
            or re.match(r"(?:@|\+|,|and\s|at\s+`?[0-9a-f]{7})", nxt)
            or (bare and re.match(r"`?(?:[A-Za-z0-9_.\-]+/|" + _PATH + ")", nxt))
        ):
            text += " " + nxt
        else:
            break
        j += 1
    return text, j


def _parse_sources(text: str, line: int) -> list[Source]:
    """Sources in a statement: paths with qualifiers, joined by + , and; each pin covers the pinless ones before it."""
    sources: list[Source] = []
    pending: list[Source] = []
    pos = 0
    after_pin = False
    # the next source and pin, searched again only once `pos` has passed them (none found stays
    # none): a statement of thousands of pinless paths would otherwise look for a pin to its end
    # after each one
    m, p = _SOURCE_RE.search(text), _PIN_RE.search(text)
    while pos < len(text):
        if after_pin:
            sep = _SEP_AFTER_PIN.match(text, pos)
            if not sep:
                break  # trailing notes after the pin
            pos = sep.end()
        if m and m.start() < pos:
            m = _SOURCE_RE.search(text, pos)
        if p and p.start() < pos:
            p = _PIN_RE.search(text, pos)
        if p and (not m or p.start() < m.start()):
            for s in pending:
                s.pin = p.group(1)
            pending = []
            pos = p.end()
            after_pin = True
            continue
        if not m:
            break
        if after_pin and m.start() != pos:
            break
        qual = m.group("qual") or ""
        if not qual and m.group("sym"):
            qual = f"({m.group('sym')})"
        src = Source(normalise_upstream(m.group("path")), qualifier=qual, line=line)
        sources.append(src)
        pending.append(src)
        pos = m.end()
        after_pin = False
    return sources


def _offset_of_line(text: str, number: int) -> int:
    """Where line `number` (1-based) starts in `text` (its length when the text is shorter)."""
    at = 0
    for _ in range(number - 1):
        at = text.find("\n", at) + 1
        if at == 0:
            return len(text)
    return at


def parse_header(path: str, text: str, *, scan_lines: int = 40) -> Provenance:
    """Provenance of one port file from its text."""
    suffix = Path(path).suffix.lower()
    prov = Provenance(path=path, sources=[])
    head = comment_lines(text, suffix, scan_lines)
    k = 0
    while k < len(head):
        lineno, body = head[k]
        label = _LABEL_RE.search(body)
        if label:
            stmt, last = _statement(head, k, label.end())
            found = _parse_sources(stmt, lineno)
            if _REIMPL_RE.search(label.group("label")):
                prov.reimplemented = True
            prov.sources.extend(found)
            if found or not stmt:
                k = last + 1
                continue
        if not prov.original and _ORIGINAL_RE.search(body):
            prov.original = True
        if not prov.inherits:
            see = _SEE_RE.search(body)
            if see and see.group(1) != Path(path).name:
                prov.inherits = see.group(1)
        k += 1
    # Body-level statements are symbol provenance: they name where one piece came from. Most
    # files have none: each label of _LABEL_RE needs one of _LABEL_WORDS, and looking for those
    # in the lowered text past the head (at C speed) saves reading every line of such files.
    body = text[_offset_of_line(text, scan_lines + 1) :].lower()
    if not any(w in body for w in _LABEL_WORDS):
        return prov
    for lineno, body in comment_lines(text, suffix, None):
        if lineno <= scan_lines:
            continue
        label = _LABEL_RE.search(body)
        if label:
            stmt, _ = _statement([(lineno, body)], 0, label.end())
            for s in _parse_sources(stmt, lineno):
                prov.symbol_lines.append(s)
    return prov


def _list_files(root: Path, in_git: bool) -> list[str]:
    if in_git:
        out = gitio.git(root, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
        names = [n for n in out.decode("utf-8", "replace").split("\0") if n]
        return sorted(n for n in names if Path(n).suffix.lower() in HEADER_SUFFIXES)
    return sorted(
        p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file() and p.suffix.lower() in HEADER_SUFFIXES
    )


def scan_headers(
    root: Path,
    paths: Iterable[str] | None = None,
    *,
    scan_lines: int = 40,
    scopes: list[str] | None = None,
    skipped: list[str] | None = None,
    cached: bool = False,
    cache_dir: str | None = None,
) -> list[Provenance]:
    """Provenance of every commentable file under `root` (or of `paths`; or under `scopes`), sorted by path.

    Unreadable and non-UTF-8 files are skipped: they carry no header we could read. So are
    symlinks that point outside the port root: nothing outside it is read. Skipped paths are
    appended to `skipped` when a list is given. With `cached`, each clean file's parse is kept by
    blob id in porttrack's cache (`cache_dir` as configured; None for the default folder).
    """
    root = Path(root)
    tree = pathrules.Tree(root)
    in_git = (paths is None or cached) and gitio.is_git_repo(root)  # asked once, and only when needed
    names = sorted(set(paths)) if paths is not None else _list_files(root, in_git)
    where = pathrules.norm_all(scopes) if scopes else [""]
    if scopes:
        names = [n for n in names if pathrules.under(n, where)]
    store = _Stored(root, where, names, scan_lines, cache_dir) if cached and in_git else None
    provs = []
    for name in names:
        prov = store.get(name) if store is not None else None
        if prov is None:
            try:
                text = tree.read_text(name)
            except (OSError, UnicodeDecodeError, pathrules.Outside):
                if skipped is not None:
                    skipped.append(name)
                continue
            prov = parse_header(name, text, scan_lines=scan_lines)
            if store is not None:
                store.put(prov)
        provs.append(prov)
    if store is not None:
        store.close()
    _resolve_inherits(provs)
    return provs


def scan_port(cfg: Config) -> list[Provenance]:
    """`scan_headers` of the configured port under every scope, through the cache."""
    return scan_headers(
        cfg.port_root,
        scan_lines=cfg.header_scan_lines,
        scopes=cfg.all_scopes,
        cached=True,
        cache_dir=cfg.cache_dir or None,
    )


class _Stored:
    """Parsed headers kept in porttrack's cache by the file's git blob id, for the files whose index
    entry vouches for their working-tree content (`listing.list_worktree`): a clean file is parsed
    once per version, not once per run (`root` is a git work tree). Anything else is read, and
    nothing here stops a run: a cache that fails to read or write is a parse."""

    def __init__(self, root: Path, where: list[str], names: list[str], scan_lines: int, cache_dir: str | None):
        from porttrack.probe import listing

        self.db: sqlite3.Connection | None = None
        self.keys: dict[str, str] = {}
        self.found: dict[str, str] = {}
        self.new: list[tuple[str, str]] = []
        if not names:
            return
        blobs = listing.list_worktree(root, where, True)
        prefix = f"{cache_mod.parser_id(__file__)}:{scan_lines}:"
        self.keys = {n: f"{prefix}{blobs[n]}:{n}" for n in names if blobs.get(n)}
        if not self.keys:
            return
        try:
            self.db = cache_mod.open_db(cache_mod.db_path(cache_dir), autocommit=False)
            wanted = list(self.keys.values())
            for i in range(0, len(wanted), 500):
                chunk = wanted[i : i + 500]
                q = f"SELECT key, value FROM header WHERE key IN ({','.join('?' * len(chunk))})"
                self.found.update(self.db.execute(q, chunk))
        except (sqlite3.Error, OSError):
            self.close()

    def get(self, name: str) -> Provenance | None:
        value = self.found.get(self.keys.get(name, ""))
        if value is None:
            return None
        try:
            d = json.loads(value)
            d["sources"] = [Source(**x) for x in d["sources"]]
            d["symbol_lines"] = [Source(**x) for x in d["symbol_lines"]]
            prov = Provenance(**d)
        except (ValueError, TypeError, KeyError, AttributeError):  # a damaged row: parse the file again
            return None
        return prov if prov.path == name and _well_typed(prov) else None

    def put(self, prov: Provenance) -> None:
        if self.db is not None and prov.path in self.keys:
            self.new.append((self.keys[prov.path], json.dumps(dataclasses.asdict(prov), separators=(",", ":"))))

    def close(self) -> None:
        if self.db is None:
            return
        with contextlib.suppress(sqlite3.Error):
            self.db.executemany("INSERT OR REPLACE INTO header (key, value) VALUES (?, ?)", self.new)
            self.db.commit()
        with contextlib.suppress(sqlite3.Error):
            self.db.close()
        self.db = None


def _well_typed(prov: Provenance) -> bool:
    """Whether a row read back from the cache holds the types a parse makes (a planted one may not)."""
    return (
        isinstance(prov.inherits, str)
        and all(isinstance(f, bool) for f in (prov.original, prov.reimplemented))
        and all(
            all(isinstance(v, str) for v in (s.upstream, s.pin, s.qualifier)) and type(s.line) is int
            for s in (*prov.sources, *prov.symbol_lines)
        )
    )


def _resolve_inherits(provs: list[Provenance]) -> None:
    """Turn "See x.h" into the port path of that header, when one file in the scan ends with it."""
    paths = [p.path for p in provs]
    for prov in provs:
        if not prov.inherits or prov.inherits in paths:
            continue
        tail = "/" + prov.inherits.lstrip("/")
        same_dir = str(Path(prov.path).parent / prov.inherits)
        hits = [p for p in paths if p == same_dir] or [p for p in paths if p.endswith(tail)]
        if len(hits) == 1:
            prov.inherits = hits[0]


def effective_sources(prov: Provenance, by_path: dict[str, Provenance]) -> list[Source]:
    """A file's own sources, else those of the header it says to see (one hop is all the tree uses)."""
    if prov.sources:
        return prov.sources
    if prov.inherits and not prov.original and prov.inherits in by_path:
        return by_path[prov.inherits].sources
    return []


def upstream_map(provs: Iterable[Provenance]) -> dict[str, list[str]]:
    """upstream path -> port paths that name it as a source (header sources, inherited ones included)."""
    provs = list(provs)
    by_path = {p.path: p for p in provs}
    out: dict[str, list[str]] = {}
    for prov in provs:
        for s in effective_sources(prov, by_path):
            bucket = out.setdefault(s.upstream, [])
            if prov.path not in bucket:
                bucket.append(prov.path)
    return {k: sorted(v) for k, v in sorted(out.items())}


def cites(provs: Iterable[Provenance]) -> dict[str, set[str]]:
    """port path -> every upstream path its provenance names: header sources (inherited ones included)
    and body-level `Ported from:` lines."""
    provs = list(provs)
    by_path = {p.path: p for p in provs}
    out: dict[str, set[str]] = {}
    for prov in provs:
        named = {s.upstream for s in [*effective_sources(prov, by_path), *prov.symbol_lines]}
        if named:
            out[prov.path] = named
    return out


Moves = dict[str, list[tuple[str, int]]]  # upstream path -> (renamed to or from, by entry): Queue.moves


def counterparts(cfg, umap: dict[str, list[str]], upstream: str, moves: Moves | None = None) -> list[str]:
    """Port files for an upstream path: provenance headers first (`umap`, from upstream_map), then the
    config's [[map]] templates that exist; failing both, those of the nearest name the upstream
    renamed it to or from (`moves`, `Queue.moves`). Audit's path rules and check's unmapped gates
    both ask here."""
    return moved_counterparts(cfg, umap, upstream, moves)[1]


def moved_counterparts(
    cfg, umap: dict[str, list[str]], upstream: str, moves: Moves | None = None
) -> tuple[list[tuple[str, int]], list[str]]:
    """(the renames followed, port files): `counterparts`, with the route it took. Renames are followed
    breadth-first through the queue's entries in either direction, so a port whose headers still
    cite a file's old name (or already cite its new one) maps the file under both."""

    tree = pathrules.Tree(cfg.port_root)

    def direct(path: str) -> list[str]:
        if path in umap:
            return umap[path]
        # a queue's path is the pull request's to write: `vllm/../../x.py` must not map out of the port
        return [p for p in cfg.map_upstream(path) if tree.is_file(p)]

    files = direct(upstream)
    if files or not moves:
        return [], files
    routes: dict[str, list[tuple[str, int]]] = {upstream: []}
    todo = deque([upstream])
    while todo:
        path = todo.popleft()
        for other, n in moves.get(path, []):
            if other in routes:
                continue
            routes[other] = [*routes[path], (other, n)]
            found = direct(other)
            if found:
                return routes[other], found
            todo.append(other)
    return [], []


def pins_of(provs: Iterable[Provenance]) -> dict[str, list[str]]:
    """port path -> the distinct pins its header states (inherited ones included)."""
    provs = list(provs)
    by_path = {p.path: p for p in provs}
    out = {}
    for prov in provs:
        pins = sorted({s.pin for s in effective_sources(prov, by_path) if s.pin})
        if pins:
            out[prov.path] = pins
    return out


def port_commit_pins(root: Path, pins: Iterable[str]) -> dict[str, str]:
    """pin -> full sha, for the pins that resolve as commits of the port itself (so are not upstream pins)."""
    pins = sorted(set(pins))
    if not pins or not gitio.is_git_repo(root):
        return {}
    return {pin: sha for pin, sha in gitio.resolve_commits(root, pins).items() if sha is not None}


def pin_matches(pin: str, sha: str) -> bool:
    """Pins are 7-40 hex: two name the same commit when one is a prefix of the other."""
    if not pin or not sha:
        return False
    pin, sha = pin.lower(), sha.lower()
    return sha.startswith(pin) or pin.startswith(sha)


@dataclass
class HeadersReport:
    files: list[Provenance]
    unpinned: list[tuple[str, Source]]  # (port path, source without a pin)
    port_pins: dict[str, str]  # pin -> port commit it resolves to
    counts: dict[str, int]
    skipped: list[str] = field(default_factory=list)  # unreadable, not UTF-8, or a symlink out of the port root

    def as_json(self) -> dict:
        by_path = {p.path: p for p in self.files}
        return {
            "counts": self.counts,
            "files": [
                {
                    "path": p.path,
                    "kind": p.kind,
                    "inherits": p.inherits,
                    "sources": [
                        {"upstream": s.upstream, "pin": s.pin, "qualifier": s.qualifier, "line": s.line}
                        for s in effective_sources(p, by_path)
                    ],
                    "symbol_lines": len(p.symbol_lines),
                }
                for p in self.files
            ],
            "unpinned": [{"path": path, "upstream": s.upstream, "line": s.line} for path, s in self.unpinned],
            "port_commit_pins": self.port_pins,
            "skipped": self.skipped,
        }


def headers_report(root: Path, *, scan_lines: int = 40, scopes: list[str] | None = None) -> HeadersReport:
    """Everything `porttrack headers` prints: per file kind and sources, unpinned claims, port-commit pins."""
    skipped: list[str] = []
    provs = scan_headers(root, scan_lines=scan_lines, scopes=scopes, skipped=skipped)
    by_path = {p.path: p for p in provs}
    unpinned = [(p.path, s) for p in provs for s in p.unpinned]
    port_pins = port_commit_pins(root, {s.pin for p in provs for s in p.sources if s.pin})
    counts: dict[str, int] = {}
    for p in provs:
        kind = p.kind
        if kind == "inherits" and effective_sources(p, by_path):
            kind = "ported"
        counts[kind] = counts.get(kind, 0) + 1
    counts["unpinned-files"] = len({path for path, _ in unpinned})
    counts["port-commit-pins"] = len(port_pins)
    counts["skipped"] = len(skipped)
    return HeadersReport(provs, unpinned, port_pins, dict(sorted(counts.items())), skipped)


def render_text(rep: HeadersReport) -> list[str]:
    """The plain listing `porttrack headers` prints: one line per file with a statement, then the problems."""
    by_path = {p.path: p for p in rep.files}
    lines = []
    for p in rep.files:
        if p.kind == "none":
            continue
        srcs = effective_sources(p, by_path)
        text = ", ".join(f"{s.upstream}{s.qualifier}" + (f" @ {s.pin}" if s.pin else " (no pin)") for s in srcs)
        via = f" via {p.inherits}" if p.kind == "inherits" and srcs else ""
        lines.append(f"{p.path}  [{p.kind}{via}]  {text}".rstrip())
    lines.append("")
    lines.append(
        "files claiming a source with no pin:" if rep.unpinned else "files claiming a source with no pin: none"
    )
    for path, s in rep.unpinned:
        lines.append(f"  {path}:{s.line}  {s.upstream}")
    lines.append(
        "pins that resolve as port commits (not upstream pins):"
        if rep.port_pins
        else "pins that resolve as port commits: none"
    )
    for pin, sha in rep.port_pins.items():
        users = sorted(p.path for p in rep.files if any(s.pin == pin for s in p.sources))
        lines.append(f"  {pin} = port commit {sha}: {', '.join(users)}")
    if rep.skipped:
        lines.append("skipped (unreadable, not UTF-8, or a link out of the port root): " + ", ".join(rep.skipped))
    lines.append("counts: " + ", ".join(f"{k} {v}" for k, v in rep.counts.items()))
    return lines
