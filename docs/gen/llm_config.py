"""Writes reference/llm-config.md from the LLM config's pydantic models (mkdocs-gen-files runs it at every
`mkdocs build`): every key of the [openai], [hf], [models."<spec>"] and [generate] tables with its type, default and
description, so the page cannot go stale."""

from __future__ import annotations

import html

import mkdocs_gen_files
from pydantic_core import PydanticUndefined

from halluscope.backends.llm._config import GenerateOptions, HFOptions, OpenAIOptions

SECTIONS = (
    (
        '[openai] and [models."openai/<name>"]',
        OpenAIOptions,
        'Every `openai/*` model; a `[models."openai/x"]` table overrides them for one model.',
    ),
    ('[hf] and [models."hf/<dir>"]', HFOptions, "Every local `hf/*` model (transformers generation)."),
    ("[generate]", GenerateOptions, "The rewrite protocol of Lost in Speech, App. A.1 (`build spoken --generator`)."),
)


def _type(annotation: object) -> str:
    text = getattr(annotation, "__name__", None) or str(annotation)
    return text.replace("typing.", "")


def _default(field) -> str:
    if field.default is not PydanticUndefined:
        return "none" if field.default is None else f"`{field.default!r}`"
    if field.default_factory is not None:
        return f"`{field.default_factory()!r}`"
    return "required"


lines = [
    "# LLM config file\n",
    "Generated from the config's models at every documentation build (`docs/gen/llm_config.py`). The file is "
    "TOML or JSON, named by `--llm-config FILE` or `$HALLUSCOPE_LLM_CONFIG`; an unknown key stops the command "
    "with the keys allowed. API keys are read only from environment variables (`api_key_env`), never from the "
    "file, and never stored. A worked example is on [Bring your own: models](../byo/models.md#the-llm-config-file).\n",
]
for title, model, note in SECTIONS:
    lines += [f"## {title}\n", note + "\n", "| key | type | default | meaning |", "|---|---|---|---|"]
    for name, field in model.model_fields.items():
        desc = html.escape((field.description or "").replace("|", "\\|"), quote=False)
        lines.append(
            f"| `{name}` | `{html.escape(_type(field.annotation), quote=False)}` | {_default(field)} | {desc} |"
        )
    lines.append("")
with mkdocs_gen_files.open("reference/llm-config.md", "w") as fh:
    fh.write("\n".join(lines))
