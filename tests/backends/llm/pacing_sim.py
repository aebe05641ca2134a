"""A discrete-event client and server on a simulated clock, to test llm._adaptive.AdaptiveLimit's logic in
milliseconds: N requests sent as the limit allows, a server with ``width`` slots (FIFO queue beyond them) whose
service time is ``service(t)`` for a request starting at simulated time t; a client that spends ``client_cpu``
simulated seconds of its one core on each reply (serially: replies wait for it, which the client's latency counts,
as a real event loop's lag) and whose CPU clock is that work's total."""

from __future__ import annotations

import heapq
import math
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from halluscope.backends.llm._adaptive import AdaptiveLimit


@dataclass
class Clock:
    now: float = 0.0

    def __call__(self) -> float:
        return self.now


@dataclass
class Run:
    limiter: AdaptiveLimit
    done_at: list[float] = field(default_factory=list)
    limits: list[tuple[float, int]] = field(default_factory=list)  # (time, limit) after every completion
    overloads: int = 0

    def rate(self, t0: float, t1: float) -> float:
        return sum(t0 <= t < t1 for t in self.done_at) / (t1 - t0)

    def first_time_at(self, rate: float, span: float = 0.5) -> float:
        """The first time the completions per second over [t - span, t) reach ``rate``."""
        j = 0
        for i, t in enumerate(self.done_at):
            while self.done_at[j] < t - span:
                j += 1
            if t >= span and (i - j) / span >= rate:
                return t
        return math.inf

    @property
    def end(self) -> float:
        return self.done_at[-1]


def simulate(
    ceiling: int,
    n: int,
    service: Callable[[float], float],
    *,
    width: float = math.inf,
    overload: Callable[[float, int], bool] | None = None,
    adaptive: bool = True,
    client_cpu: float = 0.0,
) -> Run:
    """``overload(t, in_server)`` True: that request is answered at once with a 429 (and sent again)."""
    clock = Clock()
    cpu = Clock()
    lim = AdaptiveLimit(ceiling, adaptive=adaptive, clock=clock, cpu_clock=cpu)
    run = Run(lim)
    events: list[tuple[float, int, float]] = []  # (finish time, seq (-1: a pause ends, <= -2: processed), sent time)
    queue: deque[float] = deque()
    seq = sent = busy = 0
    client_free = 0.0  # when the client's core is next free

    def start(sent_t: float) -> None:
        nonlocal seq, busy
        busy += 1
        seq += 1
        heapq.heappush(events, (clock.now + service(clock.now), seq, sent_t))

    def dispatch() -> None:
        nonlocal sent
        while lim.active < lim.limit and sent < n:
            sent += 1
            lim.active += 1
            if overload is not None and overload(clock.now, busy + len(queue)):
                run.overloads += 1
                lim.overload("HTTP 429")
                lim.active -= 1
                sent -= 1
                seq_t = clock.now + 0.05  # retried after a short pause
                heapq.heappush(events, (seq_t, -1, -1.0))
                return
            if busy < width:
                start(clock.now)
            else:
                queue.append(clock.now)

    dispatch()
    while events:
        clock.now, tag, sent_t = heapq.heappop(events)
        if tag == -1:  # the pause after a 429 is over
            dispatch()
            continue
        if tag >= 0:  # the server's reply: the server slot frees, the client processes it when its core is free
            busy -= 1
            if queue:
                start(queue.popleft())
            if client_cpu:
                client_free = max(client_free, clock.now) + client_cpu
                heapq.heappush(events, (client_free, -2 - tag, sent_t))
                continue
        cpu.now += client_cpu
        lim.success(clock.now - sent_t)
        lim.active -= 1
        run.done_at.append(clock.now)
        run.limits.append((clock.now, lim.limit))
        dispatch()
    return run
