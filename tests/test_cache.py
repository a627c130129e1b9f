"""The parse cache (porttrack/cache.py): damaged, foreign, unwritable or planted caches never stop a
run, never run code, never change a count; each costs one warning line. Through the real CLI."""

from __future__ import annotations

import json
import os
import pickle
import sqlite3
import time
from pathlib import Path

import pytest

from conftest import commit_files, init_repo, run_cli
from porttrack import cache as cache_mod

SRC = """\
namespace vllm {
struct Zeroer { void zero_blocks(int n); };
void Zeroer::zero_blocks(int n) { (void)n; }
void run(Zeroer& z) { z.zero_blocks(1); z.zero_blocks(2); }
}  // namespace vllm
"""


@pytest.fixture
def port(tmp_path: Path) -> Path:
    repo = init_repo(tmp_path / "port")
    commit_files(
        repo,
        {
            "src/zero.cpp": SRC,
            "porttrack.toml": '[port]\nroot = "."\nscopes = { code = ["src"], tests = [] }\n[cache]\ndir = "cache"\n',
            ".gitignore": "cache/\n",
        },
        "port",
    )
    return repo


def probe_json(port: Path) -> tuple[dict, str]:
    proc = run_cli("probe", "zero_blocks", "--json", cwd=port, check_rc=0)
    got = json.loads(proc.stdout)
    got = got[0] if isinstance(got, list) else got
    return {k: got[k] for k in ("code", "raw", "definitions", "consumers", "status")}, proc.stderr


def db(port: Path) -> Path:
    return cache_mod.db_path(port / "cache")


def warnings(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("porttrack: warning:")]


def test_garbage_and_truncated_caches_are_rebuilt_with_one_warning(port: Path):
    want, err = probe_json(port)
    assert want["code"] == 4 and warnings(err) == []
    for damage in (
        lambda p: p.write_bytes(b"not a database" * 300),
        lambda p: p.write_bytes(p.read_bytes()[: 4096 + 100]),
    ):
        damage(db(port))
        for extra in db(port).parent.glob(db(port).name + "-*"):
            extra.unlink()
        got, err = probe_json(port)
        assert got == want
        assert len(warnings(err)) == 1 and "was damaged" in err and "rebuilt" in err
        assert probe_json(port) == (want, "")  # rebuilt: quiet again


def test_a_cache_of_another_schema_version_is_rebuilt(port: Path):
    want, _ = probe_json(port)
    with sqlite3.connect(db(port)) as c:
        c.execute("PRAGMA user_version = 99")
    got, err = probe_json(port)
    assert got == want and "schema version 99" in err and len(warnings(err)) == 1


def test_rows_that_do_not_add_up_are_caught_not_counted(port: Path):
    want, _ = probe_json(port)
    with sqlite3.connect(db(port)) as c:
        n = c.execute("UPDATE occ SET raw = raw - 1, code = code - 1 WHERE ident = 'zero_blocks'").rowcount
    assert n == 1
    got, err = probe_json(port)
    assert got == want and "was damaged" in err


def test_a_planted_pickle_is_data_not_code(port: Path, tmp_path: Path):
    marker = tmp_path / "pwned"

    class Boom:
        def __reduce__(self):
            return (os.system, (f"touch {marker}",))

    want, _ = probe_json(port)
    payload = pickle.dumps(Boom())
    with sqlite3.connect(db(port)) as c:
        for table, col in (("prepared", "data"), ("prepared", "rows"), ("listing", "data")):
            c.execute(f"UPDATE {table} SET {col} = ?", (payload,))
    got, err = probe_json(port)
    assert got == want and not marker.exists() and "was damaged" in err


def test_an_unwritable_cache_runs_without_one(port: Path):
    db(port).parent.mkdir(parents=True, exist_ok=True)
    db(port).mkdir()  # a folder where the file should be: it cannot be opened or written
    got, err = probe_json(port)
    assert (
        got["code"] == 4 and "cannot be written" in err and "running without a cache" in err and len(warnings(err)) == 1
    )


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes read-only files")
def test_a_read_only_cache_degrades_to_no_caching(port: Path):
    want, _ = probe_json(port)
    folder = db(port).parent
    for p in [folder, *folder.iterdir()]:
        p.chmod(0o555 if p.is_dir() else 0o444)
    try:
        got, err = probe_json(port)
    finally:
        for p in [folder, *folder.iterdir()]:
            p.chmod(0o755 if p.is_dir() else 0o644)
    assert got == want and "running without a cache" in err


