"""Path prefixes and containment, through the real CLI on repositories built in the test."""

import json
import os

import pytest
from conftest import commit_files, init_repo, run_cli

from porttrack import paths
from porttrack.queue import file as queuefile


@pytest.mark.parametrize(
    "spelling, want",
    [
        ("vllm", "vllm"),
        ("vllm/", "vllm"),
        ("./vllm/", "vllm"),
        ("vllm//kv/", "vllm/kv"),
        (".", ""),
        ("./", ""),
        ("", ""),
    ],
)
def test_one_spelling_per_prefix(spelling, want):
    assert paths.norm(spelling) == want
    assert paths.under("vllm/kv/a.py", [want]) == (want in ("", "vllm", "vllm/kv"))


def test_under_is_by_folder_not_by_string():
    assert paths.under("vllm/a.py", ["vllm"]) and paths.under("vllm", ["vllm"])
    assert not paths.under("vllm_extra/a.py", ["vllm"]) and not paths.under(None, ["vllm"])
    assert paths.mirrored("docs/x.md", []) and paths.mirrored("docs/x.md", [""])


def _range(tmp_path, upstream_paths: str):
    up = init_repo(tmp_path / "up")
    pin = commit_files(up, {"vllm/a.py": "def f():\n    return 1\n"}, "base (#1)")
    commit_files(up, {"vllm/a.py": "def f():\n    return 2\n"}, "[Core] Change f (#2)")
    target = commit_files(up, {"docs/x.md": "doc\n"}, "[Doc] a page (#3)")
    port = init_repo(tmp_path / "port")
    (port / "porttrack.toml").write_text(
        f'[upstream]\nrepo = "../up"\npaths = {upstream_paths}\n\n[port]\nroot = "."\n'
    )
    commit_files(port, {"src/a.cpp": "// Ported from: vllm/a.py\nint f() { return 2; }\n"}, "port")
    return port, pin, target


def test_dot_slash_prefix_is_kept_by_build_and_by_audit(tmp_path):
    """`./vllm/` once kept a commit in build that audit then ignored as touching no mirrored path."""
    port, pin, target = _range(tmp_path, '["./vllm/"]')
    run_cli("queue", "build", "--range", f"{pin}..{target}", "--name", "c", cwd=port, check_rc=0)
    q = queuefile.load(port / "queue" / "c.toml").queue
    assert [e.files for e in q.entries] == [["vllm/a.py"]] and q.meta.paths == ["vllm"]
    out = run_cli("audit", cwd=port, check_rc=0).stdout
    assert "touches no mirrored path" not in out
    data = json.loads(run_cli("audit", "--json", cwd=port, check_rc=0).stdout)
    assert [(r["verdict"], r["rule"]) for r in data["results"]] == [("inert", "inert")]


def test_dot_mirrors_the_whole_tree(tmp_path):
    """`paths = ["."]` once wrote 0 entries."""
    port, pin, target = _range(tmp_path, '["."]')
    proc = run_cli("queue", "build", "--range", f"{pin}..{target}", "--name", "c", cwd=port, check_rc=0)
    assert "2 entries" in proc.stdout
    q = queuefile.load(port / "queue" / "c.toml").queue
    assert [e.files for e in q.entries] == [["vllm/a.py"], ["docs/x.md"]]
    assert 'paths = ["."]' in (port / "queue" / "c.toml").read_text()
    assert "touches no mirrored path" not in run_cli("audit", cwd=port, check_rc=0).stdout


def _port_with_linked_folder(tmp_path):
    """A tracked folder replaced by a link to a folder outside the root, which holds a header."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "leak.h").write_text("// Ported from: vllm/secret.py @ 0123456789ab\nint leak;\n")
    port = init_repo(tmp_path / "port")
    (port / "porttrack.toml").write_text('[upstream]\nname = "up"\n\n[port]\nroot = "."\n')
    commit_files(
        port,
        {
            "src/sys/leak.h": "// Ported from: vllm/inside.py\nint x;\n",
            "src/ok.h": "// Ported from: vllm/ok.py\nint y;\n",
        },
        "port",
    )
    for f in (port / "src" / "sys").iterdir():  # rm -rf src/sys; ln -s outside src/sys (the index still names it)
        f.unlink()
    (port / "src" / "sys").rmdir()
    os.symlink(outside, port / "src" / "sys")
    return port


def test_headers_never_read_through_a_linked_folder(tmp_path):
    port = _port_with_linked_folder(tmp_path)
    out = run_cli("headers", cwd=port).stdout
    assert "vllm/ok.py" in out  # positive control: the header inside the root is read
    assert "vllm/secret.py" not in out and "0123456789ab" not in out


def test_tree_refuses_every_component_that_leads_out(tmp_path):
    port = _port_with_linked_folder(tmp_path)
    tree = paths.Tree(port)
    assert tree.read_text("src/ok.h").startswith("// Ported from")
    for rel in (
        "src/sys/leak.h",
        "../outside/leak.h",
        "src/../../outside/leak.h",
        str(tmp_path / "outside" / "leak.h"),
    ):
        with pytest.raises(paths.Outside):
            tree.read_bytes(rel)
    os.symlink("ok.h", port / "src" / "alias.h")  # a link that stays inside is followed
    assert tree.read_text("src/alias.h") == tree.read_text("src/ok.h")
