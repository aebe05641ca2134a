"""One registry type for everything halluscope looks up by name (each kind is registered in one place only).

Chat backends (text and audio LMs, with declared capabilities), TTS, ASR, punctuation restorers, detectors,
audio-LM adapters, generators and report sections are each one ``Registry``. An entry maps a name to an object:
a factory ``factory(model, **options)`` for the 'provider/model' kinds (``create`` builds it), or the object
itself (a DetectorKind, an adapter class, a section builder). An entry may be given as a 'module:attr' string,
imported on first use, so a registry can list what it holds without importing every backend.

Third-party plug-ins: a distribution declares an entry point in the registry's group (``halluscope.<kind>``,
e.g. ``[halluscope.tts] mytts = my_pkg.tts:create``); the registry reads the group through importlib.metadata on
its first lookup (again on a miss after sys.path changed) and imports the target only when the entry is used.
The target may carry ``capabilities`` (an iterable of names), ``takes_spec = True`` (its factory then gets
the parsed ModelSpec) and ``options_model`` (a pydantic model of the options its spec may carry: ``create``
validates them before the factory runs, and a factory that does not take the spec gets the model part of the
name and the validated options as keywords). A name registered by halluscope wins over a
plug-in of the same name; a plug-in that fails to import raises an error naming its distribution.
"""

from __future__ import annotations

import difflib
import importlib
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from importlib.metadata import EntryPoint
from typing import Any, Generic, TypeVar

from halluscope.core.errors import HalluscopeError
from halluscope.core.spec import NAME_KEY, ModelSpec

T = TypeVar("T")


@dataclass
class Entry:
    """One registered name: its target (an object, or 'module:attr' until first use), capabilities and origin."""

    name: str
    target: Any
    capabilities: frozenset[str] = frozenset()
    dist: str | None = None  # the distribution of a plug-in (None: halluscope itself)
    takes_spec: bool = False  # the factory gets the ModelSpec itself instead of the text after 'provider/'
    options: type | None = None  # a pydantic model of the options a spec may carry (None: the factory checks)
    _loaded: bool = field(default=False, repr=False)

    def load(self, kind: str) -> Any:
        if not self._loaded:
            if isinstance(self.target, str):
                self.target = _import(self.target, kind=kind, name=self.name, dist=self.dist)
            elif isinstance(self.target, EntryPoint):
                self.target = _load_entry_point(self.target, kind=kind, name=self.name, dist=self.dist)
            self.capabilities |= frozenset(getattr(self.target, "capabilities", None) or ())
            self.takes_spec = self.takes_spec or getattr(self.target, "takes_spec", False) is True
            self.options = self.options or getattr(self.target, "options_model", None)
            self._loaded = True
        return self.target


def _import(path: str, *, kind: str, name: str, dist: str | None) -> Any:
    module, _, attr = path.partition(":")
    try:
        obj: Any = importlib.import_module(module)
        for part in attr.split(".") if attr else ():
            obj = getattr(obj, part)
    except Exception as exc:  # noqa: BLE001 - any failure of a plug-in is reported with its origin
        origin = f"plug-in from distribution '{dist}'" if dist else "halluscope"
        raise HalluscopeError(
            f"{kind} '{name}' ({origin}) cannot be loaded from '{path}': {type(exc).__name__}: {exc}"
        ) from exc
    return obj


def _load_entry_point(ep: Any, *, kind: str, name: str, dist: str | None) -> Any:
    try:
        return ep.load()
    except Exception as exc:  # noqa: BLE001
        raise HalluscopeError(
            f"{kind} '{name}' (plug-in from distribution '{dist}', entry point '{ep.value}' in "
            f"group '{ep.group}') cannot be loaded: {type(exc).__name__}: {exc}. Fix: reinstall "
            f"or uninstall '{dist}'"
        ) from exc


