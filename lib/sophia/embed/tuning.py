"""Pick the torch thread count for bulk embedding by measuring, not guessing.

On an idle 2-core box two threads are fastest; on a shared, loaded one a single thread is
several times faster (two threads oversubscribe the cores: see docs/benchmarks.md). The
tuner alternates 1..max threads on the first batches, keeps the fastest (characters per
second, since batches differ in length; each option is tried twice, interleaved, to damp
noise), and probes again every ``reprobe`` batches.
"""

from __future__ import annotations


class ThreadTuner:
    def __init__(self, max_threads: int, reprobe: int = 40) -> None:
        self.options = list(range(1, max(1, max_threads) + 1))
        self.reprobe = reprobe
        self.best = self.options[-1]
        self._probe: list[int] = self.options * 2
        self._rates: dict[int, list[float]] = {}
        self._since = 0
        self.current = self.best

    def next(self) -> int:
        """Thread count for the next batch."""
        if len(self.options) == 1:
            return self.options[0]
        if not self._probe and self._since >= self.reprobe:
            self._probe, self._rates, self._since = self.options * 2, {}, 0
        self.current = self._probe[0] if self._probe else self.best
        return self.current

    def done(self, chars: int, seconds: float) -> None:
        """Report the batch just run with ``current`` threads."""
        if len(self.options) == 1 or seconds <= 0:
            return
        if self._probe and self._probe[0] == self.current:
            self._probe.pop(0)
            self._rates.setdefault(self.current, []).append(chars / seconds)
            if not self._probe:
                self.best = max(self._rates, key=lambda t: sum(self._rates[t]) / len(self._rates[t]))
        else:
            self._since += 1
