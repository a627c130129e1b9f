"""Shared test helpers: real git repositories in tmp folders and the real CLI, run in-process through
its entry point `porttrack.cli.main` (a subprocess per call cost ~1 s of imports; `run_cli_process`
keeps the true entry point for the few tests that need a real process)."""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import io
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.invalid",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.invalid",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
    # no `git maintenance run --auto` process after each of the suite's ~700 commits
    "GIT_CONFIG_COUNT": "1",
    "GIT_CONFIG_KEY_0": "maintenance.auto",
    "GIT_CONFIG_VALUE_0": "false",
}


def git(repo: Path, *args: str, date: str | None = None) -> str:
    env = dict(os.environ, **GIT_ENV)
    if date:
        env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = date
    return subprocess.run(
        ["git", "-C", str(repo), *args], env=env, check=True, capture_output=True, text=True
    ).stdout.strip()


def init_repo(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    return path


def commit_files(repo: Path, files: dict[str, str | bytes | None], message: str, date: str | None = None) -> str:
    """Write (or delete, for None) files, commit them all, return the new sha."""
    for rel, content in files.items():
        p = repo / rel
        if content is None:
            p.unlink()
            continue
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            p.write_bytes(content)
        else:
            p.write_text(content, encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message, date=date)
    return head(repo)


def one_change(
    tmp_path: Path, before: dict[str, str], after: dict[str, str]
) -> tuple[Path, str, Callable[[str, str], str | None]]:
    """An upstream repository with `before` committed, then `after`: the repo, the change's sha,
    and a reader of a file on either side (`show(rev, path)`, None where git has no such file)."""
    repo = init_repo(tmp_path / "up")
    commit_files(repo, before, "base")
    sha = commit_files(repo, after, "change")

    def show(rev: str, path: str) -> str | None:
        proc = subprocess.run(["git", "-C", str(repo), "show", f"{rev}:{path}"], capture_output=True, text=True)
        return proc.stdout if proc.returncode == 0 else None

    return repo, sha, show


def code_lines(hunks: list) -> set[tuple[int, str, int]]:
    """(hunk index, side, line index) of every changed code line of `hunks` (gitio.Hunk): what a
    no-op finder must explain for the whole change to carry no behaviour."""
    from porttrack.evidence.hunks import code_line_indices

    return {
        (k, side, i)
        for k, h in enumerate(hunks)
        for side in ("old", "new")
        for i in code_line_indices(getattr(h, side))
    }


def head(repo: Path) -> str:
    """HEAD's sha, read from the branch's loose ref where there is one (a git process per commit
    is a tenth of the suite's processes); through git otherwise."""
    dot = repo / ".git"
    try:
        ref = (dot / "HEAD").read_text().strip()
        if ref.startswith("ref: refs/"):
            sha = (dot / ref[5:]).read_text().strip()
            if len(sha) in (40, 64):
                return sha
    except OSError:
        pass  # a worktree's .git file, packed refs: git knows
    return git(repo, "rev-parse", "HEAD")


class Lazy:
    """A module, or one name in it, imported when a test first uses it, not when pytest collects the
    file: importing torch costs every xdist worker about 3 s, and most workers run no torch test."""

    def __init__(self, module: str, name: str | None = None):
        self._module, self._name = module, name

    def _target(self):
        found = importlib.import_module(self._module)
        return getattr(found, self._name) if self._name else found

    def __getattr__(self, attr: str):
        if attr.startswith("_") or attr == "pytestmark":  # pytest's probes while collecting import nothing
            raise AttributeError(attr)
        return getattr(self._target(), attr)

    def __call__(self, *args, **kwargs):
        return self._target()(*args, **kwargs)


# the kvref extra: without torch, the tests that need it skip
needs_torch = pytest.mark.skipif(
    importlib.util.find_spec("torch") is None, reason="the kvref extra (torch) is not installed"
)
# Tests whose process imports torch (kvref's zeroing answers) share one xdist worker: each worker
# that imports it pays ~3 s of CPU.
torch_worker = pytest.mark.xdist_group("torch")


MIRROR_CONFIG = '[upstream]\nrepo = "../up"\npaths = ["vllm/"]\n\n[port]\nroot = "."\nscopes = { code = ["src"], tests = ["tests"] }\n'


def small_mirror(tmp_path: Path) -> dict:
    """An upstream of four commits (one also changing a docs page) and a port with a config but no
    provenance headers or [[map]]: every mirrored file counts as having a counterpart. Returns the
    repos and the commits and blobs by name."""
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
    (port / "porttrack.toml").write_text(MIRROR_CONFIG)
    # no provenance headers and no [[map]]: every mirrored file counts as having a counterpart
    commit_files(port, {"src/a.cpp": "int f() { return 2; }\nint g() { return f(); }\n"}, "port")
    s["port"] = port
    return s


CLI_ENV = {"NO_COLOR": "1", "COLUMNS": "200"}


def _check(proc: subprocess.CompletedProcess, check_rc: int | None) -> subprocess.CompletedProcess:
    if check_rc is not None:
        assert proc.returncode == check_rc, f"rc={proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    return proc


@contextlib.contextmanager
def _environ(env: dict[str, str]):
    saved = dict(os.environ)
    os.environ.update(env)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def run_cli(
    *args: str, cwd: Path, check_rc: int | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    """Run the real `porttrack` CLI in this process, as a user would: `main()` with this argv, cwd and
    environment (NO_COLOR, COLUMNS and `env` on top of ours), its stdout, stderr and exit code captured."""
    from porttrack import cli

    stdout, stderr = io.StringIO(), io.StringIO()
    saved = (sys.argv, os.getcwd(), cli.out, cli.err)
    with _environ({**CLI_ENV, **(env or {})}), contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        # the consoles read NO_COLOR and COLUMNS when they are made: make them under this environment
        cli.out, cli.err = cli.console(), cli.console(stderr=True)
        sys.argv = ["porttrack", *args]
        os.chdir(cwd)
        try:
            cli.main()
            code: object = 0
        except SystemExit as e:
            code = e.code
        finally:
            sys.argv, cwd_was, cli.out, cli.err = saved[0], saved[1], saved[2], saved[3]
            os.chdir(cwd_was)
    if code is None:
        rc = 0
    elif isinstance(code, int):
        rc = code
    else:  # sys.exit("message"): printed to stderr, exit 1, as the interpreter does
        stderr.write(f"{code}\n")
        rc = 1
    return _check(subprocess.CompletedProcess(["porttrack", *args], rc, stdout.getvalue(), stderr.getvalue()), check_rc)


def run_cli_process(
    *args: str, cwd: Path, check_rc: int | None = None, env: dict[str, str] | None = None, **kw
) -> subprocess.CompletedProcess:
    """Run `python -m porttrack` in a subprocess: for the entry point itself, and what needs a real process."""
    full = dict(os.environ, **CLI_ENV, PYTHONPATH=str(ROOT), **(env or {}))
    proc = subprocess.run(
        [sys.executable, "-m", "porttrack", *args], cwd=cwd, env=full, capture_output=True, text=True, **kw
    )
    return _check(proc, check_rc)


@pytest.fixture(scope="session", autouse=True)
def _isolated_cache(tmp_path_factory):
    """Each test session gets its own parse cache, so no test reads or writes the user's. Session
    scope: an autouse fixture comes before the other fixtures of its scope, and session fixtures
    (the audited demo pair, built trees) run porttrack too."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PORTTRACK_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "cache"))
        yield


SHM = Path("/dev/shm")
SHM_NEEDED = 2 * 2**30  # a whole run writes ~170 MB; a container's default 64 MB /dev/shm is left alone


def scratch_root(environ: dict[str, str], shm: Path = SHM, needed: int = SHM_NEEDED) -> Path | None:
    """Where the suite's tmp folders go when nobody chose: memory-backed /dev/shm, where the machine
    has a roomy one. The suite builds ~800 small git repositories (36,000 files); on a disk, making
    and later removing them cost about a fifth of the run's wall time."""
    if any(environ.get(k) for k in ("TMPDIR", "TEMP", "TMP", "PYTEST_DEBUG_TEMPROOT")):
        return None  # the user's choice
    try:
        stat = os.statvfs(shm)
    except OSError:
        return None
    if not os.access(shm, os.W_OK | os.X_OK) or stat.f_bavail * stat.f_frsize < needed:
        return None
    if stat.f_flag & getattr(os, "ST_NOEXEC", 0):  # the suite runs the harnesses it compiles there
        return None
    return shm


def pytest_configure(config: pytest.Config) -> None:
    # Before the first tmp folder is made (xdist's controller hands its basetemp on to each worker).
    root = scratch_root(dict(os.environ))
    if root is not None and config.option.basetemp is None:
        tempfile.tempdir = str(root)


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups into the test ids
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # A process's first hypothesis test builds hypothesis's caches (the constants of every porttrack
    # module, a Unicode table: ~2 s of CPU where no `.hypothesis/` folder is left from a last run, as
    # in CI), so those tests share one worker.
    for item in items:
        if getattr(getattr(item, "obj", None), "is_hypothesis_test", False) and not item.get_closest_marker(
            "xdist_group"
        ):
            item.add_marker(pytest.mark.xdist_group("hypothesis"))
    # Tests that share a build (an xdist_group: the C++ harnesses, the demo) run first. xdist hands
    # a group to one worker whole, and a long group handed out last leaves the other workers idle
    # at the end. The sort is stable and the same on every worker, as xdist requires.
    items.sort(key=lambda item: item.get_closest_marker("xdist_group") is None)