def test_a_cache_folder_tracked_in_the_port_is_refused_and_the_run_keeps_its_cache_in_memory(port: Path):
    (port / "porttrack.toml").write_text(
        '[port]\nroot = "."\nscopes = { code = ["src"], tests = [] }\n[cache]\ndir = ".ptcache"\n'
    )
    want, _ = probe_json(port)
    commit_files(port, {".ptcache/README": "committed by mistake\n"}, "cache in git")
    (port / ".ptcache" / cache_mod.DB_FILE).unlink()
    got, err = probe_json(port)
    assert got == want and "git tracks files in it" in err and len(warnings(err)) == 1
    assert not (port / ".ptcache" / cache_mod.DB_FILE).exists()  # nothing written there


def test_a_catastrophic_regex_cannot_hang_a_probe(port: Path):
    commit_files(port, {"src/evil.txt": "a" * 40 + "b\n"}, "evil")
    t = time.monotonic()
    proc = run_cli("probe", "--regex", "(a+)+$", "--json", cwd=port, check_rc=0)
    assert time.monotonic() - t < 60 and json.loads(proc.stdout)
    proc = run_cli("probe", "--regex", "zero(?=_blocks)", cwd=port, check_rc=2)
    assert "does not compile with RE2" in proc.stderr and "Traceback" not in proc.stderr


def test_probe_never_reads_through_a_folder_replaced_by_a_link(port: Path, tmp_path: Path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "leak.cpp").write_text("struct Zeroer { void zero_blocks(int n); }; int secret_leak = zero_blocks;\n")
    commit_files(port, {"src/sys/leak.cpp": "int inside_only;\n"}, "sys")
    (port / "src" / "sys" / "leak.cpp").unlink()
    (port / "src" / "sys").rmdir()
    os.symlink(outside, port / "src" / "sys")  # rm -rf src/sys; ln -s OUTSIDE src/sys
    proc = run_cli("probe", "zero_blocks", "secret_leak", "--json", cwd=port)
    got = {p["symbol"]: p for p in json.loads(proc.stdout)}
    assert got["zero_blocks"]["code"] == 4  # the file inside the root is read: the count is the port's own
    assert got["secret_leak"]["raw"] == 0 and "secret_leak" not in proc.stdout.replace('"secret_leak"', "")
    assert any("src/sys/leak.cpp" in i for i in got["zero_blocks"]["incomplete"])


def test_ci_cache_recipe(port: Path, tmp_path: Path):
    """docs/ci.md's recipe: key on the schema and the tree, save after a run, restore in a fresh clone."""
    import shutil
    import subprocess
    import sys

    from conftest import ROOT, git

    schema = subprocess.run(
        [sys.executable, "-c", "import porttrack.cache as c; print(c.SCHEMA)"],
        capture_output=True,
        text=True,
        check=True,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
    ).stdout.strip()
    key = f"porttrack-v{schema}-{git(port, 'rev-parse', 'HEAD^{tree}')}"
    assert schema == str(cache_mod.SCHEMA) and len(key) == len(f"porttrack-v{schema}-") + 40
    (port / "porttrack.toml").write_text('[port]\nroot = "."\nscopes = { code = ["src"], tests = [] }\n')
    git(port, "commit", "-qam", "no cache dir in the config: the environment names it")
    ci_cache = tmp_path / "runner-temp" / "porttrack-cache"
    env = dict(os.environ, NO_COLOR="1", PYTHONPATH=str(ROOT), PORTTRACK_CACHE_DIR=str(ci_cache))
    cmd = [sys.executable, "-m", "porttrack", "probe", "zero_blocks", "Zeroer", "--json"]
    cold = subprocess.run(cmd, cwd=port, env=env, capture_output=True, text=True, check=True)
    saved = tmp_path / "actions-cache" / key
    shutil.copytree(ci_cache, saved)  # the post-job save
    clone = tmp_path / "fresh-clone"
    subprocess.run(["git", "clone", "-q", str(port), str(clone)], check=True)
    shutil.rmtree(ci_cache)
    shutil.copytree(saved, ci_cache)  # the next job's restore
    warm = subprocess.run(cmd, cwd=clone, env=env, capture_output=True, text=True, check=True)
    strip = lambda out: [{k: v for k, v in p.items() if k not in ("tree", "commit")} for p in json.loads(out)]  # noqa: E731
    assert strip(warm.stdout) == strip(cold.stdout) and json.loads(cold.stdout)[0]["code"] == 4
    assert "indexed" in cold.stderr and "indexed" not in warm.stderr  # the restored clone parsed nothing


