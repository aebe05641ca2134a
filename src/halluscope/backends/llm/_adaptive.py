"""How many requests an OpenAI-compatible backend keeps in flight: found quickly, kept, and found again.

Replies are measured in windows of at least ``max(MIN_WINDOW, limit)`` completions; per window the limiter has the
*median* latency (robust to a jittery server where a mean or a minimum is not) and the completions per second, and
the requests in flight on average. Two signals, both needed because neither alone tells queueing from a slow server:

- latency: the window's median against the baseline (the lowest window median seen lately); above ``TOLERANCE``
  times it the server is queueing (the gradient of Netflix's concurrency-limits, Gradient2, with its tolerance);
- throughput: when the requests in flight changed between two windows, the elasticity of completions per second
  to them, d log(rate) / d log(in flight): about 1 while the server has room, about 0 once it is saturated.

Slow start doubles the limit every window while throughput keeps up with it; it ends at the first window whose
doubling did not pay (elasticity under ``ELASTIC``) or whose latency says queueing. After it a window without
queueing grows the limit by a quarter (at least 1); a queueing one sets it to ``limit * gradient + 1`` (gradient =
TOLERANCE * baseline / median, at least 0.5), unless throughput still tracks the requests in flight, which means
the server got slower, not fuller: the baseline moves to the new latency instead (so a slow spell does not shrink
the limit for good); a window whose median is under the baseline by more than TOLERANCE says the slow spell is
over: slow start resumes from the limit it reached, so the width is found again in a few round trips. Every
``REPROBE_S`` the baseline is re-learnt from the recent windows and a limit under the ceiling is doubled once (a
re-probe). A timeout or a 429/503 halves it (once per window). Latency is measured by the client, so a client
short of CPU (its process busy for ``CLIENT_BUSY`` of the window or more, by ``cpu_clock``) inflates it with its own
event-loop lag and caps its throughput: such a window's latency is not read as server queueing, nor its flat
throughput as the server's width, and the limit is held (cutting it saves the server nothing and costs the client
more per request). ``concurrency`` is the
ceiling; ``adaptive: off`` keeps it there. ``history`` records (seconds since start, limit, why) of every change.
The logic is plain arithmetic on a clock passed in, so tests drive it on a simulated one.
"""

from __future__ import annotations

import asyncio
import math
import statistics
import time
from collections import deque
from collections.abc import Callable

TOLERANCE = 2.0  # median latency over the baseline above which the server counts as queueing (Gradient2 uses 1.5 over
# a smoothed average; a minimum of window medians sits lower under jitter, so the margin is wider)
BASE_WINDOW = 16  # completions a window needs for its median to count towards the baseline
ELASTIC = 0.5  # throughput elasticity to in-flight requests above which the server still has room
MIN_WINDOW = 8  # completions per window at least (at least the limit itself)
GROWTH = 0.25  # steady growth per window without queueing, as a share of the limit
REPROBE_S = 30.0  # baseline re-learnt and one doubling tried this often
CLIENT_BUSY = 0.85  # share of a core the client's process used over a window above which its latency is its own lag
HISTORY_KEPT = 400  # changes kept in full (the first 100 and the latest); the count of all is kept too


