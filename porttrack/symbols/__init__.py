"""Symbols of upstream changes: `defs` (what a file defines), `textdiff` (which lines a change
touched) and `extractor` (what each change of a walk adds, changes, removes and uses, cached)."""
