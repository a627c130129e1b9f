"""validate kv and kvref vectors: drive a port's harness over the conformance protocol.

The harness is the port's own program; porttrack starts it, shakes hands
(`hello`), sends one JSON request per line and reads one JSON reply per line
(docs/protocol.md). Each reply is compared with kvref's answer at the
requested upstream semantics; a harness that crashes, hangs or prints garbage
fails that case and is restarted for the next one. kvref (and torch) are
imported only inside these functions: porttrack itself never needs them.
"""

from __future__ import annotations

import json
import os
import queue as queue_mod
import shlex
import signal
import subprocess
import threading
import time
from collections import Counter
import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from collections.abc import Callable

from porttrack.validation import behaviour
from porttrack.errors import UserError
import contextlib
import importlib.util

DEFAULT_TIMEOUT = 10.0  # seconds per case; PORTTRACK_KV_TIMEOUT overrides
MAX_TIMEOUT = 86_400.0  # a day: past that a per-case timeout is a typo (and overflows the thread timers)
DEFAULT_DEADLINE = 1800.0  # seconds for the whole run; PORTTRACK_KV_DEADLINE overrides
MAX_CONSECUTIVE_TIMEOUTS = 3  # a harness that hung this many cases in a row is not asked again
LINE_CAP = 16 * 2**20  # characters in one harness line; a reply past it is "harness line too long"
MAX_CASES = 1_000_000  # every case is generated up front: a typo must not exhaust memory


def require_kvref() -> None:
    _kvref()


def _kvref():
    """kvref's cases and semantics; exit 2 before any harness starts when the kvref extra is missing."""
    missing = [m for m in ("torch", "numpy") if importlib.util.find_spec(m) is None]
    if missing:
        raise UserError(
            f"kvref needs {' and '.join(missing)}, which is not installed: install porttrack[kvref] "
            "(pip install -e '.[kvref]')."
        )
    try:
        from kvref import cases, semantics
    except ImportError as e:
        raise UserError(
            f"kvref cannot be imported ({e}); install porttrack[kvref] (pip install -e '.[kvref]')."
        ) from None
    return cases, semantics


# ---------------------------------------------------------------- the harness process


class HarnessFault(Exception):
    """The harness crashed, hung or answered something that is not a reply."""


class HarnessTimeout(HarnessFault):
    """No reply within the per-case timeout."""


_TOO_LONG = object()  # what a reader thread hands on for a line over LINE_CAP


