"""Reports into a queue: each report's items merged into the entries they name, the latest reading
winning and earlier ones kept in `history`, then the summary `queue import` prints."""

from __future__ import annotations

import copy
import datetime as dt
from dataclasses import dataclass, field
from pathlib import Path

from porttrack import gitio
from porttrack.queue import file as queuefile
from porttrack.config import Config, inside
from porttrack.errors import UserError
from porttrack.model import Entry, Part, QueueMeta
from porttrack.queue.importer.model import FORMATS, Item, Report, _DATE
from porttrack.queue.importer.citations import PathResolver
from porttrack.queue.importer.read import read_report


@dataclass
class ImportResult:
    queue_path: Path
    created: bool
    reports: list[Report]
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    citations: int = 0
    upstream_missing: int = 0
    upstream_checked: bool = False
    warnings: list[str] = field(default_factory=list)
    written: bool = False


def comparison(rep: Report) -> list[tuple[str, int, int]]:
    """(label, entries imported, the report's own count) for every count the report's summary table states."""
    tally: dict[str, int] = {}
    table = [it for it in rep.items if it.fmt == "table"]
    for it in table:
        first = it.halves[0].verdict if it.halves else it.verdict
        word = {
            "ported": "ALREADY_SATISFIED",
            "real-gap": "REAL_GAP",
            "surface-absent": "NOT_APPLICABLE",
            "inert": "NOT_APPLICABLE",
        }.get(first or "", "unlabelled")
        tally[word] = tally.get(word, 0) + 1
        if word == "NOT_APPLICABLE":
            tally[f"NOT_APPLICABLE {first}"] = tally.get(f"NOT_APPLICABLE {first}", 0) + 1
    for it in rep.items:
        if it.fmt != "table" and it.disposition:
            tally[it.disposition] = tally.get(it.disposition, 0) + 1
    out = []
    for key, stated in rep.summary.items():
        if key in tally or key in (
            "ALREADY_SATISFIED",
            "REAL_GAP",
            "NOT_APPLICABLE",
            "PORT-NOW",
            "INVENTORY",
            "IGNORE",
            "NOT_APPLICABLE surface-absent",
            "NOT_APPLICABLE inert",
        ):
            out.append((key, tally.get(key, 0), stated))
    return out


def _queue_destination(cfg: Config, queue: Path | None) -> Path:
    from porttrack.config import queue_path

    if queue is not None:
        return queue_path(cfg, queue)
    if cfg.queue_file or list((cfg.port_root / "queue").glob("*.toml")):
        return queue_path(cfg, None)
    return inside(cfg.port_root, "queue/imported.toml", "queue path")


def _port_files(root: Path) -> set[str]:
    if gitio.is_git_repo(root):
        out = gitio.git(root, "ls-files", "-z").decode("utf-8", "replace")
        prefix = gitio.git(root, "rev-parse", "--show-prefix").decode().strip()
        return {f[len(prefix) :] for f in out.split("\0") if f and f.startswith(prefix)}
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}


def _upstream_commits(repo: Path, shas: list[str]) -> dict[str, tuple[str, str, str, list[str]]]:
    """prefix -> (full sha, subject, date, files) for the prefixes that name one commit of the upstream checkout."""
    if not shas:
        return {}
    full = {s: sha for s, sha in gitio.resolve_commits(repo, shas).items() if sha is not None}
    if not full:
        return {}
    proc = gitio.run(
        repo,
        "log", "--no-walk=unsorted", "--stdin", "-m", "--first-parent", "--name-only", "--no-textconv",
        "--format=%x00%H%x1f%s%x1f%as",
        input="\n".join(sorted(set(full.values()))).encode(),
    )  # fmt: skip
    info: dict[str, tuple[str, str, list[str]]] = {}
    for block in proc.stdout.decode("utf-8", "replace").split("\0")[1:]:
        head, _, rest = block.partition("\n")
        sha, subject, date = ([*head.split("\x1f"), "", ""])[:3]
        info[sha] = (subject, date, [f for f in rest.splitlines() if f.strip()])
    return {s: (f, *info.get(f, ("", "", []))) for s, f in full.items()}


