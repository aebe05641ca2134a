"""A model named once: ``ModelSpec(provider, model, options)``, parsed from a name and ``-o KEY=VALUE`` pairs.

Every backend, detector, TTS and ASR system is named ``provider/model``. Options used to travel glued into the
name (``hf-audio/<dir>?mitigation=aad&alpha=0.5``, ``hf/<dir>?gguf=x.gguf``, ``hf-asr/<dir>?punct=...``) and
were parsed again wherever the name was read; this is the one place that reads them.

- ``ModelSpec.parse(name, options)``: the legacy glued form still parses (its query becomes options); values
  are JSON when they parse as JSON (``0.5``, ``true``, ``[1, 2]``), else strings, exactly as ``-o`` reads them;
  keyword ``options`` win over the glued ones.
- ``str(spec)`` is canonical: ``provider/model``, then ``?`` and the options, ``mitigation`` first (it names the
  decoding method, the rest are its settings), then the others sorted by key. ``parse(str(spec)) == spec``.
  Stages and records keyed by a model name use this string, so mitigated runs stay apart from plain ones.
- ``spec.check(allowed)`` / ``spec.validate(OptionsModel)`` refuse an unknown key with an error naming it and
  the allowed keys. ``options_model(EngineDataclass)`` is the pydantic model of an engine's options made from
  the dataclass that reads them (its init fields, types and defaults): the registries validate a spec with it
  before anything is built.
- ``spec.text``: the name exactly as it was written when parsed from a string (the canonical form otherwise): the
  string stored for the model in records and keys, so a spec carried from the command line into a record stores
  the bytes stored before specs were carried. ``SpecText`` is the records' field type for it: it validates from
  a stored string or a ModelSpec and serialises to that string.
- ``display_name(spec, name)``: the label every table, plot and viewer page shows for a model: an explicit
  ``name=`` (``-o name=qwen2-audio``; display only, never sent to a backend), else ``provider/<last path part>``
  for a local directory (never a temporary path), else ``provider/model``; the full spec stays in the JSON.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Annotated, Any, TypeVar
from urllib.parse import parse_qsl, quote

from pydantic import BeforeValidator

from halluscope.core.errors import HalluscopeError

M = TypeVar("M")
FIRST_KEYS = ("mitigation",)  # come first in the canonical form; the rest are sorted
NAME_KEY = "name"  # '-o name=...': the model's display name in reports (not a backend option)


def parse_value(text: str) -> Any:
    """A value as ``-o KEY=VALUE`` and a glued ``?key=value`` read it: JSON when it parses (3, 0.5, true, [1,2]), else the text."""
    try:
        return json.loads(text)
    except (json.JSONDecodeError, ValueError):
        return text


def format_value(value: Any) -> str:
    """The inverse of ``parse_value`` for the canonical form (strings as they are, anything else as compact JSON)."""
    if isinstance(value, str):  # a string that would read back as a number or bool is quoted ("1", "true")
        return value if parse_value(value) == value else json.dumps(value, ensure_ascii=False)
    if isinstance(value, tuple):
        value = list(value)
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


class ModelSpec:
    """``provider/model`` plus validated options; frozen, hashable, equal when the canonical strings are."""

    __slots__ = ("provider", "model", "options", "_text")
    provider: str
    model: str
    options: Mapping[str, Any]
    _text: str | None

    def __init__(
        self, provider: str, model: str = "", options: Mapping[str, Any] | None = None, *, text: str | None = None
    ) -> None:
        if not provider or "/" in provider or "?" in provider:
            raise HalluscopeError(f"bad provider '{provider}': expected a name such as openai, hf or hf-audio")
        object.__setattr__(self, "provider", provider)
        object.__setattr__(self, "model", model)
        object.__setattr__(self, "options", MappingProxyType(dict(options or {})))
        object.__setattr__(self, "_text", text)  # as written; not part of equality (the canonical string is)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"ModelSpec is frozen (cannot set '{name}'); use with_options()")

    def __reduce__(self) -> tuple:
        return (_rebuild, (self.provider, self.model, dict(self.options), self._text))

    @classmethod
    def parse(cls, name: str | ModelSpec, options: Mapping[str, Any] | None = None) -> ModelSpec:
        """'provider/model[?k=v&k=v]' (or a ModelSpec) with ``options`` on top (they win over the glued ones)."""
        if isinstance(name, ModelSpec):
            return name.with_options(**dict(options or {})) if options else name
        if not isinstance(name, str) or not name.strip():
            raise HalluscopeError(f"expected a model name 'provider/model', got {name!r}")
        body, sep, query = name.strip().partition("?")
        provider, _, model = body.partition("/")
        glued: dict[str, Any] = {}
        if sep:
            try:
                pairs = parse_qsl(query, keep_blank_values=True, strict_parsing=bool(query))
            except ValueError as exc:
                raise HalluscopeError(
                    f"'{name}': cannot read the options after '?' ({exc}); expected "
                    "'provider/model?key=value&key=value'"
                ) from exc
            for k, v in pairs:
                if k in glued:
                    raise HalluscopeError(f"'{name}': option '{k}' is given twice; expected each key once")
                glued[k] = parse_value(v)
        extra = dict(options or {})
        return cls(provider, model, {**glued, **extra}, text=None if extra else name)

    @classmethod
    def written(cls, text: str) -> tuple[ModelSpec, str]:
        """(the parsed spec, the text after its provider as written): 'hf/x?b=1&a=2' -> (..., 'x?b=1&a=2'),
        'hf?k=v' -> (..., '?k=v'), 'tfidf' -> (..., ''). Stage keys and factories that take the text keep its
        spelling (option order, quoting) so the keys stored before specs were parsed stay byte-identical."""
        spec = cls.parse(text)
        rest = text.strip()[len(spec.provider) :]
        return spec, rest[1:] if rest.startswith("/") else rest

    @property
    def text(self) -> str:
        """The name as written when parsed from a string without extra options, else the canonical ``str(self)``:
        what records and stage keys store for this model (the same bytes as before specs were carried)."""
        return self._text if self._text is not None else str(self)

    @property
    def name(self) -> str:
        """'provider/model' without options ('provider' alone when there is no model)."""
        return f"{self.provider}/{self.model}" if self.model else self.provider

    def ordered_options(self) -> list[tuple[str, Any]]:
        first = [(k, self.options[k]) for k in FIRST_KEYS if k in self.options]
        return first + sorted((k, v) for k, v in self.options.items() if k not in FIRST_KEYS)

    def __str__(self) -> str:
        if not self.options:
            return self.name
        query = "&".join(
            f"{quote(k, safe='')}={quote(format_value(v), safe='/:,.-_~')}" for k, v in self.ordered_options()
        )
        return f"{self.name}?{query}"

    def __repr__(self) -> str:
        return f"ModelSpec({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ModelSpec):
            return str(self) == str(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(str(self))

    def with_options(self, **options: Any) -> ModelSpec:
        """This spec with ``options`` added (they win); a value of None removes that key."""
        merged = {**self.options, **options}
        return ModelSpec(self.provider, self.model, {k: v for k, v in merged.items() if v is not None})

    def without(self, *keys: str) -> ModelSpec:
        return ModelSpec(self.provider, self.model, {k: v for k, v in self.options.items() if k not in keys})

    def require_model(self, example: str = "<model dir or hub id>") -> str:
        """The model part, or an error saying the spec names none ('hf-asr' alone)."""
        if not self.model:
            raise HalluscopeError(f"'{self}' names no model; expected e.g. {self.provider}/{example}")
        return self.model

    def split(self, keys: Iterable[str]) -> tuple[dict[str, Any], ModelSpec]:
        """(the options named in ``keys``, this spec without them)."""
        keys = set(keys)
        return {k: v for k, v in self.options.items() if k in keys}, self.without(*keys)

    def check(self, allowed: Iterable[str] | type, *, kind: str = "model") -> None:
        """Refuse an option key not in ``allowed`` (names, or a pydantic model whose fields are the names)."""
        fields = getattr(allowed, "model_fields", None)  # a pydantic model (its fields may be none at all)
        names = set(allowed if fields is None else fields)  # type: ignore[arg-type]
        unknown = sorted(set(self.options) - names - {NAME_KEY})
        if unknown:
            raise HalluscopeError(
                f"{kind} '{self}': unknown option(s) {', '.join(unknown)}; its options: "
                f"{', '.join(sorted(names)) or 'none'}. Fix: drop them or check the spelling"
            )

    def validate(self, model_cls: type[M], *, kind: str = "model", **defaults: Any) -> M:
        """``model_cls`` (a pydantic model) built from ``defaults`` < the options, with the unknown-key check."""
        from pydantic import ValidationError

        self.check(model_cls, kind=kind)
        try:
            return model_cls.model_validate({**defaults, **self.without(NAME_KEY).options})  # type: ignore[attr-defined]
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(x) for x in e['loc']) or 'options'}: {e['msg']} (got {e.get('input')!r})"
                for e in exc.errors()
            )
            raise HalluscopeError(
                f"bad options for {kind} '{self}': {problems}. Fix: give each option a value of its type"
            ) from exc


def _rebuild(provider: str, model: str, options: dict, text: str | None) -> ModelSpec:
    """Unpickling (Ray workers, process pools): the spec with the text it was written as."""
    return ModelSpec(provider, model, options, text=text)


def spec_text(value: str | ModelSpec) -> str:
    """The string a record stores for a model: a ModelSpec's ``text``; a string as it is, once it parses as a spec."""
    if isinstance(value, ModelSpec):
        return value.text
    if not isinstance(value, str):
        raise ValueError(f"expected a model spec 'provider/model[?key=value]' or a ModelSpec, got {value!r}")
    problem = _unreadable(value)
    if problem:
        raise ValueError(problem)
    return value


