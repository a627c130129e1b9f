"""Differential test: the grep-first scan (parse only files that hold an asked name) against the
reference strategy (parse and index every file, count every hit), on generated trees and many
symbols: raw and code counts, classes, hits and the automatic control must be identical."""

from __future__ import annotations

import importlib
import random
from pathlib import Path

import pytest
from conftest import commit_files, init_repo

from porttrack.evidence import codemask
from porttrack import probe as P
from porttrack.probe.classify import count
from porttrack.probe.files import File

WORDS = ["block", "cache", "kv", "slot", "zero", "page", "table", "free", "alloc", "sched"]


def _names(rng: random.Random, n: int) -> list[str]:
    out = sorted({f"{rng.choice(WORDS)}_{rng.choice(WORDS)}{rng.randrange(40)}" for _ in range(n)})
    return [*out, "_" + out[0], "Kv" + out[1].title().replace("_", "")]


def _cpp(rng: random.Random, names: list[str], n: int) -> str:
    cls = rng.choice(names).title().replace("_", "")
    out = [
        f"// file {n}: {rng.choice(names)} noted",
        "#include <vector>",
        "namespace vllm {",
        f"class {cls} {{",
        " public:",
    ]
    for _ in range(rng.randrange(3, 25)):
        a, b, c = rng.choice(names), rng.choice(names), rng.choice(names)
        r = rng.random()
        if r < 0.12:
            out.append(f"  // {a} is called by {b}")
        elif r < 0.2:
            out.append(f'  const char* k_{a} = "{b} {c}";')
        elif r < 0.25:
            out += ["#if 0", f"  void dead_{a}() {{ {b}(); }}", "#endif"]
        elif r < 0.3:
            out += [f"  int {a}(int n) {{ return n ? {a}(n - 1) : 0; }}"]  # a delegation to itself
        elif r < 0.35:
            out += [f"  struct {a.title()};", f"  {a.title()}* p_{b} = nullptr;"]
        elif r < 0.4:
            out += [f"  /* {a}\n     {b} */ int x{rng.randrange(99)}_{c} = 0xabc{rng.randrange(9)};"]
        else:
            out += [
                f"  std::vector<int> {a}(int n) {{",
                f"    auto x = {b}(n) + this->{c}(n - 1);",
                f"    return x > 0 ? {rng.choice(names)}(x) : {{}};",
                "  }",
            ]
    out += ["};", "}  // namespace vllm", ""]
    return "\n".join(out)


def _py(rng: random.Random, names: list[str]) -> str:
    a, b, c = rng.sample(names, 3)
    return f'# {a} here\n"""{b} in a docstring"""\n\n\nclass Mgr:\n    def {a}(self):\n        return [m.{a}() for m in self.{c}]\n\n\ndef {b}(mgr):\n    return mgr.{a}()\n'


def _tree(tmp_path: Path, seed: int) -> tuple[Path, list[str]]:
    rng = random.Random(seed)
    names = _names(rng, 60)
    files: dict[str, str | bytes] = {}
    for n in range(40):
        top = rng.choice(["src", "include", "src/deep", "tests"])
        files[f"{top}/f{n}.{'h' if top == 'include' else 'cpp'}"] = _cpp(rng, names, n)
    for n in range(5):
        files[f"src/py/m{n}.py"] = _py(rng, names)
    files["src/notes.txt"] = " ".join(rng.sample(names, 8)) + "\n"  # no grammar: raw only
    files["include/a_first.h"] = "// nothing defined here\nint;\n"  # the scope's first file defines nothing
    files["src/blob.bin"] = b"\x00\x01" + names[0].encode()
    files["src/latin.cpp"] = ("int " + names[1] + " = 1; // caf\xe9\n").encode("latin-1")  # not UTF-8
    files["src/.hidden/h.cpp"] = f"int {names[2]}();\n"
    files["docs/out.md"] = names[3] + "\n"  # out of scope
    repo = init_repo(tmp_path / f"port{seed}")
    commit_files(repo, files, "generated")
    return repo, [*names, "absent_one", "absent_two", "_"]


