"""probe: counts, code vs raw, hit classes and positive controls, on real git repositories."""

from __future__ import annotations

import importlib
import json
import os
from pathlib import Path

import pytest

from conftest import commit_files, git, init_repo, run_cli
from porttrack import cache as cache_mod, probe as P
from porttrack.errors import UserError

HEADER = """\
#pragma once
#include <vector>
// take_new_block_ids is declared below; NHD is only mentioned in comments
namespace vllm {
class KVCacheManager {
 public:
  std::vector<int>
  take_new_block_ids();
  bool allocate_slots(int n);
  int mamba_cache_mode = 0;
  int mamba_cache_mode_count = 0;
};
}  // namespace vllm
"""

SOURCE = """\
#include "kv.h"
namespace vllm {
/* take_new_block_ids in a block comment */
const char* kName = "take_new_block_ids";
const char* kRaw = R"(take_new_block_ids
NHD)";
#if 0
void dead() { take_new_block_ids(); }
#endif
std::vector<int> KVCacheManager::take_new_block_ids() {
  std::vector<int> out;
  for (auto* m : managers_) {
    auto ids = m->take_new_block_ids();
  }
  return out;
}
bool KVCacheManager::allocate_slots(int n) { return n > mamba_cache_mode; }
bool run(KVCacheManager& m) { return m.allocate_slots(1); }
}  // namespace vllm
"""

TEST = """\
#include "kv.h"
void test_take() { vllm::KVCacheManager m; auto ids = m.take_new_block_ids(); }
"""


@pytest.fixture
def port(tmp_path: Path) -> Path:
    repo = init_repo(tmp_path / "port")
    commit_files(
        repo,
        {"include/kv.h": HEADER, "src/kv.cpp": SOURCE, "tests/test_kv.cpp": TEST, "docs/x.md": "take_new_block_ids\n"},
        "port",
    )
    return repo


def scan(repo: Path, *symbols: str, **kw):
    kw.setdefault("scope", ["src", "include"])
    kw.setdefault("tests_scope", ["tests"])
    return P.scan(repo, symbols, **kw)


def test_code_vs_comments_strings_raw_strings_and_if0(port: Path):
    c = scan(port, "take_new_block_ids").counts["take_new_block_ids"]
    where = {(h.path, h.line): (h.kind, h.why) for h in c.hits}
    assert where[("include/kv.h", 3)] == ("comment", "comment")
    assert where[("src/kv.cpp", 3)] == ("comment", "comment")
    assert where[("src/kv.cpp", 4)] == ("comment", "string")
    assert where[("src/kv.cpp", 5)] == ("comment", "string")  # raw string
    assert where[("src/kv.cpp", 8)] == ("comment", "#if 0")
    # code: the declaration, the definition, one delegation; raw adds the five non-code hits
    assert (c.code, c.raw, c.files) == (3, 8, 2)
    assert (c.definitions, c.consumers, c.delegations, c.tests) == (2, 0, 1, 1)
    # NHD lives only in a comment and a raw string: raw hits, no code
    nhd = scan(port, "NHD").counts["NHD"]
    assert (nhd.code, nhd.raw) == (0, 2)


def test_declaration_split_over_two_lines(port: Path):
    c = scan(port, "take_new_block_ids").counts["take_new_block_ids"]
    h = next(h for h in c.hits if h.path == "include/kv.h" and h.kind != "comment")
    assert (h.line, h.kind, h.text) == (8, "definition", "take_new_block_ids();")


def test_prefix_of_another_symbol(port: Path):
    s = scan(port, "mamba_cache_mode", "mamba_cache_mode_count")
    a, b = s.counts["mamba_cache_mode"], s.counts["mamba_cache_mode_count"]
    assert [(h.path, h.line) for h in a.hits] == [("include/kv.h", 10), ("src/kv.cpp", 17)]
    assert (a.code, a.definitions, a.consumers) == (2, 1, 1)
    assert (b.code, b.definitions, b.consumers) == (1, 1, 0)


def test_definition_with_only_test_consumers(port: Path):
    p = P.judge(scan(port, "take_new_block_ids", "allocate_slots"), "take_new_block_ids")
    assert p.status == "present"
    assert p.count.consumers == 0 and p.count.tests == 1 and p.count.definitions == 2
    assert [h.kind for h in p.count.hits if h.path.startswith("tests/")] == ["test"]
    slots = P.judge(scan(port, "allocate_slots"), "allocate_slots")
    assert slots.count.consumers == 1  # run() calls it