class Harness:
    def __init__(self, cmd: str, timeout: float) -> None:
        self.cmd, self.timeout = cmd, timeout
        self.proc: subprocess.Popen | None = None
        self.hello: dict = {}

    def start(self) -> dict:
        try:
            argv = shlex.split(self.cmd)
        except ValueError as e:
            raise UserError(f"--impl {self.cmd!r} is not a valid command line: {e}.") from None
        if not argv:
            raise UserError("--impl is empty; give the command that starts the port's harness.")
        # kvref (and what it imports) is loaded before the harness starts: a Ctrl-C once the harness
        # runs finds porttrack waiting for its reply, never inside an import
        protocol = _kvref()[0].PROTOCOL_VERSION
        try:
            # its own session: stop() kills the harness and whatever it left running, which
            # would otherwise hold the pipes open (no EOF) and outlive porttrack
            self.proc = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                bufsize=1,
                errors="replace",
                start_new_session=True,
            )
        except OSError as e:
            raise UserError(f"--impl: cannot start {argv[0]!r}: {e.strerror or e}.") from None
        self.lines: queue_mod.Queue = queue_mod.Queue()
        self.stderr_tail: list[str] = []
        threading.Thread(target=self._pump, args=(self.proc.stdout, self.lines.put), daemon=True).start()
        self._err_thread = threading.Thread(target=self._pump, args=(self.proc.stderr, self._keep_err), daemon=True)
        self._err_thread.start()
        return self.request(0, "hello", {"protocol": protocol, "client": "porttrack"})

    @staticmethod
    def _pump(stream, put: Callable) -> None:
        """Lines to `put`, each read with a cap so a harness that never ends a line cannot fill memory;
        the reader ends (None) at EOF, at a closed pipe, or after the one over-long line."""
        if hasattr(signal, "pthread_sigmask"):  # Ctrl-C and SIGTERM go to the main thread, which waits on replies
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
        try:
            while True:
                line = stream.readline(LINE_CAP + 1)
                if not line:
                    break
                if len(line) > LINE_CAP:
                    put(_TOO_LONG)
                    break
                put(line)
        except (OSError, ValueError):
            pass  # the pipe was closed under us by stop()
        put(None)

    def _keep_err(self, line: str | None) -> None:
        if isinstance(line, str):
            self.stderr_tail = ([*self.stderr_tail, line.rstrip()[:1000]])[-5:]

    def request(self, rid: int, op: str, args: dict) -> dict:
        assert self.proc is not None and self.proc.stdin is not None  # started with pipes
        try:
            self.proc.stdin.write(json.dumps({"id": rid, "op": op, "args": args}) + "\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError, ValueError):
            raise HarnessFault(self._died()) from None
        deadline = time.monotonic() + self.timeout
        while True:
            left = deadline - time.monotonic()
            try:
                line = self.lines.get(timeout=max(left, 0.001))
            except queue_mod.Empty:
                self.stop()
                raise HarnessTimeout(f"no reply within {self.timeout:g}s (harness hung)") from None
            if line is None:
                raise HarnessFault(self._died())
            if line is _TOO_LONG:
                self.stop()
                raise HarnessFault(f"harness line too long (over {LINE_CAP // 2**20} MiB without a newline)")
            if not line.strip():
                continue
            try:
                reply = json.loads(line)
            except (ValueError, RecursionError):  # RecursionError: nesting deeper than json can decode
                self.stop()
                raise HarnessFault(f"garbage on stdout: {line.strip()[:80]!r}") from None
            if not isinstance(reply, dict) or reply.get("id") != rid or not isinstance(reply.get("ok"), bool):
                self.stop()
                raise HarnessFault(f"not a reply to request {rid}: {line.strip()[:80]!r}")
            return reply

    def _died(self) -> str:
        code = None
        if self.proc is not None:
            try:
                code = self.proc.wait(timeout=2)
            except subprocess.TimeoutExpired:  # closed its stdout but kept running
                self.stop()
                return "harness closed its stdout without exiting (killed)"
            self._err_thread.join(timeout=1)  # its last words on stderr
            self.stop()
        err = " | ".join(self.stderr_tail)
        return f"harness exited with code {code}" + (f"; stderr: {err[:200]}" if err else "")

    def stop(self) -> None:
        """Kill the harness's whole process group; never wait on a pipe's EOF without a deadline."""
        if self.proc is not None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                self.proc.kill()  # the group is gone already: the leader alone may be a zombie
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=5)
            try:
                if self.proc.stdin is not None:
                    self.proc.stdin.close()
            except (OSError, ValueError):
                pass  # a broken pipe to a dead harness
            # stdout and stderr are left to the reader threads: closing a pipe another thread is
            # blocked reading waits for that read, which a child outside the group could hold forever
            self.proc = None


# ---------------------------------------------------------------- comparing replies


def first_difference(expected: Any, got: Any, path: str) -> str | None:
    """The path of the first field where `got` differs from `expected` (extra fields in `got` are fine)."""
    if isinstance(expected, dict):
        if not isinstance(got, dict):
            return path
        for k, v in expected.items():
            if k not in got:
                return f"{path}.{k}"
            d = first_difference(v, got[k], f"{path}.{k}")
            if d:
                return d
        return None
    if isinstance(expected, list):
        if not isinstance(got, list):
            return path
        for i, (a, b) in enumerate(zip(expected, got, strict=False)):
            d = first_difference(a, b, f"{path}[{i}]")
            if d:
                return d
        return None if len(expected) == len(got) else f"{path}.length"
    if type(expected) is bool or type(got) is bool:
        return None if expected is got else path
    if type(expected) is int and type(got) is not int:
        return path  # an integer must be sent as one: 16.0 is not 16 (docs/protocol.md, "Numbers")
    return None if expected == got else path


