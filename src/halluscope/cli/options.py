"""The options shared by every command: one Annotated type per role (its flag name and help written once), the
'-o KEY=VALUE' parser and the --executor family. The vocabulary table is in the documentation
(docs/getting-started.md, 'Command-line vocabulary')."""

from __future__ import annotations

import functools
import inspect
import json
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, List, Optional

import typer

from halluscope.cli.compat import OPTION_FLAGS, OPTION_RENAMED, deprecated
from halluscope.core.executors import RESOURCE_STAGES, ExecutorOptions
from halluscope.core.outcome import ALLOW_PARTIAL_HELP


def parse_kv_options(values: list[str]) -> dict:
    """KEY=VALUE strings to a dict; a value is parsed as JSON when it can be (so 3, true, "cot" work)."""
    options: dict = {}
    for kv in values:
        key, sep, value = kv.partition("=")
        if not sep or not key:
            raise typer.BadParameter(f"-o expects KEY=VALUE, got '{kv}'")
        if key in options:
            raise typer.BadParameter(f"-o {key} is given twice ('{kv}'); expected each key once")
        try:
            options[key] = json.loads(value)
        except json.JSONDecodeError:
            options[key] = value
    return options


def flag_options(values: list[str], **flags: Any) -> dict:
    """'-o KEY=VALUE' as a dict with the role flags folded in under the library's keys (``flags``: key -> the
    flag's value, None when not given). '-o max_tokens=N', '-o max_new_tokens=N' and the like still work, with a
    deprecation line; giving both spellings is an error."""
    options = parse_kv_options(values)
    for old, new in OPTION_RENAMED.items():
        if old in options and new in flags:
            if new in options:
                raise typer.BadParameter(
                    f"-o {old}= and -o {new}= name the same setting; give {OPTION_FLAGS[new]} once"
                )
            options[new] = options.pop(old)
            if flags[new] is not None:
                raise typer.BadParameter(f"{OPTION_FLAGS[new]} and -o {old}= name the same setting; give it once")
            deprecated(f"-o {old}=", OPTION_FLAGS[new])
            flags = {k: v for k, v in flags.items() if k != new}  # said once
    for key, value in flags.items():
        if key in options:
            if value is not None:
                raise typer.BadParameter(f"{OPTION_FLAGS[key]} and -o {key}= name the same setting; give it once")
            deprecated(f"-o {key}=", OPTION_FLAGS[key])
        elif value is not None:
            options[key] = str(value) if isinstance(value, Path) else value
    return options


def model_with(spec: Optional[str], values: list[str]) -> Optional[str]:
    """A model name with the command's '-o KEY=VALUE' options on top (ModelSpec's canonical form, the same string
    the glued 'provider/model?key=value' gave); the name as given when there are none."""
    if not spec or not values:
        return spec
    from halluscope.core.spec import ModelSpec

    return str(ModelSpec.parse(spec, parse_kv_options(values)))


def model_spec(spec: Optional[str], values: list[str] = []) -> Any:  # noqa: B006 - read only
    """A model option parsed once into the ModelSpec the library and its records carry (None when not given):
    the name with the command's '-o KEY=VALUE' options on top, keeping the name as written when there are none
    (its ``text`` is what records and stage keys store, as before)."""
    text = model_with(spec, values)
    if text is None:
        return None
    from halluscope.core.errors import HalluscopeError
    from halluscope.core.spec import ModelSpec

    try:
        return ModelSpec.parse(text)
    except HalluscopeError as exc:
        raise typer.BadParameter(str(exc)) from exc


def mitigation_options(mitigation: Optional[str], options: dict) -> Optional[str]:
    """The mitigation name; the old one-string form 'aad&alpha=0.5' is split into the name and -o options."""
    if mitigation and ("&" in mitigation or "=" in mitigation):
        name, _, query = mitigation.partition("&")
        deprecated(
            f"--mitigation '{mitigation}'",
            f"--mitigation {name} " + " ".join(f"-o {kv}" for kv in query.split("&") if kv),
        )
        for key, value in parse_kv_options([kv for kv in query.split("&") if kv]).items():
            options.setdefault(key, value)
        return name
    return mitigation


def existing_run(value: Path) -> Path:
    """Typer callback of a RUN argument that must already exist: commands that read a run never create one; a
    mistyped path stops here with 'no run at PATH' (exit 2) and nothing is written."""
    from halluscope.core.store import check_run_dir

    return check_run_dir(value)


def Run(help: str = "Run directory made by 'build spoken'.") -> Any:  # noqa: N802 - a type factory
    """The positional RUN of a command that reads a run (it must exist)."""
    return Annotated[Path, typer.Argument(help=help, metavar="RUN", callback=existing_run, show_default=False)]


def NewRun(help: str = "Run directory (created; an existing one is resumed).") -> Any:  # noqa: N802
    """The positional RUN of a command that makes a run (or resumes it)."""
    return Annotated[Path, typer.Argument(help=help, metavar="RUN", callback=_expand, show_default=False)]


def _expand(value: Path) -> Path:
    """A quoted '~/runs/x' (no shell expanded it) is the user's home, never a folder named '~'."""
    return value.expanduser()


