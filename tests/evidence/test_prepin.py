"""The pre-pin check: what upstream had at the pin and the port never got, on real repos built here."""

from __future__ import annotations

import json
import re
from pathlib import Path

from conftest import commit_files, init_repo, run_cli

from porttrack.queue import file as queuefile

CONFIG = """\
[upstream]
repo = "../up"
paths = ["vllm/"]

[port]
scopes = { code = ["src"], tests = ["tests"] }

[[map]]
upstream = 'vllm/(?P<rest>.+)\\.py'
port = ["src/{rest}.cpp"]

[owners]
matrices = [".agents/*-matrix.md"]
"""

MATRIX_HEAD = """\
# Engine matrix

| ID | Item | Upstream code/tests | State |
|---|---|---|---|
| `KV-POOL` | pool | `vllm/v1/core/pool.py` | `ACTIVE` |
"""

ZEROER = """\
class PoolZeroer:
    def __init__(self, size):
        self.size = size

    def zero_ids(self, ids):
        return [i * {a} for i in ids]

    def reset_pool(self):
        return {b}

    def zero_stats(self):
        return {c}


def worker_helper():
    return 1
"""

POOL = """\
class BlockPool:
    def allocate(self, n):
        return list(range(n))
"""


def zeroer(a=1, b=0, c=0, extra=""):
    return ZEROER.format(a=a, b=b, c=c) + extra


def build(tmp_path: Path, *, row: str = "", from_first: bool = False) -> tuple[Path, str]:
    """Upstream: PoolZeroer exists at the pin; later commits touch it three times, add and change a
    helper after the pin, and add then remove another. The port has BlockPool and no zeroer."""
    up = init_repo(tmp_path / "up")
    first = commit_files(up, {"vllm/v1/core/pool.py": POOL}, "[Core] pool (#1)", date="2026-03-01T00:00:00+00:00")
    pin = commit_files(
        up, {"vllm/v1/worker/utils.py": zeroer()}, "[Core] zeroer (#2)", date="2026-03-02T00:00:00+00:00"
    )
    steps = [
        ({"vllm/v1/worker/utils.py": zeroer(a=2)}, "[Core] zero faster (#3)"),
        ({"vllm/v1/worker/utils.py": zeroer(a=2, b=1)}, "[Core] reset the pool (#4)"),
        ({"vllm/v1/worker/utils.py": zeroer(a=2, b=1, c=5)}, "[Core] zero stats (#5)"),
        (
            {"vllm/v1/worker/utils.py": zeroer(a=2, b=1, c=5, extra="\n\ndef late_helper():\n    return 1\n")},
            "[Core] add a late helper (#6)",
        ),
        (
            {"vllm/v1/worker/utils.py": zeroer(a=2, b=1, c=5, extra="\n\ndef late_helper():\n    return 2\n")},
            "[Core] change the late helper (#7)",
        ),
        ({"vllm/v1/core/pool.py": POOL + "\n\ndef scratch_pad(n):\n    return n\n"}, "[Core] add a scratch pad (#8)"),
        ({"vllm/v1/core/pool.py": POOL}, "[Core] drop the scratch pad (#9)"),
    ]
    target = pin
    for i, (files, msg) in enumerate(steps):
        target = commit_files(up, files, msg, date=f"2026-03-{3 + i:02d}T00:00:00+00:00")
    port = init_repo(tmp_path / "port")
    commit_files(
        port,
        {
            "porttrack.toml": CONFIG,
            ".agents/engine-matrix.md": MATRIX_HEAD + row,
            "src/v1/core/pool.cpp": (
                f"// Ported from: vllm/v1/core/pool.py @ {pin[:10]}\n"
                "struct BlockPool {\n  int Allocate(int n) { return n; }\n};\n"
                "int Use(BlockPool& p) { return p.Allocate(2); }\n"
            ),
            "src/v1/worker/utils.cpp": (
                f"// Ported from: vllm/v1/worker/utils.py @ {pin[:10]}\n"
                "int WorkerHelper() { return 1; }\n"
                "int Run() { return WorkerHelper(); }\n"
            ),
        },
        "port",
    )
    run_cli(
        "queue",
        "build",
        "--range",
        f"{first if from_first else pin}..{target}",
        "--name",
        "cycle",
        cwd=port,
        check_rc=0,
    )
    return port, pin


def audit_json(port: Path) -> dict:
    return json.loads(run_cli("audit", "--json", cwd=port, check_rc=0).stdout)


def by_subject(port: Path) -> dict[str, int]:
    q = queuefile.load(port / "queue" / "cycle.toml").queue
    return {re.sub(r" \(#\d+\)$", "", e.subject): e.n for e in q.entries}