def _lookup(obj: Any, path: str) -> Any:
    import re

    for part in re.findall(r"\.([^.\[]+)|\[(\d+)\]", path):
        key, idx = part
        try:
            if key == "length":
                return len(obj)
            obj = obj[key] if key else obj[int(idx)]
        except (KeyError, IndexError, TypeError):
            return None
    return obj


def compare(expected: dict, reply: dict) -> tuple[str | None, Any, Any]:
    """(first differing field, expected value, got value), or (None, …) when the reply matches."""
    if expected["ok"] != reply.get("ok"):
        note = reply.get("message") if not reply.get("ok") else reply.get("result")
        return "ok", expected["ok"], f"{reply.get('ok')} ({str(note)[:120]})"
    if not expected["ok"]:
        return (
            (None, None, None)
            if reply.get("error") == expected["error"]
            else ("error", expected["error"], reply.get("error"))
        )
    field = first_difference(expected["result"], reply.get("result"), "result")
    if field is None:
        return None, None, None
    return (
        field,
        _lookup({"result": expected["result"]}, "." + field),
        _lookup({"result": reply.get("result")}, "." + field),
    )


# ---------------------------------------------------------------- the run


@dataclass
class CaseResult:
    id: int
    op: str
    status: str  # passed | failed | skipped | n/a | not-ported
    field: str | None = None
    expected: Any = None
    got: Any = None
    note: str = ""
    switches: list[str] = dataclasses.field(
        default_factory=list
    )  # `field` is taken above; a failure: the switches that alone explain it


@dataclass
class Report:
    impl: str
    harness: dict
    semantics: str | None
    cases: int
    seed: int
    results: list[CaseResult] = field(default_factory=list)
    as_of: dict | None = None  # what --as-of without a revision found
    stopped: str | None = None  # why the run stopped before sending every case (deadline, hung harness)
    sent: list[tuple[dict, Any]] = field(default_factory=list, repr=False)  # (case, reply) of every case sent
    evidence: list = field(default_factory=list)  # behaviour.SwitchEvidence per switch, around `semantics`

    def counts(self) -> dict[str, dict[str, int]]:
        out: dict[str, Counter] = {}
        for r in self.results:
            out.setdefault(r.op, Counter())[r.status] += 1
        return {op: dict(c) for op, c in out.items()}

    @property
    def failed(self) -> bool:
        if self.as_of is not None:
            return not self.as_of["matches"]
        return any(r.status == "failed" for r in self.results)


def resolve_as_of(as_of: str | None):
    """--as-of: a preset, a commit kvref knows, or any upstream revision placed with git."""
    _cases, semantics = _kvref()
    if as_of is None:
        return semantics.resolve_semantics("latest")
    if not as_of.strip():
        raise UserError("--as-of needs a revision here: a preset (G1, G2, G3, latest) or an upstream sha prefix.")
    try:
        return semantics.resolve_semantics(as_of)
    except ValueError as e:
        placed = _place_with_git(as_of, semantics)
        if placed is None:
            raise UserError(
                f"--as-of {as_of!r}: {e}; an arbitrary upstream revision needs a porttrack.toml "
                "whose [upstream] repo holds it."
            ) from None
        return placed


