"""The command line: parse options, call one engine function, render the result.

Each command resolves the config, calls one engine function, and renders what it
returns: a rich table for people, JSON for machines. Nothing here decides anything.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console

from porttrack.errors import UserError

app = typer.Typer(no_args_is_help=True, add_completion=False, help="Track a port against a fast-moving upstream.")
queue_app = typer.Typer(no_args_is_help=True, help="Build, refresh and show queue files.")
validate_app = typer.Typer(no_args_is_help=True, help="Check a port's behaviour against kvref.")
kvref_app = typer.Typer(no_args_is_help=True, help="The KV-cache reference: conformance vectors.")
app.add_typer(queue_app, name="queue")
app.add_typer(validate_app, name="validate")
app.add_typer(kvref_app, name="kvref")

out = Console(highlight=False)
err = Console(stderr=True, highlight=False)

ConfigOpt = Annotated[Optional[Path], typer.Option("--config", help="porttrack.toml to use (default: found upward from here).")]
QueueOpt = Annotated[Optional[Path], typer.Option("--queue", help="Queue file (default: the file named by queue.file in porttrack.toml, or the only queue/*.toml).")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")]


def _bare_as_of(argv: list[str]) -> list[str]:
    # Typer has no optional-value options: a bare `--as-of` (last, or before
    # another option) becomes `--as-of ""`, which `validate kv` reads as "detect".
    out = []
    for i, a in enumerate(argv):
        out.append(a)
        if a == "--as-of" and (i + 1 == len(argv) or argv[i + 1].startswith("-")):
            out.append("")
    return out


def main() -> None:
    sys.argv[1:] = _bare_as_of(sys.argv[1:])
    try:
        rc = app(standalone_mode=False)
    except UserError as e:
        err.print(f"porttrack: {e}", markup=False, soft_wrap=True)
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
    except Exception as e:
        # usage errors (unknown option, missing argument) come through here in non-standalone mode;
        # typer may vendor click, so recognise them by shape rather than by class
        if hasattr(e, "format_message") and hasattr(e, "exit_code"):
            message = e.format_message().strip()
            if message:  # a bare `porttrack` / `porttrack queue` has printed its help already
                err.print(f"porttrack: {message}", markup=False, soft_wrap=True)
            sys.exit(2)
        raise
    sys.exit(rc if isinstance(rc, int) else 0)


def _os_error(e: OSError) -> int:
    """One sentence for an OSError that reached the command line; returns exit code 2."""
    what = e.strerror or str(e) or type(e).__name__
    names = [str(f) for f in (e.filename, e.filename2) if f is not None]
    where = " -> ".join(names)
    err.print(f"porttrack: {where + ': ' if where else ''}{what.rstrip('.')}.", markup=False, soft_wrap=True)
    return 2


def _queue(config: Path | None, queue: Path | None):
    """(config, loaded queue file, queue path relative to the port root) for the queue commands."""
    from porttrack import config as config_mod, queuefile

    cfg = config_mod.resolve_config(config)
    qpath = config_mod.queue_path(cfg, queue)
    return cfg, queuefile.load(qpath), qpath.resolve().relative_to(cfg.port_root.resolve()).as_posix()


def _entries(spec: str | None, queue):
    """--entries as a set of numbers, each range clipped to the queue's highest entry number first,
    so `--entries 1-99999999999` does not build a set of 10^11 numbers."""
    import re

    from porttrack import audit as audit_mod

    top = max((e.n for e in queue.entries), default=0)

    def clip(m: re.Match) -> str:
        lo, hi = int(m[1]), int(m[2])
        return f"{lo}-{max(lo, min(hi, top))}" if hi > top and hi >= lo else m[0]

    return audit_mod.parse_entries(re.sub(r"(\d+)-(\d+)", clip, spec) if spec else spec)


def print_json(data) -> None:
    sys.stdout.write(json.dumps(data, indent=2, default=str, sort_keys=False) + "\n")


# ---------------------------------------------------------------- init / demo


@app.command()
def init(
    root: Annotated[Path, typer.Option("--root", help="Port tree to look at.")] = Path("."),
    upstream: Annotated[Optional[Path], typer.Option("--upstream", help="Upstream checkout to record.")] = None,
    force: Annotated[bool, typer.Option("--force", help="Overwrite an existing porttrack.toml.")] = False,
) -> None:
    """Write a starter porttrack.toml from what the tree shows (header pins, matrices, mirrored dirs)."""
    from porttrack import init as init_mod

    path, notes = init_mod.write_starter(root, upstream=upstream, force=force)
    for note in notes:
        out.print(f"- {note}", markup=False, soft_wrap=True)  # a path or command is never broken across lines
    out.print(f"wrote {path}", markup=False, soft_wrap=True)


@app.command()
def demo(
    out_dir: Annotated[Optional[Path], typer.Option("--out", help="Folder to build the demo in (default: a new temp folder).")] = None,
) -> None:
    """Build the bundled upstream+port example and run queue build, audit, reports and check on it."""
    from porttrack import demo as demo_mod

    result = demo_mod.run_demo(out_dir, console=out)
    raise typer.Exit(result)


# ---------------------------------------------------------------- queue


@queue_app.command("build")
def queue_build(
    range_: Annotated[str, typer.Option("--range", help="Upstream range PIN..TARGET.")],
    name: Annotated[Optional[str], typer.Option("--name", help="Queue name; file is queue/<name>.toml.")] = None,
    config: ConfigOpt = None,
    queue: QueueOpt = None,
) -> None:
    """Walk an upstream git range and write a queue file of the commits touching mirrored paths."""
    from porttrack import config as config_mod, queuebuild

    cfg = config_mod.resolve_config(config)
    path, added = queuebuild.build(cfg, range_, name=name, queue=queue, progress=queuebuild.console_progress(err))
    out.print(f"wrote {path}: {added} entries", markup=False, soft_wrap=True)


@queue_app.command("refresh")
def queue_refresh(
    target: Annotated[Optional[str], typer.Option("--target", help="New target (default: upstream HEAD).")] = None,
    config: ConfigOpt = None,
    queue: QueueOpt = None,
) -> None:
    """Append the entries past the queue's recorded target; numbering continues, human edits stay."""
    from porttrack import config as config_mod, queuebuild

    cfg = config_mod.resolve_config(config)
    path, added = queuebuild.refresh(cfg, target=target, queue=queue, progress=queuebuild.console_progress(err))
    out.print(f"{path}: {added} new entries" if added else f"{path}: nothing new", markup=False, soft_wrap=True)


