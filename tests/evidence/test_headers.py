"""Provenance headers: every variant of docs/design.md §9.1, the upstream→port map, and `porttrack headers`."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, strategies as st

from conftest import commit_files, git, init_repo, run_cli
from porttrack.evidence.headers import comment_lines, headers_report, parse_header, scan_headers, upstream_map
import os


def srcs(text: str, path: str = "src/x.cpp", **kw):
    return [(s.upstream, s.pin, s.qualifier) for s in parse_header(path, text, **kw).sources]


def test_canonical():
    assert srcs("// Ported from: vllm/config/scheduler.py @ e24d1b24\n#include <x>\n") == [
        ("vllm/config/scheduler.py", "e24d1b24", "")
    ]


def test_trailing_note_after_the_pin_is_not_a_source():
    text = "// Ported from: tests/tool_parsers/test_x.py @ e24d1b24 - the SAME cases as vllm/other.py\n"
    assert srcs(text) == [("tests/tool_parsers/test_x.py", "e24d1b24", "")]


def test_line_and_symbol_qualifiers():
    assert srcs("// Ported from: vllm/a/b.py:225-420 @ e24d1b24\n") == [("vllm/a/b.py", "e24d1b24", ":225-420")]
    assert srcs("// Ported from: vllm/a/b.py::split_decodes @ e24d1b24\n") == [
        ("vllm/a/b.py", "e24d1b24", "::split_decodes")
    ]
    assert srcs("// Ported from: vllm/a/b.py:204-236,387-400 @ e24d1b24\n") == [
        ("vllm/a/b.py", "e24d1b24", ":204-236,387-400")
    ]


@pytest.mark.parametrize("sep", [" + ", ", ", " and "])
def test_several_sources_on_one_line(sep):
    text = f"// Ported from: vllm/v1/engine/core.py{sep}vllm/v1/utils.py @ e24d1b24\n"
    assert srcs(text) == [("vllm/v1/engine/core.py", "e24d1b24", ""), ("vllm/v1/utils.py", "e24d1b24", "")]


def test_one_source_per_line_under_a_bare_label():
    text = (
        "// Ported from:\n"
        "//   vllm/model_executor/layers/attention/attention.py:204-236,387-400\n"
        "//   vllm/v1/attention/backends/flash_attn.py:255-300\n"
        "// @ e24d1b24fe96.\n"
        '#include "x.h"\n'
    )
    assert srcs(text) == [
        ("vllm/model_executor/layers/attention/attention.py", "e24d1b24fe96", ":204-236,387-400"),
        ("vllm/v1/attention/backends/flash_attn.py", "e24d1b24fe96", ":255-300"),
    ]


def test_path_split_over_two_lines():
    text = (
        "// Ported from:\n"
        "//   vllm/model_executor/layers/rotary_embedding/\n"
        "//   phi3_long_rope_scaled_rope.py:16-159\n"
        "// @ e24d1b24fe96.\n"
    )
    assert srcs(text) == [
        ("vllm/model_executor/layers/rotary_embedding/phi3_long_rope_scaled_rope.py", "e24d1b24fe96", ":16-159")
    ]
    # the same split in a one-line statement with the label in front
    text = "// REIMPLEMENTED FROM WIRE FORMAT: vllm/parser/x.py + vllm/tool_parsers/\n// gemma4_utils.py @ e24d1b24.\n"
    assert srcs(text) == [("vllm/parser/x.py", "e24d1b24", ""), ("vllm/tool_parsers/gemma4_utils.py", "e24d1b24", "")]
    # split before the extension: the name ends one line, ".py @ pin" opens the next
    text = "// Reimplemented from the WIRE FORMAT of: vllm/tool_parsers/wire_tool_parser\n// .py @ e24d1b24 (notes).\n"
    assert srcs(text) == [("vllm/tool_parsers/wire_tool_parser.py", "e24d1b24", "")]
    # prose that merely opens with a dotted word is not an extension of the path before it
    text = "// Ported from: vllm/a/b.py @ e24d1b24 and vllm/a/c\n// .github is not a source.\n"
    assert [s[0] for s in srcs(text)] == ["vllm/a/b.py"]


@pytest.mark.parametrize("run", ["a/" * 50_000, "a-" * 50_000, "a." * 50_000, ".a" * 50_000, "a" * 100_000])
def test_a_hostile_run_of_path_characters_is_read_once_not_once_per_character(run):
    # A path starts only where a token starts. Tried from every character of a 100,000-character
    # run, the old patterns rescanned the rest of the run each time: minutes for this line, hours
    # for a megabyte. Now each file's comments cost time in proportion to their length.
    text = f"// Ported from: {run} vllm/x.py @ e24d1b24\n// {run} y.cpp original\n"
    assert srcs(text)[-1] == ("vllm/x.py", "e24d1b24", "")
    prov = parse_header("src/x.cpp", "\n" * 45 + text)
    assert [s.upstream for s in prov.symbol_lines][-1] == "vllm/x.py"


def test_a_statement_of_many_pinless_sources_takes_the_one_pin_after_them():
    # the next pin is looked for once, not again after each source
    many = " + ".join(f"vllm/m{i}.py" for i in range(20_000))
    got = srcs(f"// Ported from: {many} @ e24d1b24\n")
    assert len(got) == 20_000 and {pin for _, pin, _ in got} == {"e24d1b24"}
    got = srcs(f"// Ported from: {many}\n")
    assert len(got) == 20_000 and {pin for _, pin, _ in got} == {""}


def test_a_path_inside_a_longer_token_is_not_a_source():
    assert srcs("// Ported from: https://example.com/vllm/x.py @ e24d1b24\n") == []
    assert srcs("// Ported from: (vllm/x.py) @ e24d1b24\n") == [("vllm/x.py", "e24d1b24", "")]


def test_pin_forms():
    assert srcs("// Ported from: vllm/a.py @ pin e24d1b24\n")[0][1] == "e24d1b24"
    assert srcs("// Ported from: vllm/a.py @ `e24d1b24fe96`\n")[0][1] == "e24d1b24fe96"
    full = "e24d1b24fe96a56ba8b0d653efa076d03eb95d6c"
    assert srcs(f"// Ported from vllm/m/qwen3_5_mtp.py @\n// {full}.\n")[0] == ("vllm/m/qwen3_5_mtp.py", full, "")
    assert srcs("// Ported from: vllm/a.py\n") == [("vllm/a.py", "", "")]  # unpinned


def test_faithful_port_of():
    text = "// Faithful port of vllm/platforms/cpu.py (CpuWidgetPlatform) @ pin e24d1b24 — the CPU\n"
    assert srcs(text) == [("vllm/platforms/cpu.py", "e24d1b24", "(CpuWidgetPlatform)")]


def test_test_files_and_vllm_tests_normalised():
    assert srcs("// Ports tests/reasoning/test_x.py @ e24d1b24\n", "tests/t.cpp") == [
        ("tests/reasoning/test_x.py", "e24d1b24", "")
    ]
    assert srcs("// Ported from: vllm/tests/v1/core/test_a.py @ e24d1b24\n", "tests/t.cpp") == [
        ("tests/v1/core/test_a.py", "e24d1b24", "")
    ]
    # "Ports" followed by prose is no statement
    assert srcs("// Ports the NON-STREAMING extract_tool_calls and more\n") == []


def test_reimplemented_from_wire_format():
    p = parse_header("include/t.h", "// REIMPLEMENTED FROM WIRE FORMAT: vllm/parser/gemma4.py @ e24d1b24.\n")
    assert p.reimplemented and p.kind == "reimplemented"
    assert [s.upstream for s in p.sources] == ["vllm/parser/gemma4.py"]
    p = parse_header("include/t.h", "// Reimplemented from the WIRE FORMAT of vllm/tool_parsers/a.py @ e24d1b24.\n")
    assert p.kind == "reimplemented" and p.sources[0].pin == "e24d1b24"
    assert parse_header("a.h", "// REIMPLEMENTED-FROM-WIRE-FORMAT vllm/x.py @ abcdef1\n").kind == "reimplemented"


@pytest.mark.parametrize(
    "text",
    [
        "// vllm.cpp original (vt runtime); no upstream mirror.\n",
        "// vllm.cpp ORIGINAL; see qwen3_5_gguf_weights.h. GGUF names\n",
        "// Byte storage helper.\n// A serving-boundary helper (no direct upstream mirror).\n",
    ],
)
def test_explicit_originals(text):
    p = parse_header("src/o.cpp", text)
    assert p.original and p.kind == "original" and p.sources == []


def test_cpp_inherits_its_header(tmp_path):
    (tmp_path / "include/vllm/v1").mkdir(parents=True)
    (tmp_path / "src/vllm/v1").mkdir(parents=True)
    (tmp_path / "include/vllm/v1/kv.h").write_text("// Ported from: vllm/v1/kv.py @ e24d1b24\n#pragma once\n")
    (tmp_path / "src/vllm/v1/kv.cpp").write_text(
        '// See include/vllm/v1/kv.h for scope and deviations.\n#include "kv.h"\n'
    )
    provs = {p.path: p for p in scan_headers(tmp_path)}
    cpp = provs["src/vllm/v1/kv.cpp"]
    assert cpp.kind == "inherits" and cpp.inherits == "include/vllm/v1/kv.h"
    assert upstream_map(provs.values()) == {"vllm/v1/kv.py": ["include/vllm/v1/kv.h", "src/vllm/v1/kv.cpp"]}


def test_body_level_lines_are_symbol_provenance():
    text = (
        "// Ported from: vllm/a.py @ e24d1b24\n"
        + "int x;\n" * 50
        + "// Ported from: vllm/entrypoints/openai/engine/protocol.py:331 (DeltaToolCall).\n"
    )
    p = parse_header("include/p.h", text)
    assert [s.upstream for s in p.sources] == ["vllm/a.py"]
    assert [(s.upstream, s.qualifier, s.line) for s in p.symbol_lines] == [
        ("vllm/entrypoints/openai/engine/protocol.py", ":331", 52)
    ]


def test_every_label_form_is_found_in_the_body_whatever_its_case():
    # the body is read only when the text holds a word every label needs: each form must still be found
    forms = [
        "Ported from: vllm/b.py",
        "PORTED  FROM vllm/b.py",
        "Faithful 1:1 port of vllm/b.py",
        "faithful ports of vllm/b.py",
        "Upstream: vllm/b.py",
        "Grounding: vllm/b.py @ e24d1b24",
        "Ports vllm/b.py",
        "REIMPLEMENTED-FROM-WIRE-FORMAT of vllm/b.py",
    ]
    for form in forms:
        text = "int x;\n" * 45 + f"/* {form} */\n"
        assert [s.upstream for s in parse_header("src/p.cpp", text).symbol_lines] == ["vllm/b.py"], form
    assert parse_header("src/p.cpp", "int x;\n" * 45 + "// nothing here names a source\n").symbol_lines == []


def test_hash_comments_and_scan_limit():
    assert srcs("#!/bin/sh\n# Ported from: tools/x.sh @ abcdef12\n", "scripts/x.sh") == [("tools/x.sh", "abcdef12", "")]
    assert srcs("# Ported from: vllm/a.py @ abcdef12\n", "kvref/a.py") == [("vllm/a.py", "abcdef12", "")]
    late = "\n" * 45 + "// Ported from: vllm/a.py @ abcdef12\n"
    assert srcs(late) == []
    assert srcs(late, scan_lines=50) == [("vllm/a.py", "abcdef12", "")]


def test_block_comments():
    text = "/*\n * Ported from: vllm/csrc/cache_kernels.cu @ e24d1b24\n */\n"
    assert srcs(text, "src/k.cu") == [("vllm/csrc/cache_kernels.cu", "e24d1b24", "")]


def test_headers_command_lists_sources_unpinned_and_port_commit_pins(tmp_path):
    port = init_repo(tmp_path / "port")
    first = commit_files(port, {"README.md": "port\n"}, "init")
    commit_files(
        port,
        {
            "porttrack.toml": '[port]\nscopes = { code = ["src", "include"], tests = ["tests"] }\n',
            "include/a.h": "// Ported from: vllm/a.py @ e24d1b24\n",
            "src/a.cpp": "// See include/a.h.\n",
            "src/b.cpp": "// Ported from: vllm/b.py\n",
            "src/c.cpp": f"// Ported from: vllm/c.py @ {first[:10]}\n",
            "src/o.cpp": "// vllm.cpp original; no upstream mirror.\n",
            "src/w.cpp": "// REIMPLEMENTED FROM WIRE FORMAT: vllm/w.py @ e24d1b24\n",
        },
        "port",
    )
    rep = headers_report(port, scopes=["src", "include"])
    assert rep.counts["ported"] == 4 and rep.counts["original"] == 1 and rep.counts["reimplemented"] == 1
    assert [(p, s.upstream) for p, s in rep.unpinned] == [("src/b.cpp", "vllm/b.py")]
    assert rep.port_pins == {first[:10]: first}

    proc = run_cli("headers", "--json", cwd=port, check_rc=0)
    data = json.loads(proc.stdout)
    by = {f["path"]: f for f in data["files"]}
    assert by["src/a.cpp"]["sources"][0]["upstream"] == "vllm/a.py"
    assert data["unpinned"] == [{"path": "src/b.cpp", "upstream": "vllm/b.py", "line": 1}]
    assert data["port_commit_pins"] == {first[:10]: first}
    text = run_cli("headers", cwd=port, check_rc=0).stdout
    assert "src/b.cpp" in text and "no pin" in text and first[:10] in text


def test_real_tree_forms():
    # "at <sha>" on its own line, "+ more" continuing, an UPSTREAM label with a note, prose "Upstream:" ignored
    text = "// Ported from:\n//   vllm/tests/models/test_registry.py:31-103,151-159\n// at e24d1b24fe96a56ba8b0d653efa076d03eb95d6c.\n"
    assert srcs(text, "tests/t.cpp") == [
        ("tests/models/test_registry.py", "e24d1b24fe96a56ba8b0d653efa076d03eb95d6c", ":31-103,151-159")
    ]
    text = "// Ported from vllm/v1/worker/gpu/input_batch.py::combine_tokens\n// + _combine_kernel @ e24d1b24 (T0 subset).\n"
    assert srcs(text) == [("vllm/v1/worker/gpu/input_batch.py", "e24d1b24", "::combine_tokens")]
    text = "// UPSTREAM (ported FROM, ground-every-impl rule):\n//   vllm/model_executor/layers/linear.py:141-181  class LinearMethodBase\n"
    assert srcs(text) == [("vllm/model_executor/layers/linear.py", "", ":141-181")]
    assert srcs("  // Upstream: block_hash + group_idx (base.py:35-37). Our\n") == []
    assert srcs("// (Upstream: vllm/model_executor/models/mistral.py @ e24d1b24 — literally\n") == [
        ("vllm/model_executor/models/mistral.py", "e24d1b24", "")
    ]


_LINE = st.sampled_from(["// a", "/* b", "c */", "x = 1", "# d", "", '"""e'])
_BREAK = st.sampled_from(["\n", "\r\n", "\r", "\x0c", "\u2028", "\n\n"])


