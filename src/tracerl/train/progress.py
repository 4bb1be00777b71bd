"""Progress a person can follow: a live bar on a terminal, periodic one-line reports
when the output goes to a file or a pipe (where a bar would print nothing until the end).

A line looks like

    RL 12/100  reward 0.53  success 0.48  0.41 step/s  ETA 3m35s

and is written when a stage starts, every `every_s` seconds of progress, and when the
stage ends. Stage-level messages (held-out evaluations, warnings) go through `note`.
"""

from __future__ import annotations

import sys
import time
from types import TracebackType
from typing import TextIO

from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn


def _duration(seconds: float) -> str:
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


class StageProgress:
    """One stage's progress (SFT steps, RL steps, ...)."""

    def __init__(self, owner: ProgressReporter, name: str, total: int | None,
                 completed: int) -> None:
        self.owner, self.name, self.total = owner, name, total
        self.start_completed = self.completed = completed
        self.started = self.last_line = time.monotonic()
        self.info = ""
        self._bar = (owner.bar.add_task(name, total=total, completed=completed, info="")
                     if owner.bar is not None else None)
        owner.line(self._line())

    def update(self, completed: int, info: str = "") -> None:
        self.completed, self.info = completed, info
        if self._bar is not None and self.owner.bar is not None:
            self.owner.bar.update(self._bar, completed=completed, info=info)
        now = time.monotonic()
        finished = self.total is not None and completed >= self.total  # done() says it
        if now - self.last_line >= self.owner.every_s and not finished:
            self.last_line = now
            self.owner.line(self._line())

    def done(self) -> None:
        self.owner.line(self._line(final=True))

    def _line(self, final: bool = False) -> str:
        total = "" if self.total is None else f"/{self.total}"
        parts = [f"{self.name} {self.completed}{total}"]
        if self.info:
            parts.append(self.info)
        elapsed = time.monotonic() - self.started
        done = self.completed - self.start_completed
        if done > 0 and elapsed > 0:
            rate = done / elapsed
            parts.append(f"{rate:.2f} step/s" if rate < 10 else f"{rate:.0f} step/s")
            if self.total is not None and not final:
                parts.append(f"ETA {_duration((self.total - self.completed) / rate)}")
        if final:
            parts.append(f"done in {_duration(elapsed)}")
        return "  ".join(parts)


class ProgressReporter:
    """Context manager: a rich bar when `stream` is a terminal, else periodic lines."""

    def __init__(self, enabled: bool = True, every_s: float = 30.0,
                 stream: TextIO | None = None) -> None:
        self.enabled = enabled
        self.every_s = every_s
        self.stream = stream if stream is not None else sys.stderr
        self.live = enabled and self.stream.isatty()
        self.bar: Progress | None = None
        if self.live:
            self.bar = Progress(
                TextColumn("[bold]{task.description}"), BarColumn(),
                TextColumn("{task.completed}/{task.total}"),
                TextColumn("{task.fields[info]}"), TimeElapsedColumn())

    def __enter__(self) -> ProgressReporter:
        if self.bar is not None:
            self.bar.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self.bar is not None:
            self.bar.stop()

    def stage(self, name: str, total: int | None, completed: int = 0) -> StageProgress:
        return StageProgress(self, name, total, completed)

    def line(self, text: str) -> None:
        """A progress line (only when not drawing a live bar)."""
        if self.enabled and not self.live:
            print(text, file=self.stream, flush=True)

    def warn(self, text: str) -> None:
        """A message printed even with progress off (a run's notes and warnings)."""
        if self.bar is not None:
            self.bar.console.print(text)
        else:
            print(text, file=self.stream, flush=True)

    def note(self, text: str) -> None:
        """A message worth a line whatever the output is (evaluations, warnings)."""
        if self.enabled:
            self.warn(text)
