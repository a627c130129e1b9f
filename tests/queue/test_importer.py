"""queue import: synthetic reports, one per format and quirk, through the real CLI on real git repos."""

from __future__ import annotations

import json
import re
from pathlib import Path

from porttrack.queue import file as queuefile
from porttrack.queue.importer import parse, parse_label
from tests.conftest import commit_files, git, init_repo, run_cli

PORT_FILES = {
    "src/kv/connector.cpp": "// connector\n#include <x>\n\nvoid build_connector_meta() {\n  drain_loads();\n}\n"
    + "".join(f"// filler {i}\n" for i in range(20))
    + "void store_keys() {}\n",
    "include/kv/block_table.h": "struct BlockTable {\n  void clear_row(int r);\n  void move_row(int a, int b);\n};\n",
    "src/vt/cuda_ops.cu": "__global__ void rope(int half) {\n  int first = pair * 2;\n}\n",
}


def make_port(tmp_path: Path, upstream: str | None = None) -> tuple[Path, str]:
    port = init_repo(tmp_path / "port")
    cfg = '[port]\nroot = "."\n' + (f'\n[upstream]\nrepo = "{upstream}"\n' if upstream else "")
    sha = commit_files(port, {**PORT_FILES, "porttrack.toml": cfg}, "port")
    return port, sha


def tranche(tree: str, rows: str, summary: str = "") -> str:
    return f"""# PORT-NOW tranche 1 of `aaaaaaa000..bbbbbbb000`, re-derived against this tree

Wave PORTQ-9. Row `SYNC-ROW`.
Issue: [#77](https://example.invalid/o/p/issues/77).
Tree read: `origin/main` at `{tree}`.

## 1. The answer

{summary}

## 3. The entries

| # | upstream | vllm# | label | holds? | evidence |
|---:|---|---|---|---|---|
{rows}

† a footnote that is not a row.
"""


ROWS = (
    "| 01 | `1111111111` | 101 | NA surface-absent | no | `build_connector_meta` drains loads only "
    "(`src/kv/connector.cpp:4-5`); the store half is at `:27`. |\n"
    "| 02 | `2222222222` | 102 | **REAL_GAP** | yes (part) | `move_row` at `include/kv/block_table.h:3` never clears; "
    "`clear_row` at `:2` does. [#2636](https://example.invalid/o/p/issues/2636). |\n"
    "| 03 | `3333333333` | 103 | ALREADY_SATISFIED **+** NA surface-absent (the batch half) | no | "
    "GPT-J pairs: `first = pair*2` at `src/vt/cuda_ops.cu:1-2`, bounded by `half` at `cuda_ops.cu:1`. |\n"
    "| 04 | `4444444444` | 104 | NA `inert:no KV-producer connector is registered` | no | "
    "Only `store_keys` at `src/kv/connector.cpp:27,4` registers. |\n"
    "| 05 | `5555555555` | 105 | NA **inert**: no `--linear-backend`, Humming unimplemented | no | nothing cited |\n"
)
SUMMARY = """| | Count |
|---|---:|
| ALREADY_SATISFIED | **1** |
| REAL_GAP | **1** |
| NOT_APPLICABLE | **3** — 1 `surface-absent`, 2 `inert` |
"""


def entries(port: Path, name: str = "imported") -> list:
    return queuefile.load(port / "queue" / f"{name}.toml").queue.entries


# ---------------------------------------------------------------- formats and quirks


