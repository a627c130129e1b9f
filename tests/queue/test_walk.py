"""walk: a real git history with known commits, walked with the real code."""

from __future__ import annotations

import datetime as dt
import re
import subprocess
from pathlib import Path

import pytest

from conftest import commit_files, git, init_repo, run_cli
from porttrack import cache as cache_mod
from porttrack.errors import UserError
from porttrack.queue.walk import pr_of, walk

A_V1 = """K = 1


def f(x):
    return x


class A:
    x: int = 0

    def m(self):
        return 1
"""

A_V2 = """K = 1


def f(x):
    return x + 1


def g():
    return f(2)


class A:
    x: int = 0

    def n(self, helper_arg):
        return brand_new_call(helper_arg)
"""

B_V1 = (
    A_V2
    + """

def h():
    return K
"""
)

CPP_V1 = """#define LIMIT 4
namespace vllm {
enum class Mode { kA, kB };
class Pool {
 public:
  int take(int n);
};
int Pool::take(int n) { return n; }
}  // namespace vllm
"""

CPP_V2 = """#define LIMIT 8
namespace vllm {
enum class Mode { kA, kB, kC };
class Pool {
 public:
  int take(int n);
  void zero();
};
int Pool::take(int n) { return n; }  // a comment only: not a change
void Pool::zero() { take(LIMIT); }
}  // namespace vllm
"""


def day(n: int) -> str:
    return f"2026-01-{n:02d}T12:00:00+00:00"


@pytest.fixture(scope="session")
def history(tmp_path_factory):
    """pin, then: add, change, outside, rename, binary+latin-1, C++, merge of a side branch, revert."""
    repo = init_repo(tmp_path_factory.mktemp("up") / "up")
    s = {}
    s["pin"] = commit_files(repo, {"README.md": "hello\n"}, "initial", day(1))
    s["add"] = commit_files(repo, {"vllm/core/a.py": A_V1, "docs/a.md": "doc\n"}, "[Core] add a (#1)", day(2))
    s["change"] = commit_files(repo, {"vllm/core/a.py": A_V2}, "[Core] change a (#2)", day(3))
    s["outside"] = commit_files(repo, {"docs/a.md": "doc 2\n"}, "[Doc] docs only (#3)", day(4))
    git(repo, "mv", "vllm/core/a.py", "vllm/core/b.py")
    s["rename"] = commit_files(repo, {"vllm/core/b.py": B_V1}, "[Core] rename a to b (#4)", day(5))
    s["binary"] = commit_files(
        repo,
        {
            "vllm/core/w.bin": b"\x00\x01\x02\xff" * 64,
            "vllm/core/latin.py": "def caf\xe9():\n    pass\n".encode("latin-1"),
        },
        "[Core] binary and latin-1 (#5)",
        day(6),
    )
    s["cpp"] = commit_files(repo, {"csrc/pool.cpp": CPP_V1}, "[Kernel] pool (#6)", day(7))
    git(repo, "checkout", "-q", "-b", "side")
    s["side"] = commit_files(repo, {"csrc/pool.cpp": CPP_V2}, "[Kernel] pool zeroing (#7)", day(8))
    git(repo, "checkout", "-q", "main")
    s["main2"] = commit_files(repo, {"docs/b.md": "b\n"}, "[Doc] b (#8)", day(9))
    git(repo, "merge", "-q", "--no-ff", "side", "-m", "Merge side (#9)", date=day(10))
    s["merge"] = git(repo, "rev-parse", "HEAD")
    git(repo, "revert", "--no-edit", s["binary"], date=day(11))
    git(repo, "commit", "-q", "--amend", "-m", 'Revert "[Core] binary and latin-1 (#5)" (#10)', date=day(11))
    s["revert"] = git(repo, "rev-parse", "HEAD")
    return repo, s


PATHS = ["vllm/", "csrc"]


def by_sha(result):
    return {c.sha: c for c in result.commits}


def test_entries_first_parent(history, tmp_path):
    repo, s = history
    r = walk(repo, f"{s['pin']}..main", PATHS, cache_dir=tmp_path)
    assert (r.pin, r.target) == (s["pin"], s["revert"])
    assert r.total_commits == 9  # add change outside rename binary cpp main2 merge revert
    assert [c.sha for c in r.commits] == [s[k] for k in ("add", "change", "rename", "binary", "cpp", "merge", "revert")]
    assert [c.pr for c in r.commits] == [1, 2, 4, 5, 6, 9, 10]
    assert r.commits[-1].reverts == 5 and r.commits[0].reverts is None
    assert r.commits[0].date == dt.date(2026, 1, 2)
    assert r.commits[5].parents == [s["main2"], s["side"]]