def _place_with_git(rev: str, semantics):
    """The switches whose commits are ancestors of `rev` in the configured upstream repo."""
    from porttrack import config as config_mod, gitio

    try:
        cfg = config_mod.resolve_config(None)
    except UserError:
        return None
    repo = cfg.upstream_repo
    if repo is None or not gitio.is_git_repo(repo):
        return None
    target = gitio.rev_parse(repo, rev)
    if target is None:
        raise UserError(f"--as-of {rev!r} is not a revision of the upstream repo {repo}.")
    on = set()
    known = 0  # switch commits the repo holds at all
    for s in semantics.SWITCHES:
        if not s.sha:
            continue
        full = gitio.rev_parse(repo, s.sha)
        known += full is not None
        if full and gitio.is_ancestor(repo, full, target):
            on.add(s.name)
    if not known:
        raise UserError(
            f"--as-of {rev!r}: the upstream repo {repo} holds none of the commits kvref knows "
            f"({', '.join(s.sha for s in semantics.SWITCHES if s.sha)}), so it cannot place the "
            "revision; use a preset or an upstream vLLM clone."
        )
    names = [s.name for s in semantics.SWITCHES]
    # A row with no recorded commit is on when any later recorded row is.
    for i, s in enumerate(semantics.SWITCHES):
        if not s.sha and any(t.name in on for t in semantics.SWITCHES[i + 1 :] if t.sha):
            on.add(s.name)
    return semantics.Semantics(frozenset(n for n in names if n in on), f"{rev} (placed in {repo})")


def run_cases(
    impl: str,
    cases: list[dict],
    timeout: float,
    progress: Callable[[int, int], None] | None = None,
    *,
    deadline: float | None = None,
    stopped: list[str] | None = None,
):
    """Send every case the harness supports; return (hello result, {case id: reply or fault text}).

    The run is bounded: after `deadline` seconds, or after MAX_CONSECUTIVE_TIMEOUTS hung cases in
    a row, the remaining cases are not sent; each is failed with the reason, which is also
    appended (once) to `stopped`.
    """
    harness = Harness(impl, timeout)
    started = time.monotonic()
    ends = started + (deadline if deadline is not None else _env_seconds("PORTTRACK_KV_DEADLINE", DEFAULT_DEADLINE))
    hung = 0
    why: str | None = None
    try:
        try:
            hello = harness.start()
        except HarnessFault as e:
            raise UserError(f"harness {impl!r} did not answer hello: {e}.") from None
        info = hello.get("result") if hello.get("ok") else None
        if (
            not isinstance(info, dict)
            or not isinstance(info.get("ops"), list)
            or not all(isinstance(op, str) for op in info["ops"])
        ):
            raise UserError(f"harness {impl!r} answered hello without a result listing its ops: {str(hello)[:160]}.")
        want = _kvref()[0].PROTOCOL_VERSION
        if info.get("protocol") != want:
            raise UserError(f"harness {impl!r} speaks protocol {info.get('protocol')!r}; porttrack speaks {want}.")
        known = _kvref()[0].OPS
        if not set(info["ops"]) & set(known):
            raise UserError(
                f"harness {impl!r} lists none of the protocol's ops ({', '.join(known)}) in its hello "
                f"(it lists {info['ops']}), so there is nothing to validate."
            )
        replies: dict[int, Any] = {}
        for i, case in enumerate(cases):
            if progress:
                progress(i + 1, len(cases))  # the case now sent counts as done
            if case["op"] not in info["ops"]:
                continue
            if why is None and time.monotonic() > ends:
                why = f"not run: the run passed its overall deadline ({_seconds(ends - started)})"
            if why is not None:
                replies[case["id"]] = why
                continue
            if harness.proc is None:
                try:
                    harness.start()
                except (HarnessFault, UserError) as e:
                    replies[case["id"]] = f"harness did not restart: {e}"
                    continue
            try:
                replies[case["id"]] = harness.request(case["id"], case["op"], case["args"])
                hung = 0
            except HarnessTimeout as e:
                replies[case["id"]] = str(e)
                hung += 1
                if hung >= MAX_CONSECUTIVE_TIMEOUTS:
                    why = f"not run: the harness hung on {hung} cases in a row"
            except HarnessFault as e:
                replies[case["id"]] = str(e)
                hung = 0
        if why is not None and stopped is not None:
            stopped.append(why.removeprefix("not run: "))
        return info, replies
    finally:
        harness.stop()


