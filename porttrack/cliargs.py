"""Command-line values of plain types coerced without pydantic.

Typer (from 0.2x) coerces every parameter through a pydantic TypeAdapter. Importing pydantic and
building the adapters costs about 0.13 s of CPU in every run, a quarter of a warm `porttrack
check` (docs/performance.md, "cold path"). porttrack's parameters are strings, paths, flags,
numbers and lists of strings. For a string the adapter returns the string, for a path what
typer's own path check returns, made a Path, for a list of strings a list of them, and for a
default number or flag the value itself; `install()` does just that here, and leaves the rest
(a number or a flag given as text, a constrained path, a choice) to typer. A typer without that
hook (older versions, which never used pydantic) is left as it is.
"""

from __future__ import annotations

import typing
from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any


def plain_kind(annotation: Any, info: Any) -> str | None:
    """The kind of a parameter coerced here ("str", "path", "strs", "int", "bool"), else None:
    typer's own coercion. (Typer hands over `X | None` as `X`; None never reaches a coercion.)"""
    if getattr(info, "parser", None) is not None:
        return None
    if annotation is Path:
        # typer's own checks (exists, readable, a file or a folder), by typer's own function
        plain = getattr(info, "path_type", None) is None and not getattr(info, "allow_dash", False)
        return "path" if plain else None
    if typing.get_origin(annotation) is list and typing.get_args(annotation) == (str,):
        return "strs"
    if annotation is int and getattr(info, "min", None) is None and getattr(info, "max", None) is None:
        return "int"
    return {str: "str", bool: "bool"}.get(annotation)


def coerce(kind: str, value: Any, info: Any, param: Any, ctx: Any) -> tuple[bool, Any]:
    """(True, the value as typer's pydantic adapter makes it), or (False, None) where typer's own
    coercion must decide (a number or a flag given as text, for its messages)."""
    if kind == "str" and type(value) is str:
        return True, value
    if kind == "strs" and isinstance(value, (tuple, list)) and all(type(v) is str for v in value):
        return True, list(value)
    if (kind == "int" and type(value) is int) or (kind == "bool" and type(value) is bool):
        return True, value
    if kind == "path" and isinstance(value, (str, Path)):
        from typer._param_types import coerce_cli_path

        # the text itself is checked, as typer does, and named in its messages; then made a Path
        checked = coerce_cli_path(value, info, path_type=None, param=param, ctx=ctx)
        return True, Path(checked) if isinstance(checked, str) else checked
    return False, None


def install() -> None:
    """Route typer's coercion of plain parameters through `coerce`, once."""
    try:
        from typer import _coercion, _param_types, core
    except ImportError:  # a typer without pydantic adapters: nothing to avoid
        return
    found = getattr(core, "build_runtime_param", None)
    base = getattr(_coercion, "RuntimeParam", None)
    if found is None or base is None or getattr(found, "porttrack", False):
        return
    # the hook as this module knows it; a typer that changed it keeps its own coercion
    if (
        not hasattr(_param_types, "coerce_cli_path")
        or getattr(base, "__abstractmethods__", None) != frozenset({"_coerce_value"})
        or {f.name for f in fields(base)} != {"parameter_info", "annotation"}
    ):
        return
    typers_own: Callable[[Any], Any] = found

    @dataclass(frozen=True)
    class Plain(base):  # type: ignore[misc, valid-type]
        kind: str = "str"
        descriptor: Any = None

        def _coerce_value(self, value: Any, param: Any, ctx: Any) -> Any:
            done, out = coerce(self.kind, value, self.parameter_info, param, ctx)
            if done:
                return out
            return typers_own(self.descriptor)._coerce_value(value, param=param, ctx=ctx)

    def build(descriptor: Any) -> Any:
        kind = (
            None
            if descriptor.file_annotation is not None
            else plain_kind(descriptor.annotation, descriptor.parameter_info)
        )
        if kind is None:
            return typers_own(descriptor)
        return Plain(
            parameter_info=descriptor.parameter_info, annotation=descriptor.annotation, kind=kind, descriptor=descriptor
        )

    build.porttrack = True  # type: ignore[attr-defined]
    core.build_runtime_param = build