def test_a_class_present_at_the_pin_and_absent_here_is_one_gap_three_entries_point_at(tmp_path):
    port, pin = build(tmp_path)
    n = by_subject(port)
    data = audit_json(port)
    gaps = data["prepin"]["gaps"]
    assert [g["symbol"] for g in gaps] == ["PoolZeroer"]
    gap = gaps[0]
    three = sorted([n["[Core] zero faster"], n["[Core] reset the pool"], n["[Core] zero stats"]])
    assert gap["entries"] == three and gap["kind"] == "class" and gap["owned"] is False
    assert gap["where"] == {"pin": pin, "path": "vllm/v1/worker/utils.py", "line": 1}
    line = f"pre-pin: PoolZeroer defined at {pin[:10]}:vllm/v1/worker/utils.py:1 upstream, absent here"
    for r in data["results"]:
        assert (line in r["evidence"]) == (r["entry"] in three), r
        if r["entry"] in three:
            assert r["verdict"] == "surface-absent"  # the verdict stays what the rules say

    deferral = run_cli("report", "deferral", cwd=port, check_rc=0).stdout
    section = deferral.split("## Pre-pin gaps", 1)[1].split("\n## ", 1)[0]
    head = f"- `vllm/v1/worker/utils.py` (at `{pin[:10]}`), pointed at by entries {', '.join(map(str, three))}:"
    assert head in section and "  - absent: `PoolZeroer` (class, upstream line 1); probe in `src`: code 0" in section
    assert "  - a row is owed" in section
    sync = run_cli("report", "sync", cwd=port, check_rc=0).stdout
    assert "- **Pre-pin gaps:** 1 feature (1 name), 1 with no owning row." in sync

    # check warns about it, and an acknowledgement silences it
    proc = run_cli("audit", "--write", cwd=port, check_rc=0)
    found = json.loads(run_cli("check", "--format", "json", cwd=port).stdout)["findings"]
    unowned = [f for f in found if f["code"] == "pre-pin-gap-unowned"]
    assert len(unowned) == 1 and unowned[0]["severity"] == "warning" and "PoolZeroer" in unowned[0]["message"]
    assert unowned[0]["entry"] == three[0]
    qpath = port / "queue" / "cycle.toml"
    qpath.write_text(
        qpath.read_text()
        + (
            f'\n[[ack]]\ncode = "pre-pin-gap-unowned"\nentry = {three[0]}\n'
            'reason = "the zeroer is on the roadmap call"\nexpires = 2999-01-01\n'
        )
    )
    found = json.loads(run_cli("check", "--format", "json", cwd=port).stdout)["findings"]
    assert not [f for f in found if f["code"] in ("pre-pin-gap-unowned", "ack-unused")], proc.stdout


def test_a_row_citing_the_class_owns_the_gap(tmp_path):
    row = "| `KV-ZEROER` | zeroing | `PoolZeroer` in `vllm/v1/worker/` | `ACTIVE` |\n"
    port, _ = build(tmp_path, row=row)
    gap = audit_json(port)["prepin"]["gaps"][0]
    assert gap["symbol"] == "PoolZeroer" and gap["owned"] is True and gap["owner"].startswith("KV-ZEROER (")
    assert len(gap["entries"]) == 3
    section = (
        run_cli("report", "deferral", cwd=port, check_rc=0).stdout.split("## Pre-pin gaps", 1)[1].split("\n## ", 1)[0]
    )
    assert "  - owned by KV-ZEROER" in section and "a row is owed" not in section
    run_cli("audit", "--write", cwd=port, check_rc=0)
    found = json.loads(run_cli("check", "--format", "json", cwd=port).stdout)["findings"]
    assert not [f for f in found if f["code"] == "pre-pin-gap-unowned"]


def test_a_symbol_introduced_after_the_pin_is_not_pre_pin(tmp_path):
    port, _ = build(tmp_path)
    n = by_subject(port)
    data = audit_json(port)
    late = next(r for r in data["results"] if r["entry"] == n["[Core] change the late helper"])
    assert "late_helper" in " ".join(late["evidence"])  # probed, and absent here ...
    assert late["verdict"] == "blocked"
    assert not [line for line in late["evidence"] if line.startswith("pre-pin:")]  # ... but not a pre-pin gap
    assert "late_helper" not in [g["symbol"] for g in data["prepin"]["gaps"]]
    # the positive side of the same probe: a symbol that was there at the pin and is present here is no gap either
    assert "worker_helper" not in [g["symbol"] for g in data["prepin"]["gaps"]]