def _judge(case: dict, expected: dict | None, reply: Any, supported: bool) -> CaseResult:
    if not supported:
        return CaseResult(case["id"], case["op"], "skipped", note="op not supported by the harness")
    if expected is None:
        return CaseResult(case["id"], case["op"], "n/a", note="op does not exist at this semantics")
    if isinstance(reply, str):
        return CaseResult(case["id"], case["op"], "failed", "(harness)", note=reply)
    if behaviour.is_not_ported(reply):
        return CaseResult(case["id"], case["op"], "not-ported", note=str(reply.get("message", ""))[:200])
    fld, exp, got = compare(expected, reply)
    if fld is None:
        return CaseResult(case["id"], case["op"], "passed")
    note = reply.get("message", "") if isinstance(reply, dict) and not reply.get("ok") else ""
    return CaseResult(case["id"], case["op"], "failed", fld, exp, got, note=str(note)[:200])


def validate(
    impl: str,
    as_of: str | None,
    n: int,
    seed: int,
    *,
    detect: bool = False,
    timeout: float | None = None,
    progress: Callable[[int, int], None] | None = None,
    evidence: bool = True,
) -> Report:
    """Run the cases through the harness; compare with kvref at --as-of, or find the semantics it matches.

    `evidence=False` leaves out the per-switch evidence (`report.evidence` stays empty): it asks kvref
    for every case again around each switch, most of a run's time, and only `--record` and the
    report's switch lines read it; a caller that wants pass or fail alone skips it.
    """
    kcases, semantics = _kvref()
    if not 0 <= n <= MAX_CASES:
        raise UserError(f"--cases must be between 0 and {MAX_CASES:,}, got {n}.")
    timeout = timeout or _env_timeout()
    sem = None if detect else resolve_as_of(as_of)
    cases = kcases.generate(n, seed)
    stopped: list[str] = []
    info, replies = run_cases(impl, cases, timeout, progress, stopped=stopped)
    supported = set(info["ops"])
    if detect:
        as_of_report, sem = _detect(cases, replies, supported, kcases, semantics)
    assert sem is not None  # resolved before the run, or detected from it
    report = Report(impl, info, sem.label, n, seed, stopped=stopped[0] if stopped else None)
    report.sent = [(c, replies[c["id"]]) for c in cases if c["id"] in replies]
    for case in cases:
        ok = case["op"] in supported  # kvref answers only what the harness can be asked (some answers import torch)
        res = _judge(case, kcases.answer(case, sem) if ok else None, replies.get(case["id"]), ok)
        if res.status == "failed" and res.field != "(harness)":
            res.switches = behaviour.failure_switches(case, replies[case["id"]], sem, kcases, semantics)
        report.results.append(res)
    if evidence:
        report.evidence = behaviour.switch_evidence(report.sent, sem, kcases, semantics)
    if detect:
        report.as_of = as_of_report
    return report


def _env_timeout() -> float:
    return _env_seconds("PORTTRACK_KV_TIMEOUT", DEFAULT_TIMEOUT)


def _env_seconds(name: str, default: float) -> float:
    """A positive number of seconds from the environment, at most a day (a larger one overflows timers)."""
    raw = os.environ.get(name, "")
    if not raw.strip():
        return default
    try:
        value = float(raw)
    except ValueError:
        value = float("nan")
    if not 0 < value <= MAX_TIMEOUT:
        what = "the per-case timeout" if name == "PORTTRACK_KV_TIMEOUT" else "the whole run's deadline"
        raise UserError(f"{name}={raw!r} must be a number of seconds above 0 and at most {MAX_TIMEOUT:g} ({what}).")
    return value


def _seconds(s: float) -> str:
    return f"{s:.0f} s" if s >= 10 else f"{s:.1f} s"