def test_zero_with_control_is_absent_and_names_the_control(port: Path):
    [p] = P.probe(port, ["KVBlockZeroer"], control="allocate_slots", scope=["src", "include"], tests_scope=["tests"])
    assert (p.status, p.control, p.control_how) == ("absent", "allocate_slots", "explicit (--control)")
    assert p.control_count.code > 0
    [auto] = P.probe(port, ["KVBlockZeroer"], scope=["src"], tests_scope=["tests"])
    assert auto.status == "absent" and auto.control and auto.control_how.startswith("automatic")
    assert "src/kv.cpp" in auto.control_how


def test_a_zero_whose_control_has_no_code_hit_is_untrusted_not_absent(port: Path):
    """The central rule: a zero is evidence only when its positive control has code hits in the scope.
    `kName` is met only inside a string and a comment there, so as a control it vouches for nothing."""
    commit_files(port, {"src/only_text.cpp": '// kNameOnlyInText\nconst char* s = "kNameOnlyInText";\n'}, "text")
    [p] = P.probe(port, ["KVBlockZeroer"], control="kNameOnlyInText", scope=["src", "include"], tests_scope=["tests"])
    assert p.control_count is not None and p.control_count.code == 0 and p.control_count.raw > 0
    assert p.status == "untrusted" and "has no code hit" in p.reason


def test_empty_scope_is_untrusted(port: Path):
    (port / "empty").mkdir()
    [p] = P.probe(port, ["KVBlockZeroer"], control="allocate_slots", scope=["empty"])
    assert p.status == "untrusted" and "holds no files" in p.reason
    [p] = P.probe(port, ["KVBlockZeroer"], control="allocate_slots", scope=["srcc"])
    assert p.status == "untrusted" and "'srcc' does not exist" in p.reason
    [p] = P.probe(port, ["KVBlockZeroer"], control="allocate_slots", scope=["src"], exclude=["src/**"])
    assert p.status == "untrusted" and "excluded" in p.reason
    assert p.control_count.code == 0


def test_dirty_worktree_vs_rev_head(port: Path):
    head = git(port, "rev-parse", "HEAD")
    (port / "src" / "new.cpp").write_text("void f() { KVBlockZeroer z; }\n")
    work = scan(port, "KVBlockZeroer")
    assert str(work.tree) == head[:8] + "+dirty" and work.counts["KVBlockZeroer"].code == 1
    at_head = scan(port, "KVBlockZeroer", rev="HEAD")
    assert str(at_head.tree) == head[:8] and at_head.counts["KVBlockZeroer"].code == 0
    assert at_head.files_scanned == work.files_scanned - 1


def test_missing_blob_makes_the_scan_incomplete(port: Path, tmp_path: Path):
    body = f"int only_here_{os.urandom(8).hex()} = 1;\n"  # a blob no cache has seen
    commit_files(port, {"src/lost.cpp": body}, "lost")
    sha = git(port, "rev-parse", "HEAD:src/lost.cpp")
    (port / ".git" / "objects" / sha[:2] / sha[2:]).unlink()
    s = scan(port, "KVBlockZeroer", rev="HEAD", cache_dir=tmp_path / "cache")
    assert s.incomplete == [f"src/lost.cpp: missing object {sha}"]
    p = P.judge(s, "KVBlockZeroer")
    assert p.status == "incomplete" and "src/lost.cpp" in p.reason


