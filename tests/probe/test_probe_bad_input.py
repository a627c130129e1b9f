"""Odd scopes and regexes through the real CLI are one sentence and exit 2 (or a result)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from conftest import commit_files, init_repo, run_cli


@pytest.fixture
def port(tmp_path: Path) -> Path:
    repo = init_repo(tmp_path / "port")
    commit_files(
        repo,
        {
            "src/a.cpp": "int take_new_block_ids() { return 0; }\nint f() { return take_new_block_ids(); }\n",
            "porttrack.toml": '[port]\nroot = "."\n',
        },
        "port",
    )
    return repo


def test_symlink_loop_scope_is_refused_naming_it(port: Path):
    os.symlink("loop2", port / "loop1")
    os.symlink("loop1", port / "loop2")
    r = run_cli("probe", "take_new_block_ids", "--scope", "loop1", cwd=port, check_rc=2)
    assert "scope 'loop1' cannot be resolved" in r.stderr and "Traceback" not in r.stderr


def test_non_utf8_scope_is_refused_naming_it(port: Path):
    r = run_cli("probe", "take_new_block_ids", "--scope", os.fsdecode(b"src\xff"), cwd=port, check_rc=2)
    assert "is not valid UTF-8" in r.stderr and "Traceback" not in r.stderr


def test_empty_regex_is_refused(port: Path):
    r = run_cli("probe", "--regex", "", cwd=port, check_rc=2)
    assert "regex '' is empty" in r.stderr


def test_non_utf8_regex_is_a_result_not_a_crash(port: Path):
    r = run_cli("probe", "--regex", os.fsdecode(b"caf\xe9"), "--scope", "src", "--json", cwd=port, check_rc=0)
    assert json.loads(r.stdout)[0]["raw"] == 0  # files are read as UTF-8: those bytes occur in none


def test_a_config_scope_escaping_the_root_names_the_file_and_key(port: Path):
    (port / "porttrack.toml").write_text('[port]\nroot = "."\nscopes = { code = ["src", "../elsewhere"] }\n')
    r = run_cli("probe", "take_new_block_ids", cwd=port, check_rc=2)
    assert f"{port / 'porttrack.toml'}: [port].scopes.code: scope '../elsewhere' climbs out" in r.stderr
