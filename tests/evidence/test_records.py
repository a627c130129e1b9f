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