@given(
    text=st.lists(st.tuples(_LINE, _BREAK), max_size=12).map(lambda ls: "".join(a + b for a, b in ls)),
    suffix=st.sampled_from([".cpp", ".py"]),
    limit=st.integers(0, 8),
)
def test_the_head_is_read_as_the_whole_file_would_be(text, suffix, limit):
    # comment_lines splits only the first `limit` lines; what it gives must be what the whole split gives
    whole = [c for c in comment_lines(text, suffix, None) if c[0] <= limit]
    assert comment_lines(text, suffix, limit) == whole


def test_links_out_of_the_root_are_not_read_and_skipped_files_are_counted(tmp_path):
    outside = tmp_path / "secret.cpp"
    outside.write_text("// Ported from: vllm/secret.py @ e24d1b24\n")
    port = init_repo(tmp_path / "port")
    commit_files(
        port,
        {
            "porttrack.toml": '[port]\nscopes = { code = ["src"], tests = ["tests"] }\n',
            "src/a.cpp": "// Ported from: vllm/a.py @ e24d1b24\n",
            "src/inside.cpp": "// Ported from: vllm/inside.py @ e24d1b24\n",
        },
        "port",
    )
    os.symlink(outside, port / "src/out.cpp")
    os.symlink(port / "src/inside.cpp", port / "src/alias.cpp")  # a link inside the root is fine
    (port / "src/latin1.cpp").write_bytes(b"// Ported from: vllm/l.py @ e24d1b24\n// M\xfcller\n")

    skipped: list[str] = []
    provs = scan_headers(port, scopes=["src"], skipped=skipped)
    assert [p.path for p in provs] == ["src/a.cpp", "src/alias.cpp", "src/inside.cpp"]
    assert skipped == ["src/latin1.cpp", "src/out.cpp"]
    rep = headers_report(port, scopes=["src"])
    assert rep.counts["skipped"] == 2 and rep.counts["ported"] == 3

    data = json.loads(run_cli("headers", "--json", cwd=port, check_rc=0).stdout)
    assert "vllm/secret.py" not in json.dumps(data)
    assert data["skipped"] == ["src/latin1.cpp", "src/out.cpp"]
    text = run_cli("headers", cwd=port, check_rc=0).stdout
    assert "src/out.cpp" in text and "skipped 2" in text