def _reference(repo: Path, symbols: list[str], scope: list[str], tests: list[str]) -> tuple[dict, str | None]:
    """Counts and hits of every symbol by indexing every file fully (the strategy before grep-first)."""
    from porttrack.probe.listing import hidden, under

    paths = sorted(p.relative_to(repo).as_posix() for p in repo.rglob("*") if p.is_file() and ".git" not in p.parts)
    idx: list[tuple[File, codemask.FileIndex]] = []
    for p in paths:
        if not under(p, scope + tests) or hidden(p, scope + tests):
            continue
        data = (repo / p).read_bytes()
        if b"\0" in data[:8000]:
            continue
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            continue
        f = File(p, "", codemask.lang_for(p), data, scoped=under(p, scope), test=under(p, tests))
        idx.append((f, codemask.index_file(data, f.lang)))
    first = next((fi.first_def[0] for f, fi in idx if f.scoped and fi.first_def), None)
    out = {}
    for s in [*symbols, *([first] if first else [])]:
        vs = P.variants(s)
        groups = [(f.path, v, fi.occurrences[v], f) for f, fi in idx for v in vs if v in fi.occurrences]
        out[s] = count(s, "word", vs, groups, [])
    return out, first


def _same(got: P.Count, want: P.Count) -> None:
    assert got.numbers() == want.numbers(), got.symbol
    key = lambda h: (h.path, h.line, h.col, h.kind, h.why, h.name)  # noqa: E731
    assert [key(h) for h in got.hits] == [key(h) for h in want.hits], got.symbol


@pytest.mark.parametrize(("seed", "held"), [(1, None), (2, None), (3, None), (4, 0)])
def test_grep_first_equals_indexing_everything(tmp_path: Path, seed: int, held: int | None, monkeypatch):
    if held is not None:  # no file held from the listing to the search: every one is read again there
        monkeypatch.setattr(importlib.import_module("porttrack.probe.classify"), "KEEP_READ_BYTES", held)
    repo, symbols = _tree(tmp_path, seed)
    tests = ["tests"]
    cache = tmp_path / "cache"
    half = symbols[::2]
    # then a narrower scope on the same cache: its first files are known there but were never parsed
    for scope in (["src", "include"], ["src"]):
        want, first = _reference(repo, symbols, scope, tests)
        for kw, syms in (
            (dict(), half),
            (dict(), half),
            (dict(), symbols),
            (dict(rev="HEAD"), symbols),
            (dict(), symbols),
        ):
            s = P.scan(repo, syms, scope=scope, tests_scope=tests, cache_dir=cache, **kw)
            assert s.auto_control.get("word") == first
            for sym in syms:
                _same(s.counts[sym], want[sym])
            if first:
                _same(s.control_counts.get(first) or s.counts[first], want[first])
            assert s.binary == ["src/blob.bin"] and [i.split(":")[0] for i in s.incomplete] == ["src/latin.cpp"]


def test_a_warm_scan_parses_nothing_and_a_cold_one_parses_only_candidates(tmp_path: Path):
    repo, symbols = _tree(tmp_path, 4)
    cache = tmp_path / "cache"
    rare = "only_here_once"
    commit_files(repo, {"src/zz_rare.cpp": f"int {rare}();\n"}, "rare")
    cold = P.scan(repo, [rare], scope=["src", "include"], cache_dir=cache)
    # the rare name's file, the scope's first files up to one that defines something (the
    # automatic control) and the files that hold the control's name: not the rest of the tree
    control = cold.auto_control["word"]
    names = {n.encode() for n in [*P.variants(rare), control]}
    holders = 0  # parsable files of the scope with one of those names as a token
    for p in sorted([*(repo / "src").rglob("*"), *(repo / "include").rglob("*")]):
        rel = p.relative_to(repo).as_posix()
        data = p.read_bytes() if p.is_file() and "/." not in rel else b""
        if codemask.lang_for(rel) and b"\0" not in data and data.isascii():
            holders += bool(names & {m.group() for m in codemask.IDENT.finditer(data)})
    # parsed: include/a_first.h and the next header (the first definition), then the holders
    assert cold.parsed == 2 + holders < cold.files_scanned and cold.counts[rare].definitions == 1
    for syms in ([rare], symbols):
        P.scan(repo, syms, scope=["src", "include"], cache_dir=cache)
        warm = P.scan(repo, syms, scope=["src", "include"], cache_dir=cache)
        assert warm.parsed == 0
    other = tmp_path / "cache2"
    assert P.scan(repo, symbols, scope=["src", "include"], cache_dir=other, rev="HEAD").parsed > 0
    assert P.scan(repo, symbols, scope=["src", "include"], cache_dir=other, rev="HEAD").parsed == 0


