"""What the port itself records about upstream changes: deferral records and prior triage.

A deferral record is a line of the port's code comments or docs that carries a deferral word
(`[audit] deferral_words`: DEFERRED, not ported, omitted, deviation, ...) and names an upstream
symbol or PR. Prior triage is an upstream PR number (`#12345`, `vllm#12345`) or commit sha
cited in the port's source. Both are read once per audit, from the port's files under the code
scope and `docs/`, and cited by path:line.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from porttrack import gitio
from porttrack.config import DEVIATION
from porttrack.evidence.headers import SOURCE_EXT
from porttrack.evidence.naming import norm

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# a PR number and a path start where their token starts: a long run of path characters is read
# once, not again from each of its characters (docs/security.md)
_PR = re.compile(r"(?<![\w/])(?:(?<![.-])[\w.-]+#|#|/pull/)(\d{3,7})\b")
_SHA = re.compile(r"\b[0-9a-f]{8,40}\b")
WINDOW = 80  # characters either side of a deferral word that it is taken to speak of
_HEADER = re.compile(r"Ported from|Grounding|Faithful|Upstream:", re.I)
_C_SUFFIXES = {".h", ".hpp", ".hh", ".c", ".cc", ".cpp", ".cxx", ".cu", ".cuh"}
_TEXT_SUFFIXES = _C_SUFFIXES | {".py", ".md", ".txt", ".rst"}


@dataclass
class Record:
    path: str
    line: int
    text: str
    names: set[str]  # normalised identifiers on the line
    prs: set[int]
    shas: set[str]
    deferral: str  # the deferral word found, or ""

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}"

    @property
    def deviates(self) -> bool:
        """Is its word a deviation's? That records the port doing the thing its own way, which is
        not leaving it out."""
        return self.deferral.lower().startswith(DEVIATION)


@dataclass
class Records:
    deferrals: list[Record] = field(default_factory=list)
    citations: list[Record] = field(default_factory=list)  # lines citing a PR or a sha (no deferral word)

    def omissions(self) -> Records:
        """These records less the deviations: what the port says it left out."""
        return dataclasses.replace(self, deferrals=[r for r in self.deferrals if not r.deviates])

    def deferral_for(
        self,
        names: list[str],
        prs: list[int],
        near: set[str],
        qualified: Sequence[str] = (),
        docs: tuple[str, ...] = ("docs/",),
        where: Mapping[str, set[str]] | None = None,
    ) -> tuple[Record, str] | None:
        """The first deferral record naming one of `names` (any spelling) in one of the files `near`
        (the counterparts), or one of `qualified` (`Class.member`, `Class::member`) or `prs` in the
        port's docs, whose prose is too common a place for a bare word; with what it names. A name
        `where` maps counts only in the files it maps it to."""
        wanted = {norm(n): n for n in names if len(norm(n)) >= 6}
        allowed = {norm(n): files for n, files in (where or {}).items()}
        for r in self.deferrals:
            in_docs = r.path.startswith(docs)
            if r.path not in near and not in_docs:
                continue
            if in_docs:
                hit = next((q for q in qualified if q in r.text or q.replace(".", "::") in r.text), None)
                if hit:
                    return r, hit
            else:
                common = sorted(n for n in set(wanted) & r.names if r.path in allowed.get(n, near))
                if common:
                    return r, wanted[common[0]]
            pr = sorted(set(prs) & r.prs)
            if pr:
                return r, f"#{pr[0]}"
        return None

    def triage_for(self, pr: int | None, sha: str) -> Record | None:
        """The first line of the port citing this PR or a prefix of this sha."""
        for r in self.citations:
            if pr is not None and pr in r.prs:
                return r
            if sha and any(sha.startswith(s) for s in r.shas):
                return r
        return None


_COMMENT = re.compile(r"^\s*(//+|#+|\*|/\*)\s*(.*)$")
# in C and C++ a line opening with `#` is a preprocessor directive (`#include "a/b.h"`), not prose
_C_COMMENT = re.compile(r"^\s*(//+|\*|/\*)\s*(.*)$")
# a file path (`vllm/widgets/pipeline.py`), or a source file's bare name (`widget_parser.py:417`),
# names a file: its parts are no symbols a record defers
_FILE_PATH = re.compile(r"(?<![\w.-])(?<![\w.-]/)(?:[\w.-]*(?:/[\w.-]+)+\.\w{1,4}|[\w-]+\." + SOURCE_EXT + r")\b")
_ITEM = re.compile(r"^\s*(?:[-*+]|\d+\.)\s+\S")
BLOCK = 20  # lines a deferral heading's list may run to


def _block_after(lines: list[str], i: int, comment: re.Pattern[str] = _COMMENT, *, heading: bool = True) -> list[str]:
    """The lines a deferral goes on to speak of. A heading (`DEFERRED upstream fields:`) lists
    them: the rest of its comment block, or the list items that follow it in a doc, up to a blank
    line. A deferral inside a sentence or a list item speaks only to the end of its own item."""
    out: list[str] = []
    for line in lines[i : i + BLOCK]:
        c = comment.match(line)
        if c and c.group(2).strip():
            if _HEADING.match(c.group(2)):
                break  # the next heading of the same block speaks of something else
            if not heading and _ITEM.match(c.group(2)):
                break  # the next item of a list is another thing's entry
            out.append(c.group(2))
        elif not c and _ITEM.match(line) and heading:
            out.append(line)
        else:
            break
    return out


def _is_heading(text: str, m: re.Match[str]) -> bool:
    """Whether a deferral word opens a list (`DEFERRED upstream fields:`, `─── OMITTED ───`,
    `Not ported:`) rather than sitting in a sentence: the word leads its comment line, or the
    line ends in a colon."""
    at = body.start(2) if (body := _COMMENT.match(text)) else 0
    lead = _LEAD.match(text, at)  # every part of it is optional: it always matches
    return m.start() <= (lead.end() if lead else at) or text.rstrip().endswith(":")


_LEAD = re.compile(r"[\s\u2500-\u257f=#*-]*(?:[A-Z][A-Z0-9-]*\s+)*")


_HEADING = re.compile(r"^[A-Z][A-Z -]{3,}[,:(]")


def scan(root: Path, folders: list[str], words: list[str]) -> Records:
    """Read the deferral records and PR/sha citations under `folders` of the port root. One `git grep`
    finds the candidate lines; only the files holding one are read (all files when the port is no git tree).
    Audit keeps what it read for a clean tree in the cache (`dump`, `load`; porttrack/audit/kept.py)."""
    present = [f for f in folders if (root / f).is_dir()]
    if not present:
        return Records()
    word_re = (
        re.compile(r"\b(?:" + "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True)) + r")\b", re.I)
        if words
        else None
    )
    out = Records()
    alternatives = [r"#[0-9]{3,7}", "/pull/", "commit", *(re.escape(w).replace("\\ ", " ") for w in words)]
    found = gitio.grep_lines(root, "|".join(alternatives), present)
    if found is None:
        found = {
            p.relative_to(root).as_posix(): [] for f in present for p in sorted((root / f).rglob("*")) if p.is_file()
        }
    for rel in sorted(found):
        p = root / rel
        if p.suffix not in _TEXT_SUFFIXES or p.is_symlink() or not p.is_file():
            continue
        try:
            text = p.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        lines = text.splitlines()
        for i in found[rel] or range(1, len(lines) + 1):
            if i > len(lines):
                continue
            line = lines[i - 1]
            m = word_re.search(line) if word_re else None
            prs = {int(x) for x in _PR.findall(line)}
            # a provenance header's `@ pin` states a sync point, not the triage of one commit
            shas = set(_SHA.findall(line)) if "commit" in line.lower() and not _HEADER.search(line) else set()
            if not m and not prs and not shas:
                continue
            # a deferral names what lies near its word: a long doc paragraph defers only its own clause
            near = line[max(0, m.start() - WINDOW) : m.end() + WINDOW] if m else line
            if m:
                comment = _C_COMMENT if p.suffix in _C_SUFFIXES else _COMMENT
                near += " " + " ".join(_block_after(lines, i, comment, heading=_is_heading(line, m)))
            rec = Record(
                rel,
                i,
                near.strip()[:200],
                _named(_FILE_PATH.sub(" ", near)),
                {int(x) for x in _PR.findall(near)} if m else prs,
                shas,
                m.group(0) if m else "",
            )
            (out.deferrals if m else out.citations).append(rec)
    return out


def _named(text: str) -> set[str]:
    """The identifiers a record names, normalised. A plain word of its prose (`fields`, `Fields`) is
    no name unless written as code (a call, a member, in backticks): "the fields are omitted" does
    not defer an upstream `_fields_`. A token with `_`, a digit or a capital past its first letter
    is code however it stands."""
    out = set()
    for m in _IDENT.finditer(text):
        t = m.group()
        if t.isalpha() and t[1:].islower():
            before, after = text[m.start() - 1 : m.start()], text[m.end() : m.end() + 1]
            if after not in ("(", "`") and before not in (".", ":", ">", "`", "~"):
                continue
        out.add(norm(t))
    return out


def dump(recs: Records) -> bytes:
    rows = {
        what: [[r.path, r.line, r.text, sorted(r.names), sorted(r.prs), sorted(r.shas), r.deferral] for r in got]
        for what, got in (("deferrals", recs.deferrals), ("citations", recs.citations))
    }
    return json.dumps(rows).encode()


def load(value: bytes) -> Records | None:
    """Records `dump` wrote; None for bytes that do not hold them (a damaged row: read the tree again)."""
    try:
        d = json.loads(value)
        return Records([_record(x, True) for x in d["deferrals"]], [_record(x, False) for x in d["citations"]])
    except (ValueError, TypeError, KeyError):  # a damaged row: read the tree again
        return None


def _record(x: list, deferral: bool) -> Record:
    """A row read back from the cache, refused (TypeError) unless it holds the types a scan makes."""
    path, line, text, names, prs, shas, word = x
    ok = (
        all(isinstance(v, str) for v in (path, text, word))
        and type(line) is int
        and all(isinstance(n, str) for n in [*names, *shas])
        and all(type(n) is int for n in prs)
        and bool(word) == deferral
    )
    if not ok:
        raise TypeError("a cached record of the wrong shape")
    return Record(path, line, text, set(names), set(prs), set(shas), word)