def test_labels_map_to_verdicts_and_halves():
    assert [h.verdict for h in parse_label("ALREADY_SATISFIED **+** NA surface-absent (the batch half)")] == [
        "ported",
        "surface-absent",
    ]
    assert parse_label("ALREADY_SATISFIED **+** NA surface-absent (the batch half)")[1].description == "the batch half"
    h = parse_label("NA `inert:FA4 is not ported`")
    assert (h[0].verdict, h[0].gate_text) == ("inert", "FA4 is not ported")
    h = parse_label("NA **inert**: buffers are reallocated on width change")
    assert (h[0].verdict, h[0].gate_text) == ("inert", "buffers are reallocated on width change")
    assert parse_label("**REAL_GAP**, and a **pre-pin** one")[0].verdict == "real-gap"
    assert parse_label("ALREADY_SATISFIED†")[0].verdict == "ported"
    assert parse_label("NA surface-absent (both halves), already owned")[0].verdict == "surface-absent"
    assert parse_label("MAYBE LATER") is None


def test_tranche_table_import_with_every_citation_quirk(tmp_path):
    port, head = make_port(tmp_path)
    (port / "t.md").write_text(tranche(head[:9], ROWS, SUMMARY))
    proc = run_cli("queue", "import", "t.md", cwd=port, check_rc=0)
    # the report's own summary table is compared with what was imported
    assert "ALREADY_SATISFIED: imported 1, report says 1 — ok" in proc.stdout
    assert "NOT_APPLICABLE inert: imported 2, report says 2 — ok" in proc.stdout
    es = entries(port)
    assert [e.verdict for e in es] == ["surface-absent", "real-gap", "surface-absent", "inert", "inert"]
    assert all(e.verdict_by == "human" and e.disposition == "PORT-NOW" for e in es)
    assert es[0].source == "t.md:20" and es[0].label == "NA surface-absent"
    # `path:l1-l2` and a bare `:a` that continues the last path named
    assert [(c.path, c.line, c.end) for c in es[0].citations] == [
        ("src/kv/connector.cpp", 4, 5),
        ("src/kv/connector.cpp", 27, 0),
    ]
    assert es[0].citations[0].tree == head[:9] and es[0].citations[0].source == "t.md:20"
    assert es[0].citations[0].anchor == ["build_connector_meta"]
    # issue links become issue numbers
    assert es[1].issues == [2636]
    # halves become parts, each with its own verdict and description; the entry takes the half needing most work
    assert [(p.name, p.verdict) for p in es[2].parts] == [("half 1", "ported"), ("the batch half", "surface-absent")]
    # a basename resolves to the full path the cell named before it
    assert ("src/vt/cuda_ops.cu", 1) in [(c.path, c.line) for c in es[2].citations]
    # `:a,b` is two citations; inert gates keep their words, backticks and all
    assert [(c.line) for c in es[3].citations] == [27, 4]
    assert es[3].gate_text == "no KV-producer connector is registered"
    assert es[4].gate_text == "no `--linear-backend`, Humming unimplemented"
    # the evidence cell is kept verbatim
    assert es[1].reason.startswith("`move_row` at `include/kv/block_table.h:3` never clears")


def test_enumeration_lines_with_corrected_notes(tmp_path):
    port, _ = make_port(tmp_path)
    (port / "2026-09-01-enum.md").write_text(
        "# Upstream sync report\n\n## 4. PORT-NOW (2)\n\n"
        "- `aaaaaaaaaa` vllm#201 [Perf] Raise the cap — PORT-NOW: config.py raises a cap; "
        "the port mirrors it in `include/kv/block_table.h:3`.\n"
        "  **CORRECTED 2026-09-03 (PORTQ-3, #2647): the second clause is FALSE about this tree.** "
        "The disposition is IGNORE. The reading of the upstream diff is left as written.\n"
        "- `bbbbbbbbbb` vllm#202 [Misc] Another — PORT-NOW: changes block_pool.py.\n\n"
        "  A second paragraph that is only a note.\n\n"
        "## 5. INVENTORY (1)\n\n"
        "- `cccccccccc` vllm#203 [XPU] Something — INVENTORY: an unported platform.\n"
        "- `dddddddddd` vllm#204 [CI] Tests — IGNORE: CI only.\n"
        "- `eeeeeeeeee` vllm#205 [?] Odd — UNCLASSIFIED: nobody knows.\n"
    )
    run_cli("queue", "import", "2026-09-01-enum.md", cwd=port, check_rc=0)
    es = entries(port)
    assert [(e.sha, e.pr, e.disposition, e.verdict) for e in es] == [
        ("aaaaaaaaaa", 201, "IGNORE", "ignore"),
        ("bbbbbbbbbb", 202, "PORT-NOW", "unclassified"),
        ("cccccccccc", 203, "INVENTORY", "unclassified"),
        ("dddddddddd", 204, "IGNORE", "ignore"),
        ("eeeeeeeeee", 205, "PORT-NOW", "unclassified"),
    ]
    assert es[0].subject == "[Perf] Raise the cap"
    assert es[0].notes[0].startswith("**CORRECTED 2026-09-03 (PORTQ-3, #2647)")
    assert es[0].issues == [2647]
    assert es[0].label == "PORT-NOW (CORRECTED 2026-09-03: IGNORE)"
    assert es[1].notes == ["A second paragraph that is only a note."]
    assert [(c.path, c.line) for c in es[0].citations] == [("include/kv/block_table.h", 3)]


