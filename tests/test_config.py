from pathlib import Path

import pytest

from porttrack.config import find_config, load_config, queue_path, resolve_config
from porttrack.errors import UserError

GOOD = """\
[upstream]
repo = "../vllm"
paths = ["vllm/", "tests/"]

[port]
root = "."
scopes = { code = ["src", "include"], tests = ["tests"] }
exclude = ["third_party/**"]

[[map]]
upstream = 'vllm/(?P<rest>.+)\\.py'
port = ["src/vllm/{rest}.cpp", "include/vllm/{rest}.h"]

[naming]
renames = { hash_block_size = "prefix_match_unit" }

[owners]
matrices = [".agents/*-matrix.md"]
"""


def test_loads_and_maps(tmp_path):
    (tmp_path / "porttrack.toml").write_text(GOOD)
    cfg = load_config(tmp_path / "porttrack.toml")
    assert cfg.upstream_repo == (tmp_path.parent / "vllm").resolve()
    assert cfg.code_scope == ["src", "include"] and cfg.tests_scope == ["tests"]
    assert cfg.map_upstream("vllm/v1/core/kv_cache_utils.py") == [
        "src/vllm/v1/core/kv_cache_utils.cpp",
        "include/vllm/v1/core/kv_cache_utils.h",
    ]
    assert cfg.renames == {"hash_block_size": "prefix_match_unit"}


def test_found_upward(tmp_path):
    (tmp_path / "porttrack.toml").write_text(GOOD)
    deep = tmp_path / "src" / "vllm" / "v1"
    deep.mkdir(parents=True)
    assert find_config(deep) == (tmp_path / "porttrack.toml").resolve()
    assert resolve_config(None, cwd=deep).port_root == tmp_path.resolve()


def test_missing_config_is_one_sentence(tmp_path):
    with pytest.raises(UserError, match=r"no porttrack\.toml"):
        resolve_config(None, cwd=tmp_path)


@pytest.mark.parametrize(
    "bad, key, line",
    [
        ('[port]\nheader_scan_lines = "forty"\n', "port.header_scan_lines must be an integer", 2),
        ('[upstream]\npaths = "vllm/"\n', "upstream.paths must be a list of strings", 2),
        ("[naming]\nstrip_leading_underscore = 1\n", "naming.strip_leading_underscore must be true or false", 2),
        ('[owners]\n\nid_pattern = "[unclosed"\n', "owners.id_pattern '[unclosed' is not a valid regex", 3),
        ('[audit]\nmechanics_subject = "(mypy"\n', "audit.mechanics_subject '(mypy' is not a valid regex", 2),
        ('[audit]\n\ndead_subject = "dead)"\n', "audit.dead_subject 'dead)' is not a valid regex", 3),
    ],
)
def test_wrong_types_name_key_and_line(tmp_path, bad, key, line):
    p = tmp_path / "porttrack.toml"
    p.write_text(bad)
    with pytest.raises(UserError) as exc:
        load_config(p)
    assert key in str(exc.value)
    assert str(exc.value).startswith(f"{p}:{line}:")


def test_malformed_toml_names_line(tmp_path):
    p = tmp_path / "porttrack.toml"
    p.write_text('[upstream]\nrepo = "x"\npaths = [\n')
    with pytest.raises(UserError, match=r"porttrack.toml:\d+: malformed TOML"):
        load_config(p)


def test_queue_path_outside_root_refused(tmp_path):
    (tmp_path / "porttrack.toml").write_text(GOOD + '\n[queue]\nfile = "../elsewhere/q.toml"\n')
    cfg = load_config(tmp_path / "porttrack.toml")
    with pytest.raises(UserError, match="outside the port root"):
        queue_path(cfg, None)
    with pytest.raises(UserError, match="outside the port root"):
        queue_path(cfg, tmp_path.parent / "q.toml")


# ---------------------------------------------------------------- acceptance: more bad configs, each by file:line


@pytest.mark.parametrize(
    "bad, needle, line",
    [
        ('[port]\nroot = "."\nroot = "src"\n', 'malformed TOML: Key "root" already exists', 3),
        (
            "[[map]]\nupstream = 'vllm/(?P<rest>.+)\\.py'\nport = [\"src/{stem}.cpp\"]\n",
            "uses {stem}, which is no named group",
            3,
        ),
        ("[[map]]\nupstream = 'vllm/(.+)\\.py'\nport = [\"src/{0}.cpp\"]\n", "is not a valid template", 3),
        ('[port]\nroot = "no-such-dir"\n', "port.root 'no-such-dir' does not exist", 2),
        ('[port]\nroot = "porttrack.toml"\n', "is not a folder", 2),
        ('[upstream]\nrepo = "a\\u0000b"\n', "upstream.repo holds a NUL character", 2),
        ("[port]\nheader_scan_lines = -1\n", "port.header_scan_lines must be 0 or more", 2),
    ],
)
def test_more_bad_configs_name_key_and_line(tmp_path, bad, needle, line):
    p = tmp_path / "porttrack.toml"
    p.write_text(bad)
    with pytest.raises(UserError) as exc:
        load_config(p)
    assert needle in str(exc.value)
    assert str(exc.value).startswith(f"{p}:{line}:")
    assert ".." not in str(exc.value).replace("../", "")  # no doubled full stop


def test_byte_order_mark_is_accepted(tmp_path):
    p = tmp_path / "porttrack.toml"
    p.write_text("\ufeff" + GOOD, encoding="utf-8")
    assert load_config(p).renames == {"hash_block_size": "prefix_match_unit"}


def test_cache_dir_is_relative_to_the_config_file(tmp_path):
    (tmp_path / "porttrack.toml").write_text('[cache]\ndir = ".cache/pt"\n')
    assert Path(load_config(tmp_path / "porttrack.toml").cache_dir) == tmp_path / ".cache/pt"


@pytest.mark.parametrize(
    "bad, needle, line",
    [
        (
            '[port]\nroot = "."\nexlude = ["third_party/**"]\n',
            "unknown key port.exlude (one of root, scopes, exclude",
            3,
        ),
        ('[upstream]\npaths = ["vllm/"]\n\n[owner]\nmatrices = []\n', "unknown table [owner]", 4),
    ],
)
def test_unknown_keys_and_tables_are_refused_by_line(tmp_path, bad, needle, line):
    p = tmp_path / "porttrack.toml"
    p.write_text(bad)
    with pytest.raises(UserError) as exc:
        load_config(p)
    assert needle in str(exc.value) and str(exc.value).startswith(f"{p}:{line}:")
