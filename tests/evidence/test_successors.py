"""successors: which file a commit put in place of the one it deleted."""

from __future__ import annotations

from porttrack.evidence.successors import successors


def test_a_file_added_beside_a_deleted_one_with_its_leading_word_succeeds_it():
    changes = [
        ("c2", ["parsers/foo_engine_parser.py", "parsers/bar.py", "other/foo_parser.py"], ["parsers/foo_parser.py"]),
        ("c1", ["parsers/foo.py"], ["parsers/foocoder_parser.py", "parsers/baz_parser.py"]),
    ]
    assert successors(changes) == {
        # the same folder and leading word; not an unrelated module beside it, nor a namesake elsewhere
        "parsers/foo_parser.py": [("c2", "parsers/foo_engine_parser.py")],
        # one leading word starting the other
        "parsers/foocoder_parser.py": [("c1", "parsers/foo.py")],
    }


def test_a_file_deleted_with_nothing_put_in_its_place_has_no_successor():
    assert successors([("c1", [], ["parsers/foo_parser.py"]), ("c2", ["x/foo_parser.py"], [])]) == {}
    assert successors([("c1", ["a/_x.py"], ["a/_y.py"])]) == {}  # no leading word to share
