"""Plain command-line values are coerced without pydantic, to the very values typer's own coercion
makes: a differential test over every parameter of every porttrack command."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


from porttrack import cli, cliargs
from tests.conftest import ROOT

# the typer pyproject.toml admits has this module: a typer without it fails here, loudly, not skipped
from typer import _coercion as typer_coercion


def _params():
    """(command path, parameter, click command) for every typer parameter of the app."""
    from typer.main import get_command

    def walk(cmd, path):
        for p in cmd.params:
            if hasattr(p, "type_descriptor"):
                yield f"{path} {p.name}", p, cmd
        for name, sub in sorted(getattr(cmd, "commands", {}).items()):
            yield from walk(sub, f"{path} {name}")

    return list(walk(get_command(cli.app), "porttrack"))


SAMPLES = {
    "str": ["x", "", " a b ", "grüße", "-", "text"],
    "strs": [("a", "b"), (), ("", "x y"), ["c"]],
    "int": [0, 200, "7", " 8 ", "x", "1.5"],
    "bool": [True, False, "true", "0"],
    "path": ["x", "", "./a//b/", "~/q", "-", Path("."), "EXISTING_FILE", "EXISTING_DIR"],
}


def _outcome(runtime, value, param, ctx):
    try:
        got = runtime.coerce(value, param=param, ctx=ctx)
        return ("value", type(got), got)
    except Exception as e:  # noqa: BLE001  # the same error, class and words, is the point
        return ("error", type(e).__name__, getattr(e, "message", str(e)))


def test_every_plain_parameter_coerces_as_typer_does(tmp_path: Path) -> None:
    from typer import core
    from typer._click import Context

    cliargs.install()
    theirs = typer_coercion.build_runtime_param
    assert core.build_runtime_param is not theirs  # the hook is in
    (tmp_path / "f.toml").write_text("")
    (tmp_path / "d").mkdir()
    seen = set()
    for where, param, cmd in _params():
        d = param.type_descriptor
        kind = cliargs.plain_kind(d.annotation, d.parameter_info) if d.file_annotation is None else None
        if kind is None:
            continue
        seen.add(kind)
        ours = core.build_runtime_param(d)
        ctx = Context(cmd)
        for v in [*SAMPLES[kind], param.default]:
            if v == "EXISTING_FILE":
                v = str(tmp_path / "f.toml")
            elif v == "EXISTING_DIR":
                v = str(tmp_path / "d")
            assert _outcome(ours, v, param, ctx) == _outcome(theirs(d), v, param, ctx), (where, v)
    assert seen == {"str", "strs", "int", "bool", "path"}  # every kind met a real parameter


def test_a_path_typer_refuses_is_refused_in_typers_words(tmp_path: Path) -> None:
    """A path parameter that demands an existing file is still checked by typer's own function."""
    from typer._click import Context
    from typer.models import OptionInfo

    d = typer_coercion.resolve_type_descriptor(Path, OptionInfo(exists=True, dir_okay=False))
    assert cliargs.plain_kind(d.annotation, d.parameter_info) == "path"
    from typer import core

    cliargs.install()
    _, param, cmd = next(t for t in _params() if t[1].name == "config")
    ctx = Context(cmd)
    missing, folder = str(tmp_path / "nope.toml"), str(tmp_path)
    for v in (missing, folder):
        ours = _outcome(core.build_runtime_param(d), v, param, ctx)
        assert ours == _outcome(typer_coercion.build_runtime_param(d), v, param, ctx)
        assert ours[0] == "error"


def test_a_command_runs_without_importing_pydantic(tmp_path: Path) -> None:
    """`porttrack check --config …` coerces its options (a path among them) with pydantic never imported."""
    code = (
        "import sys\n"
        "from porttrack.cli import main\n"
        "sys.argv = ['porttrack', 'check', '--config', sys.argv[1], '--format', 'json']\n"
        "try:\n    main()\nexcept SystemExit as e:\n    print('rc', e.code)\n"
        "print('pydantic' in sys.modules)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "none.toml")],
        cwd=tmp_path,
        # a bare environment but for the caller's bytecode settings, so the process writes none into the checkout
        env={
            "PYTHONPATH": str(ROOT),
            "PATH": "/usr/bin:/bin",
            **{k: v for k, v in os.environ.items() if k in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")},
        },
        capture_output=True,
        text=True,
    )
    assert proc.stdout.split() == ["rc", "2", "False"], proc.stderr  # 2: no such config, said in one sentence
    assert "none.toml" in proc.stderr
