"""How many requests an OpenAI-compatible backend keeps in flight: adapted to what the server can take.

It starts at one request and probes upward one step at a time: after a window of replies at the current limit
it compares throughput (limit / mean latency) with that of the step below; a step that brings at least
``GAIN_SHARE`` (a quarter) of the gain a server with room would give (L / (L-1)) is kept and the next one is
tried, one that does not (a server that decodes one request at a time answers two in twice the time) is undone
and probing stops. A timeout or an HTTP 429/503 halves the limit and
stops probing. The configured ``concurrency`` is the ceiling; ``history`` records every change and why.
"""

from __future__ import annotations

import asyncio

GAIN_SHARE = 0.25  # share of the ideal throughput gain of a step up that keeps it
MIN_WINDOW = 3  # replies per measurement (at least the limit itself)


class AdaptiveLimit:
    def __init__(self, ceiling: int, *, start: int = 1) -> None:
        self.ceiling = max(1, ceiling)
        self.limit = max(1, min(start, self.ceiling))
        self.active = 0
        self.probing = self.limit < self.ceiling
        self.history: list[tuple[int, str]] = [(self.limit, "start")]
        self._window: list[float] = []
        self._below: float | None = None  # throughput measured one step below the current limit
        self._cond = asyncio.Condition()

    @property
    def peak(self) -> int:
        return max(n for n, _ in self.history)

    async def __aenter__(self) -> AdaptiveLimit:
        async with self._cond:
            await self._cond.wait_for(lambda: self.active < self.limit)
            self.active += 1
        return self

    async def __aexit__(self, *exc: object) -> None:
        async with self._cond:
            self.active -= 1
            self._cond.notify_all()

    def _set(self, limit: int, why: str) -> None:
        if limit != self.limit:
            self.limit = limit
            self.history.append((limit, why))
        self._window = []

    def success(self, latency_s: float) -> None:
        """A reply arrived after ``latency_s``: measure, and step up or back when a window is full."""
        if not self.probing:
            return
        self._window.append(max(latency_s, 1e-6))
        if len(self._window) < max(MIN_WINDOW, self.limit):
            return
        rate = self.limit * len(self._window) / sum(self._window)
        if self._below is not None and rate / self._below - 1 < GAIN_SHARE / (self.limit - 1):
            self.probing = False
            self._set(self.limit - 1, f"throughput {rate:.2f}/s at {self.limit} vs {self._below:.2f}/s at "
                                      f"{self.limit - 1}: latency grew with load")
            return
        self._below = rate
        if self.limit >= self.ceiling:
            self.probing = False
            self._window = []
            return
        self._set(self.limit + 1, f"throughput {rate:.2f}/s held")

    def overload(self, why: str) -> None:
        """A timeout or a 429/503: halve the limit and stop probing."""
        self.probing = False
        self._set(max(1, self.limit // 2), why)