class _ShaIndex:
    """Entries by the first 7 characters of their sha (the shortest prefix a report writes), for prefix matching."""

    def __init__(self, entries: list[Entry]):
        self.by7: dict[str, list[Entry]] = {}
        for e in entries:
            self.add(e)

    def add(self, e: Entry) -> None:
        if e.sha:
            self.by7.setdefault(e.sha[:7], []).append(e)

    def match(self, sha: str) -> list[Entry]:
        return [e for e in self.by7.get(sha[:7], []) if e.sha.startswith(sha) or sha.startswith(e.sha)]


def _date_of(source: str) -> str:
    m = _DATE.match(Path(source.rsplit(":", 1)[0]).name) if source else None
    return m.group(1) if m else ""


def _reading(e: Entry) -> str:
    """An entry's current reading, as one history line."""
    bits = [f"disposition {e.disposition}", f"verdict {e.verdict}" + (f" ({e.verdict_by})" if e.verdict_by else "")]
    if e.label:
        bits.append(f"label {e.label}")
    if e.parts:
        bits.append("parts " + "; ".join(f"{p.name}: {p.verdict}" for p in e.parts))
    if e.reason:
        bits.append(f"reason {e.reason}")
    return f"{e.source or 'queue'}: " + "; ".join(bits)


def _item_reading(it: Item, rep: Report) -> str:
    e = Entry(
        n=0,
        sha=it.sha,
        subject="",
        disposition=it.disposition or "?",
        verdict=it.verdict or "(none stated)",
        verdict_by="human" if it.verdict else "",
        label=it.label,
        reason=it.reason,
        source=rep.where(it.line),
        parts=[Part(name=h.description, verdict=h.verdict) for h in it.halves],
    )
    return _reading(e)


def _parts(it: Item) -> list[Part]:
    out, used = [], set()
    for k, h in enumerate(it.halves, 1):
        name = h.description or f"half {k}"
        if name in used:
            name = f"{name} ({k})"
        used.add(name)
        out.append(Part(name=name, verdict=h.verdict, verdict_by="human", label=h.label, gate_text=h.gate_text))
    return out


def _read_all(root: Path, reports: list[tuple[Path, str]]) -> list[Report]:
    """Every report parsed, oldest first by the date in its file name; undated ones in command-line order after."""
    resolver = PathResolver(_port_files(root))
    parsed = [read_report(p, shown, resolver) for p, shown in reports]
    for rep in parsed:
        if not rep.items:
            raise UserError(f"{rep.path}: no entries recognised; tried " + "; ".join(FORMATS) + ".")
    order = sorted(range(len(parsed)), key=lambda k: (not parsed[k].date, parsed[k].date or "", k))
    return [parsed[k] for k in order]


def _open_queue(cfg: Config, qpath: Path, parsed: list[Report]) -> queuefile.QueueFile:
    """The queue at QPATH, or a new one whose range is the latest report's (as its labels win)."""
    if qpath.exists():
        return queuefile.load(qpath)
    latest = next((r for r in reversed(parsed) if r.range), None)
    pin, _, target = latest.range.partition("..") if latest else ("", "", "")
    return queuefile.new(
        qpath,
        QueueMeta(
            name=qpath.stem,
            upstream=cfg.upstream_name or (cfg.upstream_repo.name if cfg.upstream_repo else ""),
            pin=pin,
            target=target,
            paths=list(cfg.upstream_paths),
        ),
    )


@dataclass
class _Merge:
    """Entries an import creates and touches, as it applies report items in order."""

    index: _ShaIndex
    next_n: int
    new: list[Entry] = field(default_factory=list)
    touched: dict[int, Entry] = field(default_factory=dict)
    before: dict[int, dict] = field(default_factory=dict)  # each touched entry's values as read: update or no-op
    new_ids: set[int] = field(default_factory=set)

    def apply(self, rep: Report, it: Item, upstream: dict, result: ImportResult) -> None:
        hits = self.index.match(it.sha)
        if len(hits) > 1:
            result.warnings.append(
                f"{rep.where(it.line)}: sha {it.sha} matches entries {', '.join(str(e.n) for e in hits)}; not imported."
            )
            return
        if not hits:
            e = Entry(n=self.next_n, sha=it.sha, subject=it.subject, pr=it.pr, verdict="unclassified")
            self.next_n += 1
            self.new.append(e)
            self.new_ids.add(id(e))
            _fill_upstream(e, it, upstream, result.upstream_checked)
            self.index.add(e)
            _apply(e, it, rep, initial=True)
            return
        e = hits[0]
        if e.n not in self.touched and id(e) not in self.new_ids:
            self.touched[e.n] = e
            self.before[e.n] = copy.deepcopy(_entry_values(e))
        if len(e.sha) < 40 and upstream.get(it.sha):
            _fill_upstream(e, it, upstream, True)
        _apply(e, it, rep, initial=False)