def test_a_cache_another_run_holds_is_never_removed(tmp_path: Path, monkeypatch):
    """A locked or busy file is another run's, not a damaged one: this run goes on in memory, with
    one warning, and the file and its rows stay."""
    path = cache_mod.db_path(tmp_path / "cache")
    holder = sqlite3.connect(path)
    holder.execute("CREATE TABLE mine (x)")
    holder.execute("INSERT INTO mine VALUES (1)")
    holder.commit()
    holder.execute("BEGIN EXCLUSIVE")  # another run, mid-write
    monkeypatch.setattr(cache_mod, "BUSY_TIMEOUT_S", 0.05)
    try:
        db = cache_mod.open_db(path)
        assert db.execute("PRAGMA database_list").fetchone()[2] == ""  # in memory
        db.close()
    finally:
        holder.rollback()
        holder.close()
    with sqlite3.connect(path) as again:
        assert again.execute("SELECT x FROM mine").fetchall() == [(1,)]


def test_a_second_store_of_one_run_keeps_the_first_ones_locks(tmp_path: Path):
    """Two stores of one run open the same file. Opening the second must not drop the locks the
    first holds (closing any descriptor of the file drops every lock of the process): else another
    run that closes its last connection deletes the write-ahead log in use here, and the file is
    damaged."""
    import subprocess
    import sys

    path = cache_mod.db_path(tmp_path / "cache")
    first = cache_mod.open_db(path)
    first.execute("INSERT INTO listing VALUES ('k', 'v')")
    second = cache_mod.open_db(path)
    other = f"import sqlite3; d = sqlite3.connect({str(path)!r}); d.execute('SELECT 1 FROM listing'); d.close()"
    subprocess.run([sys.executable, "-c", other], check=True)
    assert Path(f"{path}-wal").is_file()  # still this run's: the other run took no exclusive lock
    first.execute("INSERT INTO listing VALUES ('k2', 'v2')")
    first.close()
    second.close()
    with sqlite3.connect(path) as again:
        assert again.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert again.execute("SELECT key FROM listing ORDER BY key").fetchall() == [("k",), ("k2",)]


def test_a_cache_that_fails_mid_run_is_kept_and_the_run_goes_on_in_memory(port: Path, tmp_path: Path):
    """A write that fails mid-scan (here a file-size limit: the cache cannot grow) is not damage: the
    file stays, the scan runs again with its cache in memory, with one warning, and counts the same."""
    import resource
    import subprocess
    import sys

    from conftest import ROOT

    body = "".join(f"void use{j}(Zeroer& z) {{ z.zero_blocks({j}); }}\n" for j in range(200))
    commit_files(port, {f"src/use{i}.cpp": body for i in range(40)}, "many uses")
    cache_mod.open_db(db(port)).close()  # the tables are there: opening this cache writes one page

    def limited() -> None:
        limit = 48 * 1024  # the open fits (a 32 KiB -shm file, one page), the scan's writes do not
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    env = dict(os.environ, NO_COLOR="1", PYTHONPATH=str(ROOT))
    cmd = [sys.executable, "-m", "porttrack", "probe", "zero_blocks", "--json"]
    proc = subprocess.run(cmd, cwd=port, env=env, capture_output=True, text=True, preexec_fn=limited)
    assert proc.returncode == 0, proc.stderr
    assert warnings(proc.stderr) == [
        f"porttrack: warning: cache {db(port)} failed mid-run (disk I/O error); this run keeps its cache in memory."
    ]
    assert db(port).is_file()
    unlimited = subprocess.run(cmd, cwd=port, env=env, capture_output=True, text=True, check=True)
    assert json.loads(proc.stdout) == json.loads(unlimited.stdout) and json.loads(proc.stdout)[0]["code"] == 8004