def test_duplicates_across_reports_are_one_entry_and_the_later_label_wins(tmp_path):
    port, head = make_port(tmp_path)
    (port / "2026-09-01-enum.md").write_text(
        "## PORT-NOW\n\n- `1111111111` vllm#101 [Core] Store loop — PORT-NOW: adds the store loop.\n"
    )
    (port / "2026-09-03-tranche.md").write_text(tranche(head[:9], ROWS.splitlines()[0]))
    # given newest first: the file names' dates decide which reading is later
    run_cli("queue", "import", "2026-09-03-tranche.md", "2026-09-01-enum.md", cwd=port, check_rc=0)
    (e,) = entries(port)
    assert (e.verdict, e.disposition, e.source) == ("surface-absent", "PORT-NOW", "2026-09-03-tranche.md:15")
    assert e.subject == "[Core] Store loop"
    assert len(e.history) == 1 and e.history[0].startswith("2026-09-01-enum.md:3: disposition PORT-NOW")
    # importing again changes nothing
    before = (port / "queue" / "imported.toml").read_bytes()
    proc = run_cli("queue", "import", "2026-09-01-enum.md", "2026-09-03-tranche.md", cwd=port, check_rc=0)
    assert "0 new entries, 0 updated, 1 already up to date" in proc.stdout
    assert (port / "queue" / "imported.toml").read_bytes() == before


def test_a_later_report_moves_the_earlier_reading_to_history_and_keeps_human_text(tmp_path):
    port, head = make_port(tmp_path)
    (port / "2026-09-03-a.md").write_text(tranche(head[:9], ROWS.splitlines()[0]))
    run_cli("queue", "import", "2026-09-03-a.md", cwd=port, check_rc=0)
    q = port / "queue" / "imported.toml"
    text = q.read_text()
    text = text.replace('owner = ""', 'owner = ""  # a team note on the owner', 1) + "# my note at the end\n"
    q.write_text(text)
    later = ROWS.splitlines()[0].replace("NA surface-absent", "**REAL_GAP**")
    (port / "2026-09-05-b.md").write_text(tranche(head[:9], later))
    run_cli("queue", "import", "2026-09-05-b.md", cwd=port, check_rc=0)
    (e,) = entries(port)
    assert (e.verdict, e.label) == ("real-gap", "**REAL_GAP**")
    assert e.history[0].startswith("2026-09-03-a.md:15: disposition PORT-NOW; verdict surface-absent (human)")
    after = q.read_text()
    # both comments survive (where tomlkit appends new tables after an end-of-file comment is docs/queue.md's matter)
    assert "# a team note on the owner" in after and "# my note at the end\n" in after
    # the earlier report's citations stay, each naming its report; the later report's are added
    assert {c.source for c in e.citations} == {"2026-09-03-a.md:15", "2026-09-05-b.md:15"}


