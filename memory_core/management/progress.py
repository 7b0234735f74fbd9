"""Progress of a long command (import, export, demo load, ledger check), on one line.

On a terminal the line is redrawn in place with "\\r". Anywhere else (CI logs, files,
pipes) a redraw would be a new line each time, so plain lines are printed instead: one per
5 % step but at most one a second, then the final count. That is at most about twenty
lines, and a job that finishes within a second prints only its final line.

A Progress is also callable, so it can be handed to a service as its `progress(n)` hook
(`ledger.verify`, `transcripts.prune_history`).

Why not tqdm: it would draw the terminal bar, but off a terminal it still redraws with "\r"
(never a line per step; its maintainers' answer is `disable=True`, tqdm/tqdm#750), it prints
a 0% line at the start unless given a `delay`, and with a `delay` a job that ends sooner
prints nothing at all, not even the final count a log needs. Meeting tests/test_commands.py
with it would mean overriding its display and close, which is most of this module again.
"""

import sys
import time

from django.core.management.base import OutputWrapper

BAR_WIDTH = 30
PLAIN_STEPS = 20  # the most plain lines a non-terminal stream gets
REDRAW_SECONDS = 0.1  # a terminal is redrawn at most this often (and on each new percent)
PLAIN_SECONDS = 1.0  # and a plain stream gets a progress line at most this often


class Progress:
    def __init__(self, total: int | None, label: str, stream=None, *, quiet: bool = False):
        self.total = total if total is None else max(int(total), 0)
        self.label = label
        self.stream = sys.stderr if stream is None else stream
        self.quiet = quiet
        self.count = 0
        self.closed = False
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self._drawn_at = 0.0
        self._plain_at = time.monotonic()
        self._drawn_percent = -1
        self._plain_step = 0  # the last 1/PLAIN_STEPS step printed as a plain line

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()

    def __call__(self, n: int = 1) -> None:
        self.advance(n)

    def advance(self, n: int = 1) -> None:
        if self.closed:
            return
        self.count += n
        if self.quiet:
            return
        if self.tty:
            now = time.monotonic()
            if self._percent() != self._drawn_percent or now - self._drawn_at >= REDRAW_SECONDS:
                self._redraw(now)
        elif self.total:
            step = min(self.count, self.total) * PLAIN_STEPS // self.total
            if step > self._plain_step and self.count < self.total:
                now = time.monotonic()
                if now - self._plain_at >= PLAIN_SECONDS:
                    self._plain_step, self._plain_at = step, now
                    self._emit(self.line() + "\n")

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        if self.quiet:
            return
        if self.tty:
            self._redraw(time.monotonic())
            self._emit("\n")
        else:
            self._emit(self.line() + "\n")

    def line(self) -> str:
        if not self.total:
            return f"{self.label}: {self.count}" if self.total is None else f"{self.label}: 0/0"
        percent = self._percent()
        if not self.tty:
            return f"{self.label}: {self.count}/{self.total} ({percent}%)"
        filled = BAR_WIDTH * min(self.count, self.total) // self.total
        bar = "#" * filled + "-" * (BAR_WIDTH - filled)
        return f"{self.label} [{bar}] {self.count}/{self.total} {percent:3d}%"

    def _percent(self) -> int:
        if not self.total:
            return 100 if self.total == 0 else 0
        return min(self.count, self.total) * 100 // self.total

    def _redraw(self, now: float) -> None:
        self._drawn_at, self._drawn_percent = now, self._percent()
        # "\x1b[K" clears what a longer previous line left to the right.
        self._emit("\r" + self.line() + "\x1b[K")

    def _emit(self, text: str) -> None:
        # A management command's self.stdout/self.stderr would end every write with "\n"
        # (which breaks redrawing in place) and colour stderr as an error; ask for neither.
        if isinstance(self.stream, OutputWrapper):
            self.stream.write(text, style_func=_plain, ending="")
        else:
            self.stream.write(text)
        self.stream.flush()


def _plain(text: str) -> str:
    return text