class Registry(Generic[T]):
    """Names to entries, in registration order; open to plug-ins through the entry-point group ``group``."""

    def __init__(self, kind: str, group: str | None = None) -> None:
        self.kind = kind
        self.group = group or "halluscope." + kind.lower().replace(" ", "_").replace("-", "_")
        self._entries: dict[str, Entry] = {}
        self._plugins: dict[str, Entry] = {}
        self._scanned_path: tuple[str, ...] | None = None

    # ---- registering -------------------------------------------------------------------------------------------

    def register(
        self,
        name: str,
        target: Any = None,
        *,
        capabilities: Iterable[str] = (),
        replace: bool = False,
        takes_spec: bool = False,
        options: type | None = None,
    ) -> Any:
        """``@reg.register("name")`` over a factory, or ``reg.register("name", obj_or_'module:attr')``;
        ``options``: the pydantic model of the options its specs may carry (``core.spec.options_model``)."""

        def add(obj: Any) -> Any:
            if name in self._entries and not replace:
                raise HalluscopeError(f"{self.kind} '{name}' is registered twice")
            self._entries[name] = Entry(
                name,
                obj,
                frozenset(capabilities),
                takes_spec=takes_spec,
                options=options,
                _loaded=not isinstance(obj, str),
            )
            return obj

        return add if target is None else add(target)

    def unregister(self, name: str) -> None:
        self._entries.pop(name, None)

    # ---- plug-ins ----------------------------------------------------------------------------------------------

    def _scan(self, force: bool = False) -> None:
        path = tuple(sys.path)
        if self._scanned_path == path and not force:
            return
        from importlib.metadata import entry_points

        self._scanned_path = path
        found: dict[str, Entry] = {}
        for ep in entry_points(group=self.group):
            if ep.name in found:
                continue  # the first distribution on sys.path wins, as for imports
            dist = getattr(ep, "dist", None)
            label = f"{dist.name} {dist.version}" if dist is not None else ep.value.partition(":")[0]
            found[ep.name] = Entry(ep.name, ep, dist=label)
        self._plugins = {**found, **{k: v for k, v in self._plugins.items() if k in found and v._loaded}}

    def _entry(self, name: str) -> Entry | None:
        if name in self._entries:
            return self._entries[name]
        self._scan()
        return self._plugins.get(name)

    # ---- looking up --------------------------------------------------------------------------------------------

    @property
    def names(self) -> list[str]:
        """Every name, halluscope's in registration order, then plug-ins sorted."""
        self._scan()
        return list(self._entries) + sorted(set(self._plugins) - set(self._entries))

    @property
    def providers(self) -> list[str]:
        return sorted(self.names)

    def entry(self, name: str) -> Entry:
        e = self._entry(name)
        if e is None:
            close = difflib.get_close_matches(name, self.names, n=1)
            hint = f" Did you mean '{close[0]}'?" if close else ""
            listed = ", ".join(self.names) or "none"
            raise HalluscopeError(
                f"unknown {self.kind} '{name}': expected one of {listed}.{hint} (plug-ins add "
                f"names through the entry-point group '{self.group}')"
            )
        e.load(self.kind)
        return e

    def get(self, name: str, default: Any = None) -> Any:
        e = self._entry(name)
        return default if e is None else e.load(self.kind)

    def capabilities(self, name: str) -> frozenset[str]:
        return self.entry(name).capabilities

    def where(self, *capabilities: str) -> list[str]:
        """Names whose entries declare every one of ``capabilities`` (plug-ins are loaded to read theirs)."""
        return [n for n in self.names if set(capabilities) <= self.capabilities(n)]

    def __getitem__(self, name: str) -> T:
        return self.entry(name).target

    def __setitem__(self, name: str, target: T) -> None:
        """Replace (or add) an entry's object, keeping its capabilities (tests swap a runner this way)."""
        old = self._entries.get(name)
        self._entries[name] = Entry(
            name,
            target,
            old.capabilities if old else frozenset(),
            _loaded=True,
            takes_spec=old.takes_spec if old else False,
            options=old.options if old else None,
        )

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self._entry(name) is not None

    def __iter__(self) -> Iterator[str]:
        return iter(self.names)

    def __len__(self) -> int:
        return len(self.names)

    def keys(self) -> list[str]:
        return self.names

    def values(self) -> list[T]:
        return [self[n] for n in self.names]

    def items(self) -> list[tuple[str, T]]:
        return [(n, self[n]) for n in self.names]

    # ---- building 'provider/model' -----------------------------------------------------------------------------

    def create(self, spec: str | ModelSpec, **options: Any) -> T:
        """Build from 'provider/model[?k=v]' or a ModelSpec (a bare 'provider' gives its default model).

        A factory gets the text after 'provider/' as it was written (a ModelSpec: its ``text``) and the
        keyword ``options``; one registered with ``takes_spec`` gets the parsed ModelSpec instead.
        """
        options.pop(NAME_KEY, None)  # '-o name=...' is the display name in reports, never a backend option
        text = spec.text if isinstance(spec, ModelSpec) else spec  # a carried spec: the name as it was written
        parsed, rest = ModelSpec.written(text)  # the text after 'provider/' as written goes to the factory
        if NAME_KEY in parsed.options:
            parsed, rest = ModelSpec.written(str(parsed.without(NAME_KEY)))
        provider = parsed.provider
        e = self._entry(provider)
        if e is None:
            close = difflib.get_close_matches(provider, self.names, n=1)
            hint = f" Did you mean '{close[0]}'?" if close else ""
            raise HalluscopeError(
                f"unknown {self.kind} '{text}': expected one of {', '.join(p + '/...' for p in self.providers)}.{hint}"
            )
        factory: Callable[..., T] = e.load(self.kind)
        if e.options is not None:  # the declared options, checked before anything is built
            given: dict[str, Any] = parsed.validate(e.options, kind=self.kind).model_dump(exclude_unset=True)  # type: ignore[attr-defined]
            if e.takes_spec:
                return factory(parsed, **options)
            return factory(parsed.model, **given, **options)
        if e.takes_spec:
            return factory(parsed, **options)
        return factory(rest, **options)

    def options_of(self, name: str) -> list[str]:
        """The option keys entry ``name`` declares (empty when it declares none: its factory checks them)."""
        model = self.entry(name).options
        return sorted(getattr(model, "model_fields", None) or ())


class RegistryView(Registry[T]):
    """The entries of ``parent`` that declare every one of ``requires`` (one registry, seen by role): e.g. the
    text LLMs and the audio LMs among the chat backends. Registering through a view adds to the parent."""

    def __init__(self, parent: Registry[T], kind: str, *requires: str) -> None:
        super().__init__(kind, parent.group)
        self.parent, self.requires = parent, frozenset(requires)

    def register(
        self,
        name: str,
        target: Any = None,
        *,
        capabilities: Iterable[str] = (),
        replace: bool = False,
        takes_spec: bool = False,
        options: type | None = None,
    ) -> Any:
        return self.parent.register(
            name,
            target,
            capabilities=self.requires | set(capabilities),
            replace=replace,
            takes_spec=takes_spec,
            options=options,
        )

    def unregister(self, name: str) -> None:
        self.parent.unregister(name)

    def _entry(self, name: str) -> Entry | None:
        e = self.parent._entry(name)
        if e is None:
            return None
        e.load(self.parent.kind)
        return e if self.requires <= e.capabilities else None

    @property
    def names(self) -> list[str]:
        return [n for n in self.parent.names if self._entry(n) is not None]

    def __setitem__(self, name: str, target: T) -> None:
        self.parent[name] = target
