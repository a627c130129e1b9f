"""Matrices (docs/design.md §9.3): rows read with a markdown parser, and the owner lookup of audit rule 4."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, strategies as st

from porttrack.errors import UserError
from porttrack.evidence.owners import (
    Row,
    cites_symbol,
    find_owner,
    load_rows,
    owner_id,
    owner_text,
    parse_matrix,
    row_by_id,
)
from test_check import cli, port  # noqa: F401  (port is a fixture)

ID = r"[A-Z][A-Z0-9]+(?:-[A-Z0-9]+)+"
HEAD = "| ID | Item | Tier | Upstream code/tests | Our code | Our tests/evidence | Spike/spec | State | Owner |\n|---|---|---|---|---|---|---|---|---|\n"

MATRIX = (
    "# Engine matrix\n\n"
    "| Area | Rows | `DONE` |\n|---|---:|---:|\n| KV cache | 3 | 1 |\n\n"
    "## KV\n\n"
    + HEAD
    + "| `KV-PREFIX-MATCH-UNIT` | prefix match unit | T0 | `vllm/v1/core/kv_cache_utils.py:640-707` @ `e24d1b24` | `src/vllm/v1/core/kv_cache_utils.cpp:120` | [test](../tests/a.cpp#L12) | [spec](specs/x.md) | `ACTIVE` — notes `a \\| b` | kv |\n"
    + "| `KV-ZEROER` | zeroing | T1 | `vllm/v1/worker/utils.py::KVBlockZeroer`, see vllm#51749 | — | — | — | `DONE` | kv |\n"
    + "| `KV-OFFLOAD` | offload | T2 | `vllm/v1/kv_offload/` and `take_new_block_ids` | — | — | — | `INVENTORIED` | kv |\n"
    + "| not an id | x | | `vllm/v1/core/kv_cache_utils.py` | | | | `ACTIVE` | |\n"
)


def rows():
    return parse_matrix(".agents/engine-matrix.md", MATRIX, id_pattern=ID)


def test_rows_ids_states_lines_and_cells():
    rs = rows()
    assert [r.id for r in rs] == ["KV-PREFIX-MATCH-UNIT", "KV-ZEROER", "KV-OFFLOAD"]
    assert [r.state for r in rs] == ["ACTIVE", "DONE", "INVENTORIED"]
    first = rs[0]
    assert (
        first.where
        == f".agents/engine-matrix.md:{MATRIX.splitlines().index(next(ln for ln in MATRIX.splitlines() if 'KV-PREFIX' in ln)) + 1}"
    )
    assert first.upstream == "`vllm/v1/core/kv_cache_utils.py:640-707` @ `e24d1b24`"
    assert first.cells["Our tests/evidence"] == "[test](../tests/a.cpp#L12)"
    assert "a \\| b" in first.cells["State"] or "a | b" in first.cells["State"]  # an escaped pipe stays in its cell


def test_owner_cites_path_with_line_qualifier():
    r = find_owner(rows(), paths=["vllm/v1/core/kv_cache_utils.py"], symbols=[], pr=None, done_states=["DONE"])
    assert r is not None and r.id == "KV-PREFIX-MATCH-UNIT"
    assert owner_text(r) == f"KV-PREFIX-MATCH-UNIT ({r.where})" and owner_id(owner_text(r)) == "KV-PREFIX-MATCH-UNIT"
    # a longer path with the same prefix is another file
    assert (
        find_owner(rows(), paths=["vllm/v1/core/kv_cache_utils.pyi"], symbols=[], pr=None, done_states=["DONE"]) is None
    )
    assert find_owner(rows(), paths=["v1/core/kv_cache_utils.py"], symbols=[], pr=None, done_states=["DONE"]) is None


def test_done_rows_own_nothing():
    rs = rows()
    assert find_owner(rs, paths=["vllm/v1/worker/utils.py"], symbols=[], pr=51749, done_states=["DONE"]) is None
    assert find_owner(rs, paths=[], symbols=[], pr=51749, done_states=[]).id == "KV-ZEROER"


def test_owner_by_symbol_and_by_pr():
    rs = rows()
    assert (
        find_owner(rs, paths=[], symbols=["KVCacheManager.take_new_block_ids"], pr=None, done_states=["DONE"]) is None
    )
    assert find_owner(rs, paths=[], symbols=["take_new_block_ids"], pr=None, done_states=["DONE"]).id == "KV-OFFLOAD"
    assert find_owner(rs, paths=[], symbols=["KVBlockZeroer"], pr=None, done_states=["NOPE"]).id == "KV-ZEROER"
    assert find_owner(rs, paths=[], symbols=[], pr=5174, done_states=[]) is None


def test_load_rows_from_globs(tmp_path):
    (tmp_path / ".agents").mkdir()
    (tmp_path / ".agents/engine-matrix.md").write_text(MATRIX)
    (tmp_path / ".agents/model-matrix.md").write_text(
        HEAD + "| `MODEL-WIDGETLM` | x | | `vllm/model_executor/models/widget_lm.py` | | | | `SPIKE` | |\n"
    )
    rs = load_rows(tmp_path, [".agents/*-matrix.md"], id_pattern=ID)
    assert [r.matrix for r in rs] == [".agents/engine-matrix.md"] * 3 + [".agents/model-matrix.md"]
    assert row_by_id(rs, "MODEL-WIDGETLM").where == ".agents/model-matrix.md:3"
    with pytest.raises(UserError, match="outside the port root"):
        load_rows(tmp_path, ["../elsewhere/*.md"], id_pattern=ID)
    (tmp_path / ".agents/bad-matrix.md").write_bytes(b"\xff\xfe")
    with pytest.raises(UserError, match="not UTF-8"):
        load_rows(tmp_path, [".agents/*-matrix.md"], id_pattern=ID)


def _cites_reference(cell: str, symbol: str) -> bool:
    # cites_symbol's rule spelled plainly: each form of the symbol searched on its own
    if len(symbol.split(".")[-1].lstrip("_")) < 4:
        return False
    forms = {symbol, symbol.replace(".", "::")}
    return any(re.search(r"(?:(?<=\w\.py::)|(?<![\w.:]))" + re.escape(f) + r"(?![\w])", cell) for f in forms)


_NAMES = ["Pool", "Pool.take_ids", "take_ids", "take_ids_all", "run", "Pool.run", "_run_it", "grow"]
_PIECES = [*_NAMES, " ", ".", "::", ":", "`", "x", "_", "a.py::", "Pool::take_ids"]


@given(
    cell=st.lists(st.sampled_from(_PIECES), max_size=10).map("".join),
    symbols=st.lists(st.sampled_from(_NAMES), max_size=4),
)
def test_rows_cite_symbols_as_each_symbol_alone_would(cell, symbols):
    row = Row(id="KV-A", state="ACTIVE", matrix="m.md", line=1, upstream=cell)
    found = find_owner([row], paths=[], symbols=symbols, pr=None, done_states=[])
    assert (found is not None) == any(_cites_reference(cell, s) for s in symbols)
    assert all(cites_symbol(cell, s) == _cites_reference(cell, s) for s in symbols)


def test_a_named_matrix_that_does_not_exist_is_refused(tmp_path):
    (tmp_path / ".agents").mkdir()
    (tmp_path / ".agents/kv-matrix.md").write_text("| ID | State |\n|---|---|\n| KV-A | `ACTIVE` |\n")
    assert [r.id for r in load_rows(tmp_path, [".agents/kv-matrix.md", ".agents/none-*.md"], id_pattern=ID)] == ["KV-A"]
    with pytest.raises(UserError, match=r"matrices names \.agents/engine-matrix\.md"):
        load_rows(tmp_path, [".agents/engine-matrix.md"], id_pattern=ID)


def test_check_with_a_missing_named_matrix_exits_2_naming_it(port):
    cfg = port / "porttrack.toml"
    cfg.write_text(
        cfg.read_text().replace(
            'matrices = [".agents/*-matrix.md"]', 'matrices = [".agents/kv-matrix.md", ".agents/gone.md"]'
        )
    )
    proc = cli(port)
    assert proc.returncode == 2 and ".agents/gone.md" in proc.stderr and "Traceback" not in proc.stderr
