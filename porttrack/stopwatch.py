"""Seconds per named stage, for whoever reports them: the CLI's summary line and the benchmarks.

The engines never read a clock. They take a `stage` hook and wrap each stage in `with stage(name):`;
the default hook, `untimed`, does nothing, and a `Stopwatch` passed in its place records the time.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager

Stage = Callable[[str], AbstractContextManager[None]]


def untimed(stage: str) -> AbstractContextManager[None]:
    return contextlib.nullcontext()


class Stopwatch:
    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    @contextlib.contextmanager
    def __call__(self, stage: str) -> Iterator[None]:
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[stage] = self.seconds.get(stage, 0.0) + time.perf_counter() - t0

    @property
    def total(self) -> float:
        return sum(self.seconds.values())
