"""benchmarks/accuracy.py's scoring: the figures issue 24's targets are read from."""

from __future__ import annotations

import importlib.util
import tomllib
from pathlib import Path

from conftest import commit_files, init_repo

_PATH = Path(__file__).resolve().parents[2] / "benchmarks" / "accuracy.py"
_spec = importlib.util.spec_from_file_location("bench_accuracy", _PATH)
accuracy = importlib.util.module_from_spec(_spec)  # type: ignore[arg-type]
_spec.loader.exec_module(accuracy)  # type: ignore[union-attr]

AGREED = "two readers agreed"
SETTLED = "disagreed; settled by a third reader"


def _label(sha: str, label: str, readers: str | None = None, also: list[str] | None = None) -> dict:
    out = {"sha": sha, "label": label, "also": also or []}
    if readers is not None:
        out["readers"] = readers
    return out


def test_scores_exact_dangerous_false_work_and_ported_recall():
    labels = [
        _label("a", "ported"),
        _label("b", "real-gap"),
        _label("c", "no-op"),
        _label("d", "surface-absent", also=["no-op"]),
        _label("e", "real-gap"),
    ]
    verdicts = {"a": "ported", "b": "surface-absent", "c": "blocked", "d": "ignore", "e": "owned"}
    s = accuracy.score(labels, verdicts)
    assert accuracy.summary_line(s) == "exact=3/5 dangerous=1 falsework=1 ported=1/1"


def test_readers_line_sets_audit_beside_the_readers_own_agreement():
    labels = [
        _label("a", "ported", AGREED),
        _label("b", "no-op", AGREED),
        _label("c", "surface-absent", AGREED),
        _label("d", "inert", SETTLED),
        _label("e", "no-op"),  # a shared set's entry: one reader, says nothing of agreement
    ]
    verdicts = {"a": "ported", "b": "surface-absent", "c": "surface-absent", "d": "inert", "e": "no-op"}
    s = accuracy.score(labels, verdicts)
    assert (s["readers_agreed"], s["readers_settled"], s["readers_agreed_exact"], s["readers_settled_exact"]) == (
        3,
        1,
        2,
        1,
    )
    assert accuracy.readers_line(s) == (
        "readers: two independent readers agreed on 3 of 4 (75 %) entries labelled twice; "
        "audit is exact on 2 of 3 (67 %) they agreed on, and on 1 of 1 (100 %) a third reader settled"
    )


def test_no_readers_line_when_no_entry_says_how_it_was_labelled():
    s = accuracy.score([_label("a", "ported")], {"a": "ported"})
    assert accuracy.readers_line(s) is None


def test_whole_joins_inits_paths_to_the_sets_so_an_entry_holds_every_mirrored_file(tmp_path):
    up = init_repo(tmp_path / "up")
    commit_files(up, {"vllm/core/sched.py": "x = 1\n", "vllm/other/a.py": "y = 1\n"}, "base")
    port = init_repo(tmp_path / "port")
    commit_files(port, {"src/core/sched.cpp": "// Ported from: vllm/core/sched.py @ 0123456\nint x;\n"}, "port")

    def paths(whole: bool, into: Path) -> list[str]:
        into.mkdir()
        cfg = accuracy.prepare(port, up, None, ["vllm/other"], into, whole)
        return tomllib.loads(cfg.read_text(encoding="utf-8"))["upstream"]["paths"]

    assert paths(False, tmp_path / "narrow") == ["vllm/other"]
    wide = paths(True, tmp_path / "wide")
    assert "vllm/other" in wide and any("vllm/core" in p for p in wide), wide