def test_files_stats_rename_binary(history, tmp_path):
    repo, s = history
    c = by_sha(walk(repo, f"{s['pin']}..main", PATHS, cache_dir=tmp_path))
    add = {f.path: (f.status, f.insertions, f.deletions) for f in c[s["add"]].files}
    assert add == {"vllm/core/a.py": ("A", 12, 0)}  # mirrored files only: a blob outside the paths is never read
    (ren,) = c[s["rename"]].files
    assert (ren.status, ren.old_path, ren.path) == ("R", "vllm/core/a.py", "vllm/core/b.py")
    assert (ren.insertions, ren.deletions) == (4, 0)
    files = {f.path: f for f in c[s["binary"]].files}
    assert files["vllm/core/w.bin"].binary and files["vllm/core/w.bin"].insertions == -1
    assert (files["vllm/core/latin.py"].insertions, files["vllm/core/latin.py"].binary) == (2, False)
    # the merge's files are its change against the first parent: the side branch's work
    assert [f.path for f in c[s["merge"]].files] == ["csrc/pool.cpp"]


def test_python_symbols(history, tmp_path):
    repo, s = history
    c = by_sha(walk(repo, f"{s['pin']}..main", PATHS, cache_dir=tmp_path))
    add = c[s["add"]].symbols
    assert add.added == ["A", "A.m", "A.x", "K", "f"] and add.changed == add.removed == []
    change = c[s["change"]].symbols
    assert (change.added, change.changed, change.removed) == (["A.n", "g"], ["f"], ["A.m"])
    # uses: identifiers on added lines, minus builtins/self and the names this commit defines
    assert change.uses == ["brand_new_call", "helper_arg", "x"]
    ren = c[s["rename"]].symbols  # a rename is followed: only the new function shows
    assert (ren.added, ren.changed, ren.removed) == (["h"], [], [])
    assert c[s["binary"]].symbols.added == ["caf"]  # undecodable bytes end the name, never crash
    revert = c[s["revert"]]
    assert sorted((f.path, f.status) for f in revert.files) == [("vllm/core/latin.py", "D"), ("vllm/core/w.bin", "D")]
    assert (revert.symbols.added, revert.symbols.changed, revert.symbols.removed) == ([], [], ["caf"])


def test_cpp_symbols_through_merge(history, tmp_path):
    repo, s = history
    c = by_sha(walk(repo, f"{s['pin']}..main", PATHS, cache_dir=tmp_path))
    assert c[s["cpp"]].symbols.added == [
        "LIMIT",
        "vllm::Mode",
        "vllm::Mode::kA",
        "vllm::Mode::kB",
        "vllm::Pool",
        "vllm::Pool::take",
    ]
    merged = c[s["merge"]].symbols
    assert merged.added == ["vllm::Mode::kC", "vllm::Pool::zero"]
    assert merged.changed == ["LIMIT", "vllm::Mode"]  # take's comment-only edit is not a change
    assert merged.removed == []


def test_all_parents_lists_side_commit_not_merge(history, tmp_path):
    repo, s = history
    r = walk(repo, f"{s['pin']}..main", PATHS, first_parent=False, cache_dir=tmp_path)
    shas = [c.sha for c in r.commits]
    assert s["side"] in shas and s["merge"] not in shas
    assert r.total_commits == 10
    assert by_sha(r)[s["side"]].symbols.added == ["vllm::Mode::kC", "vllm::Pool::zero"]
    everything = walk(repo, f"{s['pin']}..main", [], first_parent=False, cache_dir=tmp_path)
    assert len(everything.commits) == 9 and s["merge"] not in [c.sha for c in everything.commits]


def test_paths_filter_and_caret_range(history, tmp_path):
    repo, s = history
    r = walk(repo, f"{s['cpp']}^..{s['cpp']}", ["csrc/"], cache_dir=tmp_path)
    assert [c.sha for c in r.commits] == [s["cpp"]] and r.total_commits == 1
    r = walk(repo, f"{s['pin']}..main", ["docs"], cache_dir=tmp_path)
    assert [c.pr for c in r.commits] == [1, 3, 8]
    assert all(c.symbols.added == [] for c in r.commits)  # symbols only for mirrored source files