def import_reports(
    cfg: Config, reports: list[tuple[Path, str]], *, queue: Path | None = None, dry_run: bool = False
) -> ImportResult:
    """Read every report, then create or update the queue: one entry per upstream commit, the latest reading winning."""
    root = cfg.port_root.resolve()
    parsed = _read_all(root, reports)
    _snapshot_cited_text(root, parsed)

    qpath = _queue_destination(cfg, queue)
    created = not qpath.exists()
    qf = _open_queue(cfg, qpath, parsed)
    result = ImportResult(queue_path=qpath, created=created, reports=parsed)
    for rep in parsed:
        result.warnings += rep.warnings

    upstream: dict[str, tuple[str, str, str, list[str]]] = {}
    if cfg.upstream_repo is not None and gitio.is_git_repo(cfg.upstream_repo):
        result.upstream_checked = True
        upstream = _upstream_commits(cfg.upstream_repo, sorted({it.sha for r in parsed for it in r.items}))

    merge = _Merge(_ShaIndex(qf.queue.entries), qf.queue.next_n)
    for rep in parsed:
        for it in rep.items:
            merge.apply(rep, it, upstream, result)
    new, touched = merge.new, merge.touched

    result.added = len(new)
    result.citations = sum(len(e.citations) for e in new) + sum(len(e.citations) for e in touched.values())
    result.upstream_missing = sum(1 for e in new + list(touched.values()) if e.upstream_missing)
    changed = [e for n, e in touched.items() if _entry_values(e) != merge.before[n]]
    result.updated, result.unchanged = len(changed), len(touched) - len(changed)
    if changed:
        tables = {t.get("n"): t for t in qf.doc.get("entry", [])}
        for e in changed:
            _write_entry(tables[e.n], e)
        queuefile.rebuild(qf)
    if new:
        queuefile.append_entries(qf, new)
    if not dry_run and (new or result.updated or created):
        result.written = queuefile.save(qf)
    return result


def _fill_upstream(e: Entry, it: Item, upstream: dict, checked: bool) -> None:
    hit = upstream.get(it.sha)
    if hit:
        full, subject, date, files = hit
        e.sha = full
        e.subject = e.subject or subject
        if subject and not it.subject:
            e.subject = subject
        if date and e.date is None:
            e.date = dt.date.fromisoformat(date)
        if files and not e.files:
            e.files = files
        e.upstream_missing = False
    elif checked:
        e.upstream_missing = True


def _apply(e: Entry, it: Item, rep: Report, *, initial: bool) -> None:
    """Fold one report's reading into an entry: the later report wins, the other reading goes to history.

    A line of porttrack's own report, as porttrack wrote it, says what the queue said: it changes an
    entry the queue has in no way, and a new entry gets its verdict as audit's."""
    if it.untouched and not initial:
        return
    src = rep.where(it.line)
    if e.pr is None and it.pr is not None:
        e.pr = it.pr
    if not e.subject and it.subject:
        e.subject = it.subject
    e.issues += [n for n in it.issues if n not in e.issues]
    e.notes += [n for n in it.notes if n not in e.notes]
    # citations: one report's set replaces that report's earlier set; other reports' stay
    report_file = rep.path
    e.citations = [c for c in e.citations if c.source.rsplit(":", 1)[0] != report_file] + it.citations
    same_place = e.source == src
    later = initial or same_place or not e.source or (rep.date or "9999") >= (_date_of(e.source) or "")
    if not later:
        _remember(e, _item_reading(it, rep))
        return
    if not initial and not same_place and (e.source or e.verdict not in ("", "unclassified")):
        _remember(e, _reading(e))
    e.source = src
    if it.disposition:
        e.disposition = it.disposition
    if it.verdict is not None:
        e.verdict = it.verdict
        e.verdict_by = "audit" if it.untouched else "human"
        e.gate_text = it.gate_text
        e.parts = _parts(it)
    e.label = it.label
    if it.reason:
        e.reason = it.reason