def test_sync_report_round_trip(tmp_path):
    """`report sync` of an imported queue regenerates entry lines that parse and import back to the same verdicts."""
    port, head = make_port(tmp_path)
    (port / "2026-09-03-t.md").write_text(tranche(head[:9], ROWS))
    out = run_cli("queue", "import", "2026-09-03-t.md", cwd=port, check_rc=0).stdout
    assert "next: `porttrack check" in out
    for e in entries(port):
        assert e.subject == ""
    q = port / "queue" / "imported.toml"
    q.write_text(q.read_text().replace('subject = ""', 'subject = "A change"'))
    text = run_cli("report", "sync", cwd=port, check_rc=0).stdout
    line_re = re.compile(
        r"^- (?P<repo>[\w.-]+)#(?P<pr>\d+) `(?P<subject>(?:[^`\\]|\\.)*)` \(`(?P<sha>[0-9a-f]{7,40})`\) — (?P<reason>.+\.)$"
    )
    # every entry is listed once, in the section its verdict puts it in (docs/reports.md)
    body = text.split("## PORT-NOW")[1].split("Reproduce:")[0]
    parsed = [line_re.match(ln) for ln in body.splitlines() if ln.startswith("- ")]
    assert all(parsed) and sorted(m["pr"] for m in parsed) == ["101", "102", "103", "104", "105"]
    (port / "synced.md").write_text(text)
    run_cli("queue", "import", "synced.md", "--queue", "queue/again.toml", cwd=port, check_rc=0)
    again = entries(port, "again")
    # the report lists entries by section, so they come back in that order: compare by sha
    assert sorted((e.sha[:8], e.verdict) for e in again) == sorted((e.sha[:8], e.verdict) for e in entries(port))
    split = next(e for e in entries(port) if e.parts)
    assert [p.verdict for p in next(e for e in again if e.sha[:8] == split.sha[:8]).parts] == [
        "ported",
        "surface-absent",
    ]


def test_july_style_sync_report_sections(tmp_path):
    port, _ = make_port(tmp_path)
    (port / "july.md").write_text(
        "# vLLM upstream-sync audit\n\n- **Current parity pin:** `e24d1b24fe96a56ba8b0d653efa076d03eb95d6c`\n\n"
        "## PORT-NOW\n\nNo entries.\n\n## INVENTORY (2)\n\n"
        "- vllm#46853 `Add a drafter (#46853)` (`4c3c64fc`) — adds the draft architecture; add the registry row.\n"
        '- vllm#47140 `Revert "[Platform] Replace \\`torch.cuda.Event\\` (#47140)" (#47668)` (`07f9baf7`) — reverts it.\n\n'
        "## IGNORE (1)\n\n- vllm#1 `[CI] x (#1)` (`12345678`) — CI only.\n\n"
        "## Carry-over\n\n- vllm#46853 `Add a drafter (#46853)` (`4c3c64fc`) — carried.\n"
    )
    run_cli("queue", "import", "july.md", cwd=port, check_rc=0)
    es = entries(port)
    assert [(e.pr, e.disposition, e.verdict) for e in es] == [
        (46853, "INVENTORY", "unclassified"),
        (47140, "INVENTORY", "unclassified"),
        (1, "IGNORE", "ignore"),
    ]
    assert es[1].subject == 'Revert "[Platform] Replace `torch.cuda.Event` (#47140)" (#47668)'


# ---------------------------------------------------------------- upstream matching


