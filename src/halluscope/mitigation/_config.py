"""Which mitigation, with which hyperparameters: one frozen record, validated before any model is loaded.

Defaults and where they come from (the spec's App. B.3 fixes one configuration for all models, following
Lin et al. 2026; its Table 6 values are not in the text we hold, so these are the source papers' values):

| method | contrast z_t^- | alpha (strength) | beta (plausibility) | other |
|---|---|---|---|---|
| aad  | audio removed (Hsu et al. 2025) | 1.0: (1+a) z - a z^- as in VCD | none | prefix on both branches (App. B.3) |
| vcd  | diffused audio (Leng et al. 2024) | 1.0 (VCD cd_alpha) | 0.1 (VCD cd_beta) | T = 500 (VCD noise_step), eta below |
| mti  | y_<t + instruction, only where H(p_t) > tau (Yang et al. 2026) | 0.5 (CFG scale w = 1 + a = 1.5) | none | tau = 1.0 nat |
| dola | premature layer (Chuang et al. 2024) | 1.0: log q_N - a log q_M | 0.1 (DoLa's alpha) | repetition penalty 1.2 |

VCD's own noise schedule is a sigmoid beta schedule over 1000 steps; at its default T = 500 it leaves
abar = 0.745. The spec's constant-eta form abar = (1 - eta)^T reproduces that with eta = 5.9e-4, our default.
MTI's tau and w are task-tuned in its paper; 1.0 nat and w = 1.5 are a middle setting, not a reproduction:
pass the values of the study you replicate.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from halluscope.core.errors import HalluscopeError
from halluscope.core.spec import ModelSpec

Method = Literal["aad", "vcd", "mti", "dola"]
METHODS: tuple[str, ...] = ("aad", "vcd", "mti", "dola")
AUDIO_METHODS = ("aad", "vcd", "mti")  # contrast the audio: only audio backends can run them
NAMES = {"aad": "AAD", "vcd": "VCD", "mti": "MTI", "dola": "DoLa"}  # the spec's row labels
AAD_PREFIX = "Focus on the given audio and answer the following question:"
MTI_INSTRUCTION = " Ignore the audio and answer from your own knowledge."

DEFAULTS: dict[str, dict] = {
    "aad": {"alpha": 1.0, "beta": None},
    "vcd": {"alpha": 1.0, "beta": 0.1, "noise_steps": 500, "eta": 5.9e-4},
    "mti": {"alpha": 0.5, "beta": None, "tau": 1.0},
    "dola": {"alpha": 1.0, "beta": 0.1, "repetition_penalty": 1.2},
}
# flat option names accepted next to 'mitigation' (e.g. --mitigation vcd -o alpha=0.5 -o noise_steps=300)
FIELDS = (
    "alpha",
    "beta",
    "prefix",
    "noise_steps",
    "eta",
    "noise_seed",
    "tau",
    "instruction",
    "layers",
    "repetition_penalty",
)


class MitigationConfig(BaseModel):
    """A decoding-time mitigation and its hyperparameters; ``resolved()`` fills the method's defaults."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    method: Method = Field(description="aad | vcd | mti | dola.")
    alpha: float | None = Field(default=None, ge=0, description="Contrast strength; 0 reproduces plain decoding.")
    beta: float | None = Field(
        default=None,
        ge=0,
        le=1,
        description="Plausibility threshold: keep tokens with p_t >= beta * max p_t (VCD, DoLa; None: no constraint).",
    )
    prefix: str | None = Field(default=None, description=f"AAD prefix for both branches (default: '{AAD_PREFIX}').")
    noise_steps: int | None = Field(default=None, ge=0, description="VCD diffusion steps T.")
    eta: float | None = Field(default=None, ge=0, lt=1, description="VCD per-step noise rate: abar = (1 - eta)^T.")
    noise_seed: int = Field(default=0, description="VCD: seed of the noise eps (fixed per request).")
    tau: float | None = Field(default=None, ge=0, description="MTI entropy threshold in nats.")
    instruction: str | None = Field(default=None, description="MTI temporary instruction appended after y_<t.")
    layers: tuple[int, ...] | None = Field(
        default=None,
        description="DoLa candidate premature layers (hidden-state "
        "indices, 0 = embeddings); default: every second layer from N//2 below N.",
    )
    repetition_penalty: float | None = Field(
        default=None, gt=0, description="DoLa: penalty on tokens already generated."
    )

    def resolved(self) -> MitigationConfig:
        """This config with the method's defaults filled in (what goes into keys and manifests)."""
        fill = dict(DEFAULTS[self.method])
        if self.method == "aad":
            fill["prefix"] = AAD_PREFIX
        if self.method == "mti":
            fill["instruction"] = MTI_INSTRUCTION
        return self.model_copy(update={k: v for k, v in fill.items() if getattr(self, k) is None})

    @property
    def abar(self) -> float:
        """VCD: the signal fraction (1 - eta)^T of the diffused audio."""
        r = self.resolved()
        return float((1.0 - r.eta) ** r.noise_steps)  # type: ignore[operator]

    def key(self) -> dict:
        """The resolved settings that change a reply: part of the request key and the stage fingerprint."""
        r = self.resolved()
        keep = {
            "aad": ("alpha", "beta", "prefix"),
            "vcd": ("alpha", "beta", "noise_steps", "eta", "noise_seed"),
            "mti": ("alpha", "beta", "tau", "instruction"),
            "dola": ("alpha", "beta", "layers", "repetition_penalty"),
        }
        out = {"method": r.method}
        for k in keep[r.method]:
            v = getattr(r, k)
            out[k] = list(v) if isinstance(v, tuple) else v
        return out

    def label(self) -> str:
        """Row label in the tables: the method, plus any setting that differs from its default."""
        default = MitigationConfig(method=self.method).key()
        diff = [f"{k}={v}" for k, v in self.key().items() if default.get(k) != v and k not in ("prefix", "instruction")]
        diff += [k for k in ("prefix", "instruction") if k in default and self.key()[k] != default[k]]
        name = NAMES[self.method]
        return f"{name} ({', '.join(diff)})" if diff else name