def test_real_tree_faithful_1_1_port_and_grounding_statements():
    from porttrack.evidence.headers import parse_header

    def srcs(text):
        return [(s.upstream, s.pin, s.qualifier) for s in parse_header("include/x.h", text).sources]

    # include/vllm/platforms/interface.h of mudler/vllm.cpp: "1:1" before "port of", the pin on the next line
    assert srcs(
        "// Faithful 1:1 port of vllm/platforms/interface.py:134-229 (class Platform) @\n"
        "// pin e24d1b24 — the device-capability / memory-model seam. See\n"
    ) == [("vllm/platforms/interface.py", "e24d1b24", ":134-229")]
    # the model files: "Grounding: <upstream path> @ <pin>"
    assert srcs(
        "// Olmo2 attention block.\n// Grounding: vllm/model_executor/models/olmo2.py @ e24d1b24 — Olmo2Attention\n"
    ) == [("vllm/model_executor/models/olmo2.py", "e24d1b24", "")]
    assert parse_header("a.cpp", "// Grounding the design in practice: see the notes.\n").kind == "none"


def test_a_clean_file_is_parsed_once_per_version_and_a_changed_one_is_read_again(tmp_path):
    import sqlite3

    from porttrack import cache

    port, cache_dir = init_repo(tmp_path / "port"), str(tmp_path / "cache")
    commit_files(
        port,
        {
            "include/kv.h": "// Ported from: vllm/v1/kv.py @ e24d1b24\n#pragma once\n",
            "src/kv.cpp": '// See include/kv.h\n#include "kv.h"\n',
            "src/pool.cpp": "// Ported from: vllm/v1/pool.py @ e24d1b24\n",
        },
        "port",
    )

    def scan():
        return {p.path: p for p in scan_headers(port, scopes=["src", "include"], cached=True, cache_dir=cache_dir)}

    def sources(provs):
        return {path: [(s.upstream, s.pin) for s in p.sources] for path, p in provs.items()}

    first = scan()
    assert sources(first) == sources({p.path: p for p in scan_headers(port, scopes=["src", "include"])})
    assert first["src/kv.cpp"].inherits == "include/kv.h"  # resolved after reading from the cache too
    db = sqlite3.connect(cache.db_path(cache_dir))
    assert db.execute("SELECT count(*) FROM header").fetchone()[0] == 3
    # a clean file's row is what the next scan uses: a planted one shows through
    key, value = db.execute("SELECT key, value FROM header WHERE key LIKE '%:src/pool.cpp'").fetchone()
    db.execute("UPDATE header SET value = ? WHERE key = ?", (value.replace("pool.py", "planted.py"), key))
    db.commit()
    assert sources(scan())["src/pool.cpp"] == [("vllm/v1/planted.py", "e24d1b24")]
    assert scan()["src/kv.cpp"].inherits == "include/kv.h"
    # a file edited in the working tree (not staged) and a new untracked one are read, not looked up
    (port / "src/pool.cpp").write_text("// Ported from: vllm/v1/pool2.py @ e24d1b24\n")
    (port / "src/new.cpp").write_text("// Ported from: vllm/v1/new.py @ e24d1b24\n")
    got = sources(scan())
    assert got["src/pool.cpp"] == [("vllm/v1/pool2.py", "e24d1b24")] and got["src/new.cpp"] == [
        ("vllm/v1/new.py", "e24d1b24")
    ]
    # a damaged row, or one of the wrong types, is a parse, not a failure; a deleted file is gone
    db.execute("UPDATE header SET value = '{not json' WHERE key LIKE '%:include/kv.h'")
    key, value = db.execute("SELECT key, value FROM header WHERE key LIKE '%:src/pool.cpp'").fetchone()
    db.execute("UPDATE header SET value = ? WHERE key = ?", (value.replace('"line":1', '"line":"1\\u001b[2J"'), key))
    db.commit()
    git(port, "checkout", "--", "src/pool.cpp")  # clean again: the planted row's blob, its line now text
    assert sources(scan())["src/pool.cpp"] == [("vllm/v1/pool.py", "e24d1b24")]
    (port / "src/kv.cpp").unlink()
    got = sources(scan())
    assert got["include/kv.h"] == [("vllm/v1/kv.py", "e24d1b24")] and "src/kv.cpp" not in got