def test_an_add_then_remove_pair_is_net_zero(tmp_path):
    port, pin = build(tmp_path)
    n = by_subject(port)
    data = audit_json(port)
    add, drop = n["[Core] add a scratch pad"], n["[Core] drop the scratch pad"]
    assert data["prepin"]["net_zero"] == [
        {"symbol": "scratch_pad", "added_by": add, "removed_by": drop, "changed_by": [], "pin": pin}
    ]
    line = (
        f"net-zero: scratch_pad is added by entry {add} and removed by entry {drop}, "
        f"and upstream did not have it at the pin {pin[:10]}: skip both"
    )
    marked = sorted(r["entry"] for r in data["results"] if line in r["evidence"])
    assert marked == [add, drop]
    sync = run_cli("report", "sync", cwd=port, check_rc=0).stdout
    assert f"- scratch_pad: entries {add} and {drop} add and remove it inside the queue" in sync
    # the late helper is added and changed, never removed: not net-zero
    assert [z["symbol"] for z in data["prepin"]["net_zero"]] == ["scratch_pad"]


def test_the_pin_of_the_port_file_that_maps_it_counts_too(tmp_path):
    """The queue starts before the zeroer existed, but the port's utils file claims the commit that added it."""
    port, header_pin = build(tmp_path, from_first=True)
    n = by_subject(port)
    gap = audit_json(port)["prepin"]["gaps"]
    assert [(g["symbol"], g["where"]["pin"]) for g in gap] == [("PoolZeroer", header_pin)]
    # the entry that adds the class is not among those pointing at an older gap: it is the addition
    assert gap[0]["entries"] == sorted([n["[Core] zero faster"], n["[Core] reset the pool"], n["[Core] zero stats"]])


def test_without_an_upstream_checkout_the_check_says_it_did_not_run(tmp_path):
    port, _ = build(tmp_path)
    (port / "porttrack.toml").write_text(CONFIG.replace('repo = "../up"\n', ""))
    data = audit_json(port)
    assert data["prepin"]["gaps"] == [] and data["prepin"]["note"].startswith(
        "pre-pin check not run: no [upstream] repo"
    )
    assert "pre-pin check not run" in run_cli("report", "sync", cwd=port, check_rc=0).stdout


def test_entries_without_a_port_counterpart_still_point_at_the_gap(tmp_path):
    """With headers only (no [[map]]) and no port file for the zeroer's module, audit's `unmapped`
    rule calls its entries surface-absent; the surface they touch is what the port lacks."""
    port, pin = build(tmp_path)
    config = CONFIG.replace("[[map]]\nupstream = 'vllm/(?P<rest>.+)\\.py'\nport = [\"src/{rest}.cpp\"]\n", "")
    assert "[[map]]" not in config
    (port / "porttrack.toml").write_text(config)
    (port / "src/v1/worker/utils.cpp").unlink()
    data = audit_json(port)
    zeroer = [r for r in data["results"] if "PoolZeroer" in " ".join(r["evidence"])]
    assert {(r["verdict"], r["rule"]) for r in zeroer} == {("surface-absent", "unmapped")}
    gap = next(g for g in data["prepin"]["gaps"] if g["symbol"] == "PoolZeroer")
    assert len(gap["entries"]) == 3 and gap["where"]["pin"] == pin


def test_only_classes_and_public_functions_are_gaps_the_rest_stays_evidence():
    from porttrack.evidence import prepin
    from porttrack.model import Entry, Queue, QueueMeta

    for name, feature in [
        ("PoolZeroer", True),
        ("worker_helper", True),
        ("_free_widget_inputs", False),
        ("test_zero_ids", False),
        ("CUDA_DEVICES", False),
        ("BlockPool.allocate", False),
    ]:
        assert prepin.is_feature(name) is feature, name
    # a public name defined in a test file is a test helper or fixture, not a feature
    assert prepin.is_feature("tool_parser", "tests/tool_parsers/test_x.py", ["tests/**"]) is False
    assert prepin.is_feature("tool_parser", "vllm/tool_parsers/x.py", ["tests/**"]) is True
    lines = [prepin.PREPIN_LINE.format(symbol=s, pin="0123456789", path="vllm/x.py", line=1) for s in
             ("PoolZeroer", "_free_widget_inputs", "test_zero_ids", "CUDA_DEVICES")]  # fmt: skip
    q = Queue(
        QueueMeta("q"), [Entry(n=i, sha="", subject="", verdict="surface-absent", evidence=lines) for i in (1, 2)]
    )
    assert list(prepin.recorded_gaps(q)) == ["PoolZeroer"]


