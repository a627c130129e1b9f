import datetime as dt
import re
from pathlib import Path

import pytest

from porttrack.queue import file as queuefile
from porttrack.errors import UserError
from porttrack.model import Entry, Gate, QueueMeta, Symbols

HAND_WRITTEN = """\
# Sync queue for the July cycle — hand-kept notes below survive every rewrite.
[queue]
name   = "PORT-NOW 5559679229..e126687a9a"   # odd spacing on purpose
target = "e126687a9a828d513c01a07cd69f025f27d63280"
pin    = "5559679229bc961848b121ccdeaa8fa5d79bec98"
upstream = "vllm-project/vllm"

[[entry]]
# hand-ordered: verdict first, as the team likes it
verdict = "inert"
verdict_by = "human"
n = 142
reason = '''widens a recording predicate
whose ids nothing reads'''
sha = "e3fe212eaf0000000000000000000000000000aa"
subject = "[Bugfix] Generalize KV block zeroing to `AttentionSpec` (#51749)"
date = 2026-08-11
files = [ "vllm/v1/core/single_type_kv_cache_manager.py",
          "vllm/v1/worker/utils.py" ]   # two files
[entry.symbols]
changed = ["SingleTypeKVCacheManager.__init__"]
[[entry.gate]]
id = "take-new-block-ids-consumer"
kind = "no-consumer"
probe = "take_new_block_ids"
scope = ["src", "include"]
control = "allocate_slots"
established_at = "include/vllm/v1/core/kv_cache_manager.h:232"

[[entry]]
n = 143
sha = "ffffffff"
subject = "Later (#51800)"
verdict = "blocked"
blocked_by = [142]
"""


def write(tmp_path: Path, text: str, name: str = "q.toml") -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def test_untouched_round_trip_is_byte_identical(tmp_path):
    p = write(tmp_path, HAND_WRITTEN)
    qf = queuefile.load(p)
    assert queuefile.dumps(qf) == HAND_WRITTEN
    assert queuefile.save(qf) is False
    assert p.read_text(encoding="utf-8") == HAND_WRITTEN
    e = qf.queue.entry(142)
    assert e.verdict == "inert" and e.date == dt.date(2026, 8, 11)
    assert e.gates[0].control == "allocate_slots"
    assert e.symbols.changed == ["SingleTypeKVCacheManager.__init__"]


def test_edit_keeps_every_other_byte(tmp_path):
    p = write(tmp_path, HAND_WRITTEN)
    qf = queuefile.load(p)
    queuefile.set_entry(qf, 143, verdict="ported", verdict_by="audit", reason="present since pin")
    assert queuefile.save(qf) is True
    after = p.read_text(encoding="utf-8")
    head, _, _tail = HAND_WRITTEN.partition("[[entry]]\nn = 143")
    assert after.startswith(head)  # entry 142 and all its comments, byte for byte
    assert 'verdict = "ported"' in after and 'reason = "present since pin"' in after
    assert queuefile.load(p).queue.entry(143).verdict == "ported"


def test_setting_an_equal_value_rewrites_nothing(tmp_path):
    p = write(tmp_path, HAND_WRITTEN)
    qf = queuefile.load(p)
    queuefile.set_entry(
        qf, 142, verdict="inert", files=["vllm/v1/core/single_type_kv_cache_manager.py", "vllm/v1/worker/utils.py"]
    )
    assert queuefile.dumps(qf) == HAND_WRITTEN


def test_write_refused_when_file_changed_on_disk(tmp_path):
    p = write(tmp_path, HAND_WRITTEN)
    qf = queuefile.load(p)
    p.write_text(HAND_WRITTEN + "\n# a teammate's edit\n", encoding="utf-8")
    queuefile.set_entry(qf, 143, verdict="ported")
    with pytest.raises(UserError, match="changed on disk"):
        queuefile.save(qf)
    assert p.read_text(encoding="utf-8").endswith("# a teammate's edit\n")


def test_write_is_atomic_no_temp_left(tmp_path):
    p = write(tmp_path, HAND_WRITTEN)
    qf = queuefile.load(p)
    queuefile.set_entry(qf, 143, reason="x")
    queuefile.save(qf)
    assert sorted(x.name for x in tmp_path.iterdir()) == ["q.toml"]


