"""check: the CI gate (docs/design.md §6, §7, §11). Re-verify a queue against the port tree and list findings.

A finding names a stable code, a severity, the entry, the file:line to look at
and a sentence saying what to do. The engine returns data; formats.py renders it.
Nothing here writes: a check can run on any checkout, any number of times.
"""

from __future__ import annotations

import datetime as dt
import re
import time
from typing import Any
from dataclasses import dataclass, field
from collections.abc import Callable
from pathlib import Path

from porttrack import audit, gates, gitio, queuefile
from porttrack import paths as pathrules
from porttrack.config import Config, inside
from porttrack.errors import UserError
from porttrack.model import DEFERRED, NEEDS_GATE, NEEDS_REASON, SETTLED, SEVERITIES, UNTRIAGED, Entry, Gate, Part, Queue

# The stable catalogue: code -> (severity, one-line title). docs/ci.md documents each code;
# codes are never renamed or reused, so config filters and acknowledgements keep working.
CODES: dict[str, tuple[str, str]] = {
    "untriaged": ("error", "An entry added since the base has no verdict yet"),
    "verdict-incomplete": ("error", "A verdict lacks what docs/design.md §5 says it must carry"),
    "gate-live": ("error", "A gate's condition no longer holds: its entry is real now"),
    "gate-untrusted": ("error", "A gate's positive control found nothing, so its zero proves nothing"),
    "scan-incomplete": ("error", "Part of a gate's scope could not be read, so its count is not known"),
    "citation-stale": (
        "warning",
        (
            "A citation moved: what it cites (a gate's probe, or an imported citation's"
            " text or symbols) is on another line of the file now"
        ),
    ),
    "citation-vanished": ("error", "A citation's file is gone, or no longer mentions what it cites anywhere"),
    "citation-unanchored": (
        "warning",
        (
            "Imported citations were read at a tree that is not an ancestor of the tree"
            " checked (or is unknown here), so they are checked best-effort"
        ),
    ),
    "landing-stale": ("warning", "A landing note moved: its anchor is on another line now"),
    "landing-vanished": ("warning", "A landing note points at a file or line that no longer has its anchor"),
    "owner-missing": ("error", "An entry's owner is no row of any matrix"),
    "owner-done": ("warning", "An entry's owner row is in a done state while the entry is still deferred"),
    "actionable": ("warning", "Every blocker of a blocked entry is ported: the entry can be ported now"),
    "pre-pin-gap-unowned": ("warning", "Two or more entries point at a pre-pin gap and no matrix row owns it"),
    "ack-expired": ("error", "An acknowledgement is past its expiry date"),
    "ack-unused": ("warning", "An acknowledgement matches no finding any more"),
    "behaviour-behind-pin": (
        "error",
        "A port header claims a pin at or past a kvref switch its harness was seen to lack",
    ),
}


@dataclass
class Finding:
    code: str
    severity: str
    message: str  # what is wrong, with the evidence (path:line of hits, counts)
    action: str  # one sentence: what to do about it
    path: str  # file to look at, relative to the port root
    line: int
    entry: int | None = None
    part: str = ""
    gate: str = ""
    related: list[str] = field(default_factory=list)  # further path:line places (hits, the queue line)
    check: str = ""  # the check that failed, e.g. "entry 142 gate x citation" (one junit test case each)

    @property
    def subject(self) -> str:
        """The thing checked, as a reader would name it: `entry 142 part (b) gate x`."""
        bits = [f"entry {self.entry}" if self.entry is not None else ""]
        bits += [f"part {self.part!r}" if self.part else "", f"gate {self.gate}" if self.gate else ""]
        return " ".join(b for b in bits if b) or "queue"

    def to_json(self) -> dict:
        return {
            "code": self.code,
            "severity": self.severity,
            "entry": self.entry,
            "part": self.part or None,
            "gate": self.gate or None,
            "path": self.path,
            "line": self.line,
            "message": self.message,
            "action": self.action,
            "related": self.related,
            "check": self.check,
        }


@dataclass
class CheckResult:
    root: Path
    queue_path: str  # relative to the port root
    tree: str  # the tree checked: commit sha (+ " dirty"), or "working tree (not a git repository)"
    base: str | None  # --base ref and the sha it resolved to
    findings: list[Finding]
    acknowledged: list[tuple[Finding, str]] = field(default_factory=list)  # (finding, ack reason)
    ignored: int = 0  # dropped by [check] ignore / min_severity
    checks: list[str] = field(default_factory=list)  # every subject checked, failing or not (junit)
    evidence: dict[str, str] = field(default_factory=dict)  # gate check -> counts, control and tree it rests on
    stats: dict = field(default_factory=dict)
    repo_prefix: str = ""  # the port root's path inside its git repository ("" when they are the same)
    reanchors: list[Reanchor] = field(default_factory=list)  # imported citations found again, for --reanchor

    @property
    def exit_code(self) -> int:
        return 1 if self.findings else 0


def finding(code: str, message: str, action: str, path: str, line: int, **kw) -> Finding:
    return Finding(code=code, severity=CODES[code][0], message=message, action=action, path=path, line=line, **kw)


# ---------------------------------------------------------------- the whole check