def test_entries_match_upstream_commits_and_missing_shas_are_marked(tmp_path):
    up = init_repo(tmp_path / "up")
    base = commit_files(up, {"vllm/a.py": "a = 1\n"}, "base")
    known = commit_files(up, {"vllm/b.py": "b = 2\n"}, "[Core] Add b (#101)", date="2026-07-27T10:00:00")
    port, head = make_port(tmp_path, upstream="../up")
    rows = ROWS.splitlines()[0].replace("1111111111", known[:10]) + "\n" + ROWS.splitlines()[1]
    (port / "t.md").write_text(tranche(head[:9], rows))
    proc = run_cli("queue", "import", "t.md", cwd=port, check_rc=0)
    assert "1 of those entries name a sha that is not in the upstream checkout" in proc.stdout
    a, b = entries(port)
    assert (a.sha, a.subject, a.files, str(a.date), a.upstream_missing) == (
        known,
        "[Core] Add b (#101)",
        ["vllm/b.py"],
        "2026-07-27",
        False,
    )
    assert (b.sha, b.upstream_missing) == ("2222222222", True)
    # an existing entry is matched by sha prefix: a second report on the same commit updates it
    (port / "u.md").write_text(tranche(head[:9], rows.splitlines()[0].replace(known[:10], known[:7])))
    run_cli("queue", "import", "u.md", cwd=port, check_rc=0)
    assert len(entries(port)) == 2
    assert base


# ---------------------------------------------------------------- check re-verifies citations


def test_check_reverifies_imported_citations(tmp_path):
    port, head = make_port(tmp_path)
    (port / "t.md").write_text(tranche(head, ROWS))
    run_cli("queue", "import", "t.md", cwd=port, check_rc=0)
    git(port, "add", "-A")
    git(port, "commit", "-qm", "queue")
    # the port moves on: the connector grows two lines at the top, block_table.h is deleted
    commit_files(
        port,
        {
            "src/kv/connector.cpp": "// moved\n// down\n" + PORT_FILES["src/kv/connector.cpp"],
            "include/kv/block_table.h": None,
        },
        "move things",
    )
    out = json.loads(run_cli("check", "--format", "json", cwd=port, check_rc=1).stdout)
    found = [
        (f["code"], f["severity"], f["entry"], f["path"], f["line"])
        for f in out["findings"]
        if f["code"].startswith("citation")
    ]
    # the report read an ancestor of HEAD: moved lines are stale with their new line, a gone file is an error
    assert ("citation-stale", "warning", 1, "src/kv/connector.cpp", 6) in found
    assert ("citation-stale", "warning", 4, "src/kv/connector.cpp", 29) in found
    vanished = [f for f in found if f[0] == "citation-vanished"]
    assert vanished and all(f[1] == "error" and f[2] == 2 for f in vanished)
    assert not [f for f in found if f[0] == "citation-unanchored"]
    # `--reanchor --write` moves the ones found again and keeps the old place
    proc = run_cli("check", "--reanchor", "--write", cwd=port)
    assert "re-anchored" in proc.stderr
    (e1, *_rest) = entries(port)
    assert (e1.citations[0].line, e1.citations[0].end) == (6, 7)
    assert e1.citations[0].previous == [f"src/kv/connector.cpp:4-5 @ {head}"]
    out = json.loads(run_cli("check", "--format", "json", cwd=port, check_rc=1).stdout)
    assert not [f for f in out["findings"] if f["code"] == "citation-stale"]


def test_citations_from_a_tree_that_is_not_an_ancestor_are_best_effort(tmp_path):
    port, _ = make_port(tmp_path)
    git(port, "checkout", "-qb", "side")
    side = commit_files(port, {"src/other.cpp": "int other;\n"}, "side work")
    git(port, "checkout", "-q", "main")
    rows = ROWS + "| 06 | `6666666666` | 106 | **REAL_GAP** | yes | `other` at `src/other.cpp:1`. |\n"
    (port / "t.md").write_text(tranche(side[:9], rows))
    run_cli("queue", "import", "t.md", cwd=port, check_rc=0)
    out = json.loads(run_cli("check", "--format", "json", cwd=port, check_rc=1).stdout)
    cites = [f for f in out["findings"] if f["code"].startswith("citation")]
    unanchored = [f for f in cites if f["code"] == "citation-unanchored"]
    assert len(unanchored) == 1 and side[:9] in unanchored[0]["message"] and "no ancestor" in unanchored[0]["message"]
    assert [f["severity"] for f in cites if f["code"] == "citation-vanished"] == ["warning"]
    # an unknown tree is said once too
    (port / "t2.md").write_text(tranche("abcdef1234", rows))
    run_cli("queue", "import", "t2.md", "--queue", "queue/other.toml", cwd=port, check_rc=0)
    out = json.loads(run_cli("check", "--format", "json", "--queue", "queue/other.toml", cwd=port, check_rc=1).stdout)
    msgs = [f["message"] for f in out["findings"] if f["code"] == "citation-unanchored"]
    assert len(msgs) == 1 and "does not have" in msgs[0]