def test_a_cache_restored_into_a_fresh_clone_parses_nothing(tmp_path: Path):
    import shutil
    import subprocess

    repo, symbols = _tree(tmp_path, 5)
    cache = tmp_path / "cache"
    first = P.scan(repo, symbols, scope=["src", "include"], cache_dir=cache)
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(repo), str(clone)], check=True)
    restored = tmp_path / "restored"  # what a CI cache step puts back
    shutil.copytree(cache, restored)
    again = P.scan(clone, symbols, scope=["src", "include"], cache_dir=restored)
    assert again.parsed == 0 < first.parsed
    assert [again.counts[s].numbers() for s in symbols] == [first.counts[s].numbers() for s in symbols]


def test_words_finds_exactly_the_identifier_tokens_that_are_names():
    """The one-pass name search equals "every IDENT token that is a name", on texts built to trip it:
    names that prefix one another, `#include`-like tokens, digits, UTF-8 letters, non-identifiers."""
    rng = random.Random(7)
    names = ["ab", "abc", "b", "bc", "_b", "c_", "grüße", "9a", "a-b", "x y", ""]
    bits = [b"ab", b"abc", b"b", b"c", b"_", b"#", b"9", b" ", b"\n", b"-", "grüße".encode(), b"\xc3", b"."]
    words = codemask.Words(names)
    for _ in range(3000):
        data = b"".join(rng.choice(bits) for _ in range(rng.randrange(0, 14)))
        want: dict[str, list[int]] = {}
        for m in codemask.IDENT.finditer(data):
            w = m.group().decode("utf-8", "replace")
            if w in names and m.group() == w.encode():
                want.setdefault(w, []).append(m.start())
        assert words.find(data) == dict(sorted(want.items(), key=lambda kv: kv[0].encode())), data


def test_a_file_set_another_run_drops_mid_scan_still_counts(tmp_path: Path, monkeypatch):
    """Two runs share one cache, which keeps the newest KEEP_SETS file sets. When the other run
    stores more sets while this one is between its search and its count, this run's set is
    dropped under it: it counts from the files it listed itself, not from a set that is gone, and
    marks nothing searched in the dropped set (rows that would outlive it)."""
    import sqlite3

    from porttrack.probe.store import KEEP_SETS, Store

    repo = init_repo(tmp_path / "port")
    files = {"src/a.cpp": "int alpha() { return 1; }\nint beta() { return alpha(); }\n"}
    files |= {f"src/d{k}/x.cpp": f"int x{k}();\n" for k in range(KEEP_SETS + 1)}
    commit_files(repo, files, "port")
    cache = tmp_path / "cache"
    add, others, started = Store.add_occurrences, [], []

    def add_then_another_run(store, rows):
        add(store, rows)
        if not started:  # once: the other run's scans, each of its own scope, each a new stored set
            started.append(True)
            others.extend(P.scan(repo, ["x0"], scope=[f"src/d{k}"], cache_dir=cache) for k in range(KEEP_SETS + 1))

    monkeypatch.setattr(Store, "add_occurrences", add_then_another_run)
    got = P.scan(repo, ["alpha"], scope=["src"], cache_dir=cache)
    assert len(others) == KEEP_SETS + 1
    assert (got.counts["alpha"].definitions, got.counts["alpha"].consumers) == (1, 1), got.counts["alpha"].numbers()
    (db,) = cache.glob("*.sqlite")
    with sqlite3.connect(db) as conn:
        orphans = conn.execute("SELECT COUNT(*) FROM searched WHERE lst NOT IN (SELECT id FROM prepared)").fetchone()
    assert orphans == (0,)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_forward_walk_finds_each_tokens_ancestors_as_a_descent_from_the_root_does(seed: int):
    # classify and Regions walk a file's tokens in order with one cursor; a token before the last
    # starts again. Either way each token's ancestors are those a fresh descent from the root finds.
    rng = random.Random(seed)
    names = _names(rng, 12)
    data = "\n".join(_cpp(rng, names, n) for n in range(6)).encode()
    root = codemask.parser("cpp").parse(data).root_node
    offsets = sorted(
        {m.start() for m in codemask.IDENT.finditer(data)} | {rng.randrange(len(data)) for _ in range(200)}
    )
    shuffled = rng.sample(offsets, len(offsets))
    for order in (offsets, shuffled):
        walk = codemask._Chains(root)
        for s in order:
            fresh = codemask._Chains(root).at(s)
            assert [(n.id, f) for n, f in walk.at(s)] == [(n.id, f) for n, f in fresh], s
            assert fresh[-1][0].start_byte <= s and (len(fresh) == 1 or s < fresh[-1][0].end_byte)