class AdaptiveLimit:
    def __init__(
        self,
        ceiling: int,
        *,
        start: int = 1,
        adaptive: bool = True,
        clock: Callable[[], float] = time.monotonic,
        cpu_clock: Callable[[], float] = time.process_time,
    ) -> None:
        self.ceiling = max(1, ceiling)
        self.adaptive = adaptive
        self.clock = clock
        self.cpu_clock = cpu_clock
        self.t0 = clock()
        self._limit = float(self.ceiling if not adaptive else max(1, min(start, self.ceiling)))
        self.active = 0
        self.slow_start = adaptive and self._limit < self.ceiling
        self.reason = "start" if adaptive else "adaptive off: always the ceiling"
        self.history: list[tuple[float, int, str]] = [(0.0, self.limit, self.reason)]
        self.changes = 0
        self.peak = self.limit
        self.base: float | None = None  # baseline latency: the lowest recent window median
        self._recent_meds: list[tuple[float, float]] = []  # (time, median) of windows since the last re-probe
        self._last_reprobe = self.t0
        self._prev: tuple[float, float] | None = None  # (in flight, rate) of the previous window
        self._lat: list[float] = []
        self._inflight_sum = 0.0
        self._w_start = self.t0
        self._w_cpu = cpu_clock()
        self._cut_this_window = False
        self._w_need = max(MIN_WINDOW, self.limit)
        self._over = False  # the last window's median was over TOLERANCE x the baseline
        self._waiters: deque[asyncio.Future] = deque()

    # -- the gate ---------------------------------------------------------------------------------------------------

    @property
    def limit(self) -> int:
        return max(1, min(self.ceiling, int(self._limit)))

    @property
    def probing(self) -> bool:
        """Still in slow start (kept for callers of the old limiter)."""
        return self.slow_start

    async def __aenter__(self) -> AdaptiveLimit:
        """A slot, first come first served: a freed slot wakes one waiter, not all of them (thousands wait at once
        when a stage hands every item over together; waking each on every reply made the client the bottleneck)."""
        if self.active < self.limit and not self._waiters:
            self.active += 1
            return self
        fut = asyncio.get_running_loop().create_future()
        self._waiters.append(fut)
        try:
            await fut  # the slot is counted by whoever woke us
        except asyncio.CancelledError:
            if fut.done() and not fut.cancelled():
                self.active -= 1
                self._hand_over()
            else:
                self._waiters.remove(fut)
            raise
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.active -= 1
        self._hand_over()

    def _hand_over(self) -> None:
        while self._waiters and self.active < self.limit:
            fut = self._waiters.popleft()
            if not fut.done():
                self.active += 1
                fut.set_result(None)

    # -- the logic --------------------------------------------------------------------------------------------------

    def _set(self, limit: float, why: str, *, quiet: bool = False) -> None:
        limit = max(1.0, min(float(self.ceiling), limit))
        before = self.limit
        self._limit = limit
        self.reason = why
        self.peak = max(self.peak, self.limit)
        if self.limit > before:
            self._hand_over()
        if self.limit != before and not quiet:
            self.changes += 1
            self.history.append((round(self.clock() - self.t0, 3), self.limit, why))
            if len(self.history) > HISTORY_KEPT:
                del self.history[100]

    def _new_window(self, now: float) -> None:
        self._lat, self._inflight_sum, self._w_start, self._cut_this_window = [], 0.0, now, False
        self._w_cpu = self.cpu_clock()
        self._w_need = max(MIN_WINDOW, self.limit)

    def success(self, latency_s: float, in_flight: int | None = None) -> None:
        """A reply arrived after ``latency_s`` with ``in_flight`` requests out (default: the gate's count)."""
        if not self.adaptive:
            return
        now = self.clock()
        if self.slow_start:
            self._set(self._limit + 1, "slow start", quiet=True)  # +1 per reply: doubles every round trip
        self._lat.append(max(latency_s, 1e-6))
        self._inflight_sum += self.active if in_flight is None else in_flight
        if len(self._lat) < self._w_need or now <= self._w_start:
            return
        med = statistics.median(self._lat)
        inflight = self._inflight_sum / len(self._lat)
        rate = len(self._lat) / (now - self._w_start)
        busy = (self.cpu_clock() - self._w_cpu) / (now - self._w_start)
        self._decide(now, med, inflight, rate, busy)
        self._new_window(now)

    def _decide(self, now: float, med: float, inflight: float, rate: float, busy: float) -> None:
        prev, elastic = self._prev, None
        if prev is not None and abs(math.log(inflight / prev[0])) > math.log(1.2):
            elastic = math.log(rate / prev[1]) / math.log(inflight / prev[0])
        self._prev = (inflight, rate)
        if len(self._lat) >= BASE_WINDOW:
            self._recent_meds.append((now, med))
        # replies much faster than the baseline: a slow spell is over (the baseline had moved up to it)
        faster = self.base is not None and med * TOLERANCE < self.base and len(self._lat) >= BASE_WINDOW
        was = self.base
        if self.base is None or len(self._lat) >= BASE_WINDOW:  # a median of few replies is too jittery to trust
            self.base = med if self.base is None else min(self.base, med)
        over = med > TOLERANCE * self.base
        queued = over and self._over  # two windows in a row: one jittery window is not a queue
        self._over = over
        seen = f"{rate:.1f}/s at {inflight:.1f} in flight, median {med * 1e3:.0f} ms"
        client_bound = busy >= CLIENT_BUSY  # its latency is partly its own lag, its throughput its own ceiling
        held = over and client_bound  # the latency is the client's own lag, not the server's queue
        queued = queued and not held
        if now - self._last_reprobe >= REPROBE_S:
            self._reprobe(now)
        elif faster and not self.slow_start and self.limit < self.ceiling:
            self.slow_start = True  # find the width again at a doubling a round trip, not a quarter a window
            self._set(
                self._limit + 1,
                f"server faster again: {seen} vs baseline {was * 1e3:.0f} ms "  # type: ignore[operator]
                "(re-probe by slow start)",
            )
        elif queued and elastic is not None and elastic >= 0.8 and inflight * 1.3 < prev[0]:  # type: ignore[index]
            # fewer in flight cost throughput in proportion: the server got slower, it is not queueing
            self.base = med
            self._set(
                self._limit + 1,
                f"server slower, not queueing (throughput elasticity {elastic:.2f}): {seen}; baseline moved",
            )
        elif self.slow_start:
            if queued:
                self.slow_start = False
                self._set(
                    inflight * max(0.5, TOLERANCE * self.base / med) + 1,
                    f"slow start ended, queueing: {seen} vs baseline {self.base * 1e3:.0f} ms",
                )
            elif elastic is not None and elastic < ELASTIC and client_bound:
                self.slow_start = False  # growth stopped paying because the client has no CPU left, not the server
                self.reason = f"slow start ended, client CPU-bound ({busy:.0%} of a core): limit held; {seen}"
                self.history.append((round(now - self.t0, 3), self.limit, self.reason))
            elif elastic is not None and elastic < ELASTIC:
                self.slow_start = False  # the last round of growth did not pay: the width is about where it was
                assert prev is not None
                self._set(
                    prev[0] * 1.25 + 1,
                    f"slow start ended, throughput stopped growing: {seen} vs {prev[1]:.1f}/s at {prev[0]:.1f}",
                )
            elif self.limit >= self.ceiling:
                self.slow_start = False
                self.reason = f"slow start reached the ceiling: {seen}"
                self.history.append((round(now - self.t0, 3), self.limit, self.reason))
            else:
                self.history.append((round(now - self.t0, 3), self.limit, f"slow start: {seen}"))
        elif held:
            self.reason = f"client CPU-bound ({busy:.0%} of a core): limit held; {seen}"
            if not self.history[-1][2].startswith("client CPU-bound"):
                self.history.append((round(now - self.t0, 3), self.limit, self.reason))
        elif not queued:
            self._set(self._limit + max(1.0, GROWTH * self._limit), f"no queueing: {seen}")
        else:
            self._set(
                self._limit * max(0.5, TOLERANCE * self.base / med) + 1,
                f"queueing: {seen} vs baseline {self.base * 1e3:.0f} ms",
            )

    def _reprobe(self, now: float) -> None:
        meds = [m for t, m in self._recent_meds if t >= self._last_reprobe]
        self.base = min(meds) if meds else self.base
        self._recent_meds = [(t, m) for t, m in self._recent_meds if t >= now - REPROBE_S]
        self._last_reprobe = now
        if self._limit < self.ceiling:
            self._set(self._limit * 2, f"re-probe after {REPROBE_S:.0f} s (baseline {self.base * 1e3:.0f} ms)")

    def overload(self, why: str) -> None:
        """A timeout or a 429/503: halve the limit (once per window), end slow start; always in the history."""
        if not self.adaptive:
            return
        self.slow_start = False
        if self._cut_this_window:
            return
        self._cut_this_window = True
        before = self.limit
        self._set(self._limit / 2, why)
        if self.limit == before:
            self.history.append((round(self.clock() - self.t0, 3), self.limit, why))

    # -- what it did ------------------------------------------------------------------------------------------------

    def record(self) -> dict:
        """For the run's record: ceiling, peak, the limit now and its history."""
        return {
            "adaptive": self.adaptive,
            "ceiling": self.ceiling,
            "limit": self.limit,
            "peak": self.peak,
            "changes": self.changes,
            "reason": self.reason,
            "history": [list(h) for h in self.history],
        }