def run(
    cfg: Config,
    queue_path: Path,
    *,
    base: str | None = None,
    today: dt.date | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> CheckResult:
    """Check the queue at `queue_path` against the port tree at `cfg.port_root`; `progress(done, total)`
    hears about the files a cold probe scan indexes."""
    t0 = time.perf_counter()
    root = cfg.port_root.resolve()
    qf = queuefile.load(queue_path)
    t_load = time.perf_counter() - t0
    q = qf.queue
    qrel = _rel(root, queue_path)
    toplevel = _toplevel(root)
    tree = "working tree (not a git repository)"
    if toplevel is not None:
        sha, dirty = gitio.head_state(root, list(dict.fromkeys(cfg.code_scope + cfg.tests_scope)))
        tree = f"{sha or '(no commits)'}{' dirty' if dirty else ''}"
    ctx = _Ctx(cfg, root, qf, qrel)
    ctx.progress = progress

    out: list[Finding] = []
    out += verdict_findings(ctx)
    base_label = None
    if base is not None:
        if toplevel is None:
            raise UserError(f"--base {base}: the port root {root} is not a git repository.")
        base_q, base_label = _base_queue(toplevel, root, queue_path, base)
        out += untriaged_findings(ctx, base_q)
    jobs = _gate_jobs(q, ctx)
    t1 = time.perf_counter()
    gate_out, scans = gate_findings(ctx, jobs)
    t_gates = time.perf_counter() - t1
    out += gate_out
    out += citation_findings(ctx, jobs)
    imported_out, reanchors = imported_citation_findings(
        ctx, gitio.rev_parse(root, "HEAD") if toplevel is not None else None
    )
    out += imported_out
    out += landing_findings(ctx)
    out += owner_findings(ctx)
    out += actionable_findings(ctx, already={(f.entry, f.part) for f in gate_out if f.code == "gate-live"})
    out += prepin_findings(ctx)
    out += behaviour_findings(ctx)

    kept, acked, ack_out = apply_acks(ctx, out, today or dt.date.today())
    kept += ack_out
    shown, ignored = filter_findings(kept, cfg.check_ignore, cfg.check_min_severity)
    shown.sort(
        key=lambda f: (-SEVERITIES.index(f.severity), f.entry if f.entry is not None else -1, f.code, f.path, f.line)
    )
    prefix = ""
    if toplevel is not None and toplevel != root:
        prefix = root.relative_to(toplevel).as_posix()
    return CheckResult(
        root=root,
        queue_path=qrel,
        tree=tree,
        base=base_label,
        findings=shown,
        acknowledged=acked,
        ignored=ignored,
        checks=sorted(ctx.checks, key=_subject_order),
        evidence=ctx.evidence,
        stats={
            "entries": len(q.entries),
            "gates": len(jobs),
            "scans": scans,
            "seconds": round(time.perf_counter() - t0, 3),
            "load_seconds": round(t_load, 3),  # reading and validating the queue file
            "scan_seconds": round(t_gates, 3),  # the probe scans and gate judgements
        },
        repo_prefix=prefix,
        reanchors=reanchors,
    )


class _Ctx:
    """What every stage reads: config, root, the queue and its text, and a cache of port files' lines."""

    def __init__(self, cfg: Config, root: Path, qf: queuefile.QueueFile, qrel: str):
        self.cfg, self.root, self.qf, self.q, self.qrel = cfg, root, qf, qf.queue, qrel
        self.checks: set[str] = set()
        self.scans: dict[tuple[str, ...], Any] = {}  # scope -> probe.Scan, reused by the citation checks
        self.evidence: dict[str, str] = {}  # check -> the counts behind its verdict, pass or fail
        self.controls: dict[str, str] = {}  # gate check -> the control its judgement used (explicit or chosen)
        self._lines: dict[str, list[str] | None] = {}
        self.index = _QueueIndex(qf.text)
        self.progress: Callable[[int, int], None] | None = None
        self.umap: dict[str, list[str]] | None = None  # upstream path -> port files, from the headers (read once)

    def lines(self, rel: str, what: str) -> list[str] | None:
        """The lines of a port file (None when missing or unreadable); escaping the root is refused."""
        if rel not in self._lines:
            path = inside(self.root, rel, what)
            try:
                self._lines[rel] = pathrules.read_file(path).decode("utf-8", "replace").splitlines()
            except (OSError, ValueError):
                self._lines[rel] = None
        return self._lines[rel]

    def entry_line(self, n: int, key: str | None = None, part: str | None = None) -> int:
        return self.index.line(("entry", n, part), key)

    def gate_line(self, owner: tuple, gate_id: str) -> int:
        return self.index.gate(owner, gate_id)

    def citation_line(self, n: int, k: int) -> int:
        lines = self.index.citations.get(n, [])
        return lines[k] if k < len(lines) else self.entry_line(n)

    def ack_line(self, index: int) -> int:
        return self.index.line(("ack", index, None), "code")

    def verdict_finding(self, code: str, e: Entry, label: str, part: str | None, message: str, action: str) -> Finding:
        """A finding on the verdict of an entry or one of its parts, at the verdict's line."""
        return finding(
            code,
            message,
            action,
            self.qrel,
            self.entry_line(e.n, "verdict", part),
            entry=e.n,
            part=part or "",
            check=f"{label} verdict",
        )


_TABLE = re.compile(r"^\s*\[(\[)?\s*([A-Za-z0-9_.\s]+?)\s*\]")
_KEYLINE = re.compile(r"^\s*([A-Za-z0-9_-]+)\s*=\s*(.*)")


class _QueueIndex:
    """Line numbers of every entry, part, rule, ack, key and gate id, from ONE pass over the queue text.

    Findings cite queue lines by the hundred; looking each one up from scratch would make
    check quadratic in the queue's size.
    """

    def __init__(self, text: str):
        # (kind, n-or-index, part name or None) -> {"": header line, key: line}; gates -> {id: line}
        self.keys: dict[tuple, dict[str, int]] = {}
        self.gates: dict[tuple, dict[str, int]] = {}
        self.citations: dict[int, list[int]] = {}  # entry n -> line of each [[entry.citation]]
        counters = {"rule": -1, "ack": -1}
        owner: tuple | None = None  # whose keys the following lines are
        entry: tuple | None = None
        in_gate = False
        pending: list[tuple[int, str]] = []  # an entry's lines before its `n = ` is seen
        for i, line in enumerate(text.splitlines(), 1):
            m = _TABLE.match(line)
            if m:
                name = re.sub(r"\s+", "", m.group(2))
                in_gate = name.endswith(".gate")
                if name == "entry":
                    entry = owner = ("entry", None, None)
                    pending = [(i, "")]
                elif name in counters:
                    counters[name] += 1
                    owner = (name, counters[name], None)
                    self.keys[owner] = {"": i}
                    entry = None
                elif name == "entry.part" and entry is not None:
                    owner = ("entry", entry[1], "\0part")
                    self.keys.setdefault(owner, {})[""] = i
                elif name == "entry.gate":
                    owner = entry
                elif name == "entry.citation" and entry is not None and entry[1] is not None:
                    self.citations.setdefault(entry[1], []).append(i)
                    owner = None
                elif not in_gate:
                    owner = None  # [entry.symbols] and friends: their keys are not the entry's
                continue
            k = _KEYLINE.match(line)
            if not k or owner is None:
                continue
            key, value = k.group(1), k.group(2)
            if in_gate:
                gid = re.match(r"[\"']([^\"']*)[\"']", value) if key == "id" else None
                if gid:
                    self.gates.setdefault(owner, {}).setdefault(gid.group(1), i)
                continue
            if owner[0] == "entry" and owner[1] is None:
                if key == "n" and value.strip().split("#")[0].strip().isdigit():
                    n = int(value.strip().split("#")[0].strip())
                    entry = owner = ("entry", n, None)
                    self.keys.setdefault(owner, {})
                    for pl, pk in [*pending, (i, "n")]:
                        self.keys[owner].setdefault(pk, pl)
                else:
                    pending.append((i, key))
                continue
            if owner[2] == "\0part" and key == "name":
                pname = re.match(r"[\"']((?:[^\"'\\]|\\.)*)[\"']", value.strip())
                named = ("entry", owner[1], pname.group(1) if pname else "")
                self.keys[named] = {**self.keys.pop(owner), "name": i}
                owner = named
                continue
            self.keys.setdefault(owner, {}).setdefault(key, i)

    def line(self, owner: tuple, key: str | None = None) -> int:
        keys = self.keys.get(owner) or self.keys.get((owner[0], owner[1], None)) or {"": 1}
        return keys.get(key or "", keys.get("", 1))

    def gate(self, owner: tuple, gate_id: str) -> int:
        return self.gates.get(owner, {}).get(gate_id) or self.line(owner)


def _rel(root: Path, path: Path) -> str:
    try:
        return path.resolve().relative_to(root).as_posix()
    except ValueError:
        return str(path)


def _toplevel(root: Path) -> Path | None:
    return gitio.toplevel(root)


def _subject_order(s: str):
    m = re.match(r"entry (\d+)", s)
    return (0, int(m.group(1)), s) if m else (1, 0, s)


def _owners(e: Entry) -> list[tuple[str, Entry | Part, str | None]]:
    """(label, judged object, part name) for an entry and each of its parts."""
    return [(f"entry {e.n}", e, None)] + [(f"entry {e.n} part {p.name!r}", p, p.name) for p in e.parts]


# ---------------------------------------------------------------- verdicts and new entries


def verdict_findings(ctx: _Ctx) -> list[Finding]:
    """Every verdict carries what docs/design.md §5 requires of it."""
    out = []
    for e in ctx.q.entries:
        for label, obj, part in _owners(e):
            ctx.checks.add(f"{label} verdict")
            need = _missing(obj)
            if need:
                out.append(
                    ctx.verdict_finding(
                        "verdict-incomplete",
                        e,
                        label,
                        part,
                        f"{label} is {obj.verdict!r} but has {need[0]}.",
                        f"Add {need[1]} to {label}, or change its verdict.",
                    )
                )
    return out


def _missing(obj: Entry | Part) -> tuple[str, str] | None:
    v = obj.verdict
    if v in NEEDS_GATE and not obj.gates:
        if obj.gate_text:  # an imported report named the gate in words only (docs/import.md)
            return (f"only a gate in words ({obj.gate_text!r})", "a [[entry.gate]] that tests it")
        return ("no gate", "a [[entry.gate]] whose condition keeps it deferred")
    # a member the port lacks in its class, while the name has hits elsewhere, is held by a count gate;
    # a file with no port counterpart, where the change names nothing, by an unmapped gate
    if v == "surface-absent" and not any(g.kind in ("absent", "count", "unmapped") for g in obj.gates):
        return ("no absent gate", "an `absent` gate naming the upstream surface the port lacks")
    if v == "blocked" and not obj.blocked_by:
        return ("an empty blocked_by", "blocked_by = [the entries it waits on]")
    if v == "owned" and not obj.owner:
        return ("no owner", "owner = the matrix row ID that tracks it")
    if v in NEEDS_REASON and not obj.reason.strip():
        return ("no reason", "a reason saying why")
    return None


def _base_queue(toplevel: Path, root: Path, queue_path: Path, base: str) -> tuple[Queue | None, str]:
    """The queue as it was at `base` (None when the file did not exist there)."""
    sha = gitio.rev_parse(root, base)
    if sha is None:
        raise UserError(f"--base {base!r} is no commit of the port repository {toplevel}.")
    rel = queue_path.resolve().relative_to(toplevel).as_posix()
    with gitio.CatFile(toplevel) as cat:
        blob = cat.read(f"{sha}:{rel}")
    label = f"{base} ({sha[:12]})"
    if blob is None:
        return None, label
    try:
        text = blob.decode("utf-8")
    except UnicodeDecodeError:
        raise UserError(f"{rel} at --base {base} is not UTF-8 text.") from None
    return queuefile.loads(text, Path(f"{rel}@{base}")).queue, label


def untriaged_findings(ctx: _Ctx, base_q: Queue | None) -> list[Finding]:
    """Entries added since the base must be triaged: no unclassified or untrusted verdict."""
    old = {e.n for e in base_q.entries} if base_q else set()
    out = []
    for e in ctx.q.entries:
        if e.n in old:
            continue
        for label, obj, part in _owners(e):
            ctx.checks.add(f"{label} verdict")
            if obj.verdict in UNTRIAGED:
                why = (
                    "was added since the base and is not triaged"
                    if obj.verdict == "unclassified"
                    else "was added since the base with untrusted evidence (a positive control failed)"
                )
                out.append(
                    ctx.verdict_finding(
                        "untriaged",
                        e,
                        label,
                        part,
                        f"{label} ({e.short} {e.subject}) {why}.",
                        f"Run `porttrack audit --entries {e.n} --write`, then confirm or set a verdict for {label}.",
                    )
                )
    return out


# ---------------------------------------------------------------- gates


@dataclass
class GateJob:
    gate: Gate
    label: str  # "entry 142", "entry 142 part 'x'", "rule 'vllm/x/**'"
    entry: int | None
    part: str
    qline: int  # the gate's line in the queue file
    to_port: list[int]  # the entries that become real when this gate goes live


def _gate_jobs(q: Queue, ctx: _Ctx) -> list[GateJob]:
    """Every gate of every deferred entry, part and rule."""
    jobs = []
    for e in q.entries:
        for label, obj, part in _owners(e):
            if obj.verdict not in DEFERRED:
                continue
            for g in obj.gates:
                jobs.append(GateJob(g, label, e.n, part or "", ctx.gate_line(("entry", e.n, part), g.id), [e.n]))
    for i, r in enumerate(q.rules):
        covered = [e.n for e in q.entries if e.verdict == r.verdict and audit.rule_matches(r, e.files)]
        for g in r.gates:
            jobs.append(GateJob(g, f"rule {r.upstream!r}", None, "", ctx.gate_line(("rule", i, None), g.id), covered))
    return jobs


def _scope_of(ctx: _Ctx, g: Gate) -> tuple[str, ...]:
    scope = tuple(g.scope) or tuple(ctx.cfg.code_scope)
    for s in scope:
        inside(ctx.root, s, f"gate {g.id!r} scope")
    return scope


def gate_findings(ctx: _Ctx, jobs: list[GateJob]) -> tuple[list[Finding], int]:
    """Re-run every gate: one scan per distinct scope, all of that scope's symbols at once."""
    from porttrack import probe

    by_scope: dict[tuple[str, ...], list[GateJob]] = {}
    out: list[Finding] = []
    for j in jobs:
        ctx.checks.add(_job_subject(j))
        if j.gate.kind == "entry-ported":
            out += _entry_ported(ctx, j)
        elif j.gate.kind == "unmapped":
            out += _unmapped(ctx, j)
        else:
            by_scope.setdefault(_scope_of(ctx, j.gate), []).append(j)
    cfg = ctx.cfg
    for scope, group in by_scope.items():
        symbols = sorted(
            {j.gate.probe for j in group if not j.gate.regex} | {j.gate.control for j in group if j.gate.control}
        )
        regexes = sorted({j.gate.probe for j in group if j.gate.regex})
        for j in group:  # refuse a bad probe by its gate's line before scanning anything
            for sym, is_regex in ((j.gate.probe, j.gate.regex), (j.gate.control, False)):
                try:
                    probe.compile_regex(sym) if is_regex else (sym and _variants(sym, cfg))
                except UserError as e:
                    raise UserError(f"{ctx.qrel}:{j.qline}: gate {j.gate.id!r}: {e}") from None
        scan = probe.scan(  # texts=False: findings cite path:line, so no file is read for its lines
            ctx.root,
            symbols,
            regexes=regexes,
            scope=list(scope),
            **probe.config_options(cfg),
            texts=False,
            progress=ctx.progress,
        )
        ctx.scans[scope] = scan
        for j in group:
            out += _judge_gate(ctx, j, scan, probe.judge(scan, j.gate.probe, j.gate.control or None))
    return out, len(by_scope)


def _job_subject(j: GateJob) -> str:
    return f"{j.label} gate {j.gate.id}"


def _gate_kw(j: GateJob, suffix: str = "") -> dict:
    return {"entry": j.entry, "part": j.part, "gate": j.gate.id, "check": _job_subject(j) + suffix}


def _to_port(j: GateJob) -> str:
    if not j.to_port:
        return f"re-triage the entries {j.label} covers"
    return "port entr" + ("y " if len(j.to_port) == 1 else "ies ") + ", ".join(map(str, j.to_port))


def _entry_ported(ctx: _Ctx, j: GateJob) -> list[Finding]:
    waited = ctx.q.entry(j.gate.entry) if j.gate.entry is not None else None
    ctx.evidence[_job_subject(j)] = f"entry {j.gate.entry} is {waited.verdict if waited else 'missing'} in {ctx.qrel}"
    if waited is None or gates.entry_state(j.gate, waited).state == gates.HOLDS:  # a missing entry: it holds
        return []
    return [
        finding(
            "gate-live",
            f"{j.label} gate {j.gate.id!r} waited on entry {waited.n} ({waited.short} {waited.subject}), which is ported now.",
            f"The wait is over: {_to_port(j)} and re-triage it.",
            ctx.qrel,
            j.qline,
            **_gate_kw(j),
            related=[f"{ctx.qrel}:{ctx.entry_line(waited.n, 'verdict')}"],
        )
    ]


def _unmapped(ctx: _Ctx, j: GateJob) -> list[Finding]:
    """An unmapped gate goes live when a provenance header or [[map]] gives its upstream path a port file."""
    from porttrack import headers

    if ctx.umap is None:
        scopes = sorted({s for paths in ctx.cfg.scopes.values() for s in paths})
        ctx.umap = headers.upstream_map(
            headers.scan_headers(ctx.root, scan_lines=ctx.cfg.header_scan_lines, scopes=scopes)
        )
    files = headers.counterparts(ctx.cfg, ctx.umap, j.gate.probe)
    st = gates.counterpart_state(j.gate, files)
    ctx.evidence[_job_subject(j)] = f"{j.gate.probe}: port counterparts {', '.join(files) or 'none'}"
    if st.state == gates.HOLDS:
        return []
    return [
        finding(
            "gate-live",
            f"{j.label} gate {j.gate.id!r}: {st.why}, so the surface it was deferred for may exist.",
            f"Re-triage the entries {j.label} covers against {files[0]}.",
            files[0],
            1,
            **_gate_kw(j),
            related=[f"{ctx.qrel}:{j.qline}"],
        )
    ]


_CODE_KINDS = {"definition", "consumer", "delegation"}


def _hits(count, kinds=_CODE_KINDS, limit: int = 20) -> list[str]:
    """Code hits (never comment-only ones) as path:line, the first `limit` of them."""
    hits = [h for h in count.hits if h.kind in kinds]
    return [f"{h.path}:{h.line}" for h in hits[:limit]]


def _judge_gate(ctx: _Ctx, j: GateJob, scan, p) -> list[Finding]:
    """Turn a probe's judgement into a finding when the gate no longer holds or cannot be trusted."""
    g = j.gate
    what = f"/{g.probe}/" if g.regex else g.probe
    scope = " ".join(g.scope or ctx.cfg.code_scope)
    kw = _gate_kw(j)
    c = p.count
    cc = p.control_count
    if p.control:
        ctx.controls[_job_subject(j)] = p.control
    # what was counted, where, on which tree, and the control that makes a zero mean something
    ctx.evidence[_job_subject(j)] = (
        f"{what} in {scope} at {scan.tree}: "
        f"code {c.code}, raw {c.raw}, definitions {c.definitions}, consumers {c.consumers}, tests {c.tests}; "
        f"control {p.control or '(none)'} code {cc.code if cc is not None else 0} ({p.control_how}); "
        f"{scan.files_scanned} files scanned; {p.status}"
    )
    control_code = p.control_count.code if p.control_count is not None else 0
    st = gates.probe_state(g, c, p.status, p.control, control_code, scope)
    if st.state == gates.INCOMPLETE:
        return [
            finding(
                "scan-incomplete",
                f"{j.label} gate {g.id!r}: the scan of {scope} could not read everything "
                f"({_incomplete_text(scan)}), so the count of {what} is unknown, not zero.",
                "Fetch the missing objects (unshallow the clone) or fix the unreadable files, then re-run check.",
                ctx.qrel,
                j.qline,
                **kw,
            )
        ]
    if st.state == gates.LIVE:
        hits = [f"{h.path}:{h.line}" for h in st.hits[:20]]
        where_hits = f" at {', '.join(hits)}" if hits else ""
        # look first at the new hit (a PR annotation lands on the line that made the gate live)
        if hits:
            path, at = hits[0].rsplit(":", 1)
            line, related = int(at), [*hits[1:], f"{ctx.qrel}:{j.qline}"]
        else:
            path, line, related = ctx.qrel, j.qline, []
        return [
            finding(
                "gate-live",
                f"{j.label} gate {g.id!r} ({g.kind}) no longer holds: {st.why}{where_hits}.",
                f"The entry is real now: {_to_port(j)}, or re-triage it and update the gate.",
                path,
                line,
                **kw,
                related=related,
            )
        ]
    if st.state == gates.UNTRUSTED:
        # a zero (no hit, no consumer) is evidence only while the control shows the scan sees code
        why = (
            st.why
            if p.control or p.status != "untrusted"
            else f"no positive control ({p.reason or 'none recorded or found'})"
        )
        return [
            finding(
                "gate-untrusted",
                f"{j.label} gate {g.id!r}: {what} counts {c.code}, but {why}, so the count is no evidence.",
                f"Give gate {g.id!r} a control symbol that exists in {scope} (or fix the scope), then re-run check.",
                ctx.qrel,
                j.qline,
                **kw,
            )
        ]
    return []


def _incomplete_text(scan) -> str:
    inc = list(getattr(scan, "incomplete", []) or [])
    shown = ", ".join(str(x) for x in inc[:3])
    return f"{len(inc)} unreadable: {shown}{' …' if len(inc) > 3 else ''}" if inc else "unreadable objects"


# ---------------------------------------------------------------- citations and landing sites


def _variants(name: str, cfg: Config) -> list[str]:
    """The forms an upstream name may take in the port (docs/design.md §6), as the probe searches them."""
    from porttrack import probe

    return probe.variants(name, renames=cfg.renames, strip_leading_underscore=cfg.strip_leading_underscore)


def _mention_re(names: list[str], regex: bool = False) -> re.Pattern:
    if regex:  # a person's pattern: RE2, which cannot hang on a catastrophic one
        from porttrack.probe import compile_regex

        return compile_regex("|".join(f"(?:{n})" for n in names), text=True)
    return re.compile("|".join(r"(?<!\w)" + re.escape(n) + r"(?!\w)" for n in names))


_CITE = re.compile(
    r"^(?P<path>[^:\s][^:]*?):(?P<line>\d+)(?:[-,]\d+)*(?:\s*\((?P<anchor>[^)]+)\)|\s+(?P<anchor2>\S+))?\s*$"
)


def parse_citation(text: str) -> tuple[str, int, str]:
    """`path:line`, optionally followed by an anchor: `path:line (Symbol)` or `path:line Symbol`."""
    m = _CITE.match(text.strip())
    if not m:
        raise ValueError(text)
    return m["path"], int(m["line"]), (m["anchor"] or m["anchor2"] or "").strip()


def _locate(ctx: _Ctx, cited: str, names: list[str], regex: bool, what: str):
    """('ok'|'moved'|'vanished'|'missing', path, old line, new line, note) for a citation of `names`."""
    path, line, _ = parse_citation(cited)
    lines = ctx.lines(path, what)
    if lines is None:
        return "missing", path, line, None
    pat = _mention_re(names, regex)
    if 1 <= line <= len(lines) and pat.search(lines[line - 1]):
        return "ok", path, line, line
    found = [i + 1 for i, t in enumerate(lines) if pat.search(t)]
    if not found:
        return "vanished", path, line, None
    return "moved", path, line, min(found, key=lambda n: (abs(n - line), n))


def _cited_symbol(ctx: _Ctx, j: GateJob) -> str:
    """What a gate's established_at must mention: its probe, or for a zero-gate the control that proved the zero.

    An absent symbol has no line to cite, so audit cites where the positive control is defined.
    """
    g = j.gate
    if gates.relies_on_zero(g) and g.kind != "no-consumer":
        return g.control or ctx.controls.get(_job_subject(j)) or g.probe
    return g.probe


def citation_findings(ctx: _Ctx, jobs: list[GateJob]) -> list[Finding]:
    """Each established_at still points at a line that mentions its probe (or, for zero-gates, its control)."""
    out = []
    for j in jobs:
        g = j.gate
        if not g.established_at or g.kind == "entry-ported":
            continue
        ctx.checks.add(f"{j.label} gate {g.id} citation")
        sym = _cited_symbol(ctx, j)
        regex = g.regex and sym == g.probe
        try:
            state, path, old, new = _locate(
                ctx,
                g.established_at,
                [sym] if regex else _variants(sym, ctx.cfg),
                regex,
                f"{ctx.qrel}:{j.qline}: gate {g.id!r} established_at",
            )
        except ValueError:
            raise UserError(
                f"{ctx.qrel}:{j.qline}: gate {g.id!r} established_at {g.established_at!r} is not path:line."
            ) from None
        kw = _gate_kw(j, " citation")
        if state == "moved":
            out.append(
                finding(
                    "citation-stale",
                    f"{j.label} gate {g.id!r} cites {path}:{old}, but {sym} is mentioned at {path}:{new} now.",
                    f'Set established_at = "{path}:{new}" for gate {g.id!r}.',
                    path,
                    new,
                    **kw,
                    related=[f"{ctx.qrel}:{j.qline}"],
                )
            )
        elif state in ("vanished", "missing"):
            elsewhere = _elsewhere(ctx, g, sym)
            gone = f"{path} no longer exists" if state == "missing" else f"{path} no longer mentions {sym}"
            hint = f"; it is mentioned at {', '.join(elsewhere)}" if elsewhere else ""
            out.append(
                finding(
                    "citation-vanished",
                    f"{j.label} gate {g.id!r} cites {path}:{old}, but {gone}{hint}.",
                    f"Re-establish gate {g.id!r}: point established_at at a line that mentions {sym}, "
                    "or re-triage the entry if the symbol went away.",
                    ctx.qrel,
                    j.qline,
                    **kw,
                    related=elsewhere,
                )
            )
    return out


def _elsewhere(ctx: _Ctx, g: Gate, sym: str) -> list[str]:
    """Where the gate's own scan saw the cited symbol now (first few places), to help re-establish a citation."""
    scan = ctx.scans.get(tuple(g.scope) or tuple(ctx.cfg.code_scope))
    if scan is None:
        return []
    count = scan.counts.get(sym) or scan.control_counts.get(sym)
    if count is None:
        return []
    return _hits(count, limit=3)


def landing_findings(ctx: _Ctx) -> list[Finding]:
    """`landing = "path:line [(Symbol)]"`: the file and line are still there and still mention their anchor.

    The anchor is the symbol named after the line, else the entry's changed, removed and added
    symbols under their port variants; with no anchor at all only the file and line are checked.
    """
    out = []
    for e in ctx.q.entries:
        if not e.landing or e.verdict in SETTLED:
            continue
        ctx.checks.add(f"entry {e.n} landing")
        qline = ctx.entry_line(e.n, "landing")
        try:
            path, line, anchor = parse_citation(e.landing)
        except ValueError:
            raise UserError(f"{ctx.qrel}:{qline}: entry {e.n} landing {e.landing!r} is not path:line.") from None
        names = [
            v
            for s in ([anchor] if anchor else e.symbols.changed + e.symbols.removed + e.symbols.added)
            for v in _variants(s, ctx.cfg)
        ]
        what = f"{ctx.qrel}:{qline}: entry {e.n} landing"
        lines = ctx.lines(path, what)
        kw = {"entry": e.n, "check": f"entry {e.n} landing"}
        if lines is None or line > len(lines):
            gone = f"{path} no longer exists" if lines is None else f"{path} has only {len(lines)} lines"
            out.append(
                finding(
                    "landing-vanished",
                    f"entry {e.n} lands at {path}:{line}, but {gone}.",
                    f"Update entry {e.n}'s landing to where the port change goes now.",
                    ctx.qrel,
                    qline,
                    **kw,
                )
            )
            continue
        if not names:
            continue
        state, _, _, new = _locate(ctx, f"{path}:{line}", names, False, what)
        label = anchor or "/".join(names[:3])
        if state == "moved":
            out.append(
                finding(
                    "landing-stale",
                    f"entry {e.n} lands at {path}:{line}, but {label} is at {path}:{new} now.",
                    f'Set landing = "{path}:{new}{f" ({anchor})" if anchor else ""}" for entry {e.n}.',
                    path,
                    new,
                    **kw,
                    related=[f"{ctx.qrel}:{qline}"],
                )
            )
        elif state == "vanished":
            out.append(
                finding(
                    "landing-vanished",
                    f"entry {e.n} lands at {path}:{line}, but {path} no longer mentions {label}.",
                    f"Update entry {e.n}'s landing to where the port change goes now.",
                    ctx.qrel,
                    qline,
                    **kw,
                )
            )
    return out


# ---------------------------------------------------------------- imported citations (docs/import.md)


@dataclass
class Reanchor:
    """An imported citation found again in the checked tree: where it is now, for `check --reanchor --write`."""

    entry: int
    index: int  # position among the entry's citations
    old: str  # "path:l1-l2 @ tree"
    line: int
    end: int
    tree: str
    moved: bool = False


def _tree_state(ctx: _Ctx, tree: str, head: str | None, cache: dict) -> str:
    """'ancestor' when `tree` is HEAD or an ancestor of it, 'not-ancestor', or 'unknown' (not in this repository)."""
    if tree not in cache:
        if head is None or not tree:
            cache[tree] = "unknown"
        else:
            sha = gitio.rev_parse(ctx.root, tree)
            if sha is None:
                cache[tree] = "unknown"
            else:
                cache[tree] = "ancestor" if gitio.is_ancestor(ctx.root, sha, head) else "not-ancestor"
    return cache[tree]


class _FileIndex:
    """Where each identifier and each stripped line of one port file occurs: built once per file,
    so finding 10,000 citations again costs one pass over each cited file, not one per citation."""

    def __init__(self, lines: list[str]):
        self.tokens: dict[str, list[int]] = {}
        self.texts: dict[str, list[int]] = {}
        for i, t in enumerate(lines, 1):
            self.texts.setdefault(t.strip(), []).append(i)
            for tok in set(_TOKEN.findall(t)):
                self.tokens.setdefault(tok, []).append(i)


_TOKEN = re.compile(r"[A-Za-z0-9_]+")  # a name matches where `(?<![A-Za-z0-9_])name(?![A-Za-z0-9_])` would


def _nearest(found: list[int], line: int) -> int:
    return min(found, key=lambda n: (abs(n - line), n))


def _find_imported(lines: list[str], index: _FileIndex, c) -> tuple[str, int | None, str]:
    """('ok'|'moved'|'vanished', line now, what was looked for) for one imported citation in its file's lines."""
    first, last = c.line, min(c.last, len(lines))
    if c.text:
        found = index.texts.get(c.text, [])
        if any(first <= n <= last for n in found):
            return "ok", c.line, c.text
        if found:
            return "moved", _nearest(found, c.line), c.text
    names = [n for n in dict.fromkeys(re.split(r"::|\.|->", a)[-1].lstrip("~") for a in c.anchor) if n]
    if names:
        found = sorted({n for name in names for n in index.tokens.get(name, [])})
        if any(first <= n <= last for n in found):
            return "ok", c.line, "/".join(names)
        if found:
            return "moved", _nearest(found, c.line), "/".join(names)
        return "vanished", None, "/".join(names)
    if c.text:
        return "vanished", None, repr(c.text)
    if c.line > len(lines):
        return "vanished", None, f"line {c.line}"
    return "ok", c.line, ""


def imported_citation_findings(ctx: _Ctx, head: str | None) -> tuple[list[Finding], list[Reanchor]]:
    """Re-verify every `[[entry.citation]]` an import wrote: moved is citation-stale, gone is citation-vanished.

    Citations read at a tree this repository lacks, or that is not an ancestor of HEAD, are checked
    best-effort: the tree is named once (citation-unanchored) and their vanished ones are warnings.
    """
    out: list[Finding] = []
    reanchors: list[Reanchor] = []
    states: dict[str, str] = {}
    indexes: dict[str, _FileIndex] = {}
    loose: dict[str, list[tuple[int, int]]] = {}
    for e in ctx.q.entries:
        for k, c in enumerate(e.citations):
            label = f"entry {e.n} citation {k + 1}"
            ctx.checks.add(label)
            state = _tree_state(ctx, c.tree, head, states)
            best_effort = state != "ancestor"
            if best_effort:
                loose.setdefault(c.tree, []).append((e.n, k))
            qline = ctx.citation_line(e.n, k)
            kw = {"entry": e.n, "check": label, "related": [f"{ctx.qrel}:{qline}"] + ([c.source] if c.source else [])}
            lines = ctx.lines(c.path, f"{ctx.qrel}:{qline}: entry {e.n} citation path")
            at = f"{c.where}" + (f" (from {c.source})" if c.source else "")
            gone: tuple[str, str] | None = None
            if lines is None:
                gone = (
                    f"{label} cites {at}, but {c.path} does not exist in the tree checked.",
                    "Point the citation at the file that holds this now, or delete it if the evidence is gone.",
                )
            else:
                if c.path not in indexes:
                    indexes[c.path] = _FileIndex(lines)
                found, now, what = _find_imported(lines, indexes[c.path], c)
                if found == "vanished":
                    gone = (
                        f"{label} cites {at}, but {c.path} no longer mentions {what} anywhere.",
                        "Re-read the evidence and point the citation at where it is now, or re-triage the entry.",
                    )
            if gone:
                f = finding("citation-vanished", gone[0], gone[1], ctx.qrel, qline, **kw)
                out.append(_soften(f) if best_effort else f)
                continue
            assert now is not None  # only a vanished citation has no line
            length = c.last - c.line
            if found == "moved":
                new = f"{c.path}:{now}" + (f"-{now + length}" if length else "")
                out.append(
                    finding(
                        "citation-stale",
                        f"{label} cites {at}, but {what} is at {new} now.",
                        f"Run `porttrack check --reanchor --write` to move it to {new}.",
                        c.path,
                        now,
                        **kw,
                    )
                )
            if head and (found == "moved" or not head.startswith(c.tree) or not c.tree):
                reanchors.append(
                    Reanchor(
                        e.n,
                        k,
                        f"{c.where} @ {c.tree or 'unknown tree'}",
                        now,
                        now + length if length else 0,
                        head[:12],
                        found == "moved",
                    )
                )
    out += _unanchored(ctx, loose, states)
    return out, reanchors


def _unanchored(ctx: _Ctx, loose: dict[str, list[tuple[int, int]]], states: dict[str, str]) -> list[Finding]:
    """One citation-unanchored per tree that imported citations were read at and this check cannot anchor."""
    out: list[Finding] = []
    for tree, cites in loose.items():
        n, k = cites[0]
        why = (
            "which this repository does not have"
            if states.get(tree) == "unknown" and tree
            else "which is no ancestor of the tree checked"
            if tree
            else "an unrecorded tree"
        )
        out.append(
            finding(
                "citation-unanchored",
                f"{len(cites)} imported citation(s) were read at {tree or 'an unknown tree'}, {why}; they are checked "
                "best-effort (a vanished one is a warning, not an error).",
                "Run `porttrack check --reanchor --write` to re-anchor the ones found again to this tree.",
                ctx.qrel,
                ctx.citation_line(n, k),
                entry=n,
                check=f"citations read at {tree or 'an unknown tree'}",
            )
        )
        ctx.checks.add(f"citations read at {tree or 'an unknown tree'}")
    return out


def _soften(f: Finding) -> Finding:
    f.severity = "warning"
    f.message += " (best-effort: the citation was read at another tree)"
    return f


def reanchor_write(queue_path: Path, reanchors: list[Reanchor]) -> int:
    """Rewrite the imported citations check found again; the old place is kept in the citation's `previous`."""
    if not reanchors:
        return 0
    qf = queuefile.load(queue_path)
    for r in reanchors:
        c = qf.queue.entry_of(r.entry).citations[r.index]
        queuefile.set_citation(
            qf,
            r.entry,
            r.index,
            {
                "line": r.line,
                "end": r.end,
                "tree": r.tree,
                "previous": list(c.previous) + ([r.old] if r.old not in c.previous else []),
            },
        )
    queuefile.rebuild(qf)
    queuefile.save(qf)
    return len(reanchors)


# ---------------------------------------------------------------- behaviour against the claimed pin


def behaviour_findings(ctx: _Ctx) -> list[Finding]:
    """An entry whose recorded behaviour lacks its switch, while a port header claims upstream at or past it.

    The evidence is what `validate kv --record` wrote ([entry.behaviour]); the claim is a
    provenance header of a port file mapped from the entry's files whose pin the queue (or the
    upstream repo) places at or past the entry's commit.
    """
    lacking = [(e, e.behaviour) for e in ctx.q.entries if e.behaviour is not None and e.behaviour.result == "lacks"]
    if not lacking:
        return []
    from porttrack import headers

    scopes = sorted({s for paths in ctx.cfg.scopes.values() for s in paths})
    provs = headers.scan_headers(ctx.root, scan_lines=ctx.cfg.header_scan_lines, scopes=scopes)
    out = []
    for e, b in lacking:
        label = f"entry {e.n} behaviour"
        ctx.checks.add(label)
        claims = [
            (p.path, src)
            for p in provs
            for src in p.sources
            if src.pin and src.upstream in e.files and audit.pin_at_or_past(src.pin, ctx.q, ctx.cfg, e)
        ]
        if not claims:
            continue
        (path, src), more = claims[0], claims[1:]
        cite = f"; case {b.case} {b.field}: expected {b.expected}, got {b.got}" if b.field else ""
        out.append(
            finding(
                "behaviour-behind-pin",
                f"entry {e.n} ({e.short} {e.subject}) is kvref switch {b.switch}; the port's harness "
                f"({b.harness}) answered {b.lack} case(s) as without it and {b.agree} as with it "
                f"(validate kv --as-of {b.semantics} --cases {b.cases} --seed {b.seed}{cite}), yet {path}:{src.line} "
                f"claims {src.upstream} @ {src.pin}, at or past it.",
                f"Port {e.short}'s change into {path} (or correct its pin), then re-run validate kv --record.",
                path,
                src.line,
                entry=e.n,
                check=label,
                related=[f"{p}:{s.line}" for p, s in more] + [f"{ctx.qrel}:{ctx.entry_line(e.n)}"],
            )
        )
    return out


# ---------------------------------------------------------------- owners and blocked entries


def owner_findings(ctx: _Ctx) -> list[Finding]:
    """Owners are rows of the configured matrices, and not in a done state while the entry waits."""
    wanted = [
        (e, label, obj, part)
        for e in ctx.q.entries
        for label, obj, part in _owners(e)
        if obj.owner and obj.verdict not in SETTLED
    ]
    if not wanted:
        return []
    from porttrack import owners

    rows: dict[str, owners.Row] = {}
    for r in owners.load_rows(ctx.root, ctx.cfg.matrices, id_pattern=ctx.cfg.id_pattern):
        rows.setdefault(r.id, r)
    done = {s.upper() for s in ctx.cfg.done_states}
    out = []
    for e, label, obj, part in wanted:
        ctx.checks.add(f"{label} owner")
        kw = {"entry": e.n, "part": part or "", "check": f"{label} owner"}
        qline = ctx.entry_line(e.n, "owner", part)
        row_id = owners.owner_id(obj.owner)
        row = rows.get(row_id)
        if row is None:
            globs = ", ".join(ctx.cfg.matrices) or "(no [owners] matrices configured)"
            out.append(
                finding(
                    "owner-missing",
                    f"{label} is owned by {row_id}, which is no row of {globs}.",
                    f"Restore row {row_id} or set {label}'s owner to the row that tracks it now (or re-triage it).",
                    ctx.qrel,
                    qline,
                    **kw,
                )
            )
        elif row.state.upper() in done:
            out.append(
                finding(
                    "owner-done",
                    f"{label} is owned by {row_id}, which is {row.state} at {row.where}, yet the entry is still {obj.verdict!r}.",
                    f"Check whether the row's work ported {label}; mark it ported or re-triage it.",
                    ctx.qrel,
                    qline,
                    **kw,
                    related=[row.where],
                )
            )
    return out


def actionable_findings(ctx: _Ctx, already: set) -> list[Finding]:
    """Blocked entries whose blockers are all ported now (skipping those an entry-ported gate already named)."""
    for e in ctx.q.entries:
        for label, obj, _ in _owners(e):
            if obj.verdict == "blocked":
                ctx.checks.add(f"{label} blocked_by")
    out = []
    for n, blockers in audit.actionable(ctx.q):
        e = ctx.q.entry_of(n)
        # point at the blocked_by that says so: the entry's own, else its first blocked part's
        part = next((p.name for p in e.parts if p.verdict == "blocked"), None) if e.verdict != "blocked" else None
        if (n, part or "") in already or (n, "") in already:
            continue
        label = f"entry {n}" + (f" part {part!r}" if part else "")
        ctx.checks.add(f"{label} blocked_by")
        out.append(
            finding(
                "actionable",
                f"{label} ({e.short} {e.subject}) is blocked by {', '.join(map(str, blockers))}, and all of them are ported now.",
                f"Port {label} (or re-triage it) and clear its blocked_by.",
                ctx.qrel,
                ctx.entry_line(n, "blocked_by", part),
                entry=n,
                part=part or "",
                check=f"{label} blocked_by",
            )
        )
    return out


def prepin_findings(ctx: _Ctx) -> list[Finding]:
    """Pre-pin gaps (from the `pre-pin:` evidence audit --write recorded), by feature: a module whose
    absent names 2+ entries point at while no open row cites any of them."""
    from porttrack import prepin

    out = []
    for f in prepin.recorded(ctx.cfg, ctx.q).features:
        chk = f"pre-pin gap {f.path}"
        ctx.checks.add(chk)
        entries = f.entries
        if f.owner or len(entries) < 2:
            continue
        first = entries[0]
        names = ", ".join(g.symbol for g in f.gaps)
        out.append(
            finding(
                "pre-pin-gap-unowned",
                f"{f.path} had {names} upstream at the pin ({f.pin[: prepin.PIN_CHARS]}), and the port lacks "
                f"{'it' if len(f.gaps) == 1 else 'them'}; entries {', '.join(map(str, entries))} point at "
                f"{'it' if len(f.gaps) == 1 else 'them'} and no open matrix row cites any.",
                f"Add one matrix row for the feature that cites {names} (not one issue per entry).",
                ctx.qrel,
                ctx.entry_line(first, "evidence"),
                entry=first,
                check=chk,
                related=[f"{ctx.qrel}:{ctx.entry_line(n, 'evidence')}" for n in entries[1:]],
            )
        )
    return out


# ---------------------------------------------------------------- acknowledgements and filters


def apply_acks(ctx: _Ctx, found: list[Finding], today: dt.date):
    """Drop findings an unexpired [[ack]] covers; expired and unused acks become findings themselves."""
    kept: list[Finding] = []
    acked: list[tuple[Finding, str]] = []
    used = [False] * len(ctx.q.acks)
    for i, a in enumerate(ctx.q.acks):  # refuse a bad ack by its line before it covers anything
        if a.code not in CODES:
            raise UserError(f"{ctx.qrel}:{ctx.ack_line(i)}: ack code {a.code!r} is no check code ({', '.join(CODES)}).")
        if a.expires is None:
            raise UserError(
                f"{ctx.qrel}:{ctx.ack_line(i)}: [[ack]] {a.code} needs an expires date (expires = YYYY-MM-DD)."
            )
        if isinstance(a.expires, dt.datetime):  # TOML date-times are dates too, but cannot be compared with today
            raise UserError(
                f"{ctx.qrel}:{ctx.ack_line(i)}: [[ack]] {a.code} expires must be a date (YYYY-MM-DD), "
                f"not the date-time {a.expires.isoformat()}."
            )
    for f in found:
        hit = next((i for i, a in enumerate(ctx.q.acks) if _matches(a, f)), None)
        if hit is None:
            kept.append(f)
            continue
        used[hit] = True
        a = ctx.q.acks[hit]
        if a.expires is not None and a.expires < today:  # (None was refused above)
            kept.append(f)  # an expired ack stops covering: the finding shows again
        else:
            acked.append((f, a.reason))
    out = []
    for i, a in enumerate(ctx.q.acks):
        line = ctx.ack_line(i)
        who = (
            f"[[ack]] {a.code}"
            + (f" entry {a.entry}" if a.entry is not None else "")
            + (f" gate {a.gate}" if a.gate else "")
        )
        chk = f"ack {i + 1} ({who})"
        ctx.checks.add(chk)
        if a.expires is not None and a.expires < today:
            out.append(
                finding(
                    "ack-expired",
                    f"{who} expired on {a.expires.isoformat()} (reason was: {a.reason}).",
                    "Fix what it acknowledged, or renew it with a new expires date and a current reason.",
                    ctx.qrel,
                    line,
                    entry=a.entry,
                    gate=a.gate,
                    check=chk,
                )
            )
        elif not used[i]:
            out.append(
                finding(
                    "ack-unused",
                    f"{who} matches no finding any more.",
                    "Delete this acknowledgement: what it covered is resolved.",
                    ctx.qrel,
                    line,
                    entry=a.entry,
                    gate=a.gate,
                    check=chk,
                )
            )
    return kept, acked, out


def _matches(a, f: Finding) -> bool:
    return a.code == f.code and (a.entry is None or a.entry == f.entry) and (not a.gate or a.gate == f.gate)


def filter_findings(found: list[Finding], ignore: list[str], min_severity: str) -> tuple[list[Finding], int]:
    floor = SEVERITIES.index(min_severity) if min_severity in SEVERITIES else 0
    kept = [f for f in found if f.code not in ignore and SEVERITIES.index(f.severity) >= floor]
    return kept, len(found) - len(kept)
