"""One sync cycle on a synthetic pair, as a team runs it: `audit --write`, then `check` on the
same tree must find nothing audit itself wrote wrong (docs/ci.md): the two judge with one code."""

from __future__ import annotations

import json

from conftest import run_cli
from test_audit_rules import SCHED, pair

POOL = """\
// Ported from: vllm/core/pool.py @ {pin}
class Pool {{
 public:
  int drain() {{ return 0; }}
}};
int UsePool(Pool& p) {{ return p.drain(); }}
"""


def test_check_right_after_audit_write_finds_no_error(tmp_path):
    base = (
        SCHED.replace(
            "    def free(self, request):\n", "    def drain(self):\n        return 0\n\n    def free(self, request):\n"
        )
        + "\n\n_PREVIOUSLY_SUPPORTED = {'a'}\n"
    )
    base = base.replace(
        "        self.budget = budget\n", "        self.budget = budget\n        self.stats_sink = StatsSink()\n"
    )
    steps = [
        # a member of a class the port has, where the port has the name only on another class
        ("[Core] Drain more", base.replace("        return 0\n", "        return 1\n")),
        # a constant the port spells its own way and reads nowhere: inert
        ("[Core] Support b too", base.replace("{'a'}", "{'a', 'b'}")),
        # a function the port has, changed only on lines that serve what the port lacks
        (
            "[Metrics] Flush on free",
            base.replace(
                "        return request\n", "        self.stats_sink.flush_pending()\n        return request\n"
            ),
        ),
    ]
    port_extra = {
        "src/core/pool.cpp": POOL.format(pin="0" * 10),
        "src/core/support.cpp": 'const char* PreviouslySupported[] = {"a"};\n',
    }
    port, r = pair(
        tmp_path,
        [(subject, {"vllm/core/sched.py": text}) for subject, text in steps],
        base_sched=base,
        port_extra=port_extra,
    )
    assert {k: v["verdict"] for k, v in r.items()} == {
        "[Core] Drain more": "surface-absent",
        "[Core] Support b too": "inert",
        "[Metrics] Flush on free": "surface-absent",
    }, {k: (v["verdict"], v["reason"]) for k, v in r.items()}
    run_cli("audit", "--write", cwd=port, check_rc=0)
    data = json.loads(run_cli("check", "--format", "json", cwd=port).stdout)
    errors = [f for f in data["findings"] if f["severity"] == "error"]
    assert errors == [], [(f["code"], f["message"]) for f in errors]
