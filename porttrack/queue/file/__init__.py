"""Queue files (docs/design.md §4): load, validate and save them without losing a byte a person wrote.

The tomlkit document is the source of truth: edits go into it key by key, so
comments, spacing and key order elsewhere survive every rewrite. The dataclass
model (`QueueFile.queue`) is rebuilt from the document after each edit.

The package, by what it does to the file: `lines` (which line holds a key, asked of the
text's one source map in porttrack/tomlmap.py), `decode`
(tables into the model, validated), `lock`, `document` (a file in memory), `encode` (the
model into TOML) and `store` (atomic, locked saves).
"""

from porttrack.queue.file.lines import line_of
from porttrack.queue.file.lock import LOCK_WAIT_S, _TEST_HOLD
from porttrack.queue.file.document import QueueFile, edit_entry, load, loads, release
from porttrack.queue.file.encode import (
    append_entries,
    citation_table,
    dumps,
    entry_doc_table,
    entry_table,
    entry_text,
    follow_citations,
    follow_citations_whole,
    new,
    part_table,
    rebuild,
    set_aot,
    set_citation,
    set_entry,
    set_fields,
    set_meta,
    set_tables,
    write_entry_text,
)
from porttrack.queue.file.store import save, write_atomic

__all__ = [
    "LOCK_WAIT_S",
    "_TEST_HOLD",
    "QueueFile",
    "append_entries",
    "citation_table",
    "dumps",
    "edit_entry",
    "entry_doc_table",
    "entry_table",
    "entry_text",
    "follow_citations",
    "follow_citations_whole",
    "line_of",
    "load",
    "loads",
    "new",
    "part_table",
    "rebuild",
    "release",
    "save",
    "set_aot",
    "set_citation",
    "set_entry",
    "set_fields",
    "set_meta",
    "set_tables",
    "write_atomic",
    "write_entry_text",
]