def test_counterparts_follow_renames_nearest_first_in_either_direction(tmp_path):
    """A file with no counterpart of its own takes those of the nearest name the queue renamed it
    to or from, through any number of renames; the route says which entries led there."""
    from porttrack.config import load_config
    from porttrack.evidence.headers import counterparts, moved_counterparts

    (tmp_path / "porttrack.toml").write_text('[upstream]\npaths = ["vllm/"]\n')
    cfg = load_config(tmp_path / "porttrack.toml")
    umap = {"vllm/a.py": ["src/a.cpp"], "vllm/far.py": ["src/far.cpp"]}
    moves = {
        "vllm/c.py": [("vllm/b.py", 3), ("vllm/far.py", 9)],
        "vllm/b.py": [("vllm/a.py", 2), ("vllm/c.py", 3)],
        "vllm/a.py": [("vllm/b.py", 2)],
        "vllm/far.py": [("vllm/c.py", 9)],
    }
    assert moved_counterparts(cfg, umap, "vllm/b.py", moves) == ([("vllm/a.py", 2)], ["src/a.cpp"])
    # one rename away beats two: c reaches far.py directly, a.py only through b.py
    assert moved_counterparts(cfg, umap, "vllm/c.py", moves) == ([("vllm/far.py", 9)], ["src/far.cpp"])
    assert counterparts(cfg, umap, "vllm/a.py", moves) == ["src/a.cpp"]  # its own first
    assert counterparts(cfg, umap, "vllm/b.py") == []  # no renames given: none followed
    assert counterparts(cfg, umap, "vllm/lone.py", moves) == []


