"""Writes reference/models.md from the adapter registry (mkdocs-gen-files runs it at every `mkdocs build`): the
table `halluscope models` prints (Lost in Speech, App. C, Table 8), so the page cannot go stale."""

from __future__ import annotations

import html

import mkdocs_gen_files

from halluscope.backends.audio_lm.table8 import markdown, table8

text = markdown(table8())
# '<dir>' outside a code span would be read as an HTML tag
text = "\n".join(html.escape(line, quote=False) for line in text.splitlines())
page = (
    "# Audio-language models (Table 8)\n\n"
    "Generated from the adapter registry at every documentation build (`docs/gen/models_table.py`); "
    "`halluscope models` prints the same table (`--json` for the rows). Local adapters load a transformers "
    "directory (`hf-audio/<dir>`), declare their audio window and run all four mitigations; every other family "
    "runs through an OpenAI-compatible server (`openai/<model>`), where no mitigation is possible. *Verified* "
    "says how halluscope tested the family: no real checkpoint of these models was run here.\n\n" + text + "\n"
)
with mkdocs_gen_files.open("reference/models.md", "w") as fh:
    fh.write(page)
