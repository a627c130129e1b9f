"""Deferral records: what a line of the port's comments or docs says it left out, and what it names."""

from __future__ import annotations


from conftest import commit_files, init_repo
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


def test_a_source_files_bare_name_in_a_record_names_no_symbol(tmp_path):
    """`widget_pool.py:417` says where upstream's code is, not what the record defers: its stem is
    no `WidgetPool`, however the two normalise."""
    cited = "// widget_pool.py:417-419. DEVIATION: a text scan replaces the token gate.\nint a;\n"
    recs = scan(tmp_path / "a", {"src/widget.cpp": cited})
    assert recs.deferrals, "the line with the deferral word is a record"
    assert recs.deferral_for(["WidgetPool"], [], {"src/widget.cpp"}) is None
    named = "// DEVIATION: WidgetPool scans text, not tokens.\nint a;\n"
    recs = scan(tmp_path / "b", {"src/widget.cpp": named})
    assert recs.deferral_for(["WidgetPool"], [], {"src/widget.cpp"}) is not None


def test_a_deferral_inside_a_list_item_speaks_only_to_that_item(tmp_path):
    text = (
        "// PORT NOTES:\n"
        "//   - `spare_cache` is a Python-only knob; it is NOT ported and has no\n"
        "//     C++ equivalent.\n"
        "//   - `widget_cap` is carried as a field, read by the scheduler.\n"
        "int x;\n"
    )
    recs = scan(tmp_path, {"src/widget.cpp": text})
    files = {"src/widget.cpp"}
    hit = recs.deferral_for(["spare_cache"], [], files)
    assert hit is not None and hit[0].where == "src/widget.cpp:2"
    assert recs.deferral_for(["widget_cap"], [], files) is None, "the next item is another field's entry"


def test_a_deferral_heading_lists_its_items_whatever_its_style(tmp_path):
    text = (
        "// ─── DEFERRED upstream fields (never exercised here) ───\n"
        "//   * spare_cache / widget_cap: launch metadata no kernel here reads.\n"
        "//   * cudagraph capture of the builder.\n"
        "int x;\n"
    )
    recs = scan(tmp_path, {"src/widget.cpp": text})
    hit = recs.deferral_for(["widget_cap"], [], {"src/widget.cpp"})
    assert hit is not None and hit[0].where == "src/widget.cpp:1"


def test_a_plain_word_of_a_records_prose_defers_no_one_word_name(tmp_path):
    text = (
        "// NOT PORTED, recorded: the spare offsets of a store spec; the fields are\n"
        "// left out until a caller needs them. widget_cap is deferred too.\n"
        "// DEFERRED: Refresh() and `shrink`, and the ctx.reload hook.\n"
        "int x;\n"
    )
    recs = scan(tmp_path, {"src/widget.cpp": text})
    near = {"src/widget.cpp"}
    assert recs.deferral_for(["_fields_"], [], near) is None  # "the fields are left out" is prose
    assert recs.deferral_for(["widget_cap"], [], near)[1] == "widget_cap"  # a token with `_` is code
    for name in ("refresh", "_shrink", "reload"):  # a call, backticks, a member
        assert recs.deferral_for([name], [], near)[1] == name


def test_omissions_leave_the_deviations_out(tmp_path):
    recs = scan(
        tmp_path,
        {
            "src/widget.cpp": "// DEVIATION: widget_cap is read from the config, not the env.\nint x;\n"
            "// DEFERRED: spare_cache (no second tier yet).\nint y;\n"
        },
    )
    assert [r.deviates for r in recs.deferrals] == [True, False]
    assert recs.deferral_for(["widget_cap"], [], {"src/widget.cpp"}) is not None
    assert recs.omissions().deferral_for(["widget_cap"], [], {"src/widget.cpp"}) is None
    assert recs.omissions().deferral_for(["spare_cache"], [], {"src/widget.cpp"}) is not None