def test_cited_text_at_the_report_tree_finds_a_moved_line(tmp_path):
    """When the port repository has the report's tree, the cited line's text is recorded and found again."""
    port, head = make_port(tmp_path)
    (port / "t.md").write_text(
        tranche(head[:9], "| 01 | `1111111111` | 1 | REAL_GAP | yes | no names, just `src/vt/cuda_ops.cu:2`. |")
    )
    run_cli("queue", "import", "t.md", cwd=port, check_rc=0)
    (e,) = entries(port)
    assert e.citations[0].text == "int first = pair * 2;"
    commit_files(port, {"src/vt/cuda_ops.cu": "// new\n" + PORT_FILES["src/vt/cuda_ops.cu"]}, "shift")
    out = json.loads(run_cli("check", "--format", "json", cwd=port, check_rc=1).stdout)
    assert [(f["code"], f["line"]) for f in out["findings"] if f["code"].startswith("citation")] == [
        ("citation-stale", 3)
    ]


# ---------------------------------------------------------------- bad input


def test_no_recognised_entries_is_exit_2_naming_file_and_formats(tmp_path):
    port, _ = make_port(tmp_path)
    (port / "notes.md").write_text("# Notes\n\nNothing here is an entry.\n")
    proc = run_cli("queue", "import", "notes.md", cwd=port, check_rc=2)
    assert "notes.md: no entries recognised; tried enumeration lines" in proc.stderr
    assert "tranche tables" in proc.stderr and "sync report entry lines" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (port / "queue").exists()
    proc = run_cli("queue", "import", "missing.md", cwd=port, check_rc=2)
    assert "report missing.md does not exist." in proc.stderr


def test_malformed_rows_warn_with_file_line_and_the_rest_is_imported(tmp_path):
    port, head = make_port(tmp_path)
    rows = (
        ROWS.splitlines()[0]
        + "\n| 02 | broken |\n| 03 | `no sha here` | 1 | REAL_GAP | yes | x |\n"
        + "| 04 | `4444444444` | 104 | MAYBE LATER | ? | kept as written |"
    )
    (port / "t.md").write_text(tranche(head[:9], rows))
    proc = run_cli("queue", "import", "t.md", cwd=port, check_rc=0)
    assert "warning: t.md:16: table row has 2 cells, the header 6; row skipped." in proc.stderr
    assert "warning: t.md:17: no upstream sha" in proc.stderr
    assert "warning: t.md:18: label 'MAYBE LATER' is not one porttrack knows" in proc.stderr
    es = entries(port)
    assert [(e.sha, e.verdict, e.label) for e in es] == [
        ("1111111111", "surface-absent", "NA surface-absent"),
        ("4444444444", "unclassified", "MAYBE LATER"),
    ]
    assert es[1].reason == "kept as written"


def test_dry_run_writes_nothing(tmp_path):
    port, head = make_port(tmp_path)
    (port / "t.md").write_text(tranche(head[:9], ROWS))
    proc = run_cli("queue", "import", "t.md", "--dry-run", cwd=port, check_rc=0)
    assert "would write" in proc.stdout and "5 new entries" in proc.stdout
    assert not (port / "queue").exists()