def test_second_walk_parses_nothing(history, tmp_path):
    repo, s = history
    first = walk(repo, f"{s['pin']}..main", PATHS, cache_dir=tmp_path)
    assert first.parsed > 0 and first.cached == 0
    assert cache_mod.db_path(tmp_path).is_file()
    second = walk(repo, f"{s['pin']}..main", PATHS, cache_dir=tmp_path)
    assert second.parsed == 0 and second.cached == first.cached + sum(1 for _ in _source_changes(first))
    assert [c.symbols for c in second.commits] == [c.symbols for c in first.commits]


def _source_changes(result):
    for c in result.commits:
        for f in c.files:
            if not f.binary and re.search(r"\.(py|cpp)$", f.path) and re.match(r"(vllm|csrc)/", f.path):
                yield f


def test_empty_range_and_progress(history, tmp_path):
    repo, s = history
    calls = []
    r = walk(repo, "main..main", PATHS, cache_dir=tmp_path, progress=lambda d, t: calls.append((d, t)))
    assert (r.total_commits, r.commits) == (0, []) and calls == [(0, 0)]
    calls.clear()
    walk(repo, f"{s['pin']}..main", PATHS, cache_dir=tmp_path, progress=lambda d, t: calls.append((d, t)))
    assert calls[-1] == (9, 9) and all(t == 9 for _, t in calls)


def test_pr_pattern_and_revert_without_own_pr(tmp_path):
    repo = init_repo(tmp_path / "r")
    pin = commit_files(repo, {"x.py": "a = 1\n"}, "init", day(1))
    commit_files(repo, {"x.py": "a = 2\n"}, "fix thing [PR-77] see (#5)", day(2))
    commit_files(repo, {"x.py": "a = 1\n"}, 'Revert "fix thing [PR-77] see (#5)"', day(3))
    r = walk(repo, f"{pin}..HEAD", ["x.py"], pr_pattern=r"\[PR-(\d+)\]", cache_dir=tmp_path / "c")
    assert [(c.pr, c.reverts) for c in r.commits] == [(77, None), (None, 77)]
    assert r.commits[0].symbols.changed == ["a"]


@pytest.mark.parametrize(
    "subject, expected",
    [
        ('Revert "[Core] Thing (#12)" (#34)', (34, 12)),
        ('Revert "[Core] Thing" (#12) (#34)', (34, 12)),
        ('Revert "Revert "[Core] Thing (#12)" (#34)" (#56)', (56, 34)),
        ("[Core] Thing (#12) follow-up (#34)", (34, None)),
        ("[CI Bug] Revert #42379 to fix CI (#46070)", (46070, 42379)),
        ("[Core] no number", (None, None)),
    ],
)
def test_pr_of(subject, expected):
    assert pr_of(subject, re.compile(r"\(#(\d+)\)")) == expected


def test_revert_found_by_title(tmp_path):
    repo = init_repo(tmp_path / "r")
    pin = commit_files(repo, {"x.py": "a = 1\n"}, "init", day(1))
    commit_files(repo, {"x.py": "a = 2\n"}, "[Kernel] Speed up the zeroing kernel with vector stores (#41)", day(2))
    commit_files(repo, {"y.py": "b = 2\n"}, "[Kernel] Speed up something else (#42)", day(3))
    commit_files(
        repo, {"x.py": "a = 1\n"}, 'Revert "[Kernel] Speed up the zeroing kernel with vect\u2026 (#43)', day(4)
    )
    r = walk(repo, f"{pin}..HEAD", ["x.py"], cache_dir=tmp_path / "c")
    assert [(c.pr, c.reverts) for c in r.commits] == [(41, None), (43, 41)]
    # the reverted commit may lie before the range
    r = walk(repo, "HEAD~1..HEAD", ["x.py"], cache_dir=tmp_path / "c")
    assert [(c.pr, c.reverts) for c in r.commits] == [(43, 41)]


@pytest.mark.parametrize(
    "rng, message",
    [
        ("nope..main", "revision 'nope' of range 'nope..main' is not a commit"),
        ("main", "must have the form PIN..TARGET"),
        ("main...main", "must have the form PIN..TARGET"),
        ("..main", "must name both ends"),
    ],
)
def test_bad_ranges(history, tmp_path, rng, message):
    repo, _ = history
    with pytest.raises(UserError, match=re.escape(message)):
        walk(repo, rng, PATHS, cache_dir=tmp_path)


def test_bad_pr_pattern(history, tmp_path):
    repo, s = history
    with pytest.raises(UserError, match="pr_pattern '\\(#' is not a valid regular expression"):
        walk(repo, f"{s['pin']}..main", PATHS, pr_pattern="(#", cache_dir=tmp_path)


