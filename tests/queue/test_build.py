"""queue build / refresh through the real CLI on real git repositories."""

from conftest import commit_files, git, init_repo, run_cli

from porttrack.queue import file as queuefile

CONFIG = '[upstream]\nrepo = "../up"\npaths = ["vllm/"]\n\n[port]\nroot = "."\n'


def setup(tmp_path):
    up = init_repo(tmp_path / "up")
    pin = commit_files(up, {"vllm/a.py": "def f():\n    return 1\n"}, "base (#1)", date="2026-03-01T12:00:00+00:00")
    commit_files(
        up,
        {"vllm/a.py": "def f():\n    return 2\n\n\ndef g():\n    return f()\n"},
        "[Core] Change f, add g (#2)",
        date="2026-03-02T12:00:00+00:00",
    )
    commit_files(up, {"docs/x.md": "doc\n"}, "[Doc] not mirrored (#3)", date="2026-03-03T12:00:00+00:00")
    target = commit_files(
        up,
        {"vllm/b.py": "class B:\n    def m(self):\n        pass\n"},
        "[Core] Add B (#4)",
        date="2026-03-04T12:00:00+00:00",
    )
    port = init_repo(tmp_path / "port")
    (port / "porttrack.toml").write_text(CONFIG)
    return up, port, pin, target


def test_build_then_refresh_keeps_numbers_and_human_bytes(tmp_path):
    up, port, pin, target = setup(tmp_path)
    proc = run_cli("queue", "build", "--range", f"{pin}..{target}", "--name", "cycle", cwd=port, check_rc=0)
    assert "2 entries" in proc.stdout
    path = port / "queue" / "cycle.toml"
    q = queuefile.load(path).queue
    assert [(e.n, e.pr) for e in q.entries] == [(1, 2), (2, 4)]
    assert q.meta.pin == pin and q.meta.target == target and q.meta.range_commits == 3
    assert q.entries[0].symbols.changed == ["f"] and q.entries[0].symbols.added == ["g"]
    assert q.entries[1].symbols.added == ["B", "B.m"]
    assert q.entries[0].stat == {"vllm/a.py": [5, 1]}

    # a person triages entry 1 with a comment; refresh must not touch a byte of it
    text = path.read_text()
    text = text.replace(
        'verdict = "unclassified"', '# checked by hand on 2026-03-05\nverdict = "real-gap"  # port f()', 1
    )
    path.write_text(text)
    assert run_cli("queue", "refresh", cwd=port, check_rc=0).stdout.strip().endswith("nothing new")
    assert path.read_text() == text

    new = commit_files(
        up, {"vllm/a.py": "def f():\n    return 3\n\n\ndef g():\n    return f()\n"}, "[Bugfix] f again (#5)"
    )
    proc = run_cli("queue", "refresh", cwd=port, check_rc=0)
    assert "1 new entry\n" in proc.stdout
    after = path.read_text()
    assert after.startswith(text.split("[queue]")[0])
    first_entry = text[text.index("[[entry]]") : text.index("[[entry]]", text.index("[[entry]]") + 1)]
    assert first_entry in after
    q = queuefile.load(path).queue
    assert [(e.n, e.pr) for e in q.entries] == [(1, 2), (2, 4), (3, 5)]
    assert q.meta.target == new and q.meta.range_commits == 4
    assert q.entries[0].verdict == "real-gap"


def test_build_refuses_to_overwrite(tmp_path):
    _up, port, pin, target = setup(tmp_path)
    run_cli("queue", "build", "--range", f"{pin}..{target}", "--name", "c", cwd=port, check_rc=0)
    proc = run_cli("queue", "build", "--range", f"{pin}..{target}", "--name", "c", cwd=port)
    assert proc.returncode == 2 and "already exists" in proc.stderr and "Traceback" not in proc.stderr


def test_build_with_queue_outside_root_refused(tmp_path):
    _up, port, pin, target = setup(tmp_path)
    proc = run_cli("queue", "build", "--range", f"{pin}..{target}", "--queue", "../q.toml", cwd=port)
    assert proc.returncode == 2 and "outside the port root" in proc.stderr
    assert not (tmp_path / "q.toml").exists()


def test_a_binary_file_builds_a_queue_that_loads(tmp_path):
    up, port, _pin, target = setup(tmp_path)
    new = commit_files(up, {"vllm/blob.bin": b"\x00\x01\x02"}, "[Misc] a binary (#6)")
    run_cli("queue", "build", "--range", f"{target}..{new}", "--name", "bin", cwd=port, check_rc=0)
    assert queuefile.load(port / "queue" / "bin.toml").queue.entries[0].stat == {"vllm/blob.bin": [-1, -1]}
    assert "#6" in run_cli("queue", "show", cwd=port, check_rc=0).stdout


def test_no_upstream_paths_mirrors_the_whole_tree(tmp_path):
    _up, port, pin, target = setup(tmp_path)
    (port / "porttrack.toml").write_text('[upstream]\nrepo = "../up"\n')
    run_cli("queue", "build", "--range", f"{pin}..{target}", "--name", "all", cwd=port, check_rc=0)
    q = queuefile.load(port / "queue" / "all.toml").queue
    assert [e.files for e in q.entries] == [["vllm/a.py"], ["docs/x.md"], ["vllm/b.py"]]


def test_the_written_path_is_printed_on_one_line(tmp_path):
    deep = tmp_path / ("d" * 60) / ("e" * 60)
    _up, port, pin, target = setup(deep)
    proc = run_cli("queue", "build", "--range", f"{pin}..{target}", "--name", "cycle", cwd=port, check_rc=0)
    assert f"wrote {port / 'queue' / 'cycle.toml'}: 2 entries" in proc.stdout.splitlines()


def test_an_empty_build_can_be_refreshed(tmp_path):
    up, port, _pin, target = setup(tmp_path)
    run_cli("queue", "build", "--range", f"{target}..{target}", "--name", "e", cwd=port, check_rc=0)
    path = port / "queue" / "e.toml"
    assert "entry = []" not in path.read_text()
    commit_files(up, {"vllm/c.py": "def h():\n    pass\n"}, "[Core] Add h (#9)")
    run_cli("queue", "refresh", cwd=port, check_rc=0)
    q = queuefile.load(path).queue
    assert [(e.n, e.pr) for e in q.entries] == [(1, 9)] and q.meta.range_commits == 1
    run_cli("queue", "show", cwd=port, check_rc=0)


def test_refresh_counts_the_range_once_after_a_hand_reset_target(tmp_path):
    up, port, pin, target = setup(tmp_path)
    run_cli("queue", "build", "--range", f"{pin}..{target}", "--name", "c", cwd=port, check_rc=0)
    path = port / "queue" / "c.toml"
    middle = git(up, "rev-parse", "HEAD~1")
    path.write_text(path.read_text().replace(f'target = "{target}"', f'target = "{middle}"'))
    run_cli("queue", "refresh", cwd=port, check_rc=0)
    q = queuefile.load(path).queue
    assert q.meta.range_commits == 3 and [e.pr for e in q.entries] == [2, 4]