FEATURE = """\
class AlphaStage:
    def run(self):
        return {a}


def beta_stage(x):
    return x + {b}
"""

FIXTURE = """\
def mod_fixture():
    return {c}
"""


def test_names_of_one_module_are_one_feature_and_test_helpers_are_none(tmp_path):
    """Upstream had a class and a public function in one module, and a fixture in a test file, at the
    pin; later entries touch each. The port has none of them: one feature is owed a row, not three."""
    up = init_repo(tmp_path / "up")

    def files(a=1, b=1, c=1):
        return {"vllm/feat/mod.py": FEATURE.format(a=a, b=b), "tests/feat/test_mod.py": FIXTURE.format(c=c)}

    pin = commit_files(up, {**files(), "vllm/v1/core/pool.py": POOL}, "[Feat] mod (#1)")
    steps = [(files(a=2), "[Feat] alpha (#2)"), (files(a=2, b=2), "[Feat] beta (#3)")]
    steps += [(files(a=2, b=2, c=2), "[Feat] fixture (#4)"), (files(a=2, b=2, c=3), "[Feat] fixture again (#5)")]
    for i, (fs, msg) in enumerate(steps):
        target = commit_files(up, fs, msg, date=f"2026-03-{3 + i:02d}T00:00:00+00:00")
    port = init_repo(tmp_path / "port")
    commit_files(
        port,
        {
            "porttrack.toml": CONFIG.replace('paths = ["vllm/"]', 'paths = ["vllm/", "tests/"]'),
            ".agents/engine-matrix.md": MATRIX_HEAD,
            "src/v1/core/pool.cpp": (
                f"// Ported from: vllm/v1/core/pool.py @ {pin[:10]}\n"
                "struct BlockPool {\n  int Allocate(int n) { return n; }\n};\n"
                "int Use(BlockPool& p) { return p.Allocate(2); }\n"
            ),
        },
        "port",
    )
    run_cli("queue", "build", "--range", f"{pin}..{target}", "--name", "cycle", cwd=port, check_rc=0)
    n = by_subject(port)
    data = audit_json(port)
    assert sorted(g["symbol"] for g in data["prepin"]["gaps"]) == ["AlphaStage", "beta_stage"]
    [feature] = data["prepin"]["features"]
    assert feature["path"] == "vllm/feat/mod.py" and feature["symbols"] == ["AlphaStage", "beta_stage"]
    assert feature["entries"] == sorted([n["[Feat] alpha"], n["[Feat] beta"]]) and feature["owned"] is False

    run_cli("audit", "--write", cwd=port, check_rc=0)
    found = json.loads(run_cli("check", "--format", "json", cwd=port).stdout)["findings"]
    unowned = [f for f in found if f["code"] == "pre-pin-gap-unowned"]
    assert len(unowned) == 1 and "vllm/feat/mod.py had AlphaStage, beta_stage" in unowned[0]["message"]
    assert "mod_fixture" not in json.dumps(found)

    # a row citing one of its names owns the feature
    (port / ".agents/engine-matrix.md").write_text(MATRIX_HEAD + "| `FEAT-MOD` | feature | `beta_stage` | `ACTIVE` |\n")
    found = json.loads(run_cli("check", "--format", "json", cwd=port).stdout)["findings"]
    assert not [f for f in found if f["code"] == "pre-pin-gap-unowned"]


def test_a_placeholder_beside_a_type_checking_import_is_an_alias_not_a_gap(tmp_path):
    from porttrack.evidence import prepin

    up = init_repo(tmp_path / "up")
    text = (
        "from typing import TYPE_CHECKING, Any\n\nif TYPE_CHECKING:\n    from vllm.quant import QuantConfig\n"
        "else:\n    QuantConfig = Any\n\nlegacy_runner = EngineRunner\n\n\nclass EngineRunner:\n"
        "    def run(self):\n        return 1\n\n\ndef start_runner():\n    return EngineRunner()\n"
    )
    pin = commit_files(up, {"vllm/engine.py": text}, "[Core] engine (#1)")
    u = prepin.Upstream(up, None)
    try:
        found = {s: u.find(pin, ["vllm"], ["vllm/engine.py"], s) for s in ("QuantConfig", "legacy_runner")}
        assert {s: (site.kind, site.line) for s, site in found.items() if site} == {
            "QuantConfig": ("alias", 6),
            "legacy_runner": ("alias", 8),
        }
        assert u.find(pin, ["vllm"], ["vllm/engine.py"], "EngineRunner").kind == "class"
        assert u.find(pin, ["vllm"], ["vllm/engine.py"], "start_runner").kind == "symbol"
    finally:
        u.close()