def test_not_a_repository(tmp_path):
    with pytest.raises(UserError, match="is not a git repository"):
        walk(tmp_path, "a..b", [], cache_dir=tmp_path / "c")
    with pytest.raises(UserError, match="is not a directory"):
        walk(tmp_path / "missing", "a..b", [], cache_dir=tmp_path / "c")


def test_missing_blob_names_the_sha(tmp_path):
    repo = init_repo(tmp_path / "r")
    pin = commit_files(repo, {"x.py": "a = 1\n"}, "init", day(1))
    commit_files(repo, {"x.py": "a = 2\nb = 3\n"}, "two (#2)", day(2))
    blob = git(repo, "rev-parse", "HEAD:x.py")
    (repo / ".git" / "objects" / blob[:2] / blob[2:]).unlink()  # as a partial clone would lack it
    with pytest.raises(UserError, match=f"object {blob} is missing"):
        walk(repo, f"{pin}..HEAD", ["x.py"], cache_dir=tmp_path / "c")


def test_shallow_clone_boundary(tmp_path):
    src = init_repo(tmp_path / "src")
    shas = [commit_files(src, {"x.py": f"a = {i}\n"}, f"c{i} (#{i})", day(i + 1)) for i in range(5)]
    clone = tmp_path / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "2", f"file://{src}", str(clone)], check=True)
    with pytest.raises(UserError, match="shallow clone"):
        walk(clone, f"{shas[0]}..HEAD", ["x.py"], cache_dir=tmp_path / "c")  # pin not fetched
    with pytest.raises(UserError, match=f"shallow clone's boundary at commit {shas[3]}"):
        walk(clone, f"{_orphan_pin(clone)}..HEAD", ["x.py"], cache_dir=tmp_path / "c")
    r = walk(clone, f"{shas[3]}..HEAD", ["x.py"], cache_dir=tmp_path / "c")  # within the fetched history
    assert [c.sha for c in r.commits] == [shas[4]]


def _orphan_pin(clone: Path) -> str:
    """A commit present in the clone but sharing no history with HEAD: the range runs to the boundary."""
    empty_tree = git(clone, "hash-object", "-t", "tree", "-w", "/dev/null")
    return git(clone, "commit-tree", empty_tree, "-m", "unrelated", date=day(20))


def test_forked_workers_give_the_serial_answer(history, tmp_path, monkeypatch):
    """The cold walk split over forked processes gives the symbols the in-process walk gives."""
    import porttrack.symbols.extractor as symbols

    repo, s = history
    monkeypatch.setattr(symbols, "_POOL_MIN", 1)  # fork even for this handful of changes
    monkeypatch.setenv("PORTTRACK_JOBS", "1")
    serial = walk(repo, f"{s['pin']}..main", PATHS, cache_dir=tmp_path / "one")
    monkeypatch.setenv("PORTTRACK_JOBS", "2")
    calls = []
    forked = walk(
        repo, f"{s['pin']}..main", PATHS, cache_dir=tmp_path / "two", progress=lambda d, t: calls.append((d, t))
    )
    assert [(c.sha, c.symbols) for c in forked.commits] == [(c.sha, c.symbols) for c in serial.commits]
    assert (forked.parsed, forked.cached, forked.skipped) == (serial.parsed, serial.cached, serial.skipped)
    assert calls[-1] == (9, 9)
    again = walk(repo, f"{s['pin']}..main", PATHS, cache_dir=tmp_path / "two")  # the workers' results were stored
    assert again.parsed == 0 and [c.symbols for c in again.commits] == [c.symbols for c in serial.commits]


def test_long_range_read_by_two_git_processes(history, tmp_path, monkeypatch):
    """A first-parent range cut in two at its middle commit lists the same commits, files and symbols."""
    from porttrack.queue import walk as walk_mod

    repo, s = history
    whole = walk(repo, f"{s['pin']}..main", PATHS, cache_dir=tmp_path / "a")
    monkeypatch.setattr(walk_mod, "_SPLIT_MIN", 2)
    monkeypatch.setenv("PORTTRACK_JOBS", "2")  # the split needs a second core
    split = walk(repo, f"{s['pin']}..main", PATHS, cache_dir=tmp_path / "b")
    assert split.commits == whole.commits and split.total_commits == whole.total_commits == 9