def test_symlink_out_of_the_root_is_refused(port: Path, tmp_path: Path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x.cpp").write_text("int KVBlockZeroer;\n")
    (port / "escape").symlink_to(outside)
    with pytest.raises(UserError, match="symlink pointing outside"):
        scan(port, "KVBlockZeroer", scope=["escape"])
    with pytest.raises(UserError, match="'\\.\\.'"):
        scan(port, "KVBlockZeroer", scope=["../outside"])
    with pytest.raises(UserError, match="absolute"):
        scan(port, "KVBlockZeroer", scope=[str(outside)])


def test_bad_regex_is_refused_naming_it(port: Path):
    with pytest.raises(UserError, match=r"regex 'take\(' does not compile"):
        P.scan(port, regexes=["take("], scope=["src"])


def test_regex_multiline_counts_code_and_raw(port: Path):
    s = P.scan(port, regexes=[r"std::vector<int>\s*\n\s*take_new_block_ids"], scope=["src", "include"])
    c = next(iter(s.counts.values()))
    assert (c.code, c.raw, c.hits[0].path, c.hits[0].line) == (1, 1, "include/kv.h", 7)


def test_variants_and_renames():
    assert P.variants("_hash_block_size", renames={"hash_block_size": "prefix_match_unit"}) == [
        "_hash_block_size",
        "hash_block_size",
        "prefix_match_unit",
    ]
    assert P.variants("KVCacheManager.take_new_block_ids") == ["take_new_block_ids"]
    assert P.variants("SingleTypeKVCacheManager.__init__") == ["SingleTypeKVCacheManager"]
    assert P.variants("_x", strip_leading_underscore=False) == ["_x"]


def test_hidden_folders_count_only_when_named(port: Path):
    commit_files(port, {"src/.gen/g.cpp": "int KVBlockZeroer;\n", ".agents/a.py": "KVBlockZeroer = 1\n"}, "hidden")
    assert scan(port, "KVBlockZeroer").counts["KVBlockZeroer"].code == 0
    assert scan(port, "KVBlockZeroer", scope=["src/.gen"]).counts["KVBlockZeroer"].code == 1
    assert scan(port, "KVBlockZeroer", scope=[".agents"]).counts["KVBlockZeroer"].code == 1


def test_cli_json_and_table(port: Path):
    (port / "porttrack.toml").write_text('[port]\nscopes = { code = ["src", "include"], tests = ["tests"] }\n')
    proc = run_cli("probe", "take_new_block_ids", "KVBlockZeroer", "--json", cwd=port, check_rc=0)
    data = json.loads(proc.stdout)
    assert [d["status"] for d in data] == ["present", "absent"]
    assert data[1]["control"]["symbol"] == "take_new_block_ids" and data[1]["control"]["code"] == 3
    assert "src/kv.cpp:13" in [h["at"] for h in data[0]["hits"]]
    # porttrack.toml is untracked but outside the probed scope, so the tree is clean for this probe
    assert data[0]["tree"] == git(port, "rev-parse", "HEAD")[:8]
    (port / "src" / "new.cpp").write_text("int x;\n")
    data = json.loads(run_cli("probe", "take_new_block_ids", "--json", cwd=port, check_rc=0).stdout)
    assert data[0]["tree"] == git(port, "rev-parse", "HEAD")[:8] + "+dirty"
    table = run_cli("probe", "KVBlockZeroer", "--scope", "src,nowhere", cwd=port, check_rc=0).stdout
    assert "untrusted" in table and "'nowhere' does not exist" in table
    bad = run_cli("probe", "x(", "--regex", cwd=port, check_rc=2)
    assert "regex 'x('" in bad.stderr and "Traceback" not in bad.stderr


def test_binary_undecodable_and_no_grammar_files(port: Path):
    commit_files(
        port,
        {
            "src/blob.npy": b"\x93NUMPY\x00\x01KVBlockZeroer",
            "src/latin.cpp": "int KVBlockZeroer; // caf\xe9\n".encode("latin-1"),
            "src/notes.txt": "KVBlockZeroer is planned\n",
        },
        "odd files",
    )
    s = scan(port, "KVBlockZeroer", "allocate_slots")
    assert s.binary == ["src/blob.npy"]
    assert s.incomplete == ["src/latin.cpp: not UTF-8 text (byte 25)"]
    assert "src/notes.txt" in s.no_grammar
    c = s.counts["KVBlockZeroer"]
    assert (c.code, c.raw) == (0, 1) and c.hits[0].why == "no grammar"
    p = P.judge(s, "KVBlockZeroer")
    assert p.status == "incomplete" and "latin.cpp" in p.reason  # never a zero while a file went unread
    again = scan(port, "KVBlockZeroer")  # the cached verdicts on those blobs say the same
    assert (again.binary, again.incomplete) == (s.binary, s.incomplete)


def test_bad_revision_and_non_git_root(port: Path, tmp_path: Path):
    with pytest.raises(UserError, match="does not name a commit"):
        scan(port, "x", rev="no-such-branch")
    plain = tmp_path / "plain"
    (plain / "src").mkdir(parents=True)
    (plain / "src" / "a.cpp").write_text("int KVBlockZeroer() { return 1; }\n")
    s = scan(plain, "KVBlockZeroer")
    assert str(s.tree) == "worktree (not a git repository)" and s.counts["KVBlockZeroer"].code == 1


def test_missing_blob_in_tests_scope_leaves_the_scope_judged(port: Path, tmp_path: Path):
    body = f"int only_in_tests_{os.urandom(8).hex()} = 1;\n"
    commit_files(port, {"tests/lost.cpp": body}, "lost test")
    sha = git(port, "rev-parse", "HEAD:tests/lost.cpp")
    (port / ".git" / "objects" / sha[:2] / sha[2:]).unlink()
    s = scan(port, "KVBlockZeroer", "allocate_slots", rev="HEAD", cache_dir=tmp_path / "cache")
    p = P.judge(s, "KVBlockZeroer")
    assert p.status == "absent" and "tests scope could not be read" in p.reason
    assert p.incomplete == [f"tests/lost.cpp: missing object {sha}"]


def test_corrupt_cache_is_rebuilt(port: Path, tmp_path: Path):
    cache = tmp_path / "cache"
    first = scan(port, "take_new_block_ids", cache_dir=cache).counts["take_new_block_ids"]
    db = cache_mod.db_path(cache)
    db.write_bytes(b"not a database" * 100)
    for extra in cache.glob(db.name + "-*"):
        extra.unlink()
    again = scan(port, "take_new_block_ids", cache_dir=cache).counts["take_new_block_ids"]
    assert (again.code, again.raw) == (first.code, first.raw)


def test_python_files_masks_and_delegation(tmp_path: Path):
    repo = init_repo(tmp_path / "py")
    commit_files(
        repo,
        {
            "pkg/m.py": '''\
# take_new_block_ids in a comment
"""take_new_block_ids in a docstring"""


class Manager:
    def take_new_block_ids(self):
        return [m.take_new_block_ids() for m in self.managers]


def use(mgr):
    return mgr.take_new_block_ids()
'''
        },
        "py",
    )
    c = P.scan(repo, ["take_new_block_ids"], scope=["pkg"]).counts["take_new_block_ids"]
    assert [(h.line, h.kind, h.why) for h in c.hits] == [
        (1, "comment", "comment"),
        (2, "comment", "string"),
        (6, "definition", ""),
        (7, "delegation", ""),
        (11, "consumer", ""),
    ]


def test_variants_in_one_file_are_merged_in_order(tmp_path: Path):
    repo = init_repo(tmp_path / "v")
    commit_files(
        repo,
        {"src/a.cpp": "int hash_block_size = 1;\nint prefix_match_unit = hash_block_size;\n// _hash_block_size\n"},
        "v",
    )
    s = P.scan(repo, ["_hash_block_size"], scope=["src"], renames={"hash_block_size": "prefix_match_unit"})
    c = s.counts["_hash_block_size"]
    assert c.variants == ["_hash_block_size", "hash_block_size", "prefix_match_unit"]
    assert [(h.line, h.col, h.name, h.kind) for h in c.hits] == [
        (1, 5, "hash_block_size", "definition"),
        (2, 5, "prefix_match_unit", "definition"),
        (2, 25, "hash_block_size", "consumer"),
        (3, 4, "_hash_block_size", "comment"),
    ]
    assert (c.code, c.raw, c.definitions, c.consumers) == (3, 4, 2, 1)


def test_control_of_another_form_or_not_searched(port: Path):
    s = P.scan(port, ["allocate_slots"], regexes=[r"KVBlock\w+"], scope=["src", "include"])
    p = P.judge(s, r"KVBlock\w+", "allocate_slots")
    assert p.status == "absent" and "searched as a word while the probe is a regex" in p.control_how
    q = P.judge(s, r"KVBlock\w+", "never_searched")
    assert q.status == "untrusted" and "'never_searched' was not searched" in q.reason


def test_no_identifiers_inside_numbers_or_directives(tmp_path: Path):
    repo = init_repo(tmp_path / "n")
    commit_files(repo, {"src/a.cpp": "#include <abc>\nint x = 0xabc + 1e5f + abc;\n"}, "n")
    s = P.scan(repo, ["abc", "include", "f"], scope=["src"])
    assert [(h.line, h.col) for h in s.counts["abc"].hits] == [(1, 11), (2, 24)]  # the include target, then abc
    assert s.counts["include"].raw == 0 and s.counts["f"].raw == 0


def test_process_pool_indexes_like_one_process(port: Path, tmp_path: Path, monkeypatch):
    serial = scan(port, "take_new_block_ids", "mamba_cache_mode", cache_dir=tmp_path / "a")
    monkeypatch.setattr(importlib.import_module("porttrack.probe.classify"), "POOL_MIN_BYTES", 0)
    pooled = scan(port, "take_new_block_ids", "mamba_cache_mode", cache_dir=tmp_path / "b")
    assert pooled.counts == serial.counts


def _recount(c, scope: list[str], tests: list[str]) -> tuple[int, ...]:
    """A count's numbers, tallied hit by hit from its Hit objects (the slow way)."""

    def under(path, prefixes):
        return any(p in ("", ".") or path == p or path.startswith(p + "/") for p in prefixes)

    scoped = [h for h in c.hits if under(h.path, scope)]
    code = [h for h in scoped if h.kind != "comment"]
    kinds = [h.kind for h in code]
    tests_hits = [h for h in c.hits if under(h.path, tests) and h.kind != "comment"]
    return (
        len(code),
        len(scoped),
        len({h.path for h in code}),
        kinds.count("definition"),
        len(tests_hits),
        kinds.count("consumer"),
        kinds.count("delegation"),
    )


def _numbers(c) -> tuple[int, ...]:
    return (c.code, c.raw, c.files, c.definitions, c.tests, c.consumers, c.delegations)


SYMBOLS = (
    "take_new_block_ids",
    "_take_new_block_ids",
    "allocate_slots",
    "mamba_cache_mode",
    "KVCacheManager",
    "NHD",
    "nothing_here",
)


def test_counts_summed_from_the_index_equal_a_tally_of_the_hits(port: Path, tmp_path: Path):
    commit_files(
        port, {"src/kv_copy.cpp": SOURCE, "tests/test_more.cpp": TEST + "int take_new_block_ids_2;\n"}, "copies"
    )
    cache = tmp_path / "cache"
    for kw in (
        dict(scope=["src", "include"], tests_scope=["tests"]),
        dict(scope=["."], tests_scope=["tests"]),
        dict(scope=["src"], tests_scope=[]),
        dict(scope=["src", "include"], tests_scope=["tests"], rev="HEAD"),
    ):
        first = scan(port, *SYMBOLS, cache_dir=cache, **kw)  # lists and classifies the files
        again = scan(port, *SYMBOLS, cache_dir=cache, **kw)  # from the remembered file set
        for s in SYMBOLS:
            assert (
                _numbers(first.counts[s])
                == _numbers(again.counts[s])
                == _recount(again.counts[s], again.scope, again.tests_scope)
            )
            assert first.counts[s].hits == again.counts[s].hits
    assert again.counts["take_new_block_ids"].files == 3  # the copy is a file of its own


def test_a_remembered_file_set_follows_the_working_tree(port: Path, tmp_path: Path):
    cache = tmp_path / "cache"
    code = lambda: scan(port, "allocate_slots", cache_dir=cache).counts["allocate_slots"].code  # noqa: E731
    assert code() == code() == 3
    (port / "src" / "kv.cpp").write_text(
        SOURCE + "bool again(vllm::KVCacheManager& m) { return m.allocate_slots(2); }\n"
    )
    assert code() == 4 and scan(port, "allocate_slots", cache_dir=cache).tree.dirty
    git(port, "add", "src/kv.cpp")  # the index changes: its file set is another one
    assert code() == code() == 4
    git(port, "commit", "-q", "-m", "again")
    assert code() == 4 and not scan(port, "allocate_slots", cache_dir=cache).tree.dirty
    (port / "src" / "kv.cpp").write_text(SOURCE)
    (port / "src" / "more.cpp").write_text(
        "void more(vllm::KVCacheManager& m) { m.allocate_slots(3); m.allocate_slots(4); }\n"
    )
    assert code() == 5
    (port / "src" / "more.cpp").unlink()
    (port / "include" / "kv.h").unlink()
    assert code() == 2  # the declaration went with the header


def test_a_root_scope_sees_a_dirty_tree(port: Path):
    (port / "new.cpp").write_text("int x;\n")
    assert scan(port, "x", scope=["."], tests_scope=[]).tree.dirty


def test_hits_are_built_when_asked_and_travel_with_a_copy(port: Path):
    import copy
    import pickle

    c = scan(port, "take_new_block_ids").counts["take_new_block_ids"]
    assert c.loaded is None and c.loader is not None  # counted, not yet built
    twin = pickle.loads(pickle.dumps(c))
    assert twin.hits == c.hits and len(c.hits) == 9 and copy.copy(c).hits == c.hits
    assert twin == c


def test_a_file_deleted_before_any_scan_is_counted_when_it_comes_back(port: Path, tmp_path: Path):
    cache = tmp_path / "cache"
    code = lambda: scan(port, "allocate_slots", cache_dir=cache).counts["allocate_slots"].code  # noqa: E731
    (port / "src" / "kv.cpp").unlink()  # its index version was never read: the remembered set leaves it pending
    (port / "src" / "extra.cpp").write_text("bool extra(vllm::KVCacheManager& m) { return m.allocate_slots(5); }\n")
    assert code() == code() == 2
    git(port, "checkout", "--", "src/kv.cpp")
    assert code() == code() == 4
    (port / "src" / "extra.cpp").unlink()
    assert code() == code() == 3
