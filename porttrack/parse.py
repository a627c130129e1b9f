"""Which tree-sitter grammar reads which file, with one parser per language per process."""

from __future__ import annotations

import importlib
from functools import cache
from pathlib import PurePosixPath

from tree_sitter import Language, Parser

_SUFFIX_LANG = {
    ".py": "python",
    ".pyi": "python",
    ".c": "c",
    ".h": "cpp",  # the prime user's headers are C++; the C++ grammar reads C headers too
    ".hh": "cpp",
    ".hpp": "cpp",
    ".hxx": "cpp",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".cxx": "cpp",
    ".inl": "cpp",
    ".ipp": "cpp",
    ".cu": "cuda",
    ".cuh": "cuda",
}


def language_for(path: str) -> str | None:
    """The language name for a path by its suffix, or None when no grammar reads it."""
    return _SUFFIX_LANG.get(PurePosixPath(path).suffix.lower())


@cache
def language(name: str) -> Language:
    if name not in ("python", "c", "cpp", "cuda"):
        raise ValueError(f"no grammar for language {name!r}")
    mod = importlib.import_module(f"tree_sitter_{name}")
    return Language(mod.language())


@cache
def parser(name: str) -> Parser:
    return Parser(language(name))