def test_a_map_template_never_finds_a_counterpart_outside_the_port(tmp_path):
    """A queue's upstream path is the pull request's to write: `..` in it, or a link, leads nowhere."""
    from porttrack.config import load_config
    from porttrack.evidence.headers import counterparts

    port = tmp_path / "port"
    (port / "src/core").mkdir(parents=True)
    (port / "src/core/pool.cpp").write_text("int P;\n")
    (tmp_path / "secret.cpp").write_text("int S;\n")
    os.symlink(tmp_path / "secret.cpp", port / "src/core/link.cpp")
    (port / "porttrack.toml").write_text(
        '[upstream]\npaths = ["vllm/"]\n[[map]]\nupstream = \'vllm/core/(?P<rest>.+)\\.py\'\nport = ["src/core/{rest}.cpp"]\n'
    )
    cfg = load_config(port / "porttrack.toml")
    assert counterparts(cfg, {}, "vllm/core/pool.py") == ["src/core/pool.cpp"]
    assert counterparts(cfg, {}, "vllm/core/../../../secret.py") == []
    assert counterparts(cfg, {}, "vllm/core/link.py") == []
    moves = {"vllm/core/gone.py": [("vllm/core/../../../secret.py", 2)]}
    assert counterparts(cfg, {}, "vllm/core/gone.py", moves) == []