MAX_TOKENS_HELP = "New tokens per reply (greedy decoding unless the command samples; a model preset may set it)."
MaxTokens = Annotated[int, typer.Option("--max-tokens", help=MAX_TOKENS_HELP)]
# the same role where the default comes from elsewhere (a model preset, else the command's own)
MaybeMaxTokens = Annotated[Optional[int], typer.Option("--max-tokens", help=MAX_TOKENS_HELP)]
AudioPolicy = Annotated[
    str, typer.Option("--audio-policy", help="Audio longer than the model's window: truncate | chunk | skip.")
]
System = Annotated[Optional[str], typer.Option("--system", help="System prompt (default: none).")]
AudioRoot = Annotated[
    Optional[Path],
    typer.Option(
        "--audio-root",
        help="Folder the input file's audio paths must lie under (default: the input file's folder); a path outside it is refused, never read.",
    ),
]
Retries = Annotated[
    int,
    typer.Option(
        "--retries",
        help="Re-asks after a reply that cannot be read (or fails its "
        "check), each with a fresh nonce; then the item is reported unscored.",
    ),
]
Mitigation = Annotated[
    Optional[str],
    typer.Option(
        "--mitigation",
        help="Decoding-time mitigation of local hf-audio models: aad | vcd | mti | dola; its "
        "parameters as -o KEY=VALUE, e.g. --mitigation aad -o alpha=0.5 (reported as its own row under the model).",
    ),
]
LlmConfig = Annotated[
    Optional[Path],
    typer.Option(
        "--llm-config",
        help="LLM config (.toml/.json): base URLs, key variable names, decoding params, cost table, "
        "for every model this command makes. Default: $HALLUSCOPE_LLM_CONFIG.",
    ),
]
Options = Annotated[
    List[str],
    typer.Option(
        "--option",
        "-o",
        help="Backend option KEY=VALUE (repeatable); values are parsed as JSON when they can be, "
        "e.g. -o audio_window_s=30 -o alpha=0.5.",
    ),
]
Json = Annotated[bool, typer.Option("--json", help="Print the summary as JSON on stdout instead of the table.")]
# the one rule of core/outcome.py: a step that produced nothing or failed on too many items fails the command
AllowPartial = Annotated[bool, typer.Option("--allow-partial", help=ALLOW_PARTIAL_HELP)]
VllmServe = Annotated[
    Optional[Path],
    typer.Option(
        "--vllm-serve",
        help="Start 'vllm serve' for this local model as the model 'openai/<name>' of this command and "
        "stop it at the end (needs vLLM; unverified here).",
    ),
]


# The --executor family, shared by every command with heavy local work (one place for names, defaults, help).
Executor = Annotated[
    str,
    typer.Option(
        help="Where the heavy work runs: 'local' (in-process) or 'ray' (Ray actors for TTS, ASR, encoder training per "
        "language and hf/hf-audio generation, models loaded once per worker; a local cluster, or the one at "
        "--ray-address / $RAY_ADDRESS). Same records either way; API calls (openai/) are made from the driver."
    ),
]
RayAddress = Annotated[
    Optional[str],
    typer.Option(
        help="Ray cluster to connect to, e.g. 10.0.0.5:6379 or auto (default: $RAY_ADDRESS, else start a local one)."
    ),
]
RayWorkers = Annotated[
    Optional[int], typer.Option(help="Ray workers per stage (default: cluster CPUs / CPUs per worker).")
]
RayCpus = Annotated[float, typer.Option(help="CPUs per Ray worker; also its ASR and torch threads.")]
RayGpus = Annotated[float, typer.Option(help="GPUs per Ray worker (fractions share a GPU).")]
RayMemory = Annotated[Optional[int], typer.Option(help="Memory per Ray worker in MB (a scheduling request).")]
RayResources = Annotated[
    List[str],
    typer.Option(
        help="Per-stage override STAGE:cpus=N[,gpus=N][,memory_mb=N] (repeatable); stages: "
        f"{', '.join(RESOURCE_STAGES)}, e.g. hf-audio:gpus=1"
    ),
]
RayTempDir = Annotated[
    Optional[str],
    typer.Option(
        help="Ray's temp folder for a local cluster (default: RUN/.ray, or /tmp/hs-ray-<hash> when RUN's path is too "
        "long for Ray's sockets)."
    ),
]


_EXECUTOR_PARAMS = (
    ("executor", Executor, "local"),
    ("ray_address", RayAddress, None),
    ("ray_workers", RayWorkers, None),
    ("ray_cpus_per_worker", RayCpus, 1.0),
    ("ray_gpus_per_worker", RayGpus, 0.0),
    ("ray_memory_mb", RayMemory, None),
    ("ray_resources", RayResources, []),
    ("ray_temp_dir", RayTempDir, None),
)


def with_executor(command: Callable) -> Callable:
    """Give a typer command the --executor family of options; it receives them as one ``executor: ExecutorOptions``
    argument (``with executor.create(run_dir) as ex: ...``)."""
    sig = inspect.signature(command, eval_str=True)
    extra = [
        inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation)
        for name, annotation, default in _EXECUTOR_PARAMS
    ]

    @functools.wraps(command)
    def wrapper(*args: object, **kwargs: object) -> object:
        values = {name: kwargs.pop(name) for name, _, _ in _EXECUTOR_PARAMS}
        values["ray_resources"] = tuple(values["ray_resources"])  # type: ignore[arg-type]
        return command(*args, executor=ExecutorOptions(**values), **kwargs)  # type: ignore[arg-type]

    wrapper.__signature__ = sig.replace(  # type: ignore[attr-defined]
        parameters=[p for p in sig.parameters.values() if p.name != "executor"] + extra
    )
    return wrapper


def serve(srv) -> None:
    """Serve a local web app (viewer, annotation app) until Ctrl-C, then stop it cleanly."""
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        srv.stop()