@queue_app.command("show")
def queue_show(
    numbers: Annotated[Optional[list[int]], typer.Argument(help="Entry numbers (default: all).")] = None,
    config: ConfigOpt = None,
    queue: QueueOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Print entries with their verdicts, gates and evidence."""
    from porttrack import show

    _, qf, _ = _queue(config, queue)
    entries = show.select(qf.queue, numbers or [])
    if as_json:
        print_json(show.as_json(entries))
    else:
        out.print(show.table(qf.queue, entries))


# ---------------------------------------------------------------- probe / audit / report / check / headers


@app.command()
def probe(
    symbols: Annotated[list[str], typer.Argument(help="Symbols (or regexes with --regex).")],
    scope: Annotated[Optional[list[str]], typer.Option("--scope", help="Paths under the port root: repeat --scope or separate with commas (default: the code scope).")] = None,
    control: Annotated[Optional[str], typer.Option("--control", help="Positive control symbol.")] = None,
    regex: Annotated[bool, typer.Option("--regex", help="Treat arguments as regexes (multi-line allowed).")] = False,
    rev: Annotated[Optional[str], typer.Option("--rev", help="Probe a git revision instead of the working tree.")] = None,
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
        progress=probe_mod.console_progress(err),
    )
    if as_json:
        print_json([p.as_json() for p in probes])
    else:
        for renderable in probe_mod.render(probes):
            out.print(renderable)


@app.command()
def audit(
    entries: Annotated[Optional[str], typer.Option("--entries", help="Entry numbers, e.g. 121-160,170.")] = None,
    write: Annotated[bool, typer.Option("--write", help="Record audit verdicts (never over human ones).")] = False,
    config: ConfigOpt = None,
    queue: QueueOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Classify entries by the first-pass rules, with the rule that fired and its evidence."""
    from porttrack import audit as audit_mod, queuefile

    cfg, qf, qrel = _queue(config, queue)
    result = audit_mod.audit(cfg, qf.queue, entries=_entries(entries, qf.queue),
                             where=lambda n: f"{qrel}:{queuefile.line_of(qf, n)}")
    if write:
        changed, notes = audit_mod.write(qf, result, qrel)
        queuefile.save(qf)
    else:
        changed, notes = 0, audit_mod.disagreements(result)
    ready = audit_mod.actionable(qf.queue)
    if as_json:
        print_json({"tree": result.tree, "scope": result.scope, "written": changed,
                    "results": [r.as_json() for r in result.results], "disagreements": notes,
                    "actionable": [{"entry": n, "blockers": b} for n, b in ready],
                    "prepin": result.prepin.as_json()})
        return
    out.print(audit_mod.table(result))
    for line in result.prepin.summary():
        out.print(line, markup=False, soft_wrap=True)
    for note in notes:
        out.print(note, markup=False, soft_wrap=True)
    for n, blockers in ready:
        out.print(f"entry {n} is actionable now: {', '.join(map(str, blockers))} ported.", markup=False)
    out.print(f"probed {result.tree} in {' '.join(result.scope)}" + (f"; wrote {changed} verdicts to {qrel}" if write else ""),
              markup=False, soft_wrap=True)


@app.command()
def report(
    kind: Annotated[str, typer.Argument(help="sync or deferral")],
    entries: Annotated[Optional[str], typer.Option("--entries", help="Entry numbers, e.g. 121-160.")] = None,
    out_file: Annotated[Optional[Path], typer.Option("--out", help="Write the report here (default: stdout).")] = None,
    config: ConfigOpt = None,
    queue: QueueOpt = None,
) -> None:
    """Write the team's sync or deferral report as markdown."""
    from porttrack import audit as audit_mod, queuefile, report as report_mod

    if kind not in ("sync", "deferral"):
        raise UserError(f"report kind must be sync or deferral, not {kind!r}.")
    cfg, qf, qrel = _queue(config, queue)
    result = audit_mod.audit(cfg, qf.queue, entries=_entries(entries, qf.queue),
                             where=lambda n: f"{qrel}:{queuefile.line_of(qf, n)}")
    command = report_mod.command_line(kind, entries, qrel, str(out_file) if out_file else None)
    render = report_mod.sync if kind == "sync" else report_mod.deferral
    text = render(qf.queue, result, command=command, **({"queue_rel": qrel} if kind == "deferral" else {}))
    if out_file is None:
        sys.stdout.write(text)
        return
    try:
        out_file.parent.mkdir(parents=True, exist_ok=True)
        tmp = out_file.with_name(out_file.name + ".tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(out_file)
    except OSError as e:
        raise UserError(f"cannot write report {out_file}: {e.strerror}.") from None
    out.print(f"wrote {out_file}", markup=False, soft_wrap=True)


@app.command()
def check(
    base: Annotated[Optional[str], typer.Option("--base", help="Git ref of the port to compare the queue against.")] = None,
    format: Annotated[str, typer.Option("--format", help="text, json, github, sarif or junit.")] = "text",
    config: ConfigOpt = None,
    queue: QueueOpt = None,
) -> None:
    """The CI gate: untriaged entries, live gates, stale citations, stale owners. Exit 1 on findings."""
    from porttrack import check as check_mod, config as config_mod, formats

    if format not in formats.FORMATS:
        raise UserError(f"--format {format!r} is not one of {', '.join(formats.FORMATS)}.")
    cfg = config_mod.resolve_config(config)
    result = check_mod.run(cfg, config_mod.queue_path(cfg, queue), base=base)
    if format == "text":
        formats.text(result, out)
    else:
        sys.stdout.write(formats.render(result, format))
    raise typer.Exit(result.exit_code)


@app.command()
def headers(
    config: ConfigOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """List each port file's upstream sources and pins from its provenance header."""
    from porttrack import config as config_mod, headers as headers_mod

    cfg = config_mod.resolve_config(config)
    scopes = sorted({s for paths in cfg.scopes.values() for s in paths})
    rep = headers_mod.headers_report(cfg.port_root, scan_lines=cfg.header_scan_lines, scopes=scopes)
    if as_json:
        print_json(rep.as_json())
        return
    for line in headers_mod.render_text(rep):
        out.print(line, markup=False, soft_wrap=True)


# ---------------------------------------------------------------- kvref


@validate_app.command("kv")
def validate_kv(
    impl: Annotated[str, typer.Option("--impl", help="Command that starts the port's harness.")],
    as_of: Annotated[Optional[str], typer.Option("--as-of", help="Upstream semantics to expect (sha prefix or preset); empty: report which the harness matches.", flag_value="", is_flag=False)] = None,
    cases: Annotated[int, typer.Option("--cases", help="Random cases after the edge cases.")] = 200,
    seed: Annotated[int, typer.Option("--seed", help="Seed for the random cases.")] = 0,
    as_json: JsonOpt = False,
) -> None:
    """Drive a port's harness over the conformance protocol and compare with kvref."""
    from porttrack import validate

    report = validate.validate(impl, as_of or None, cases, seed, detect=as_of == "",
                               progress=validate.console_progress(err))
    if as_json:
        print_json(validate.as_json(report))
    else:
        validate.render(report, out)
    raise typer.Exit(1 if report.failed else 0)


@kvref_app.command("vectors")
def kvref_vectors(
    out_dir: Annotated[Path, typer.Option("--out", help="Folder for the JSON Lines files.")],
    as_of: Annotated[Optional[str], typer.Option("--as-of", help="Upstream semantics (sha prefix or preset).")] = None,
    cases: Annotated[int, typer.Option("--cases", help="Random cases after the edge cases.")] = 200,
    seed: Annotated[int, typer.Option("--seed", help="Seed for the random cases.")] = 0,
) -> None:
    """Write conformance cases and kvref's answers as JSON Lines files."""
    from porttrack import validate

    for path in validate.write_vectors(out_dir, as_of, cases, seed):
        out.print(f"wrote {path}", markup=False, soft_wrap=True)