def parse_mitigation(value: object, **fields: object) -> MitigationConfig | None:
    """'aad' / {'method': 'aad', 'alpha': 1} / None plus flat fields -> a validated config (None: no mitigation)."""
    if value in (None, "", "none", "w/o", "W/O"):
        if fields:
            raise HalluscopeError(
                f"mitigation options {sorted(fields)} given without a mitigation; add "
                f"--mitigation <{'|'.join(METHODS)}>"
            )
        return None
    if isinstance(value, MitigationConfig):
        return value.model_copy(update=fields) if fields else value
    data = dict(value) if isinstance(value, dict) else {"method": str(value).lower()}
    data.update(fields)
    if data.get("method") not in METHODS:
        raise HalluscopeError(
            f"unknown mitigation '{data.get('method')}': expected one of {', '.join(METHODS)} (or none)"
        )
    if isinstance(data.get("layers"), (int, str)):
        data["layers"] = [int(x) for x in str(data["layers"]).split(",")]
    try:
        return MitigationConfig.model_validate(data)
    except ValidationError as exc:
        raise HalluscopeError(f"invalid {data['method']} options: {exc}") from exc


def split_mitigation(options: dict) -> tuple[dict, MitigationConfig | None]:
    """(options without the mitigation keys, the mitigation) from backend keyword options."""
    rest = dict(options)
    value = rest.pop("mitigation", None)
    fields = {k: rest.pop(k) for k in FIELDS if k in rest}
    return rest, parse_mitigation(value, **fields)


def mitigation_of(options: Mapping[str, Any] | ModelSpec | str) -> MitigationConfig | None:
    """The mitigation a model's options ask for (a ModelSpec, its name 'hf-audio/x?mitigation=aad&alpha=0.5', or
    an options dict; keys that are not mitigation's are ignored); None: plain decoding."""
    opts = dict(ModelSpec.parse(options).options) if isinstance(options, (str, ModelSpec)) else dict(options)
    return split_mitigation({k: v for k, v in opts.items() if k == "mitigation" or k in FIELDS})[1]


def method_label(options: Mapping[str, Any] | ModelSpec | str) -> str:
    """The decoding row label of a model's options ('W/O', 'AAD', 'VCD (alpha=0.5)', ...): what reports show
    under a model, read from the ModelSpec rather than re-parsed from a glued name; an unreadable old setting
    keeps its raw method name."""
    try:
        cfg = mitigation_of(options)
    except HalluscopeError:
        opts = dict(ModelSpec.parse(options).options) if isinstance(options, (str, ModelSpec)) else dict(options)
        return str(opts.get("mitigation"))
    return "W/O" if cfg is None else cfg.label()


METHOD_ORDER = ("W/O", "AAD", "VCD", "MTI", "DoLa")  # the rows under each model, seed 001 Table 2


def model_and_method(model: str) -> tuple[str, str]:
    """'hf-audio//tmp/x?mitigation=aad&alpha=0.5' -> ('hf-audio/x', 'AAD (alpha=0.5)'): the model's display name
    (its '-o name=', else a short name, never a temporary path) and its decoding method: methods are rows under
    their model, as in MISHAP-Bench's (seed 001) Tables 2 and 12."""
    from halluscope.core.spec import display_name

    spec = ModelSpec.parse(model)
    return display_name(spec), method_label(spec)


def model_order(model: str) -> tuple:
    """Sort key of report rows: by model, then plain decoding first and the methods in METHOD_ORDER."""
    base, method = model_and_method(model)
    head = method.split(" ")[0]
    return (base, METHOD_ORDER.index(head) if head in METHOD_ORDER else len(METHOD_ORDER), method)