def test_missing_blob_in_the_older_half(tmp_path, monkeypatch):
    from porttrack.queue import walk as walk_mod

    repo = init_repo(tmp_path / "r")
    pin = commit_files(repo, {"x.py": "a = 1\n"}, "init", day(1))
    commit_files(repo, {"x.py": "a = 2\nb = 3\n"}, "two (#2)", day(2))
    blob = git(repo, "rev-parse", "HEAD:x.py")
    for n in range(3, 7):
        commit_files(repo, {f"y{n}.py": f"c = {n}\n"}, f"more (#{n})", day(n))
    (repo / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    monkeypatch.setattr(walk_mod, "_SPLIT_MIN", 2)
    monkeypatch.setenv("PORTTRACK_JOBS", "2")  # the split needs a second core
    with pytest.raises(UserError, match=f"object {blob} is missing"):
        walk(repo, f"{pin}..HEAD", ["x.py", "y3.py"], cache_dir=tmp_path / "c")


@pytest.fixture
def port(tmp_path):
    up = init_repo(tmp_path / "up")
    for i in range(4):
        commit_files(up, {"vllm/a.py": f"def f{i}():\n    return {i}\n"}, f"[Core] f{i} (#{i + 1})")
    port = init_repo(tmp_path / "port")
    (port / "porttrack.toml").write_text('[upstream]\nrepo = "../up"\npaths = ["vllm/"]\n\n[port]\nroot = "."\n')
    return port


@pytest.mark.parametrize(
    "rng, message",
    [
        ("HEAD~2..^HEAD", "revision '^HEAD' of range 'HEAD~2..^HEAD' is not a commit"),
        ("HEAD..HEAD~3", "range 'HEAD..HEAD~3' is backwards"),
    ],
)
def test_odd_ranges_are_refused_naming_the_range(port, rng, message):
    r = run_cli("queue", "build", "--range", rng, "--name", "q", cwd=port, check_rc=2)
    assert message in r.stderr and "Traceback" not in r.stderr and "git " not in r.stderr
    assert not (port / "queue" / "q.toml").exists()


def test_refresh_to_an_older_target_is_refused(port):
    run_cli("queue", "build", "--range", "HEAD~2..HEAD", "--name", "q", cwd=port, check_rc=0)
    r = run_cli("queue", "refresh", "--target", "HEAD~3", cwd=port, check_rc=2)
    assert "is backwards" in r.stderr


def test_empty_range_at_one_commit_is_fine(port):
    r = run_cli("queue", "build", "--range", "HEAD..HEAD", "--name", "q", cwd=port, check_rc=0)
    assert "0 entries" in r.stdout


def test_a_cache_folder_that_cannot_be_made_names_its_setting(port, tmp_path, monkeypatch):
    blocker = tmp_path / "blocker"
    blocker.write_text("")
    monkeypatch.setenv("PORTTRACK_CACHE_DIR", str(blocker / "sub"))
    r = run_cli("queue", "build", "--range", "HEAD~2..HEAD", "--name", "q", cwd=port, check_rc=2)
    assert f"cache folder {blocker / 'sub'} (PORTTRACK_CACHE_DIR) cannot be created" in r.stderr


def test_progress_is_plain_lines_off_a_terminal_and_a_bar_on_one(port):
    import io

    from rich.console import Console

    from porttrack.progress import queue_walk

    plain = Console(file=io.StringIO(), force_terminal=False, width=80)
    p = queue_walk(plain, every=2)
    for done in range(6):
        p(done, 5)
    p.close()
    assert plain.file.getvalue().splitlines() == ["walked 2/5 commits", "walked 4/5 commits", "walked 5/5 commits"]
    tty = Console(file=io.StringIO(), force_terminal=True, width=80)
    p = queue_walk(tty, every=2)
    for done in range(6):
        p(done, 5)
    p.close()
    assert "walking" in tty.file.getvalue() and "walked" not in tty.file.getvalue()
    # the real CLI, off a terminal: the last line reports the whole range
    r = run_cli("queue", "build", "--range", "HEAD~3..HEAD", "--name", "q", cwd=port, check_rc=0)
    assert r.stderr.strip().splitlines()[-1] == "walked 3/3 commits"


def test_scopes_nested_too_deep_to_walk_are_touched_without_symbols(tmp_path):
    from pathlib import Path

    from porttrack.queue.walk import walk

    up = init_repo(tmp_path / "deep")
    pin = commit_files(up, {"csrc/a.cpp": "int a();\n"}, "init")
    deep = b"namespace a { " * 3000 + b"int g();" + b" }" * 3000
    commit_files(up, {"csrc/deep.h": deep, "csrc/a.cpp": "int a();\nint b();\n"}, "deep (#1)")
    r = walk(up, f"{pin}..HEAD", ["csrc"], cache_dir=Path(tmp_path / "c"))
    (c,) = r.commits
    assert [f.path for f in c.files] == ["csrc/a.cpp", "csrc/deep.h"] and c.symbols.added == ["b"]
    assert r.skipped == 1
