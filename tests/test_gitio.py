"""gitio: the one module that starts git. These cover what it reads back from git's output."""

from __future__ import annotations

import pytest

from porttrack import gitio
from porttrack.errors import UserError
from conftest import commit_files, git, init_repo

HEX = "0123456789abcdef" * 2 + "01234567"  # a changed line that looks like a commit id


def test_many_commits_diffed_in_one_go_give_each_commit_the_hunks_it_gives_alone(tmp_path):
    repo = init_repo(tmp_path / "up")
    root = commit_files(repo, {"a.py": "x = 1\ny = 2\n", "b.py": "z = 3\n", "notes.txt": "n\n"}, "base")
    edit = commit_files(repo, {"a.py": f"x = 10\ny = 2\n# {HEX}\n{HEX} = 4\n", "b.py": "z = 30\n"}, "edit")
    moved = commit_files(repo, {"b.py": None, "c.py": "z = 30\nw = 5\n"}, "move")
    elsewhere = commit_files(repo, {"notes.txt": "m\n"}, "notes only")
    git(repo, "checkout", "-q", "-b", "side", root)
    commit_files(repo, {"d.py": "d = 1\n"}, "side")
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--no-edit", "side")
    merge = git(repo, "rev-parse", "HEAD")
    paths = ["a.py", "b.py", "c.py", "d.py"]

    many = gitio.diff_hunks_many(repo, [edit, moved, elsewhere, merge, root], paths)

    # a root commit (no parent) and a merge (`sha^!` is its combined diff) are left to diff_hunks
    assert set(many) == {edit, moved, elsewhere}
    for sha in (edit, moved, elsewhere):
        assert many[sha] == gitio.diff_hunks(repo, sha, paths), sha
    assert [h.path for h in many[edit]] == ["a.py", "a.py", "b.py"]
    assert f"{HEX} = 4" in many[edit][1].new  # a changed line of bare hex is content, not a commit's start
    assert [(h.path, h.old, h.new) for h in many[moved]] == [
        ("b.py", ["z = 30"], []),
        ("c.py", [], ["z = 30", "w = 5"]),
    ]
    assert many[elsewhere] == []  # nothing under the paths
    # one commit git does not know, or no paths: nothing from the batch, each is asked alone
    assert gitio.diff_hunks_many(repo, [edit, "f" * 40], paths) == {}
    assert gitio.diff_hunks_many(repo, [edit, "--output=x"], paths).keys() == {edit}
    assert gitio.diff_hunks_many(repo, [edit], []) == {}


def test_a_name_with_a_line_break_is_one_missing_object_and_later_reads_stay_in_step(tmp_path):
    repo = init_repo(tmp_path / "r")
    commit_files(repo, {"a.txt": "A\n", "b.txt": "B\n"}, "c")
    cat = gitio.CatFile(repo)
    try:
        assert cat.read("HEAD:a.txt\nHEAD:b.txt") is None
        assert cat.read("HEAD:a.txt\0") is None
        assert cat.read("HEAD:b.txt") == b"B\n"
        assert cat.read("HEAD:a.txt") == b"A\n"
    finally:
        cat.close()


def test_grep_rev_finds_whole_words_at_a_revision_and_nothing_after_it(tmp_path):
    repo = init_repo(tmp_path / "up")
    first = commit_files(repo, {"a.py": "def pin_node():\n    pass\n", "b.py": "x = pin_nodes\n"}, "one")
    commit_files(repo, {"a.py": "def other():\n    pass\n"}, "two")
    assert gitio.grep_rev(repo, first, "pin_node", ["*.py"]) == [("a.py", 1, "def pin_node():")]
    assert gitio.grep_rev(repo, "HEAD", "pin_node", ["*.py"]) == []
    # an option-like word is a pattern, not a flag
    assert gitio.grep_rev(repo, "HEAD", "--no-index", ["*.py"]) == []
    assert gitio.grep_rev(repo, "no-such-rev", "pin_node", ["*.py"]) is None


def test_grep_rev_never_reads_a_revision_as_an_option(tmp_path):
    repo = init_repo(tmp_path / "up")
    commit_files(repo, {"a.py": "x = 1\n"}, "one")
    with pytest.raises(UserError, match="never an option"):
        gitio.grep_rev(repo, "--open-files-in-pager=touch pwned", "x", ["*.py"])
    assert not (repo / "pwned").exists()


def test_grep_rev_reads_a_path_that_holds_a_colon(tmp_path):
    repo = init_repo(tmp_path / "up")
    sha = commit_files(repo, {"c:d.py": "y = pin_node\n"}, "one")
    assert gitio.grep_rev(repo, sha, "pin_node", ["*.py"]) == [("c:d.py", 1, "y = pin_node")]


def test_grep_rev_finds_any_of_several_words(tmp_path):
    repo = init_repo(tmp_path / "r")
    sha = commit_files(repo, {"a.py": "x = pin_node\ny = drop_node\nz = other\n"}, "base")
    assert gitio.grep_rev(repo, sha, ("pin_node", "drop_node"), ["*.py"]) == [
        ("a.py", 1, "x = pin_node"),
        ("a.py", 2, "y = drop_node"),
    ]


def test_found_at_says_which_fixed_strings_stand_at_a_revision(tmp_path):
    repo = init_repo(tmp_path / "up")
    first = commit_files(repo, {"a.py": "# keep the pool whole\nx = 1\n", "b.py": "# --no-index is text\n"}, "one")
    commit_files(repo, {"a.py": "x = 2\n"}, "two")
    asked = ("# keep the pool whole", "# never written", "--no-index")
    assert gitio.found_at(repo, first, asked, ["*.py"]) == {"# keep the pool whole", "--no-index"}
    assert gitio.found_at(repo, "HEAD", asked, ["*.py"]) == {"--no-index"}
    assert gitio.found_at(repo, "no-such-rev", asked, ["*.py"]) is None
    assert gitio.found_at(repo, first, (), ["*.py"]) == set()
    with pytest.raises(UserError, match="never an option"):
        gitio.found_at(repo, "--open-files-in-pager=touch pwned", asked, ["*.py"])
    assert not (repo / "pwned").exists()


def test_additions_and_deletions_name_each_commits_files_a_rename_among_them(tmp_path):
    repo = init_repo(tmp_path / "up")
    first = commit_files(repo, {"pkg/a.py": "x = 1\n", "pkg/b.py": "y = 2\n", "doc/n.md": "n\n"}, "base")
    gone = commit_files(repo, {"pkg/a.py": None, "pkg/a_new.py": "x = 10\n"}, "rewrite a")
    moved = commit_files(repo, {"pkg/b.py": None, "pkg/c.py": "y = 2\n"}, "rename b")
    notes = commit_files(repo, {"doc/n.md": None, "pkg/c.py": "y = 3\n"}, "a deletion and an edit")
    odd = commit_files(repo, {"pkg/new\nline.py": "z = 1\n"}, "a name git would quote")

    got = gitio.additions_and_deletions(repo, first)

    assert got == [
        (odd, ["pkg/new\nline.py"], []),
        (notes, [], ["doc/n.md"]),  # an edit beside a deletion is neither
        (moved, ["pkg/c.py"], ["pkg/b.py"]),  # git's rename read as what it is on disk
        (gone, ["pkg/a_new.py"], ["pkg/a.py"]),
    ]
    assert gitio.additions_and_deletions(repo, odd) == []
    assert gitio.additions_and_deletions(repo, "f" * 40) == []  # a commit git lacks: nothing to tell
