"""The command line: parse options, call one engine function, render the result.

Each command resolves the config, calls one engine function, and renders what it
returns: a rich table for people, JSON for machines. Nothing here decides anything.
"""

from __future__ import annotations

import functools
import json
import os
import signal
import sys
import traceback
from pathlib import Path
from collections.abc import Callable
from typing import Annotated, Any

import typer
from rich.console import Console

from porttrack import cliargs
from porttrack.errors import UserError
from porttrack.visible import sanitized, visible

cliargs.install()  # plain options without pydantic: a tenth of a second off every run


def _typer(help: str, **kw) -> typer.Typer:
    # Plain click help: typer's rich panels print `--write <bool>` for every flag, which reads as
    # "takes a value" (and `--write true` is an error); plain help prints flags as flags.
    return typer.Typer(
        no_args_is_help=True,
        rich_markup_mode=None,
        context_settings={"help_option_names": ["-h", "--help"]},
        help=help,
        **kw,
    )


app = _typer("Track a port against a fast-moving upstream.", add_completion=False)
queue_app = _typer("Build, refresh and show queue files.")
validate_app = _typer("Check a port's behaviour against kvref.")
kvref_app = _typer("The KV-cache reference: conformance vectors.")
app.add_typer(queue_app, name="queue")
app.add_typer(validate_app, name="validate")
app.add_typer(kvref_app, name="kvref")


# Output into a pipe or a file has no width to fit: rich would squeeze tables to 80 columns.
PIPED_WIDTH = 240


def console(stderr: bool = False) -> Console:
    """The CLI's console; it reads NO_COLOR and COLUMNS when it is made."""
    stream = sys.stderr if stderr else sys.stdout
    piped = not stream.isatty() and not os.environ.get("COLUMNS")
    # ":100:" in "file:100: ..." is a line, not an emoji
    return Console(stderr=stderr, highlight=False, emoji=False, width=PIPED_WIDTH if piped else None)


out = console()
err = console(stderr=True)

ConfigOpt = Annotated[
    Path | None, typer.Option("--config", help="porttrack.toml to use (default: found upward from here).")
]
QueueOpt = Annotated[
    Path | None,
    typer.Option(
        "--queue",
        help="Queue file (default: the file named by queue.file in porttrack.toml, or the only queue/*.toml).",
    ),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")]


def _show_version(value: bool) -> None:
    if value:
        from porttrack import __version__

        out.print(f"porttrack {__version__}", markup=False)
        raise typer.Exit(0)


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option("--version", is_eager=True, callback=_show_version, help="Print porttrack's version and exit."),
    ] = False,
    debug: Annotated[bool, typer.Option("--debug", help="On an internal error (exit 3), print the traceback.")] = False,
) -> None:
    """Track a port against a fast-moving upstream. Exit codes: 0 fine, 1 findings, 2 bad input, 3 a bug in porttrack."""
    # --debug is taken out of argv by main() wherever it appears; it is declared here for --help.


def _bare_as_of(argv: list[str]) -> list[str]:
    # Typer has no optional-value options: a bare `--as-of` (last, or before
    # another option) becomes `--as-of ""`, which `validate kv` reads as "detect".
    out = []
    for i, a in enumerate(argv):
        out.append(a)
        if a == "--as-of" and (i + 1 == len(argv) or argv[i + 1].startswith("-")):
            out.append("")
    return out


@functools.cache
def _command() -> Any:
    # Typer rebuilds its click command from the signatures on every `app()` call (about 20 ms); the
    # tests run the CLI hundreds of times in one process, so it is built once per process.
    return typer.main.get_command(app)


