"""Backend options from a config file (TOML or JSON) and the environment; keys only ever come from the environment."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from halluscope.core.errors import HalluscopeError, InputError
from halluscope.core.names import renamed
from halluscope.core.spec import ModelSpec

CONFIG_ENV = "HALLUSCOPE_LLM_CONFIG"


class _Options(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Cost(_Options):
    """USD per million tokens."""

    input: float = Field(ge=0, description="USD per 1M prompt tokens.")
    output: float = Field(ge=0, description="USD per 1M completion tokens.")


class OpenAIOptions(_Options):
    """Options of an 'openai/<model>' backend (any OpenAI-compatible server)."""

    base_url: str | None = Field(
        default=None, description="Server URL; default: $base_url_env, else the SDK default (api.openai.com)."
    )
    base_url_env: str = Field(default="OPENAI_BASE_URL", description="Environment variable holding the server URL.")
    api_key_env: str = Field(
        default="OPENAI_API_KEY", description="Environment variable holding the key (never stored)."
    )
    model: str | None = Field(
        default=None,
        description="Model name sent to the server; default: the name after "
        "'openai/'. Lets one model serve under two specs (e.g. as two judges).",
    )
    concurrency: int = Field(
        default=8, ge=1, description="Most requests in flight at once (the adaptive limit's ceiling)."
    )
    adaptive: Literal["on", "off"] = Field(
        default="on",
        description="on: start at 1 request in flight, double per "
        "round trip while throughput keeps up (slow start), then follow the median "
        "latency and completions/s (held while this machine's CPU, not the server, is "
        "the limit), halve on timeouts and 429/503, re-probe every 30 s (see "
        "llm/_adaptive.py); off: always 'concurrency'.",
    )
    rpm: float | None = Field(
        default=None,
        gt=0,
        description="The provider's budget in requests per minute (a token "
        "bucket; default: none, or what x-ratelimit-limit-requests says).",
    )
    tpm: float | None = Field(
        default=None,
        gt=0,
        description="The provider's budget in tokens per minute (prompt "
        "characters / 4 + max_tokens, corrected by the usage returned; default: none, or "
        "x-ratelimit-limit-tokens).",
    )
    timeout_s: float = Field(
        default=120.0,
        gt=0,
        description="Limit on one call, from sending to the whole body; "
        "doubles on each retry after a timeout (at most 8x).",
    )
    max_retries: int = Field(
        default=6, ge=0, description="Retries after 429, 408/409, 5xx, timeouts, connection errors, unreadable bodies."
    )
    backoff_base_s: float = Field(default=1.0, ge=0, description="First backoff; doubles per retry, with jitter.")
    backoff_max_s: float = Field(default=60.0, ge=0)
    max_retry_after_s: float = Field(default=300.0, ge=0, description="Longest Retry-After honoured.")
    params: dict = Field(
        default_factory=dict, description="Body fields sent with every request (temperature, max_tokens, seed, ...)."
    )
    cost: Cost | None = None
    audio_window_s: float | None = Field(
        default=None,
        gt=0,
        description="Seconds of audio per clip the model is "
        "documented to hear (audio content parts); None: not declared.",
    )


class HFOptions(_Options):
    """Options of an 'hf/<path>' backend (local transformers generation)."""

    device: str = Field(default="auto", description="auto (cuda if available, else cpu), cpu, cuda, cuda:1, ...")
    dtype: Literal["auto", "float32", "bfloat16", "float16"] = "auto"
    batch_size: int = Field(default=8, ge=1)
    batch_wait_s: float = Field(
        default=0.005, ge=0, description="How long the first request of a batch waits for others."
    )
    params: dict = Field(default_factory=dict, description="max_new_tokens, temperature (0 = greedy), top_p, seed.")
    path: str | None = Field(
        default=None,
        description="Checkpoint to load; default: the path after 'hf/'. Lets one "
        "checkpoint serve under two specs (e.g. as two judges).",
    )
    gguf: str | None = Field(default=None, description="A GGUF file in the directory ('hf/<dir>?gguf=<file>').")
    chat_template: str | None = Field(default=None, description="Jinja chat template for tokenizers that ship none.")
    prefix_cache: bool = Field(
        default=False,
        description="Greedy decoding: compute a prompt prefix that requests "
        "share (a judge's instructions and examples) once and reuse it (llm/_prefix.py).",
    )


class GenerateOptions(_Options):
    """The App. A.1 protocol knobs of the LLM generators."""

    retries: int = Field(
        default=2,
        ge=0,
        description="Re-asks after a rewrite that fails its checks (--retries "
        "elsewhere); then it is reported failed. Was 'max_attempts' (= retries + 1).",
    )
    # the reply holds steps 1-4 of App. A.1 and the full rewrite, so its bound grows with the article
    max_tokens: int | None = Field(
        default=None,
        ge=1,
        description="Fixed max_tokens of every rewrite request; "
        "default: max_tokens_base + max_tokens_per_token x the article's estimated tokens.",
    )
    max_tokens_base: int = Field(default=768, ge=1, description="Tokens for extraction, report and deviations.")
    max_tokens_per_token: float = Field(
        default=2.0, gt=0, description="Reply tokens allowed per article token (estimated as characters / 3)."
    )
    fabrication_wording: Literal["by_language", "en", "ru_kk"] = Field(
        default="by_language",
        description="Severity wording for fabrication: 'en' (English batch), 'ru_kk' (Russian/Kazakh batch), or by language as in the paper.",
    )

    @model_validator(mode="before")
    @classmethod
    def _old_names(cls, data: object) -> object:
        """'max_attempts = N' (calls in all) still reads, as retries = N - 1."""
        if isinstance(data, dict) and "max_attempts" in data:
            try:
                return renamed(
                    data, {"max_attempts": ("retries", lambda n: n - 1)}, where="the LLM config's [generate]"
                )
            except HalluscopeError as exc:  # pydantic reports a ValueError with the file and field
                raise ValueError(str(exc)) from None
        return data


class LLMConfig(_Options):
    """Provider-wide defaults ([openai], [hf]), per-model overrides ([models."openai/x"]), and [generate]."""

    openai: dict = Field(default_factory=dict)
    hf: dict = Field(default_factory=dict)
    models: dict[str, dict] = Field(default_factory=dict)
    generate: GenerateOptions = Field(default_factory=GenerateOptions)

    def options_for(self, spec: str | ModelSpec) -> dict:
        """[provider] < [models."provider/model"] (the name without options)."""
        spec = ModelSpec.parse(spec)
        section = getattr(self, spec.provider, {}) if spec.provider in ("openai", "hf") else {}
        return {**section, **self.models.get(spec.name, {})}


def load_llm_config(path: str | Path | None = None) -> LLMConfig:
    """Read the config named by ``path`` or $HALLUSCOPE_LLM_CONFIG; an empty config when neither is set."""
    path = path or os.environ.get(CONFIG_ENV)
    if not path:
        return LLMConfig()
    p = Path(path)
    if not p.is_file():
        raise InputError(
            "no such file", file=str(p), fix=f"pass an existing .toml or .json file (or unset {CONFIG_ENV})"
        )
    from halluscope.core.textfile import read_text

    text = read_text(p, what="LLM config", fix="write the config as UTF-8 TOML (.toml) or JSON")
    try:
        if p.suffix == ".toml":
            try:
                import tomllib
            except ImportError as exc:  # Python 3.10
                raise InputError("TOML needs Python 3.11+", file=str(p), fix="write the config as JSON") from exc
            data = tomllib.loads(text)
        else:
            data = json.loads(text)
    except (ValueError, TypeError) as exc:
        raise InputError(f"cannot parse: {exc}", file=str(p), fix="write valid TOML (.toml) or JSON") from None
    except RecursionError:
        raise InputError(
            "cannot parse: nested too deeply", file=str(p), fix="write a flat TOML or JSON config"
        ) from None
    try:
        _refuse_keys(data, str(p))
    except RecursionError:
        raise InputError("nested too deeply", file=str(p), fix="write a flat TOML or JSON config") from None
    try:
        return LLMConfig.model_validate(data)
    except ValidationError as exc:
        why = "; ".join(
            f"{'.'.join(str(x) for x in e['loc']) or 'top level'}: {e['msg']}"
            for e in exc.errors(include_url=False)[:10]
        )
        raise InputError(f"invalid LLM config: {why}", file=str(p)) from None
    except RecursionError:
        raise InputError("nested too deeply", file=str(p), fix="write a flat TOML or JSON config") from None


def _refuse_keys(data: object, file: str) -> None:
    if isinstance(data, dict):
        for k, v in data.items():
            if k in ("api_key", "key", "token"):
                raise InputError(
                    f"'{k}' found: keys are never read from config files (they would end up in run directories)",
                    file=file,
                    field=k,
                    fix="export the key in an environment variable and name it with api_key_env",
                )
            _refuse_keys(v, file)


OptionsT = TypeVar("OptionsT", bound=BaseModel)


def resolve_options(
    cls: type[OptionsT], spec: str | ModelSpec, config: LLMConfig | None, overrides: dict, also: tuple[str, ...] = ()
) -> OptionsT:
    """Provider defaults < per-model section < options in the spec < keyword overrides, validated with a readable
    error naming the unknown keys and the allowed ones (``also``: keys the caller took out before, e.g. the
    mitigation's, listed as allowed too)."""
    spec = ModelSpec.parse(spec)
    merged = {**(config or LLMConfig()).options_for(spec.name), **spec.options, **overrides}
    unknown = sorted(set(merged) - set(cls.model_fields))
    if unknown and cls.model_config.get("extra") == "forbid":
        raise HalluscopeError(
            f"'{spec.name}' does not take option(s) {', '.join(unknown)}; its options: "
            f"{', '.join(sorted({*cls.model_fields, *also}))}. Fix: drop them or check the spelling "
            "(-o KEY=VALUE, or the model's section of the LLM config)"
        )
    try:
        return cls.model_validate(merged)
    except ValidationError as exc:
        raise HalluscopeError(f"bad options for '{spec.name}': {exc}") from exc
