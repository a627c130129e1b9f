"""The first hour on a real port, through the real CLI on repositories built here: a build on a
mirror that lacks blobs, an existing queue, an empty queue beside a full one."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

from conftest import commit_files, git, init_repo, run_cli

from porttrack.queue import file as queuefile
from porttrack.config import load_config

CONFIG = '[upstream]\nrepo = "../up"\npaths = ["vllm/"]\n\n[port]\nroot = "."\nscopes = { code = ["src"], tests = ["tests"] }\n'


def drop_object(repo: Path, sha: str) -> None:
    """Delete a loose object, as a partial or filtered mirror would lack it."""
    (repo / ".git" / "objects" / sha[:2] / sha[2:]).unlink()


def mirror(tmp_path: Path) -> dict:
    up = init_repo(tmp_path / "up")
    s = {"up": up}
    s["pin"] = commit_files(
        up, {"vllm/a.py": "def f():\n    return 1\n", "docs/page.html": "<p>old</p>\n"}, "base (#1)"
    )
    # one commit changes a mirrored file and a docs page: the page's blob is not in the mirror
    s["mixed"] = commit_files(
        up,
        {"vllm/a.py": "def f():\n    return 2\n\n\ndef g():\n    return f()\n", "docs/page.html": "<p>new</p>\n"},
        "[Core] Add g, docs (#2)",
    )
    s["docs_blob"] = git(up, "rev-parse", "HEAD:docs/page.html")
    s["lost"] = commit_files(up, {"vllm/lost.py": "class Lost:\n    pass\n"}, "[Core] Add Lost (#3)")
    s["lost_blob"] = git(up, "rev-parse", "HEAD:vllm/lost.py")
    s["target"] = commit_files(up, {"vllm/b.py": "class B:\n    def m(self):\n        pass\n"}, "[Core] Add B (#4)")
    port = init_repo(tmp_path / "port")
    (port / "porttrack.toml").write_text(CONFIG)
    # no provenance headers and no [[map]]: every mirrored file counts as having a counterpart
    commit_files(port, {"src/a.cpp": "int f() { return 2; }\nint g() { return f(); }\n"}, "port")
    s["port"] = port
    return s


def test_a_blob_missing_outside_the_mirrored_paths_is_never_read(tmp_path):
    s = mirror(tmp_path)
    drop_object(s["up"], s["docs_blob"])
    proc = run_cli("queue", "build", "--range", f"{s['pin']}..{s['target']}", "--name", "q", cwd=s["port"], check_rc=0)
    assert "wrote" in proc.stdout and "3 entries" in proc.stdout
    q = queuefile.load(s["port"] / "queue" / "q.toml").queue
    assert [e.files for e in q.entries] == [["vllm/a.py"], ["vllm/lost.py"], ["vllm/b.py"]]
    assert q.entries[0].symbols.added == ["g"] and not any(e.unreadable for e in q.entries)


def test_a_blob_missing_inside_names_commit_file_path_rule_and_the_ways_out(tmp_path):
    s = mirror(tmp_path)
    drop_object(s["up"], s["lost_blob"])
    proc = run_cli("queue", "build", "--range", f"{s['pin']}..{s['target']}", "--name", "q", cwd=s["port"])
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    line = [ln for ln in proc.stderr.splitlines() if ln.startswith("porttrack:")]
    assert len(line) == 1, proc.stderr
    msg = line[0]
    for needle in (
        s["lost_blob"],
        "vllm/lost.py",
        s["lost"][:10],
        "[Core] Add Lost (#3)",
        "'vllm/'",
        "Narrow [upstream] paths",
        "fetch",
        "--skip-missing",
    ):
        assert needle in msg, (needle, msg)
    assert not (s["port"] / "queue" / "q.toml").exists()


def test_skip_missing_records_the_file_unreadable_and_audit_calls_it_untrusted(tmp_path):
    s = mirror(tmp_path)
    drop_object(s["up"], s["lost_blob"])
    drop_object(s["up"], s["docs_blob"])
    proc = run_cli(
        "queue",
        "build",
        "--range",
        f"{s['pin']}..{s['target']}",
        "--name",
        "q",
        "--skip-missing",
        cwd=s["port"],
        check_rc=0,
    )
    assert "1 file could not be read" in proc.stdout and "vllm/lost.py" in proc.stdout and "untrusted" in proc.stdout
    q = queuefile.load(s["port"] / "queue" / "q.toml").queue
    lost = next(e for e in q.entries if e.sha == s["lost"])  # its only file is unreadable: it keeps its entry
    assert lost.unreadable == ["vllm/lost.py"] and lost.files == ["vllm/lost.py"] and lost.stat == {}
    assert [e.n for e in q.entries if e.unreadable] == [lost.n]
    assert [e.sha for e in q.entries] == [s["mixed"], s["lost"], s["target"]]  # upstream order kept
    assert q.entries[0].symbols.added == ["g"]  # the readable files still get their symbols
    text = (s["port"] / "queue" / "q.toml").read_text()
    assert 'unreadable = ["vllm/lost.py"]' in text
    audit = json.loads(run_cli("audit", "--json", cwd=s["port"], check_rc=0).stdout)
    verdicts = {r["entry"]: (r["verdict"], r["rule"], r["reason"]) for r in audit["results"]}
    assert verdicts[lost.n][0] == "untrusted" and "vllm/lost.py" in verdicts[lost.n][2]
    assert verdicts[q.entries[0].n][0] != "untrusted"  # only the entry with the unreadable file


def test_an_existing_queue_is_refused_before_any_walking(tmp_path):
    s = mirror(tmp_path)
    rng = f"{s['pin']}..{s['target']}"
    run_cli("queue", "build", "--range", rng, cwd=s["port"], check_rc=0)  # the default name, from the target
    again = run_cli("queue", "build", "--range", rng, cwd=s["port"])
    assert again.returncode == 2 and "already exists" in again.stderr
    assert "walked" not in again.stderr  # the progress line of a walk never appeared
    named = run_cli("queue", "build", "--range", rng, "--name", f"sync-{s['target'][:10]}", cwd=s["port"])
    assert named.returncode == 2 and "already exists" in named.stderr and "walked" not in named.stderr


def test_an_empty_queue_does_not_make_the_full_one_ambiguous(tmp_path):
    s = mirror(tmp_path)
    run_cli("queue", "build", "--range", f"{s['pin']}..{s['target']}", "--name", "main", cwd=s["port"], check_rc=0)
    up = s["up"]
    docs_only = commit_files(up, {"docs/other.html": "<p>x</p>\n"}, "[Doc] only docs (#5)")
    tiny = run_cli(
        "queue", "build", "--range", f"{s['target']}..{docs_only}", "--name", "tiny", cwd=s["port"], check_rc=0
    )
    assert "0 entries" in tiny.stdout and "no commit of the range touches [upstream] paths" in tiny.stdout
    assert "queue refresh --queue queue/tiny.toml" in tiny.stdout  # no audit to suggest on nothing
    shown = json.loads(run_cli("queue", "show", "--json", cwd=s["port"], check_rc=0).stdout)
    assert len(shown) == 3
    run_cli("audit", cwd=s["port"], check_rc=0)
    # two queues with entries are ambiguous, and the sentence says what to do
    run_cli("queue", "build", "--range", f"{s['pin']}..{s['mixed']}", "--name", "other", cwd=s["port"], check_rc=0)
    proc = run_cli("queue", "show", cwd=s["port"])
    assert proc.returncode == 2 and "several queue files" in proc.stderr and "--queue" in proc.stderr


# ---------------------------------------------------------------- init


def upstream_tree(tmp_path: Path) -> tuple[Path, str, str]:
    """An upstream with a core folder the port mirrors whole, a big folder it cites one file of,
    tests, and docs; a clone of it whose origin is a GitHub-style URL."""
    up = init_repo(tmp_path / "vllm")
    files = {f"vllm/core/m{i}.py": f"def f{i}():\n    pass\n" for i in range(4)}
    files.update({f"vllm/models/model{i}.py": "x = 1\n" for i in range(10)})
    files.update(
        {
            "tests/core/test_m0.py": "def test():\n    pass\n",
            "tests/other/test_x.py": "y = 1\n",
            "docs/index.md": "hi\n",
        }
    )
    pin = commit_files(up, files, "base (#1)")
    target = commit_files(up, {"vllm/core/m0.py": "def f0():\n    return 1\n"}, "[Core] f0 (#2)")
    git(up, "remote", "add", "origin", "https://github.com/acme/vllm.git")
    return up, pin, target


def test_init_proposes_paths_pin_scopes_and_name_from_evidence_and_its_command_works(tmp_path):
    _up, pin, target = upstream_tree(tmp_path)
    port = init_repo(tmp_path / "port")
    commit_files(
        port,
        {
            **{
                f"src/core/m{i}.cpp": f"// Ported from: vllm/core/m{i}.py @ {pin[:10]}\nint f{i}();\n" for i in range(3)
            },
            "src/models/model0.cpp": f"// Ported from: vllm/models/model0.py @ {pin[:10]}\n",
            "src/glue.cpp": "// Ported from: llama.cpp/glue.cpp @ 1234567\n",  # another project's file
            "tests/test_m0.cpp": f"// Ports tests/core/test_m0.py @ {pin[:10]}\n",
            ".agents/engine-matrix.md": "| ID | Item |\n|---|---|\n",
        },
        "port",
    )
    proc = run_cli("init", "--upstream", "../vllm", cwd=port, check_rc=0)
    cfg = tomllib.loads((port / "porttrack.toml").read_text())
    # 3 of 4 core files cited: the folder; 1 of 10 models: the file; tests only where one is ported
    assert cfg["upstream"]["paths"] == ["tests/core/", "vllm/core/", "vllm/models/model0.py"]
    assert cfg["upstream"]["repo"] == "../vllm"  # as given
    assert cfg["upstream"]["name"] == "acme/vllm"  # from the origin URL
    assert cfg["port"]["scopes"] == {"code": ["src"], "tests": ["tests"]}
    assert "warning:" in proc.stdout and "llama.cpp/glue.cpp" in proc.stdout  # not in the upstream: said, not mirrored
    assert "1234567" in proc.stdout  # an unplaceable minority pin is named too
    assert "the pin is an ancestor of" in proc.stdout  # the proposed range is walkable
    command = re.search(r"next: `(porttrack [^`]+)`", proc.stdout)[1]
    assert command == f"porttrack queue build --range {pin[:10]}..{target[:10]}"
    built = run_cli(*command.split()[1:], cwd=port, check_rc=0)  # the command it prints runs
    assert "1 entry" in built.stdout


def test_init_in_an_empty_repository_warns_for_every_guess(tmp_path):
    port = init_repo(tmp_path / "empty")
    proc = run_cli("init", cwd=port, check_rc=0)
    warnings = [ln for ln in proc.stdout.splitlines() if ln.startswith("warning:")]
    text = " ".join(warnings)
    for guess in ("paths", "code scope", "tests scope", "matrices", "name", "repo", "pin"):
        assert guess in text, (guess, warnings)
    assert "src" in text and "missing" in text  # a scope naming folders that do not exist says so
    assert "PIN..TARGET" in proc.stdout.splitlines()[-1]
    load_config(port / "porttrack.toml")  # still a valid config


def test_init_with_an_unplaceable_pin_says_so_and_offers_the_newest_placeable_one(tmp_path):
    up, pin, target = upstream_tree(tmp_path)
    absent = "e" * 12  # no commit of the upstream
    port = init_repo(tmp_path / "port")
    commit_files(
        port,
        {
            **{f"src/core/m{i}.cpp": f"// Ported from: vllm/core/m{i}.py @ {absent}\n" for i in range(3)},
            "src/core/m3.cpp": f"// Ported from: vllm/core/m3.py @ {pin[:9]}\n",
        },
        "port",
    )
    proc = run_cli("init", "--upstream", str(up), cwd=port, check_rc=0)
    assert f"header pins {absent} (3 files)" in proc.stdout and "are not commits of" in proc.stdout
    assert f"fetch origin {absent}" in proc.stdout
    assert f"using {pin[:9]} (1 files), the newest header pin" in proc.stdout
    assert f"next: `porttrack queue build --range {pin[:9]}..{target[:10]}`" in proc.stdout
    assert tomllib.loads((port / "porttrack.toml").read_text())["upstream"]["repo"] == str(up)  # absolute, as given
    # no placeable pin at all: the command says to fetch first, from the remote the upstream has
    port2 = init_repo(tmp_path / "port2")
    commit_files(port2, {"src/core/m0.cpp": f"// Ported from: vllm/core/m0.py @ {absent}\n"}, "port")
    git(up, "remote", "rename", "origin", "upstream")
    proc = run_cli("init", "--upstream", str(up), cwd=port2, check_rc=0)
    assert f"fetch upstream {absent}` then `porttrack queue build --range {absent}..{target[:10]}`" in proc.stdout
    # and with no remote: no command that cannot run, but the upstream commit of the port's last day, said for what it is
    (port2 / "porttrack.toml").unlink()
    git(up, "remote", "remove", "upstream")
    proc = run_cli("init", "--upstream", str(up), cwd=port2, check_rc=0)
    assert "fetch" not in proc.stdout.splitlines()[-1] and "no remote to fetch them from" in proc.stdout
    assert "the last upstream commit before the port's newest commit" in proc.stdout
    last = proc.stdout.splitlines()[-1]
    assert last.startswith("next: `porttrack queue build --range ") and f"..{target[:10]}`" in last


# ---------------------------------------------------------------- honest reports


def test_report_reads_upstream_name_from_the_config_now_and_counts_agree(tmp_path):
    s = mirror(tmp_path)
    port = s["port"]
    run_cli("queue", "build", "--range", f"{s['pin']}..{s['target']}", cwd=port, check_rc=0)
    before = run_cli("report", "sync", cwd=port, check_rc=0).stdout
    assert "- up#2 " in before  # the queue recorded the folder's name at build time
    (port / "porttrack.toml").write_text(CONFIG.replace('paths = ["vllm/"]', 'paths = ["vllm/"]\nname = "acme/vllm"'))
    after = run_cli("report", "sync", cwd=port, check_rc=0).stdout
    assert "- vllm#2 " in after and "up#" not in after  # set afterwards, read at report time
    deferral = run_cli("report", "deferral", cwd=port, check_rc=0).stdout
    assert "up#" not in deferral
    from test_report import assert_counts_agree

    counts = assert_counts_agree(after)
    assert sum(v for k, v in counts.items() if not k.endswith(" seen") and k != "Carry-over") == 3


# ---------------------------------------------------------------- progress


def test_audit_report_and_check_show_scan_progress_off_a_terminal(tmp_path, monkeypatch):
    s = mirror(tmp_path)
    port = s["port"]
    commit_files(port, {f"src/gen{i}.cpp": f"int gen{i}();\n" for i in range(60)}, "more files")
    run_cli("queue", "build", "--range", f"{s['pin']}..{s['target']}", cwd=port, check_rc=0)
    qpath = next((port / "queue").glob("*.toml"))
    text = qpath.read_text()
    last = text.rindex('verdict = "unclassified"')  # the last entry: deferred, so check re-runs its gate
    qpath.write_text(text[:last] + 'verdict = "surface-absent"' + text[last + len('verdict = "unclassified"') :])
    with qpath.open("a") as fh:  # a gate for check to re-run (it scans only for gates)
        fh.write('\n[[entry.gate]]\nid = "b-absent"\nkind = "absent"\nprobe = "B"\nscope = ["src"]\ncontrol = "f"\n')
    for i, args in enumerate((["audit"], ["report", "sync"], ["check"])):
        monkeypatch.setenv("PORTTRACK_CACHE_DIR", str(tmp_path / f"cold{i}"))  # a cold cache each time
        proc = run_cli(*args, cwd=port)
        assert proc.returncode in (0, 1), proc.stderr
        lines = [ln for ln in proc.stderr.splitlines() if "indexed" in ln]
        # grep-first: only files that hold a probed name are parsed, so the total is theirs, not 61
        assert lines and re.fullmatch(r"probe: indexed (\d+)/\1 files \(first scan only\)", lines[-1]), (
            args,
            proc.stderr,
        )
        assert "\x1b[" not in proc.stderr  # plain lines, no terminal codes
        warm = run_cli(*args, cwd=port)
        assert "indexed" not in warm.stderr  # a warm scan reads no file: nothing to report


def test_init_warns_when_the_pin_is_not_on_the_upstream_branch(tmp_path):
    up, pin, _target = upstream_tree(tmp_path)
    git(up, "checkout", "-q", "-b", "side", pin)
    side = commit_files(up, {"vllm/core/m1.py": "def f1():\n    return 9\n"}, "side (#3)")
    git(up, "checkout", "-q", "main")
    port = init_repo(tmp_path / "port")
    commit_files(port, {"src/m1.cpp": f"// Ported from: vllm/core/m1.py @ {side[:10]}\n"}, "port")
    proc = run_cli("init", "--upstream", str(up), cwd=port, check_rc=0)
    assert f"warning: pin {side[:10]} is not an ancestor of" in proc.stdout, proc.stdout


def test_audit_shows_a_bar_on_a_terminal(tmp_path):
    import os
    import pty
    import subprocess
    import sys

    from conftest import ROOT

    s = mirror(tmp_path)
    port = s["port"]
    commit_files(port, {f"src/gen{i}.cpp": f"int gen{i}();\n" for i in range(60)}, "more files")
    run_cli("queue", "build", "--range", f"{s['pin']}..{s['target']}", cwd=port, check_rc=0)
    master, slave = pty.openpty()
    env = dict(
        os.environ, PYTHONPATH=str(ROOT), COLUMNS="100", TERM="xterm", PORTTRACK_CACHE_DIR=str(tmp_path / "cold-tty")
    )
    env.pop("NO_COLOR", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "porttrack", "audit"], cwd=port, env=env, stdin=slave, stdout=slave, stderr=slave
    )
    os.close(slave)
    seen = b""
    while True:
        try:
            chunk = os.read(master, 1 << 16)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        seen += chunk
    assert proc.wait(timeout=120) == 0
    os.close(master)
    text = seen.decode("utf-8", "replace")
    assert "indexing files" in text  # the bar's label, drawn (and then cleared) on the terminal
    assert "probe: indexed" not in text  # not the plain lines meant for logs
