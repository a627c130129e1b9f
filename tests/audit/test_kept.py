"""What audit reads from the whole port, kept in the cache for a clean tree (porttrack/audit/kept.py)."""

from __future__ import annotations

import functools
import json
import sqlite3
from pathlib import Path

from audit_pair import FREED_TWICE, PORT_FREED, edit, pair
from conftest import commit_files, init_repo, run_cli
from porttrack import cache as cache_mod
from porttrack.audit import kept as kept_mod
from porttrack.config import DEFERRAL_WORDS, Config
from porttrack.evidence import echoes, records


def _kinds() -> dict[str, int]:
    db = sqlite3.connect(cache_mod.db_path(None))
    try:
        return dict(db.execute("SELECT kind, count(*) FROM kept GROUP BY kind").fetchall())
    finally:
        db.close()


def _port_config(tmp_path) -> Config:
    root = init_repo(tmp_path / "port")
    commit_files(root, {"src/a.cpp": "// Frees each block once.\nint free_block(int b) { return b; }\n"}, "port")
    return Config(None, port_root=root, cache_dir=str(tmp_path / "cache"))


def test_a_value_is_kept_for_a_clean_tree_and_for_no_other(tmp_path):
    cfg = _port_config(tmp_path)
    words = {"free_block", "int"}
    assert kept_mod.Kept(cfg).get(kept_mod.WORDS) is None
    kept_mod.Kept(cfg).put(kept_mod.WORDS, words)
    assert kept_mod.Kept(cfg).get(kept_mod.WORDS) == words  # another run of the same tree reads it back

    (cfg.port_root / "src/b.cpp").write_text("int more;\n")  # untracked: the tree is read again
    dirty = kept_mod.Kept(cfg)
    assert dirty.get(kept_mod.WORDS) is None
    dirty.put(kept_mod.WORDS, {"more"})
    assert kept_mod.Kept(cfg).get(kept_mod.WORDS) is None

    commit_files(cfg.port_root, {"src/b.cpp": "int more;\n"}, "more")  # another listing, another key
    assert kept_mod.Kept(cfg).get(kept_mod.WORDS) is None


def test_a_kept_value_of_the_wrong_shape_is_no_value(tmp_path):
    cfg = _port_config(tmp_path)
    k = kept_mod.Kept(cfg)
    key = k._key(kept_mod.TOKENS, ())
    for planted in (b"{", b"[]", json.dumps({"src/a.cpp": [1]}).encode(), json.dumps({"src/a.cpp": "ab"}).encode()):
        cache_mod.keep(kept_mod.TOKENS.name, key, planted, cfg.cache_dir)
        assert kept_mod.Kept(cfg).get(kept_mod.TOKENS) is None, planted


def test_the_comment_index_reads_back_as_it_was_built():
    files = [("src/a.cpp", "// A request freed twice must not hand its blocks back.\nint x;\n"), ("src/b.py", "# b\n")]
    built = echoes.Index(files)
    back = echoes.Index.load(built.dump())
    window = ("a", "request", "freed", "twice", "must", "not", "hand", "its")
    assert back is not None and back.find(window) == built.find(window) == ("src/a.cpp", 1)
    data = built.dump()
    head = data.partition(b"\n")[0]
    uneven = data.replace(head, head.replace(b'"counts": [', b'"counts": [1, '))
    for bad in (b"", b"{}\n", data[:-4], data[:-1], b"x" + data, data.replace(b'"src/a.cpp"', b"7"), uneven):
        assert echoes.Index.load(bad) is None, bad[:40]