def _remember(e: Entry, line: str) -> None:
    """Add a reading to history once per report line, however it was worded then."""
    where = line.split(": ", 1)[0] + ": "
    if not any(h.startswith(where) for h in e.history):
        e.history.append(line)


def _entry_values(e: Entry | None) -> dict:
    if e is None:
        return {}
    return {
        k: getattr(e, k)
        for k in (
            "sha",
            "subject",
            "pr",
            "date",
            "files",
            "disposition",
            "verdict",
            "verdict_by",
            "label",
            "gate_text",
            "reason",
            "source",
            "issues",
            "notes",
            "history",
            "upstream_missing",
            "citations",
            "parts",
        )
    }


def _write_entry(table, e: Entry) -> None:
    values = {k: v for k, v in _entry_values(e).items() if k not in ("citations", "parts")}
    for key in ("label", "gate_text", "source", "issues", "notes", "history", "upstream_missing", "date"):
        if not values[key] and key not in table:
            del values[key]
    queuefile.set_fields(table, values)
    queuefile.set_aot(table, "part", [queuefile.part_table(p) for p in e.parts])
    queuefile.set_aot(table, "citation", [queuefile.citation_table(c) for c in e.citations])


def _snapshot_cited_text(root: Path, reports: list[Report]) -> None:
    """Where the port repository has the tree a report read, record each cited line's text at that tree,
    so `check` can find the line again however much it moved."""
    if not gitio.is_git_repo(root):
        return
    prefix = gitio.git(root, "rev-parse", "--show-prefix").decode().strip()
    trees: dict[str, str | None] = {}
    with gitio.CatFile(root) as cat:
        blobs: dict[tuple[str, str], list[str] | None] = {}
        for rep in reports:
            for it in rep.items:
                for c in it.citations:
                    if not c.tree:
                        continue
                    if c.tree not in trees:
                        trees[c.tree] = gitio.rev_parse(root, c.tree)
                    sha = trees[c.tree]
                    if sha is None:
                        continue
                    key = (sha, c.path)
                    if key not in blobs:
                        data = cat.read(f"{sha}:{prefix}{c.path}")
                        blobs[key] = data.decode("utf-8", "replace").splitlines() if data is not None else None
                    lines = blobs[key]
                    if lines and c.line <= len(lines):
                        text = lines[c.line - 1].strip()
                        c.text = text if len(text) >= 3 else ""


def render(result: ImportResult, *, dry_run: bool) -> list[str]:
    """What the command line prints: per report what was read and how it compares with the report's own counts."""
    out = []
    for rep in result.reports:
        kinds = ", ".join(sorted(rep.formats))
        cites = sum(len(it.citations) for it in rep.items)
        facts = "; ".join(
            b
            for b in (
                f"tree {rep.tree}" if rep.tree else "tree unknown",
                f"range {rep.range}" if rep.range else "",
                f"row {rep.row}" if rep.row else "",
                f"issue #{rep.issue}" if rep.issue else "",
            )
            if b
        )
        out.append(f"{rep.path}: {len(rep.items)} entries ({kinds}), {cites} citations; {facts}")
        for key, got, stated in comparison(rep):
            mark = "ok" if got == stated else "DIFFERS"
            out.append(f"  {key}: imported {got}, report says {stated} — {mark}")
    verb = "would write" if dry_run else ("wrote" if result.written else "unchanged:")
    out.append(
        f"{verb} {result.queue_path}: {result.added} new entries, {result.updated} updated, "
        f"{result.unchanged} already up to date; {result.citations} citations on them."
    )
    if result.upstream_checked:
        out.append(
            f"{result.upstream_missing} of those entries name a sha that is not in the upstream checkout "
            "(kept, marked upstream_missing = true)."
        )
    else:
        out.append("no [upstream] repo configured: shas were matched by prefix only.")
    if not dry_run and result.citations:
        out.append("next: `porttrack check` re-verifies every imported citation against the port tree.")
    return out