def test_append_numbers_are_stable_and_never_reused(tmp_path):
    p = tmp_path / "queue" / "new.toml"
    qf = queuefile.new(p, QueueMeta(name="n", pin="a" * 40, target="b" * 40))
    queuefile.append_entries(qf, [Entry(n=1, sha="1" * 40, subject="one"), Entry(n=2, sha="2" * 40, subject="two")])
    queuefile.save(qf)
    qf = queuefile.load(p)
    queuefile.set_entry(qf, 1, verdict="ignore", reason="ci only", verdict_by="human")
    queuefile.append_entries(
        qf, [Entry(n=qf.queue.next_n, sha="3" * 40, subject="three", symbols=Symbols(added=["X"]))]
    )
    queuefile.save(qf)
    q = queuefile.load(p).queue
    assert [(e.n, e.subject) for e in q.entries] == [(1, "one"), (2, "two"), (3, "three")]
    with pytest.raises(UserError, match="already used"):
        queuefile.append_entries(qf, [Entry(n=2, sha="9" * 40, subject="dup")])


def test_gates_round_trip(tmp_path):
    p = write(tmp_path, HAND_WRITTEN)
    qf = queuefile.load(p)
    gates = [
        Gate(
            id="g1",
            kind="absent",
            probe="KVBlockZeroer",
            scope=["src"],
            control="bind_kv_cache",
            established_at="src/a.cpp:3",
        ),
        Gate(id="g2", kind="entry-ported", entry=142),
    ]
    queuefile.set_entry(qf, 143, gates=gates)
    queuefile.save(qf)
    assert queuefile.load(p).queue.entry(143).gates == gates


@pytest.mark.parametrize(
    "text, message, line",
    [
        (
            '[queue]\nname = "x"\n[[entry]]\nn = 1\nsha = "aaaaaaa"\n[[entry]]\nn = 1\nsha = "bbbbbbb"\n',
            "duplicate entry number n = 1",
            7,
        ),
        ('[queue]\nname = "x"\n[[entry]]\nn = 1\nverdict = "maybe"\n', "unknown verdict 'maybe'", 5),
        (
            '[queue]\nname = "x"\n[[entry]]\nn = 1\n[[entry.gate]]\nid = "g"\nkind = "vibes"\nprobe = "x"\n',
            "unknown kind 'vibes'",
            7,
        ),
        ('[queue]\nname = "x"\n[[entry]]\nn = 1\nblocked_by = [7]\n', "blocked_by 7, which is no entry", 5),
        ('[queue]\nname = "x"\n[[entry]]\nn = 1\nsha = "a"\nsubject = "unterminated\n', "malformed TOML", 6),
        ('[queue]\nname = "x"\n[[entry]]\nn = "one"\n', "needs n = an integer", 4),
    ],
)
def test_validation_errors_name_file_and_line(tmp_path, text, message, line):
    p = write(tmp_path, text)
    with pytest.raises(UserError) as exc:
        queuefile.load(p)
    assert message in str(exc.value)
    assert f"{p}:{line}:" in str(exc.value)


def test_line_of_finds_keys_inside_entries(tmp_path):
    p = write(tmp_path, HAND_WRITTEN)
    qf = queuefile.load(p)
    assert qf.text.splitlines()[queuefile.line_of(qf, 143) - 1] == "[[entry]]"
    assert qf.text.splitlines()[queuefile.line_of(qf, 143, "blocked_by") - 1] == "blocked_by = [142]"
    assert qf.text.splitlines()[queuefile.line_of(qf, 142, "verdict") - 1] == 'verdict = "inert"'


# ---------------------------------------------------------------- acceptance: more bad queues, each by file:line

_E = '[queue]\nname = "x"\n[[entry]]\nn = 1\n'