def test_a_warm_audit_reads_the_port_from_the_cache_and_a_changed_port_from_the_tree(tmp_path, monkeypatch):
    """`echoed` finds the port's copy of an upstream comment. The second audit of the same tree reads
    the comment index back from the cache: planting an empty one there hides the copy. A file added to
    the port, not yet committed, makes the tree one the cache says nothing of, and it is read again."""
    # a cache of its own: another test's port of the same files has the same key, and reads what is planted
    monkeypatch.setenv("PORTTRACK_CACHE_DIR", str(tmp_path / "cache"))
    port, r = pair(tmp_path, [("[Core] Free once", edit(*FREED_TWICE))], port_sched=PORT_FREED)
    assert r["[Core] Free once"]["rule"] == "echoed", r["[Core] Free once"]
    assert {"port-comments", "records"} <= set(_kinds())

    def audit() -> dict:
        data = json.loads(run_cli("audit", "--json", cwd=port, check_rc=0).stdout)
        return next(x for x in data["results"] if x["part"] is None)

    assert audit() == r["[Core] Free once"]  # warm: the same verdict and evidence, word for word
    db = sqlite3.connect(cache_mod.db_path(None))
    db.execute("UPDATE kept SET value = ? WHERE kind = 'port-comments'", (echoes.Index([]).dump(),))
    db.commit()
    db.close()
    assert audit()["rule"] != "echoed"  # what is kept is what the warm audit read

    (port / "src/core/extra.cpp").write_text("int extra;\n")
    assert audit()["rule"] == "echoed"


def _rows(cache: Path) -> list[tuple[str, str]]:
    db = sqlite3.connect(cache_mod.db_path(cache))
    try:
        return db.execute("SELECT key, value FROM kept WHERE kind = 'records'").fetchall()
    finally:
        db.close()


def _records(root: Path, cache: Path) -> records.Records:
    """The port's records as audit reads them: kept for a clean tree, else read from it."""
    cfg = Config(None, port_root=root, cache_dir=str(cache))
    k, words = kept_mod.Kept(cfg), list(DEFERRAL_WORDS)
    read = functools.partial(records.scan, root, k.folders(kept_mod.RECORDS), words)
    return k.get_or_read(kept_mod.RECORDS, read, *words)


def test_a_clean_trees_records_are_read_back_from_the_cache_until_a_file_changes(tmp_path):
    root = init_repo(tmp_path / "port")
    commit_files(root, {"src/widget.cpp": "// DEFERRED: widget_cap is not ported yet\nint x;\n"}, "port")
    cache = tmp_path / "cache"
    first = _records(root, cache)
    assert [r.where for r in first.deferrals] == ["src/widget.cpp:1"]
    [(key, value)] = _rows(cache)

    # what is kept is what is read back: a row says another line, so the second scan came from it
    db = sqlite3.connect(cache_mod.db_path(cache))
    row = json.loads(value)
    row["deferrals"][0][1] = 2
    db.execute("UPDATE kept SET value = ? WHERE kind = 'records' AND key = ?", (json.dumps(row), key))
    db.commit()
    db.close()
    again = _records(root, cache)
    assert [r.where for r in again.deferrals] == ["src/widget.cpp:2"]

    # an edit not yet committed is read from the tree, and nothing of it is kept
    (root / "src/widget.cpp").write_text("int x;\n// omitted: spare_cache\n")
    dirty = _records(root, cache)
    assert [r.where for r in dirty.deferrals] == ["src/widget.cpp:2"] and "spare_cache" in dirty.deferrals[0].text
    assert len(_rows(cache)) == 1

    # a committed change is another listing: read from the tree and kept beside the first
    commit_files(root, {"src/widget.cpp": "int x;\nint y;\n// not ported: spare_cache\n"}, "edit")
    moved = _records(root, cache)
    assert [r.where for r in moved.deferrals] == ["src/widget.cpp:3"]
    assert len(_rows(cache)) == 2


def test_a_cached_row_of_the_wrong_shape_is_read_again_from_the_tree(tmp_path):
    root = init_repo(tmp_path / "port")
    commit_files(root, {"src/widget.cpp": "// DEFERRED: widget_cap is not ported yet\nint x;\n"}, "port")
    cache = tmp_path / "cache"
    _records(root, cache)
    [(key, value)] = _rows(cache)
    db = sqlite3.connect(cache_mod.db_path(cache))
    row = json.loads(value)
    row["deferrals"][0][1] = "1"
    for planted in (json.dumps(row), "[]", "{", json.dumps({"deferrals": [], "citations": [[1]]})):
        db.execute("UPDATE kept SET value = ? WHERE kind = 'records' AND key = ?", (planted, key))
        db.commit()
        got = _records(root, cache)
        assert [r.where for r in got.deferrals] == ["src/widget.cpp:1"], planted
    db.close()