def main() -> None:
    argv = sys.argv[1:]
    # --debug may follow any command (`porttrack audit --debug`), so main takes it out itself
    debug = "--debug" in argv[: argv.index("--")] if "--" in argv else "--debug" in argv
    if debug:
        argv.remove("--debug")
    sys.argv[1:] = _bare_as_of(argv)
    # SIGTERM (a CI runner's cancel, `timeout`) unwinds like Ctrl-C, so every `finally` runs: a write
    # in progress leaves the old queue and removes its lock file.
    previous = signal.signal(signal.SIGTERM, _terminated)
    try:
        rc = _command()(standalone_mode=False)
    except UserError as e:
        err.print(f"porttrack: {visible(str(e))}", markup=False, soft_wrap=True)
        sys.exit(2)
    except typer.Exit as e:
        sys.exit(e.exit_code)
    except typer.Abort:
        err.print("porttrack: aborted.")
        sys.exit(2)
    except OSError as e:
        # a path the user gave (a folder to write, a cache dir, a file name too long) that the
        # system refused: name it in one sentence rather than show a traceback
        sys.exit(_os_error(e))
    except Exception as e:  # noqa: BLE001 -- the last line of defence: usage errors, else our bug (exit 3)
        # usage errors (unknown option, missing argument) come through here in non-standalone mode;
        # typer may vendor click, so recognise them by shape rather than by class
        format_message = getattr(e, "format_message", None)
        if callable(format_message) and type(e).__name__ == "NoArgsIsHelpError":  # a bare `porttrack queue`: its help
            out.print(format_message().rstrip(), markup=False, highlight=False, soft_wrap=True)
            sys.exit(2)
        if callable(format_message) and hasattr(e, "exit_code"):
            message = format_message().strip()
            if message:  # a bare `porttrack` / `porttrack queue` has printed its help already
                err.print(f"porttrack: {message}", markup=False, soft_wrap=True)
            sys.exit(2)
        sys.exit(_internal_error(e, debug))
    except KeyboardInterrupt:
        err.print("porttrack: interrupted.")
        sys.exit(130)
    except Terminated:
        err.print("porttrack: terminated.")
        sys.exit(143)
    finally:
        signal.signal(signal.SIGTERM, previous)
    if rc == 130:  # click returns Ctrl-C as a silent 130 when it does not exit itself: say it, once
        err.print("porttrack: interrupted.")
    sys.exit(rc if isinstance(rc, int) else 0)


class Terminated(BaseException):
    """SIGTERM, raised where the program was, so that it unwinds."""


def _terminated(signum: int, frame: object) -> None:
    raise Terminated


def _internal_error(e: BaseException, debug: bool) -> int:
    """An exception nobody meant: our bug. Exit 3 (never 1, which CI reads as findings)."""
    if debug:
        traceback.print_exception(e)
    what = f"{type(e).__name__}: {e}" if str(e) else type(e).__name__
    err.print(
        f"porttrack: internal error, this is a bug in porttrack: {what}."
        + ("" if debug else " Run the same command with --debug for the traceback, and report it."),
        markup=False,
        soft_wrap=True,
    )
    return 3


def _os_error(e: OSError) -> int:
    """One sentence for an OSError that reached the command line; returns exit code 2."""
    what = e.strerror or str(e) or type(e).__name__
    names = [str(f) for f in (e.filename, e.filename2) if f is not None]
    where = " -> ".join(names)
    err.print(visible(f"porttrack: {where + ': ' if where else ''}{what.rstrip('.')}."), markup=False, soft_wrap=True)
    return 2


def _queue(config: Path | None, queue: Path | None, *, lock: bool = False):
    """(config, loaded queue file, queue path relative to the port root) for the queue commands;
    `lock` (for commands that write) holds the writers' lock from this read to the save."""
    from porttrack import config as config_mod
    from porttrack.queue import file as queuefile

    cfg = config_mod.resolve_config(config)
    qpath = config_mod.queue_path(cfg, queue)
    return cfg, queuefile.load(qpath, lock=lock), _rel(qpath, cfg.port_root)


def _plural(n: int, word: str, many: str | None = None) -> str:
    return f"{n} {word if n == 1 else many or word + 's'}"


def _next(*commands: str) -> None:
    """The next command to run, after every command that wrote something."""
    out.print("next: " + " or ".join(f"`{c}`" for c in commands), markup=False, soft_wrap=True)


def _scan_progress():
    """The probe's progress reporter on stderr: a bar on a terminal, plain lines off one."""
    from porttrack import progress

    return progress.probe_scan(err)


def _rel(path: Path, root: Path) -> str:
    """path as the user would type it from the port root (absolute when it lies outside)."""
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(path)


