"""Acceptance-pass checks of matrix loading: a matrix named outright that is not there is bad config."""

from __future__ import annotations

import pytest

from porttrack.errors import UserError
from porttrack.evidence.owners import load_rows
from test_check import cli, port  # noqa: F401  (port is a fixture)

ID = r"[A-Z][A-Z0-9]+(?:-[A-Z0-9]+)+"


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
