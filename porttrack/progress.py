"""The one progress reporter for the long steps: a probe's first scan, queue build's walk, validate's cases.

A step calls it with `(done, total)` (`total` None while unknown). On a terminal it draws a transient
rich bar, gone once the step ends. Off one (CI logs, pipes) it prints plain lines, so a log shows the
step moving without flooding: one at each quarter of the way, or every `every` items when given,
and one at the end.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from rich.console import Console

if TYPE_CHECKING:
    from rich.progress import Progress as Bar, TaskID

Line = Callable[[int, int | None], str]  # the plain line for (done, total)


class Progress:
    def __init__(self, console: Console, label: str, line: Line, *, every: int | None = None):
        self.console = console
        self.label = label  # the bar's caption on a terminal
        self.line = line
        self.every = every  # off a terminal: a line every this many items; None: at each quarter
        self._bar: Bar | None = None
        self._task: TaskID | None = None
        self._last = 0  # `done` at the last plain line
        self._next = 0.25  # the next quarter due a plain line

    def __call__(self, done: int, total: int | None) -> None:
        if self.console.is_terminal:
            self._draw(done, total)
        elif self._due(done, total):
            self._last = done
            self.console.print(self.line(done, total), markup=False)

    def _due(self, done: int, total: int | None) -> bool:
        if total is not None and done >= total:
            return done != self._last  # the end, once
        if self.every is not None:
            return done - self._last >= self.every
        if not total or done / total < self._next:
            return False
        while self._next <= done / total:
            self._next += 0.25
        return True

    def _draw(self, done: int, total: int | None) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        if self._bar is None:
            self._bar = Progress(
                TextColumn(self.label),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=self.console,
                transient=True,
            )
            self._bar.start()
            self._task = self._bar.add_task(self.label, total=total)
        assert self._task is not None  # set with the bar
        self._bar.update(self._task, completed=done, total=total)
        if total is not None and done >= total:
            self.close()

    def close(self) -> None:
        """Take the bar off the terminal (also when the step stops early)."""
        if self._bar is not None:
            self._bar.stop()
            self._bar = None
            self._task = None


def probe_scan(console: Console) -> Progress:
    """A probe's first scan: the files it parses (a warm scan parses none, and reports nothing)."""
    return Progress(
        console,
        "indexing files (first scan only)",
        lambda done, total: f"probe: indexed {done}/{total} files (first scan only)",
    )


def queue_walk(console: Console, every: int = 200) -> Progress:
    """queue build / refresh: the commits of the upstream range walked (the total is known up front)."""
    return Progress(
        console,
        "walking",
        lambda done, total: f"walked {done}{'/' + str(total) if total else ''} commits",
        every=every,
    )


def validate_cases(console: Console) -> Progress:
    """validate kv: the cases sent to the harness."""
    return Progress(console, "validate kv", lambda done, total: f"validate kv: {done}/{total} cases sent")