def _queue_arg(queue: Path | None, qrel: str) -> str:
    """` --queue Q` when the user named the queue, so the suggested next command reads the same one."""
    return f" --queue {qrel}" if queue is not None else ""


def print_json(data) -> None:
    sys.stdout.write(json.dumps(data, indent=2, default=str, sort_keys=False) + "\n")


# ---------------------------------------------------------------- init / demo


@app.command()
def init(
    root: Annotated[Path, typer.Option("--root", help="Port tree to look at.")] = Path("."),
    upstream: Annotated[
        Path | None, typer.Option("--upstream", help="Upstream checkout: paths and pins are checked against it.")
    ] = None,
    name: Annotated[
        str | None, typer.Option("--name", help="Upstream name for reports, OWNER/REPO (default: from its origin URL).")
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="Overwrite an existing porttrack.toml.")] = False,
) -> None:
    """Propose a porttrack.toml from what the trees show: paths and pins from provenance headers, checked against the upstream."""
    from porttrack import init as init_mod

    path, prop = init_mod.write_starter(root, upstream=upstream, name=name, force=force)
    for note in prop.notes:
        out.print(f"- {note}", markup=False, soft_wrap=True)  # a path or command is never broken across lines
    for warning in prop.warnings:
        out.print(f"warning: {warning}", markup=False, soft_wrap=True)
    out.print(f"wrote {path}", markup=False, soft_wrap=True)
    _next(prop.next_command + ("" if root.resolve() == Path.cwd().resolve() else f" --config {path}"))


@app.command()
def demo(
    out_dir: Annotated[
        Path | None, typer.Option("--out", help="Folder to build the demo in (default: a new temp folder).")
    ] = None,
) -> None:
    """Build the bundled upstream+port example and run queue build, audit, reports and check on it."""
    from porttrack import demo as demo_mod

    result = demo_mod.run_demo(out_dir, console=out)
    raise typer.Exit(result)


# ---------------------------------------------------------------- queue


SkipMissingOpt = Annotated[
    bool,
    typer.Option(
        "--skip-missing",
        help="Record mirrored files whose blobs the upstream clone lacks as unreadable and go on "
        "(audit calls their entries untrusted), instead of stopping.",
    ),
]


def _unreadable_note(path: Path) -> None:
    """After a build or refresh: which entries hold files that could not be read, if any."""
    from porttrack.queue import file as queuefile

    hit = [e for e in queuefile.load(path).queue.entries if e.unreadable]
    if hit:
        files = sorted({f for e in hit for f in e.unreadable})
        out.print(
            f"{_plural(len(files), 'file')} could not be read (missing from the upstream clone): "
            f"{', '.join(files[:5])}{' …' if len(files) > 5 else ''}; recorded as unreadable in "
            f"{_plural(len(hit), 'entry', 'entries')}, which audit calls untrusted.",
            markup=False,
            soft_wrap=True,
        )


def _walk_queue(step: Callable[..., tuple[Path, int]], config: Path | None, skip_missing: bool, **kw: Any):
    """Run queue build or refresh with the console's progress: (config, queue path, entries added)."""
    from porttrack import config as config_mod, progress

    cfg = config_mod.resolve_config(config)
    path, added = step(cfg, progress=progress.queue_walk(err), skip_missing=skip_missing, **kw)
    return cfg, path, added


@queue_app.command("build")
def queue_build(
    range_: Annotated[str, typer.Option("--range", help="Upstream range PIN..TARGET.")],
    name: Annotated[str | None, typer.Option("--name", help="Queue name; file is queue/<name>.toml.")] = None,
    skip_missing: SkipMissingOpt = False,
    config: ConfigOpt = None,
    queue: QueueOpt = None,
) -> None:
    """Walk an upstream git range and write a queue file of the commits touching mirrored paths."""
    from porttrack.queue import build as queuebuild

    cfg, path, added = _walk_queue(queuebuild.build, config, skip_missing, rev_range=range_, name=name, queue=queue)
    out.print(f"wrote {path}: {_plural(added, 'entry', 'entries')}", markup=False, soft_wrap=True)
    if skip_missing:
        _unreadable_note(path)
    qrel = _rel(path, cfg.port_root)
    qarg = _queue_arg(None if _default_queue(cfg) == path.resolve() else path, qrel)
    if added:
        _next(f"porttrack audit{qarg}")
    else:
        out.print(
            f"no commit of the range touches [upstream] paths {', '.join(cfg.upstream_paths) or '(all)'}: "
            "check the range and the paths.",
            markup=False,
            soft_wrap=True,
        )
        _next(f"porttrack queue refresh --queue {qrel} (once upstream has moved)")