@pytest.mark.parametrize(
    "text, message, line",
    [
        (_E + "part = [1]\n", "entry 1 part must be an array of tables", 5),
        ("rule = [1]\n" + _E, "rule must be an array of tables", 1),
        ("ack = [1]\n" + _E, "ack must be an array of tables", 1),
        (
            '[[rule]]\nupstream = "x/**"\nverdict = "inert"\ngate = 5\n' + _E,
            "rule 'x/**' gate must be an array of tables",
            4,
        ),
        (_E + 'stat = {"a.py" = 3}\n', "entry 1 stat.'a.py' must be [insertions, deletions]", 5),
        (_E + 'renames = {"b.py" = 3}\n', "entry 1 renames.'b.py' must be", 5),
        (_E + '[entry.symbols]\nadded = [""]\n', "entry 1 symbols.added holds an empty name", 3),
        (
            _E + '[[entry.gate]]\nid = "g"\nkind = "absent"\nprobe = "KV(Block"\nregex = true\n',
            "gate 'g' regex 'KV(Block' does not compile",
            7,
        ),
        (
            _E + '[[entry.gate]]\nid = "g"\nkind = "absent"\nprobe = "X"\nscope = ["../elsewhere"]\n',
            "scope '../elsewhere' lies outside the port root",
            7,
        ),
        (
            _E + '[[entry.gate]]\nid = "g"\nkind = "absent"\nprobe = "X"\nscope = ["/etc"]\n',
            "scope '/etc' is an absolute path",
            7,
        ),
    ],
)
def test_more_validation_errors_name_file_and_line(tmp_path, text, message, line):
    p = write(tmp_path, text)
    with pytest.raises(UserError) as exc:
        queuefile.load(p)
    assert message in str(exc.value)
    assert f"{p}:{line}:" in str(exc.value)


def test_crlf_file_is_edited_not_refused(tmp_path):
    p = tmp_path / "q.toml"
    p.write_bytes(HAND_WRITTEN.replace("\n", "\r\n").encode())
    qf = queuefile.load(p)
    assert queuefile.save(qf) is False and p.read_bytes() == HAND_WRITTEN.replace("\n", "\r\n").encode()
    queuefile.set_entry(qf, 143, verdict="ported")
    assert queuefile.save(qf) is True  # a CRLF file on disk is not "changed since read"
    after = p.read_bytes()
    assert after.startswith(HAND_WRITTEN.split("[[entry]]\nn = 143")[0].replace("\n", "\r\n").encode())
    assert queuefile.load(p).queue.entry(143).verdict == "ported"


def test_an_empty_file_on_disk_is_refused(tmp_path):
    for empty in ("", "\n  \n"):
        p = write(tmp_path, empty)
        with pytest.raises(UserError, match="empty queue file"):
            queuefile.load(p)


def test_a_new_queue_file_gets_the_usual_mode(tmp_path):
    import os

    old = os.umask(0o022)
    try:
        p = tmp_path / "queue" / "new.toml"
        qf = queuefile.new(p, QueueMeta(name="n"))
        queuefile.save(qf)
    finally:
        os.umask(old)
    assert p.stat().st_mode & 0o777 == 0o644


def test_binary_file_stat_loads(tmp_path):
    p = write(tmp_path, _E + 'files = ["a.bin"]\nstat = {"a.bin" = [-1, -1]}\n')
    assert queuefile.load(p).queue.entry(1).stat == {"a.bin": [-1, -1]}