def _detect(cases, replies, supported, kcases, semantics):
    """Score the harness against every point of upstream history kvref knows; report the matching ones."""
    points = [semantics.upto(s.name) for s in semantics.SWITCHES]
    scores = []
    for p in points:
        bad = 0
        for c in cases:
            if c["op"] not in supported:
                continue
            exp = kcases.answer(c, p)
            reply = replies.get(c["id"])
            if behaviour.is_not_ported(reply):
                continue  # an input the port cannot express says nothing about its semantics
            if exp is None or isinstance(reply, str) or reply is None or compare(exp, reply)[0] is not None:
                bad += 1
        scores.append(bad)
    best = min(scores)
    matching = [p for p, s in zip(points, scores, strict=False) if s == best]
    names = [s.name for s in semantics.SWITCHES]
    included = [n for n in names if all(n in p.on for p in matching)]
    excluded = [n for n in names if all(n not in p.on for p in matching)]
    by_name = {s.name: s for s in semantics.SWITCHES}
    report = {
        "matches": best == 0,
        "mismatches_at_best": best,
        "points": [
            {"semantics": p.last.name, "sha": p.last.sha, "mismatches": s} for p, s in zip(points, scores, strict=False)
        ],
        "matching": [p.last.name for p in matching],
        "included": [_switch_row(by_name[n]) for n in included],
        "not_included": [_switch_row(by_name[n]) for n in excluded],
        "undetermined": [_switch_row(by_name[n]) for n in names if n not in included and n not in excluded],
        "queue": _queue_entries([by_name[n] for n in names]),
    }
    return report, matching[-1]


def _switch_row(s) -> dict:
    return {"name": s.name, "sha": s.sha, "pr": s.pr, "date": s.date}


def _queue_entries(switches) -> dict[str, list[int]]:
    """Queue entries (of the porttrack.toml found from here, if any) whose commit is a switch's."""
    try:
        from porttrack import config as config_mod
        from porttrack.queue import file as queuefile

        cfg = config_mod.resolve_config(None)
        qf = queuefile.load(config_mod.queue_path(cfg, None))
    except UserError:  # no porttrack.toml here, no queue, or one that does not load: no entries to name
        return {}
    out = {}
    for s in switches:
        if s.sha:
            hits = [e.n for e in qf.queue.entries if e.sha and (e.sha.startswith(s.sha) or s.sha.startswith(e.sha))]
            if hits:
                out[s.name] = hits
    return out


# ---------------------------------------------------------------- vectors and rendering


def write_vectors(out_dir: Path, as_of: str | None, n: int, seed: int) -> list[Path]:
    """One JSON Lines file per op: {"id", "op", "args", "expect"} per line, plus manifest.json."""
    kcases, semantics = _kvref()
    if not 0 <= n <= MAX_CASES:
        raise UserError(f"--cases must be between 0 and {MAX_CASES:,}, got {n}.")
    sem = resolve_as_of(as_of)
    if out_dir.exists() and not out_dir.is_dir():
        raise UserError(f"--out {out_dir} exists and is not a folder.")
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UserError(f"--out {out_dir}: cannot create the folder: {e.strerror or e}.") from None
    by_op: dict[str, list[str]] = {op: [] for op in kcases.OPS}
    for case in kcases.generate(n, seed):
        expect = kcases.answer(case, sem)
        if expect is None:
            continue
        by_op[case["op"]].append(
            json.dumps(
                {"id": case["id"], "op": case["op"], "edge": case["edge"], "args": case["args"], "expect": expect},
                sort_keys=True,
            )
        )
    written = []
    for op, lines in by_op.items():
        path = out_dir / f"{op}.jsonl"
        _write(path, "".join(line + "\n" for line in lines))
        written.append(path)
    manifest = {
        "protocol": kcases.PROTOCOL_VERSION,
        "semantics": sem.label,
        "switches_on": sorted(sem.on, key=[s.name for s in semantics.SWITCHES].index),
        "cases": n,
        "seed": seed,
        "files": {p.name: len(by_op[p.stem]) for p in written},
    }
    path = out_dir / "manifest.json"
    _write(path, json.dumps(manifest, indent=2) + "\n")
    return [*written, path]


def _write(path: Path, text: str) -> None:
    try:
        path.write_text(text)
    except OSError as e:
        raise UserError(f"--out: cannot write {path}: {e.strerror or e}.") from None


def as_json(report: Report) -> dict:
    return {
        "impl": report.impl,
        "harness": report.harness,
        "semantics": report.semantics,
        "cases": report.cases,
        "seed": report.seed,
        "ok": not report.failed,
        "counts": report.counts(),
        "failures": [r.__dict__ for r in report.results if r.status == "failed"],
        "not_ported": [{"id": r.id, "op": r.op, "note": r.note} for r in report.results if r.status == "not-ported"],
        "switches": [e.as_json() for e in report.evidence],
        "as_of": report.as_of,
        "stopped": report.stopped,
    }


