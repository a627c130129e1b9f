"""Deferral records: what a line of the port's comments or docs says it left out, and what it names."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from conftest import commit_files, init_repo
from porttrack import cache as cache_mod
from porttrack.config import DEFERRAL_WORDS
from porttrack.evidence import records


def scan(tmp_path, files: dict[str, str]) -> records.Records:
    root = init_repo(tmp_path / "port")
    commit_files(root, files, "port")
    return records.scan(root, ["src", "docs"], list(DEFERRAL_WORDS))


def test_a_deferral_heading_names_what_its_comment_block_lists(tmp_path):
    recs = scan(
        tmp_path,
        {
            "src/widget.cpp": "// DEFERRED upstream fields, left out here:\n//   - spare_cache\n//   - widget_cap\nint x;\n"
        },
    )
    hit = recs.deferral_for(["widget_cap"], [], {"src/widget.cpp"})
    assert hit is not None and hit[0].where == "src/widget.cpp:1" and hit[1] == "widget_cap"


def test_an_include_line_and_a_file_path_name_no_symbol(tmp_path):
    # the directive below the comment is no part of it, and `widgets/pipeline.py` names a file
    text = (
        "// Ported from: vllm/widgets/pipeline.py. See pipeline.h for the\n"
        "// order and the deferred stubs.\n"
        '#include "vllm/widgets/pipeline.h"\n'
        "#include <vector>\n"
    )
    recs = scan(tmp_path, {"src/widgets/pipeline.cpp": text})
    assert recs.deferrals, "the line with the deferral word is a record"
    assert recs.deferral_for(["_widgets", "_pipeline", "vector"], [], {"src/widgets/pipeline.cpp"}) is None


def _rows(cache: Path) -> list[tuple[str, str]]:
    db = sqlite3.connect(cache_mod.db_path(cache))
    try:
        return db.execute("SELECT key, value FROM kept WHERE kind = 'records'").fetchall()
    finally:
        db.close()


def test_a_clean_trees_records_are_read_back_from_the_cache_until_a_file_changes(tmp_path):
    root = init_repo(tmp_path / "port")
    commit_files(root, {"src/widget.cpp": "// DEFERRED: widget_cap is not ported yet\nint x;\n"}, "port")
    cache = tmp_path / "cache"
    first = records.scan(root, ["src", "docs"], list(DEFERRAL_WORDS), cache_dir=str(cache))
    assert [r.where for r in first.deferrals] == ["src/widget.cpp:1"]
    [(key, value)] = _rows(cache)

    # what is kept is what is read back: a row says another line, so the second scan came from it
    db = sqlite3.connect(cache_mod.db_path(cache))
    kept = json.loads(value)
    kept["deferrals"][0][1] = 2
    db.execute("UPDATE kept SET value = ? WHERE kind = 'records' AND key = ?", (json.dumps(kept), key))
    db.commit()
    db.close()
    again = records.scan(root, ["src", "docs"], list(DEFERRAL_WORDS), cache_dir=str(cache))
    assert [r.where for r in again.deferrals] == ["src/widget.cpp:2"]

    # an edit not yet committed is read from the tree, and nothing of it is kept
    (root / "src/widget.cpp").write_text("int x;\n// omitted: spare_cache\n")
    dirty = records.scan(root, ["src", "docs"], list(DEFERRAL_WORDS), cache_dir=str(cache))
    assert [r.where for r in dirty.deferrals] == ["src/widget.cpp:2"] and "spare_cache" in dirty.deferrals[0].text
    assert len(_rows(cache)) == 1

    # a committed change is another listing: read from the tree and kept beside the first
    commit_files(root, {"src/widget.cpp": "int x;\nint y;\n// not ported: spare_cache\n"}, "edit")
    moved = records.scan(root, ["src", "docs"], list(DEFERRAL_WORDS), cache_dir=str(cache))
    assert [r.where for r in moved.deferrals] == ["src/widget.cpp:3"]
    assert len(_rows(cache)) == 2


def test_a_cached_row_of_the_wrong_shape_is_read_again_from_the_tree(tmp_path):
    root = init_repo(tmp_path / "port")
    commit_files(root, {"src/widget.cpp": "// DEFERRED: widget_cap is not ported yet\nint x;\n"}, "port")
    cache = tmp_path / "cache"
    records.scan(root, ["src"], list(DEFERRAL_WORDS), cache_dir=str(cache))
    [(key, value)] = _rows(cache)
    db = sqlite3.connect(cache_mod.db_path(cache))
    kept = json.loads(value)
    kept["deferrals"][0][1] = "1"
    for planted in (json.dumps(kept), "[]", "{", json.dumps({"deferrals": [], "citations": [[1]]})):
        db.execute("UPDATE kept SET value = ? WHERE kind = 'records' AND key = ?", (planted, key))
        db.commit()
        got = records.scan(root, ["src"], list(DEFERRAL_WORDS), cache_dir=str(cache))
        assert [r.where for r in got.deferrals] == ["src/widget.cpp:1"], planted
    db.close()
