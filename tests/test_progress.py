"""progress: the one reporter the probe's first scan, queue build's walk and validate's cases share."""

from __future__ import annotations

import io

from rich.console import Console

from porttrack import progress


def _plain() -> Console:
    return Console(file=io.StringIO(), force_terminal=False, width=100)


def _lines(console: Console) -> list[str]:
    return console.file.getvalue().splitlines()  # type: ignore[attr-defined]


def test_off_a_terminal_a_line_at_each_quarter_and_one_at_the_end():
    c = _plain()
    p = progress.probe_scan(c)
    for done in range(0, 11):
        p(done, 10)
    assert _lines(c) == [f"probe: indexed {n}/10 files (first scan only)" for n in (3, 5, 8, 10)]


def test_a_jump_past_several_quarters_is_one_line():
    c = _plain()
    p = progress.validate_cases(c)
    p(1, 8)
    p(7, 8)  # past the half and three quarters at once
    p(8, 8)
    p(8, 8)  # the end is said once
    assert _lines(c) == ["validate kv: 7/8 cases sent", "validate kv: 8/8 cases sent"]


def test_every_n_items_when_asked_and_the_total_unknown():
    c = _plain()
    p = progress.queue_walk(c, every=3)
    for done in range(1, 8):
        p(done, None)
    assert _lines(c) == ["walked 3 commits", "walked 6 commits"]


def test_on_a_terminal_a_bar_with_its_label_that_stops_at_the_end():
    tty = Console(file=io.StringIO(), force_terminal=True, width=100)
    p = progress.validate_cases(tty)
    for done in range(1, 5):
        p(done, 4)
    assert p._bar is None  # stopped by itself at the end: nothing left drawing
    text = tty.file.getvalue()  # type: ignore[attr-defined]
    assert "validate kv" in text and "cases sent" not in text  # the bar, not the plain lines


def test_close_takes_an_unfinished_bar_down():
    tty = Console(file=io.StringIO(), force_terminal=True, width=100)
    p = progress.queue_walk(tty)
    p(1, 10)
    assert p._bar is not None
    p.close()
    assert p._bar is None
    p.close()  # twice is harmless
