"""One generic registry for backends named 'provider/model' (STYLE.md: register in one place only)."""

from __future__ import annotations

import difflib
from collections.abc import Callable
from typing import Generic, TypeVar

from halluscope.core.errors import HalluscopeError

T = TypeVar("T")


class Registry(Generic[T]):
    """Maps a provider prefix to a factory ``factory(model: str, **options) -> T``."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._factories: dict[str, Callable[..., T]] = {}

    def register(self, provider: str) -> Callable[[Callable[..., T]], Callable[..., T]]:
        def deco(factory: Callable[..., T]) -> Callable[..., T]:
            if provider in self._factories:
                raise HalluscopeError(f"{self.kind} provider '{provider}' is registered twice")
            self._factories[provider] = factory
            return factory

        return deco

    @property
    def providers(self) -> list[str]:
        return sorted(self._factories)

    def create(self, spec: str, **options: object) -> T:
        """Build a backend from 'provider/model' (or a bare 'provider' for its default model)."""
        provider, _, model = spec.partition("/")
        if provider not in self._factories:
            close = difflib.get_close_matches(provider, self.providers, n=1)
            hint = f" Did you mean '{close[0]}'?" if close else ""
            raise HalluscopeError(
                f"unknown {self.kind} '{spec}': expected one of {', '.join(p + '/...' for p in self.providers)}.{hint}"
            )
        return self._factories[provider](model, **options)