def render(report: Report, console) -> None:
    from rich.table import Table

    h = report.harness
    console.print(
        f"harness {h.get('name', '?')!s} (protocol {h.get('protocol')}) via {report.impl!r}; "
        f"{report.cases} random cases from seed {report.seed} after the edge cases",
        markup=False,
    )
    if report.as_of is None:
        console.print(f"expected behaviour: upstream as of {report.semantics}", markup=False)
    table = Table("op", "passed", "failed", "not-ported", "skipped", "n/a")
    for op, c in report.counts().items():
        table.add_row(op, *(str(c.get(k, 0)) for k in ("passed", "failed", "not-ported", "skipped", "n/a")))
    console.print(table)
    fails = [r for r in report.results if r.status == "failed"]
    for r in fails[:20]:
        what = r.note if r.field == "(harness)" else f"{r.field}: expected {r.expected!r}, got {r.got!r}"
        console.print(f"  case {r.id} {r.op}: {what}{_belongs(r)}", markup=False)
    if len(fails) > 20:
        console.print(f"  … and {len(fails) - 20} more failures (--json lists all)", markup=False)
    if report.stopped:
        not_run = sum(r.note.startswith("not run:") for r in fails)
        console.print(f"stopped early: {report.stopped}; {not_run} cases were not run.", markup=False)
    if fails:
        by: Counter = Counter(", ".join(r.switches) or "(no single switch)" for r in fails)
        console.print("failures by switch: " + "; ".join(f"{k}: {v}" for k, v in sorted(by.items())), markup=False)
    notp = Counter(r.note for r in report.results if r.status == "not-ported")
    for note, k in sorted(notp.items()):
        console.print(f"  not-ported ({k} cases): {note}", markup=False)
    decided = [e for e in report.evidence if e.result != "undetermined"]
    if decided:
        console.print(f"switch by switch, toggled around {report.semantics}:", markup=False)
        for e in decided:
            cite = f"; case {e.case}" + (f" {e.field}" if e.field and e.result != "matches" else "") if e.case else ""
            console.print(
                f"  {e.result}: {e.sha or '(no sha)'} {e.switch} ({e.agree} as with it, {e.lack} as without, "
                f"{e.other} neither{cite})",
                markup=False,
            )
    if report.as_of is not None:
        a = report.as_of
        best = ", ".join(a["matching"])
        head = (
            "matches" if a["matches"] else f"matches no point exactly; closest ({a['mismatches_at_best']} mismatches)"
        )
        console.print(f"as-of: the harness {head}: {best}", markup=False)
        if not a["matches"] and any(e.result != "undetermined" for e in report.evidence):
            console.print(
                "  (no point matches exactly: the switch-by-switch lines above are the evidence per switch)",
                markup=False,
            )
        # a point that matches no case set exactly can disagree with a switch toggled alone: the
        # switch-by-switch result is the evidence, so the closest point is not said to have it both ways
        toggled = {e.switch: e.result for e in decided}
        contrary = {"included": "lacks", "not_included": "matches"}
        for key, title in (
            ("included", "includes"),
            ("not_included", "does not include"),
            ("undetermined", "cannot tell (not observable by these ops)"),
        ):
            for s in a[key]:
                entries = a["queue"].get(s["name"])
                where = f" (queue entries {', '.join(map(str, entries))})" if entries else ""
                said = title
                if toggled.get(s["name"]) == contrary.get(key):
                    said = f"closest point {'has' if key == 'included' else 'lacks'} it, yet toggled alone it {toggled[s['name']]}"
                console.print(f"  {said}: {s['sha'] or '(no sha)'} {s['name']}{where}", markup=False)


def _belongs(r: CaseResult) -> str:
    return f" [switch: {', '.join(r.switches)}]" if r.switches else " [no single switch]"