@functools.lru_cache(maxsize=4096)
def _unreadable(text: str) -> str | None:
    """Why ``text`` is no model spec (None: it parses); cached, as a run's records repeat a few names."""
    try:
        ModelSpec.parse(text)
    except HalluscopeError as exc:
        return str(exc)
    return None


# A record's model field (answers, verdicts, predictions, transcripts): validates from a stored string or a
# ModelSpec and holds (and serialises to) exactly the string stored before, so stored JSON stays byte-identical and
# records still group and compare by that string; the record's ``spec`` property gives the ModelSpec.
SpecText = Annotated[str, BeforeValidator(spec_text)]


def as_spec(spec: str | ModelSpec, options: Mapping[str, Any] | None = None) -> ModelSpec:
    """``ModelSpec.parse`` under a short name for call sites that accept either form."""
    return ModelSpec.parse(spec, options)


def _looks_local(model: str) -> bool:
    """A filesystem path rather than a hub id or an API model name ('/tmp/x/tiny', './m', '~/m', 'C:\\m')."""
    import os

    return (
        model.startswith(("/", "./", "../", "~", "\\"))
        or (len(model) > 2 and model[1] == ":" and model[2] in "\\/")
        or os.sep in model
        and os.path.isdir(model)
    )


def display_name(spec: str | ModelSpec, name: str | None = None) -> str:
    """The model's label in every table, plot and viewer page: ``name`` or the spec's ``name=`` option when given,
    else 'provider/<last part of a local path>' (no temporary directory), else 'provider/model'. Options are
    not part of it: a mitigation has its own method column and other differing settings their own label."""
    try:
        parsed = ModelSpec.parse(spec)
    except HalluscopeError:
        return str(spec)
    given = name or parsed.options.get(NAME_KEY)
    if given:
        return str(given)
    model = parsed.model
    if model and _looks_local(model):
        from pathlib import PurePath

        model = PurePath(model.replace("\\", "/").rstrip("/")).name or model
    return f"{parsed.provider}/{model}" if model else parsed.provider


def options_model(cls: type, *, skip: Iterable[str] = ("model",), **extra: Any) -> type:
    """The options an engine's spec may carry, as a pydantic model (unknown keys refused) made from the dataclass
    that reads them: its init fields but ``skip`` (the model path, internal state), with their types and
    defaults; ``extra``: more keys as (type, default), e.g. an old spelling the factory renames. Numbers given
    for a text option are read as text ('-o device=0')."""
    import dataclasses
    import typing

    from pydantic import ConfigDict, Field, create_model

    hints = typing.get_type_hints(cls)
    skipped = set(skip)
    fields: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        if not f.init or f.name.startswith("_") or f.name in skipped:
            continue
        if f.default is not dataclasses.MISSING:
            default: Any = f.default
        elif f.default_factory is not dataclasses.MISSING:
            default = Field(default_factory=f.default_factory)
        else:
            default = ...
        fields[f.name] = (hints[f.name], default)
    config = ConfigDict(extra="forbid", coerce_numbers_to_str=True, arbitrary_types_allowed=True)
    return create_model(f"{cls.__name__}Options", __config__=config, **fields, **extra)