def test_a_failed_write_leaves_the_old_file_and_no_temp(tmp_path, monkeypatch):
    p = write(tmp_path, HAND_WRITTEN)
    qf = queuefile.load(p)
    queuefile.set_entry(qf, 143, verdict="ported")

    def boom(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(queuefile.store.os, "replace", boom)
    with pytest.raises(UserError, match=r"cannot write .*q\.toml: No space left on device; it was left as it was"):
        queuefile.save(qf)
    assert p.read_text(encoding="utf-8") == HAND_WRITTEN
    assert sorted(x.name for x in tmp_path.iterdir()) == ["q.toml"]


_PARTED = _E + 'verdict = "real-gap"\nblocked_by = []\n[[entry.part]]\nname = "(b)"\n'


@pytest.mark.parametrize(
    "text, message, line",
    [
        (_PARTED + 'verdict = "nah"\n', "entry 1 part '(b)' has unknown verdict 'nah'", 9),
        (_PARTED + 'verdict = "blocked"\nblocked_by = [99]\n', "entry 1 part '(b)' is blocked_by 99", 10),
        (_PARTED + 'verdict = "blocked"\nfiles = 3\n', "entry 1 part files must be a list", 10),
        (_PARTED + '[[entry.part]]\nname = "(b)"\n', "entry 1 has two parts named '(b)'", 10),
    ],
)
def test_part_errors_name_the_parts_own_line(tmp_path, text, message, line):
    p = write(tmp_path, text)
    with pytest.raises(UserError) as exc:
        queuefile.load(p)
    assert message in str(exc.value) and f"{p}:{line}:" in str(exc.value)


def test_a_truncated_queue_names_its_last_line_and_says_it_looks_truncated(tmp_path):
    full = write(tmp_path, HAND_WRITTEN).read_text(encoding="utf-8")
    cut = full.index('"', full.index("subject")) + 5  # stop inside a string
    p = tmp_path / "q.toml"
    p.write_text(full[:cut], encoding="utf-8")
    with pytest.raises(UserError) as e:
        queuefile.load(p)
    last = full[:cut].count("\n") + 1
    assert f"q.toml:{last}:" in str(e.value) and "looks truncated" in str(e.value)


def test_docs_list_every_key_the_loader_accepts():
    """Every field of the queue's records is a key a person may meet: docs/queue.md (or the example
    in docs/design.md §4 it extends) names each one."""
    import dataclasses

    from porttrack import model

    root = Path(__file__).resolve().parents[2]
    docs = (root / "docs" / "queue.md").read_text() + (root / "docs" / "design.md").read_text()
    tables = {"gates": "gate", "parts": "part", "citations": "citation"}  # arrays of tables: [[entry.gate]]
    missing = []
    for cls in (
        model.QueueMeta,
        model.Entry,
        model.Part,
        model.Gate,
        model.Citation,
        model.Behaviour,
        model.Ack,
        model.Rule,
    ):
        for f in dataclasses.fields(cls):
            key = tables.get(f.name, f.name)
            if not re.search(rf"`{key}`|^{key} = |\[\[?\w+\.{key}\]\]?", docs, re.MULTILINE):
                missing.append(f"{cls.__name__}.{key}")
    assert missing == [], missing


def _built_queue(folder: Path) -> Path:
    """A queue as `queue build` writes it (entries appended as text), saved and read back."""
    p = folder / "q.toml"
    qf = queuefile.new(p, QueueMeta(name="n", pin="a" * 40, target="b" * 40))
    entries = [
        Entry(
            n=i, sha=f"{i:040x}", subject=f"change {i} (#{i})", files=[f"vllm/m{i}.py"], symbols=Symbols(changed=["X"])
        )
        for i in range(1, 6)
    ]
    queuefile.append_entries(qf, entries)
    queuefile.save(qf)
    return p


def test_an_entry_as_written_is_rewritten_as_text_with_the_bytes_tomlkit_writes(tmp_path):
    tricky = ['quote " and back\\slash', "tab\there, newline\nthere, bell \x07, del \x7f", "é ✓ 𝄞", '"""', ""]
    gates = [
        Gate(id="x-absent", kind="absent", probe="X", scope=["src", "include"], control="Y", established_at="a.h:3"),
        Gate(id="wait-1", kind="entry-ported", entry=1, established_at="q.toml:99"),
    ]
    values = [
        dict(verdict="surface-absent", verdict_by="audit", rule="unmapped", reason='the port lacks "X"',
             owner="", blocked_by=[], gates=gates, evidence=tricky, disposition="INVENTORY"),
        dict(verdict="blocked", verdict_by="audit", rule="blocked", reason="waits", owner="ROW-1",
             blocked_by=[1, 2], gates=[], evidence=["one line"], disposition="PORT-NOW"),
        dict(verdict="no-op", verdict_by="audit", rule="no-op", reason="", owner="", blocked_by=[], gates=[],
             evidence=[], disposition="PORT-NOW"),
        dict(verdict="unclassified", verdict_by="", reason="", owner="", blocked_by=[], gates=[],
             disposition="PORT-NOW"),  # what the entry already holds: nothing changes
        dict(verdict="real-gap", verdict_by="audit", rule="real-gap", reason="r", owner="", blocked_by=[3],
             gates=gates[:1], evidence=["e"], disposition="PORT-NOW"),
    ]  # fmt: skip
    as_text = queuefile.load(_built_queue(tmp_path / "text"))
    by_table = queuefile.load(_built_queue(tmp_path / "table"))
    for e, v in zip(as_text.queue.entries, values, strict=True):
        wrote = queuefile.write_entry_text(as_text, e, **v)
        # 3: an empty `evidence` is written by the table edit alone; 5: the file's last entry has no blank line after it
        assert wrote is (None if e.n in (3, 5) else e.n != 4)
        if wrote is None:
            queuefile.set_fields(queuefile.edit_entry(as_text, e.n), v)
        queuefile.set_fields(queuefile.edit_entry(by_table, e.n), v)
    assert queuefile.dumps(as_text) == queuefile.dumps(by_table)
    gates[1].established_at = "q.toml:12"  # audit.write sets it on its own gates once the entries are written
    for qf in (as_text, by_table):  # the entry-ported citation follows entry 1's line, in text as in the table
        queuefile.follow_citations(qf)
    assert queuefile.dumps(as_text) == queuefile.dumps(by_table) and 'established_at = "q.toml:12"' in queuefile.dumps(
        as_text
    )
    # written once, an entry is edited through its table from then on, and both paths still agree
    assert queuefile.write_entry_text(as_text, as_text.queue.entries[0], **values[2]) is None
    for qf in (as_text, by_table):
        queuefile.set_fields(queuefile.edit_entry(qf, 1), {"reason": "again"})
        queuefile.follow_citations(qf)
        queuefile.rebuild(qf)
    assert queuefile.dumps(as_text) == queuefile.dumps(by_table)
    assert [g.established_at for g in as_text.queue.entries[0].gates] == ["a.h:3", "q.toml:12"]


def test_an_entry_a_person_touched_is_never_rewritten_as_text(tmp_path):
    p = _built_queue(tmp_path)
    edits = [
        lambda t: t.replace('subject = "change 2 (#2)"\n', 'subject = "change 2 (#2)"  # keep\n'),
        lambda t: t.replace("[[entry]]\nn = 3\n", "[[entry]]\n# ours\nn = 3\n"),
        lambda t: t.replace('verdict = "unclassified"\nverdict_by = ""\nreason = ""\nowner = ""\nblocked_by = []\n\n[entry.symbols]\nadded = []\nchanged = ["X"]\nremoved = []\nuses = []\n\n[[entry]]\nn = 5', 'verdict = "unclassified"\nverdict_by = ""\nreason = ""\nowner = ""\nblocked_by = []\n\n[entry.symbols]\nadded = []\nchanged = ["X"]\nremoved = []\nuses = []\n\n\n[[entry]]\nn = 5'),
    ]  # fmt: skip
    for edit in edits:
        p.write_text(edit(p.read_text()))
    text = p.read_text()
    assert text.count("# keep") == 1 and text.count("# ours") == 1 and "\n\n\n[[entry]]\nn = 5" in text
    qf = queuefile.load(p)
    results = [queuefile.write_entry_text(qf, e, verdict="no-op", verdict_by="audit") for e in qf.queue.entries]
    assert results == [True, None, None, None, None]  # 4: two blank lines follow; 5 ends the file


def test_rewrites_after_rewrites_give_the_bytes_tomlkit_writes_whichever_path_each_entry_takes(tmp_path):
    def gate(i: int, control: str = "") -> Gate:
        return Gate(id=f"g{i}", kind="absent", probe=f"P{i}", scope=["src"], control=control, established_at="a.h:1")

    one, other, two, others, keyed = [gate(1)], [gate(3)], [gate(1), gate(2)], [gate(4), gate(5)], [gate(1, "C")]
    each = [  # the gates each entry gets, write after write
        [one, other, other, [], one],
        [two, others, keyed, keyed, one],
        [[], one, two, two, []],
        [keyed, other, one, [], others],
        [one, other, [], one, one],  # the file's last entry
    ]
    rounds = list(zip(*each, strict=True))
    as_text, by_table = _built_queue(tmp_path / "text"), _built_queue(tmp_path / "table")
    took = set()  # (gates before, gates after) of the writes that took the text path
    for r, gates_of in enumerate(rounds):
        qf_text, qf_table = queuefile.load(as_text), queuefile.load(by_table)
        for e, gates in zip(qf_text.queue.entries, gates_of, strict=True):
            v = dict(verdict="real-gap", verdict_by="audit", rule="real-gap", reason=f"round {r}", gates=gates,
                     evidence=[f"line {r}"], blocked_by=[r + 1])  # fmt: skip
            if queuefile.write_entry_text(qf_text, e, **v) is None:
                queuefile.set_fields(queuefile.edit_entry(qf_text, e.n), v)
            else:
                took.add((len(e.gates), len(gates), e.n == 5))
            queuefile.set_fields(queuefile.edit_entry(qf_table, e.n), v)
        for qf in (qf_text, qf_table):
            queuefile.follow_citations(qf)
            queuefile.rebuild(qf)
            queuefile.save(qf)
        assert as_text.read_bytes() == by_table.read_bytes(), f"round {r}"
    # gates added, or kept in shape, and the file's last entry once it has gates
    assert {(0, 1, False), (0, 2, False), (1, 1, False), (2, 2, False)} <= took and any(last for *_, last in took)