def _default_queue(cfg) -> Path | None:
    """The queue a command without --queue reads now, or None when that would be ambiguous."""
    from porttrack import config as config_mod

    try:
        return config_mod.queue_path(cfg, None).resolve()
    except UserError:
        return None


@queue_app.command("refresh")
def queue_refresh(
    target: Annotated[str | None, typer.Option("--target", help="New target (default: upstream HEAD).")] = None,
    skip_missing: SkipMissingOpt = False,
    config: ConfigOpt = None,
    queue: QueueOpt = None,
) -> None:
    """Append the entries past the queue's recorded target; numbering continues, human edits stay."""
    from porttrack.queue import build as queuebuild

    cfg, path, added = _walk_queue(queuebuild.refresh, config, skip_missing, target=target, queue=queue)
    out.print(
        f"{path}: {_plural(added, 'new entry', 'new entries')}" if added else f"{path}: nothing new",
        markup=False,
        soft_wrap=True,
    )
    if added:
        if skip_missing:
            _unreadable_note(path)
        _next(f"porttrack audit{_queue_arg(queue, _rel(path, cfg.port_root))}")


@queue_app.command("import")
def queue_import(
    reports: Annotated[list[Path], typer.Argument(help="Markdown sync reports, tranche reports or enumerations.")],
    config: ConfigOpt = None,
    queue: QueueOpt = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Read and merge, print what would change, write nothing.")
    ] = False,
) -> None:
    """Create or update a queue from a team's hand-written sync reports (docs/import.md)."""
    from porttrack import config as config_mod
    from porttrack.queue import importer as reportimport

    cfg = config_mod.resolve_config(config)
    result = reportimport.import_reports(cfg, [(p, str(p)) for p in reports], queue=queue, dry_run=dry_run)
    for line in reportimport.render(result, dry_run=dry_run):
        out.print(visible(line), markup=False, soft_wrap=True)
    for w in result.warnings:
        err.print(visible(f"warning: {w}"), markup=False, soft_wrap=True)
    qarg = _queue_arg(queue, _rel(result.queue_path, cfg.port_root))
    if dry_run:
        _next(f"porttrack queue import {' '.join(str(p) for p in reports)}{qarg} (without --dry-run, to write it)")
    else:
        _next(f"porttrack check{qarg}", f"porttrack audit{qarg} (for the entries no report judged)")