def test_parse_reads_header_facts():
    rep = parse(tranche("2850314e3", ROWS, SUMMARY), "x.md")
    assert (rep.tree, rep.range, rep.row, rep.issue) == ("2850314e3", "aaaaaaa000..bbbbbbb000", "SYNC-ROW", 77)
    assert rep.summary == {
        "ALREADY_SATISFIED": 1,
        "REAL_GAP": 1,
        "NOT_APPLICABLE": 3,
        "NOT_APPLICABLE surface-absent": 1,
        "NOT_APPLICABLE inert": 2,
    }


def test_entries_written_as_text_read_back_as_the_tables_would():
    """append_entries writes new entries as text; it must say exactly what entry_table would."""
    import datetime as dt
    import tomllib

    import tomlkit

    from porttrack.model import Citation, Entry, Gate, Part, Symbols

    e = Entry(
        n=3,
        sha="abc",
        subject='He said "hi" \\ `x`\x7f\n',
        date=dt.date(2026, 1, 2),
        pr=5,
        files=["a", "b", "c"],
        renames={"n.py": "o.py"},
        stat={"a": [1, 2]},
        verdict="inert",
        verdict_by="human",
        gate_text="g",
        issues=[1, 2],
        notes=["n1"],
        history=["h"],
        upstream_missing=True,
        evidence=["e1"],
        symbols=Symbols(added=["A"]),
        gates=[Gate(id="x", kind="absent", probe="P", scope=["src"], control="C", established_at="a:1")],
        parts=[
            Part(
                name="p1",
                verdict="ported",
                verdict_by="human",
                label="L",
                blocked_by=[1],
                gates=[Gate(id="y", kind="present", probe="Q", scope=["src"])],
            )
        ],
        citations=[
            Citation(path="a.cpp", line=3, end=5, tree="t", source="s:1", anchor=["A"], text="t x", previous=["p"])
        ],
    )
    doc = tomlkit.document()
    aot = tomlkit.aot()
    aot.append(queuefile.entry_table(e))
    doc["entry"] = aot
    assert tomllib.loads(queuefile.entry_text(e)) == tomllib.loads(doc.as_string())


def test_real_report_quirks_pipes_in_backticks_and_first_label_word(tmp_path):
    port, head = make_port(tmp_path)
    rows = (
        "| 01 | `1111111111` | 1 | NA surface-absent | no | the `a|b|c` family → 0 (`src/kv/connector.cpp:4`). |\n"
        "| 02 | `2222222222` | 2 | **REAL_GAP** (the new model; both edited halves surface-absent) | yes | x |"
    )
    (port / "t.md").write_text(tranche(head[:9], rows))
    proc = run_cli("queue", "import", "t.md", cwd=port, check_rc=0)
    assert "warning" not in proc.stderr
    a, b = entries(port)
    assert a.reason == "the `a|b|c` family → 0 (`src/kv/connector.cpp:4`)." and a.citations[0].line == 4
    assert b.verdict == "real-gap"


def test_an_imported_inert_gate_in_words_is_named_by_check(tmp_path):
    port, head = make_port(tmp_path)
    (port / "t.md").write_text(tranche(head[:9], ROWS.splitlines()[3]))
    run_cli("queue", "import", "t.md", cwd=port, check_rc=0)
    out = json.loads(run_cli("check", "--format", "json", cwd=port, check_rc=1).stdout)
    (inc,) = [f for f in out["findings"] if f["code"] == "verdict-incomplete"]
    assert "only a gate in words ('no KV-producer connector is registered')" in inc["message"]


def test_a_report_that_is_not_a_regular_file_is_refused_without_blocking(tmp_path):
    import os

    port, _ = make_port(tmp_path)
    os.mkfifo(port / "pipe.md")
    proc = run_cli("queue", "import", "pipe.md", cwd=port, check_rc=2)
    assert "report pipe.md is not a regular file." in proc.stderr


