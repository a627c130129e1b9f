"""The upstream and port pair that tests/audit/test_rules_*.py build: an upstream with
vllm/core/sched.py and the commits under test, a port that maps vllm/core/ to src/core/, the
queue built and audited with the real CLI."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import commit_files, init_repo, run_cli

from porttrack.queue import file as queuefile

CONFIG = """\
[upstream]
repo = "../up"
paths = ["vllm/"]

[port]
scopes = {{ code = ["src"], tests = ["tests"] }}

[[map]]
upstream = 'vllm/core/(?P<rest>.+)\\.py'
port = ["src/core/{{rest}}.cpp"]

[owners]
matrices = [".agents/*-matrix.md"]
{owners}
{extra}
"""

SCHED = """\
import logging

logger = logging.getLogger(__name__)


class Scheduler:
    def __init__(self, budget):
        self.budget = budget

    def step(self, tokens):
        return compute_budget(tokens, self.budget)

    def free(self, request):
        return request
"""

PORT_SCHED = """\
// Ported from: vllm/core/sched.py @ {pin}
int ComputeBudget(int tokens, int budget) {{ return tokens < budget ? tokens : budget; }}

class Scheduler {{
 public:
  explicit Scheduler(int budget) : budget_(budget) {{}}
  int step(int tokens) {{ return ComputeBudget(tokens, budget_); }}
  int free(int request) {{ return request; }}
 private:
  int budget_;
}};

int Run(Scheduler& s) {{ return s.step(4) + s.free(1); }}
"""

# the upstream's tests of sched.py (`[audit] non_code`), and a port file that names them its source
TESTS = "vllm/core/tests/test_sched.py"
FIRST_TEST = "def make_sched():\n    return 1\n\n\ndef test_free():\n    assert make_sched()\n"
PORT_TESTS = {"src/core/tests/test_sched.cpp": f"// Ported from: {TESTS}\nint TestFree() {{ return 1; }}\n"}

MATRIX = "# Engine matrix\n\n| ID | Item | Upstream code/tests | State |\n|---|---|---|---|\n"


# an upstream fix that explains itself in a comment, and a port that copied the comment with it
FREED_TWICE = (
    "        return request\n",
    "        # A request freed twice must not hand its blocks back to the pool a second\n"
    "        # time, or two later requests would end up sharing one block.\n"
    "        if request.freed:\n            return None\n        return request\n",
)
PORT_FREED = PORT_SCHED.replace(
    "  int free(int request) {{ return request; }}",
    "  // A request freed twice must not hand its blocks back to the pool a\n"
    "  // second time, or two later requests would end up sharing one block.\n"
    "  int free(int request) {{ return released_[request] ? 0 : request; }}",
)


def pair(
    tmp_path: Path,
    commits: list[tuple[str, dict]],
    *,
    port_sched: str = PORT_SCHED,
    port_extra: dict | None = None,
    rows: str = "",
    owners: str = "",
    extra: str = "",
    base_extra: dict | None = None,
    base_sched: str = SCHED,
    queued: int | None = None,
) -> tuple[Path, dict[str, dict]]:
    """Upstream: a base with vllm/core/sched.py, then `commits` (subject, files), the first `queued`
    of them in the queue (all by default; the rest come after it). The port maps vllm/core/ to
    src/core/. Returns the port and audit's entry-level results by subject."""
    up = init_repo(tmp_path / "up")
    base = commit_files(
        up,
        {"vllm/core/sched.py": base_sched, **(base_extra or {})},
        "[Core] base (#1)",
        date="2026-03-01T00:00:00+00:00",
    )
    shas = [base]
    for i, (subject, files) in enumerate(commits):
        shas.append(commit_files(up, files, subject, date=f"2026-03-{2 + i:02d}T00:00:00+00:00"))
    port = init_repo(tmp_path / "port")
    files = {
        "porttrack.toml": CONFIG.format(owners=owners, extra=extra),
        ".agents/engine-matrix.md": MATRIX + rows,
        "src/core/sched.cpp": port_sched.format(pin=base[:10]),
        **(port_extra or {}),
    }
    commit_files(port, files, "port")
    end = shas[-1] if queued is None else shas[queued]
    run_cli("queue", "build", "--range", f"{base}..{end}", "--name", "c", cwd=port, check_rc=0)
    data = json.loads(run_cli("audit", "--json", cwd=port, check_rc=0).stdout)
    subjects = {e.n: e.subject for e in queuefile.load(port / "queue/c.toml").queue.entries}
    return port, {subjects[r["entry"]]: r for r in data["results"] if r["part"] is None}


def edit(old: str, new: str, text: str = SCHED) -> dict:
    assert old in text
    return {"vllm/core/sched.py": text.replace(old, new)}


def steps(*changes: tuple[str, str, str]) -> list[tuple[str, dict]]:
    """Commits that each build on the last: (subject, old, new) applied to sched.py in turn."""
    text, out = SCHED, []
    for subject, old, new in changes:
        assert old in text, old
        text = text.replace(old, new)
        out.append((subject, {"vllm/core/sched.py": text}))
    return out


def beside_tests(tmp_path: Path, subject: str, sched: str, tests: str, **kw) -> dict:
    """An upstream whose first commit adds FIRST_TEST, then `subject`, which sets sched.py to `sched`
    and the tests to `tests`: audit's result for `subject`."""
    _, r = pair(
        tmp_path,
        [("[Core] Test the scheduler", {TESTS: FIRST_TEST}), (subject, {"vllm/core/sched.py": sched, TESTS: tests})],
        **kw,
    )
    return r[subject]