@queue_app.command("show")
def queue_show(
    numbers: Annotated[
        list[str] | None, typer.Argument(help="Entries, as --entries takes them: 3 5-9 or 3,5-9 (default: all).")
    ] = None,
    config: ConfigOpt = None,
    queue: QueueOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Print entries with their verdicts, owners, gates and the rule that fired (--json: every field, evidence included)."""
    from porttrack.queue import show

    _, qf, _ = _queue(config, queue)
    entries = show.select(qf.queue, ",".join(numbers) if numbers else None)
    if as_json:
        print_json(show.as_json(entries))
    else:
        out.print(show.table(*sanitized((qf.queue, entries))))


# ---------------------------------------------------------------- probe / audit / report / check / headers


@app.command()
def probe(
    symbols: Annotated[list[str], typer.Argument(help="Symbols (or regexes with --regex).")],
    scope: Annotated[
        list[str] | None,
        typer.Option(
            "--scope",
            help="Paths under the port root: repeat --scope or separate with commas (default: the code scope).",
        ),
    ] = None,
    control: Annotated[str | None, typer.Option("--control", help="Positive control symbol.")] = None,
    regex: Annotated[bool, typer.Option("--regex", help="Treat arguments as regexes (multi-line allowed).")] = False,
    rev: Annotated[str | None, typer.Option("--rev", help="Probe a git revision instead of the working tree.")] = None,
    config: ConfigOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Count symbols in the port with positive controls, code vs raw, and consumers."""
    from porttrack import config as config_mod, probe as probe_mod

    cfg = config_mod.resolve_config(config)
    probes = probe_mod.probe(
        cfg.port_root,
        symbols,
        control=control,
        regex=regex,
        scope=[s for v in scope for s in v.split(",") if s] if scope else cfg.code_scope,  # --scope a,b or repeated
        rev=rev,
        **probe_mod.config_options(cfg),
        progress=_scan_progress(),
    )
    if as_json:
        print_json([p.as_json() for p in probes])
    else:
        for renderable in probe_mod.render(sanitized(probes)):
            out.print(renderable)


def _audit(cfg, qf, qrel: str, entries: str | None):
    """Audit the chosen entries of a loaded queue, each placed at its line, with the scan's progress."""
    from porttrack import audit as audit_mod
    from porttrack.queue import file as queuefile
    from porttrack.queue import show

    return audit_mod.audit(
        cfg,
        qf.queue,
        entries=show.parse_entries(entries, qf.queue),
        where=lambda n: f"{qrel}:{queuefile.line_of(qf, n)}",
        progress=_scan_progress(),
    )


@app.command()
def audit(
    entries: Annotated[str | None, typer.Option("--entries", help="Entry numbers, e.g. 121-160,170.")] = None,
    write: Annotated[bool, typer.Option("--write", help="Record audit verdicts (never over human ones).")] = False,
    config: ConfigOpt = None,
    queue: QueueOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Classify entries by the first-pass rules, with the rule that fired and its evidence."""
    from collections import Counter

    from porttrack import audit as audit_mod
    from porttrack.queue import file as queuefile

    cfg, qf, qrel = _queue(config, queue, lock=write)
    try:
        result = _audit(cfg, qf, qrel, entries)
        if write:
            changed, notes = audit_mod.write(qf, result, qrel)
            queuefile.save(qf)
        else:
            changed, notes = 0, audit_mod.disagreements(result)
    finally:
        queuefile.release(qf)
    ready = audit_mod.actionable(qf.queue)
    if as_json:
        print_json(
            {
                "tree": result.tree,
                "scope": result.scope,
                "written": changed,
                "results": [r.as_json() for r in result.results],
                "disagreements": notes,
                "actionable": [{"entry": n, "blockers": b} for n, b in ready],
                "prepin": result.prepin.as_json(),
                "notices": result.notices,
            }
        )
        return
    for line in result.notices:
        err.print(visible(line), markup=False, soft_wrap=True)
    out.print(audit_mod.table(result))
    for line in result.prepin.summary():
        out.print(visible(line), markup=False, soft_wrap=True)
    for note in notes:
        out.print(visible(note), markup=False, soft_wrap=True)
    for n, blockers in ready:
        out.print(f"entry {n} is actionable now: {', '.join(map(str, blockers))} settled.", markup=False)
    counts = Counter(r.verdict for r in result.results)
    out.print(
        f"{_plural(len(result.results), 'verdict')}: "
        + (", ".join(f"{v} {c}" for v, c in sorted(counts.items())) or "none")
        + f"; probed {result.tree} in {' '.join(result.scope)}",
        markup=False,
        soft_wrap=True,
    )
    qarg = _queue_arg(queue, qrel)
    if write:
        out.print(f"wrote {_plural(changed, 'verdict')} to {qrel}", markup=False, soft_wrap=True)
        _next(f"porttrack report sync{qarg} --out SYNC.md", f"porttrack check{qarg}")
    else:
        out.print(
            f"nothing written; `porttrack audit --write{qarg}` records these verdicts in {qrel} "
            "(a person's verdicts stay).",
            markup=False,
            soft_wrap=True,
        )


@app.command()
def report(
    kind: Annotated[str, typer.Argument(help="sync or deferral")],
    entries: Annotated[str | None, typer.Option("--entries", help="Entry numbers, e.g. 121-160.")] = None,
    out_file: Annotated[Path | None, typer.Option("--out", help="Write the report here (default: stdout).")] = None,
    config: ConfigOpt = None,
    queue: QueueOpt = None,
) -> None:
    """Write the team's sync or deferral report as markdown."""
    from porttrack import paths as pathrules
    from porttrack.outputs import deferral as deferral_mod
    from porttrack.queue import file as queuefile
    from porttrack.outputs import report as report_mod

    if kind not in ("sync", "deferral"):
        raise UserError(f"report kind must be sync or deferral, not {kind!r}.")
    from porttrack.queue import show
    from porttrack.outputs import written

    cfg, qf, qrel = _queue(config, queue)
    chosen = show.select(qf.queue, entries)
    # a written queue is rendered as written: one scan, like check; an unjudged entry needs the rules
    if written.judged(chosen):
        result = written.result(cfg, qf.queue, chosen, _scan_progress())
    else:
        result = _audit(cfg, qf, qrel, entries)
    command = report_mod.command_line(kind, entries, qrel, str(out_file) if out_file else None)
    render = report_mod.sync if kind == "sync" else deferral_mod.deferral
    text = render(
        qf.queue, result, command=command, name=cfg.upstream_name, **({"queue_rel": qrel} if kind == "deferral" else {})
    )
    if out_file is None:
        sys.stdout.write(text)
        return
    pathrules.refuse_irregular(out_file, "report --out")
    if not out_file.parent.is_dir():  # a typo in the folder is not a folder to create
        raise UserError(f"report --out {out_file}: folder {out_file.parent} does not exist; create it first.")
    queuefile.write_atomic(out_file, text)  # names the file when the disk refuses
    out.print(f"wrote {out_file}", markup=False, soft_wrap=True)
    _next(f"porttrack check{_queue_arg(queue, qrel)}")


@app.command()
def check(
    base: Annotated[
        str | None, typer.Option("--base", help="Git ref of the port to compare the queue against.")
    ] = None,
    format: Annotated[str, typer.Option("--format", help="text, json, github, sarif or junit.")] = "text",
    config: ConfigOpt = None,
    queue: QueueOpt = None,
    reanchor: Annotated[
        bool, typer.Option("--reanchor", help="List the imported citations found again, and where they are now.")
    ] = False,
    write: Annotated[
        bool,
        typer.Option("--write", help="With --reanchor: rewrite them in the queue, keeping the old place as history."),
    ] = False,
) -> None:
    """The CI gate: untriaged entries, live gates, stale citations, stale owners. Exit 1 on findings."""
    from porttrack import config as config_mod
    from porttrack.outputs import check as check_mod
    from porttrack.outputs import formats

    if format not in formats.FORMATS:
        raise UserError(f"--format {format!r} is not one of {', '.join(formats.FORMATS)}.")
    if write and not reanchor:
        raise UserError("check --write rewrites re-anchored citations only; pass --reanchor --write.")
    cfg = config_mod.resolve_config(config)
    qpath = config_mod.queue_path(cfg, queue)
    result = _timed_check(cfg, qpath, base)
    if reanchor:
        moved = [r for r in result.reanchors if r.moved]
        for r in result.reanchors:
            err.print(
                f"entry {r.entry} citation {r.index + 1}: {r.old} -> {r.old.rsplit(':', 1)[0]}:{r.line}"
                + (f"-{r.end}" if r.end else "")
                + f" @ {r.tree}",
                markup=False,
                soft_wrap=True,
            )
        if write:
            n = check_mod.reanchor_write(qpath, result.reanchors)
            err.print(
                f"re-anchored {n} citation(s) in {result.queue_path} ({len(moved)} moved); checking again.",
                markup=False,
                soft_wrap=True,
            )
            result = _timed_check(cfg, qpath, base)
        else:
            err.print(
                f"{len(result.reanchors)} citation(s) would be re-anchored ({len(moved)} moved); "
                "pass --write to rewrite them.",
                markup=False,
                soft_wrap=True,
            )
    if format == "text":
        formats.text(result, out)
    else:
        sys.stdout.write(formats.render(result, format))
    raise typer.Exit(result.exit_code)


def _timed_check(cfg: Any, qpath: Path, base: str | None) -> Any:
    """check's result with what it took, for the summary line and junit's `time`."""
    from porttrack.outputs import check as check_mod
    from porttrack.stopwatch import Stopwatch

    watch = Stopwatch()
    result = check_mod.run(cfg, qpath, base=base, progress=_scan_progress(), stage=watch)
    result.stats["seconds"] = round(watch.total, 3)
    return result


@app.command()
def headers(
    config: ConfigOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """List each port file's upstream sources and pins from its provenance header."""
    from porttrack import config as config_mod
    from porttrack.evidence import headers as headers_mod

    cfg = config_mod.resolve_config(config)
    rep = headers_mod.headers_report(cfg.port_root, scan_lines=cfg.header_scan_lines, scopes=cfg.all_scopes)
    if as_json:
        print_json(rep.as_json())
        return
    for line in headers_mod.render_text(rep):
        out.print(line, markup=False, soft_wrap=True)


# ---------------------------------------------------------------- kvref


@validate_app.command("kv")
def validate_kv(
    impl: Annotated[str, typer.Option("--impl", help="Command that starts the port's harness.")],
    as_of: Annotated[
        str | None,
        typer.Option(
            "--as-of",
            help="Upstream semantics to expect (sha prefix or preset); empty: report which the harness matches.",
        ),
    ] = None,
    cases: Annotated[int, typer.Option("--cases", help="Random cases after the edge cases.")] = 200,
    seed: Annotated[int, typer.Option("--seed", help="Seed for the random cases.")] = 0,
    record: Annotated[
        bool,
        typer.Option("--record", help="Write each switch's behavioural evidence into the queue entries of its commit."),
    ] = False,
    queue: QueueOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Drive a port's harness over the conformance protocol and compare with kvref."""
    from porttrack import progress
    from porttrack.validation import behaviour
    from porttrack.validation import validate

    qpath = behaviour.recorded_queue(queue) if record else None  # a bad --queue stops before the harness runs
    validate.require_kvref()  # so does a missing kvref extra
    sent = progress.validate_cases(err)
    try:
        report = validate.validate(impl, as_of or None, cases, seed, detect=as_of == "", progress=sent)
    finally:
        sent.close()
    rec = behaviour.record(qpath, report, report.evidence) if qpath is not None else None
    if as_json:
        data = validate.as_json(report)
        if rec is not None:
            data["recorded"] = {
                "queue": str(rec.queue),
                "written": [list(w) for w in rec.written],
                "unchanged": rec.unchanged,
                "no_entry": rec.no_entry,
                "undetermined": rec.undetermined,
            }
        print_json(data)
    else:
        validate.render(report, out)
        if rec is not None:
            for n, sw, result in rec.written:
                out.print(f"recorded: entry {n} behaviour.result = {result} ({sw}) in {rec.queue}", markup=False)
            out.print(
                f"recorded {len(rec.written)} entries ({rec.unchanged} unchanged); switches with evidence but "
                f"no queue entry: {', '.join(rec.no_entry) or 'none'}",
                markup=False,
            )
            _next(f"porttrack audit --write --queue {rec.queue} (the behaviour rule reads what was recorded)")
    raise typer.Exit(1 if report.failed else 0)


@kvref_app.command("vectors")
def kvref_vectors(
    out_dir: Annotated[Path, typer.Option("--out", help="Folder for the JSON Lines files.")],
    as_of: Annotated[str | None, typer.Option("--as-of", help="Upstream semantics (sha prefix or preset).")] = None,
    cases: Annotated[int, typer.Option("--cases", help="Random cases after the edge cases.")] = 200,
    seed: Annotated[int, typer.Option("--seed", help="Seed for the random cases.")] = 0,
) -> None:
    """Write conformance cases and kvref's answers as JSON Lines files."""
    from porttrack.validation import validate

    for path in validate.write_vectors(out_dir, as_of, cases, seed):
        out.print(f"wrote {path}", markup=False, soft_wrap=True)
    _next("porttrack validate kv --impl HARNESS_COMMAND (docs/protocol.md says what a harness reads and writes)")
