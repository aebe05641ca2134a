"""A provider's budget (requests and tokens per minute) and what the client achieved, for one backend session.

``rpm`` / ``tpm`` in the LLM config are honoured with token buckets (refilled continuously, a second's worth of
burst): a request takes one request token and its estimated tokens (prompt characters / 4 + max_tokens, else the
mean completion seen so far) before it is sent; the usage the server returns corrects the estimate (a guessed
reply share is given back; max_tokens, which providers count, is not). The server's
``x-ratelimit-remaining-*`` / ``x-ratelimit-reset-*`` headers hold the buckets back when the server counts less
than the client thinks is left, and ``x-ratelimit-limit-*`` sets a budget the config did not give. The meter keeps
the last ``METER_S`` seconds of replies for the progress line (in flight, req/s, tokens/min, the limit and why).
"""

from __future__ import annotations

import asyncio
import re
import time
from collections import deque
from collections.abc import Callable

METER_S = 10.0
_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h)")


def reset_seconds(value: str | None) -> float | None:
    """'1s', '6m0s', '20ms', '0.5' (seconds) -> seconds; None when unreadable."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    parts = _DURATION.findall(value)
    if not parts:
        return None
    scale = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}
    return sum(float(n) * scale[u] for n, u in parts)


class TokenBucket:
    """``per_minute`` tokens a minute, at most ``burst`` held; ``take`` waits until the tokens are there."""

    def __init__(
        self, per_minute: float, *, burst: float | None = None, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.rate = per_minute / 60.0
        self.capacity = max(1.0, burst if burst is not None else self.rate)
        self.level = self.capacity
        self.clock = clock
        self.t = clock()
        self.hold_until = 0.0
        self.waited_s = 0.0

    def _refill(self) -> None:
        now = self.clock()
        self.level = min(self.capacity, self.level + (now - self.t) * self.rate)
        self.t = now

    def wait_s(self, n: float) -> float:
        """Seconds until ``n`` tokens can be taken (0: now)."""
        self._refill()
        need = min(n, self.capacity) - self.level
        wait = max(self.hold_until - self.clock(), need / self.rate if need > 1e-9 else 0.0, 0.0)
        return wait if wait > 1e-6 else 0.0  # float dust would spin: a microsecond is "now"

    async def take(self, n: float) -> None:
        while (wait := self.wait_s(n)) > 0:
            self.waited_s += wait
            await asyncio.sleep(wait)
        self.level -= n  # may go below zero for a request larger than the burst: the next ones wait for it

    def give_back(self, n: float) -> None:
        """Correct a taken estimate: n > 0 returns tokens, n < 0 takes more."""
        self._refill()
        self.level = min(self.capacity, self.level + n)

    def observe(self, remaining: float | None, reset_s: float | None) -> None:
        """The server's own count: never hold more than it says is left; at none left, wait for its reset."""
        if remaining is None:
            return
        self._refill()
        self.level = min(self.level, remaining)
        if remaining <= 0 and reset_s:
            self.hold_until = max(self.hold_until, self.clock() + reset_s)


def estimate_tokens(body: dict, mean_completion: float) -> float:
    """Prompt characters / 4 plus max_tokens (else the mean completion so far)."""
    chars = 0
    for m in body.get("messages", ()):
        c = m.get("content")
        chars += len(c) if isinstance(c, str) else sum(len(p.get("text", "")) for p in c or () if isinstance(p, dict))
    out = body.get("max_completion_tokens") or body.get("max_tokens") or mean_completion
    return chars / 4 + float(out)


class Pacing:
    """The budget buckets and the meter of one backend session (see the module docstring)."""

    def __init__(self, rpm: float | None, tpm: float | None, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.requests = TokenBucket(rpm, clock=clock) if rpm else None
        self.tokens = TokenBucket(tpm, clock=clock) if tpm else None
        self.configured = {"rpm": rpm, "tpm": tpm}
        self.learnt: dict[str, float] = {}
        self._done: deque[tuple[float, int]] = deque()  # (time, tokens) of replies in the last METER_S
        self._completions = 0
        self._completion_tokens = 0
        self.rejected = 0  # 429 answers

    @property
    def mean_completion(self) -> float:
        return self._completion_tokens / self._completions if self._completions else 256.0

    async def before(self, body: dict) -> tuple[float, bool]:
        """Wait for the budget; returns the tokens estimated and whether the reply's share was a guess (no
        max_tokens), for ``after`` to correct."""
        estimate = estimate_tokens(body, self.mean_completion)
        guessed = not (body.get("max_completion_tokens") or body.get("max_tokens"))
        if self.requests is not None:
            await self.requests.take(1)
        if self.tokens is not None:
            await self.tokens.take(estimate)
        return estimate, guessed

    def after(
        self, taken: tuple[float, bool], used: int | None, completion: int | None, headers: dict, status: int | None
    ) -> None:
        """A reply: correct the estimate by the usage (a provider counts max_tokens when it was sent, so only a
        guessed share is given back; more used than taken is always taken), note the server's headers."""
        now = self.clock()
        estimate, guessed = taken
        if status == 429:
            self.rejected += 1
        if used is not None:
            if self.tokens is not None and (guessed or used > estimate):
                self.tokens.give_back(estimate - used)
            self._done.append((now, used))
            self._completions += 1
            self._completion_tokens += completion or 0
        elif status is not None and 200 <= status < 300:
            self._done.append((now, 0))
        while self._done and self._done[0][0] < now - METER_S:
            self._done.popleft()
        self._observe(headers)

    def _observe(self, headers: dict) -> None:
        for kind, key in (("requests", "rpm"), ("tokens", "tpm")):
            limit = _num(headers.get(f"x-ratelimit-limit-{kind}"))
            bucket = getattr(self, kind)
            if bucket is None and limit:  # the server says what the budget is; the config did not
                bucket = TokenBucket(limit, clock=self.clock)
                setattr(self, kind, bucket)
                self.learnt[key] = limit
            if bucket is not None:
                bucket.observe(
                    _num(headers.get(f"x-ratelimit-remaining-{kind}")),
                    reset_seconds(headers.get(f"x-ratelimit-reset-{kind}")),
                )

    def rates(self) -> tuple[float, float]:
        """(replies per second, tokens per minute) over the last METER_S seconds."""
        now = self.clock()
        recent = [(t, n) for t, n in self._done if t >= now - METER_S]
        if not recent:
            return 0.0, 0.0
        span = max(1e-3, min(METER_S, now - recent[0][0]))
        return len(recent) / span, 60 * sum(n for _, n in recent) / span

    def budget_line(self) -> str:
        parts = []
        for name, b in (("rpm", self.requests), ("tpm", self.tokens)):
            if b is not None:
                parts.append(f"{b.rate * 60:,.0f} {name}{' (from the server)' if name in self.learnt else ''}")
        return ", ".join(parts)

    def record(self) -> dict:
        return {
            "rpm": self.requests.rate * 60 if self.requests else None,
            "tpm": self.tokens.rate * 60 if self.tokens else None,
            "learnt_from_headers": self.learnt,
            "budget_wait_s": round(sum(b.waited_s for b in (self.requests, self.tokens) if b), 3),
            "http_429": self.rejected,
        }


def _num(value: str | None) -> float | None:
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None
