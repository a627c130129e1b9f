"""The command line: parse options, call one engine function, render the result."""

from __future__ import annotations

import sys

import typer
from rich.console import Console

from porttrack.errors import UserError

app = typer.Typer(no_args_is_help=True, add_completion=False, help="Track a port against a fast-moving upstream.")
err = Console(stderr=True, highlight=False)


def main() -> None:
    try:
        app(standalone_mode=False)
    except UserError as e:
        err.print(f"porttrack: {e}", markup=False)
        sys.exit(2)