def test_entries_inside_a_code_fence_are_not_imported_even_when_it_never_closes(tmp_path):
    port, head = make_port(tmp_path)
    table = tranche(head[:9], ROWS)
    (port / "2026-09-03-t.md").write_text("```text\n" + table)
    proc = run_cli("queue", "import", "2026-09-03-t.md", cwd=port, check_rc=2)
    assert "2026-09-03-t.md" in proc.stderr  # nothing recognised: the whole file is one example
    (port / "2026-09-03-t.md").write_text("~~~~\n" + table + "~~~~\n\n" + table)
    run_cli("queue", "import", "2026-09-03-t.md", cwd=port, check_rc=0)
    assert len(entries(port)) == 5  # the table after the closed fence


def test_a_report_past_the_size_limit_is_one_sentence(tmp_path):
    from porttrack.queue.importer import MAX_REPORT_BYTES

    port, head = make_port(tmp_path)
    line = f"- vllm#1 `x` (`{head[:9]}`) — PORT-NOW.\n"
    (port / "big.md").write_text("## PORT-NOW (1)\n" + line * (MAX_REPORT_BYTES // len(line) + 1))
    proc = run_cli("queue", "import", "big.md", cwd=port, check_rc=2)
    assert "big.md" in proc.stderr and "MiB" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def test_reports_are_worked_oldest_first_whatever_the_command_line_order(tmp_path):
    port, head = make_port(tmp_path)
    rows = ROWS.splitlines(keepends=True)  # 01..05: shas 1111111111 .. 5555555555
    (port / "2026-09-01-a.md").write_text(tranche(head[:9], rows[0] + rows[1]))
    (port / "2026-09-05-b.md").write_text(tranche(head[:9], rows[2] + rows[0]))
    run_cli("queue", "import", "2026-09-05-b.md", "2026-09-01-a.md", cwd=port, check_rc=0)
    numbered = {e.sha[:10]: e.n for e in entries(port)}
    # the older report's entries are numbered first, in its order; the newer report's new one after
    assert numbered == {"1111111111": 1, "2222222222": 2, "3333333333": 3}, numbered
    first = next(e for e in entries(port) if e.sha.startswith("1111111111"))
    assert first.source.startswith("2026-09-05-b.md:") and first.history  # the later reading wins


def test_an_unescaped_bar_in_the_evidence_cell_keeps_the_row_and_its_label(tmp_path):
    port, head = make_port(tmp_path)
    rows = ROWS.splitlines()[0].replace("drains loads only", "drains loads | stores only") + "\n"
    (port / "t.md").write_text(tranche(head[:9], rows))
    proc = run_cli("queue", "import", "t.md", cwd=port, check_rc=0)
    assert "row skipped" not in proc.stderr, proc.stderr
    (e,) = entries(port)
    assert (e.sha, e.verdict, e.label) == ("1111111111", "surface-absent", "NA surface-absent")
    assert "drains loads | stores only" in e.reason


def test_a_report_of_hostile_long_runs_is_read_in_one_pass():
    # Runs of digits, spaces and parentheses in a summary, a label and a cited span: each pattern
    # that read them used to try a match from every character of the run (minutes for this report;
    # no time is asserted).
    summary = SUMMARY.replace("| ALREADY_SATISFIED | **1** |", f"| ALREADY_SATISFIED | **1** {'0' * 60_000} |")
    rows = ROWS.replace("ALREADY_SATISFIED **+**", "ALREADY_SATISFIED" + " " * 60_000 + "**+**")
    rows = rows.replace("never clears;", "never clears; `move_row" + "(" * 60_000 + "x)`;")
    rep = parse(tranche("2850314e3", rows, summary), "x.md")
    assert rep.summary["ALREADY_SATISFIED"] == 1
    assert [len(i.halves) for i in rep.items][:3] == [0, 0, 2]
    assert "move_row" in [a for c in rep.items[1].citations for a in c.anchor]
