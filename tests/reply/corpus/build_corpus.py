"""Rebuild replies.jsonl, the labelled reply corpus, from its sources (run from the repository root):

* AudioTrust's hallucination split (JusperLee/AudioTrust, Apache-2.0, LICENSE-AudioTrust beside this file):
  every ``ModelResponse`` of ``content_mismatc.jsonl`` and ``label_mismatch.jsonl`` (../shared/realdata), copied
  verbatim. The model was asked to describe the clip given an ``overall_description`` entry (the inference prompts of
  ``halucination_prompts.yaml``); the yes/no question each reply is read against is whether the clip is what the
  entry says ("Is the audio jazz music?", "Is this angry speech?"), the match judgement AudioTrust's judge scores.
* SmolLM2-135M-Instruct replies (``smollm2_raw.jsonl``, made by ``generate_smollm2.py``), copied verbatim.
* Kuan et al.'s Qwen2.5-Omni replies: no licence, so only their keys (sampling, entry_id) are stored; the question
  and reply are read from ../shared/realdata at test time (tests skip them when it is absent).

Labels (yes / no / refusal / uncertain / other) and phrasing classes were given by reading each reply against its
question, never by running the reader; they live in the tables below and in smollm2_labels.tsv.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

HERE = Path(__file__).parent
REAL = Path("../shared/realdata")

# label: y yes, n no, r refusal, u uncertain, o other (answers something else / says nothing about the subject)
# class: aff  affirmative statement (copula, "features", "sounds like", "seems to", progressive, "in a <x> tone")
#        hedge  affirmative statement under a hedge ("likely", "possibly", "could be")
#        other_subject  names another genre / sound / state instead of the asked one
#        off_topic  describes the clip (lyrics, story, words said) without a word on the asked subject
#        quoted  the words of the clip quoted (lyrics, a transcript) carry the only yes/no-like words
#        alternatives  names the subject among alternatives ("pop or hip-hop")
#        refusal, uncertain
CONTENT = (
    "y aff|y aff|o off_topic|y aff|y aff|y aff|r refusal|y aff|r refusal|y aff|"
    "y aff|o off_topic|o off_topic|y aff|y hedge|y aff|y aff|y aff|y hedge|r refusal|"
    "r refusal|y aff|y hedge|y aff|y aff|y hedge|r refusal|n other_subject|n other_subject|r refusal|"
    "y aff|y aff|y hedge|y aff|o alternatives|o alternatives|r refusal|r refusal|n other_subject|r refusal|"
    "n other_subject|y hedge|r refusal|r refusal|r refusal|n other_subject|y aff|y aff|u uncertain|r refusal|"
    "o off_topic|r refusal|n other_subject|r refusal|y aff|n other_subject|r refusal|y hedge|o off_topic|y aff|"
    "y hedge|o off_topic|y aff|y aff|y aff|o off_topic|o quoted|n other_subject|r refusal|r refusal|"
    "y aff|y aff|r refusal|o alternatives|u uncertain|r refusal|y aff|y aff|r refusal|r refusal"
)
LABEL = (
    "y aff|y aff|n other_subject|r refusal|y aff|r refusal|y aff|r refusal|r refusal|r refusal|"
    "r refusal|r refusal|y aff|o off_topic|r refusal|y aff|r refusal|r refusal|y aff|r refusal|"
    "r refusal|r refusal|r refusal|n other_subject|r refusal|o off_topic|o quoted|r refusal|y aff|y aff|"
    "r refusal|r refusal|r refusal|r refusal|n other_subject|r refusal|y aff|y aff|y aff|o quoted|"
    "o quoted|r refusal|y aff|y aff|r refusal|r refusal|r refusal|y aff|r refusal|r refusal|"
    "o off_topic|o off_topic|r refusal|y aff|r refusal|y aff|r refusal|r refusal|r refusal|r refusal|"
    "y aff|o quoted|r refusal|r refusal|y aff|r refusal|r refusal|o off_topic|y hedge|r refusal|"
    "r refusal|r refusal|y aff|r refusal|y aff|r refusal|r refusal|y aff|r refusal|r refusal"
)
LABELS = {"y": "yes", "n": "no", "r": "refusal", "u": "uncertain", "o": "other"}
GENRES = {"raphiphop": "rap or hip-hop", "folkcountry": "folk or country", "funksoulrnb": "funk, soul or R&B"}
# Kuan et al. replies kept by key: (sampling, entry_id, label, class), a spread over the three samplings
KUAN = [("random", "4080"), ("popular", "31315"), ("random", "7724"), ("random", "4117")]


def audiotrust() -> list[dict]:
    out = []
    for name, table, kind in (("content_mismatc.jsonl", CONTENT, "content"), ("label_mismatch.jsonl", LABEL, "label")):
        marks = [m.split() for m in table.split("|")]
        rows = [
            json.loads(x)
            for x in (REAL / "audiotrust_hallucination" / name).read_text(encoding="utf-8").splitlines()
            if x.strip()
        ]
        assert len(rows) == len(marks) == 80, (name, len(rows), len(marks))
        for i, (row, (lab, cls)) in enumerate(zip(rows, marks)):
            desc = " ".join(row["overall_description"].split())
            if kind == "content":
                subject = GENRES.get(desc, desc)
                question = f"Is the audio {subject} music?"
            else:
                subject = desc.lower().replace("nertral", "neutral")
                question = f"Is this {subject}?"
            out.append(
                {
                    "id": f"audiotrust/{kind}/{i}",
                    "source": "audiotrust",
                    "question": question,
                    "subject": subject,
                    "reply": row["ModelResponse"],
                    "label": LABELS[lab],
                    "class": cls,
                    "provenance": f"JusperLee/AudioTrust hallucination/{name} row {i} ({row['WavPath1']}), "
                    "ModelResponse verbatim; Apache-2.0",
                }
            )
    return out


def smollm2() -> list[dict]:
    if not (HERE / "smollm2_raw.jsonl").exists():
        return []
    raw = [json.loads(x) for x in (HERE / "smollm2_raw.jsonl").read_text(encoding="utf-8").splitlines() if x.strip()]
    with (HERE / "smollm2_labels.tsv").open(encoding="utf-8") as fh:
        labels = {int(r["n"]): r for r in csv.DictReader(fh, delimiter="\t")}
    out = []
    for i, row in enumerate(raw):
        lab = labels[i]
        out.append(
            {
                "id": f"smollm2/{i}",
                "source": "smollm2",
                "question": row["question"],
                "subject": row["subject"],
                "reply": row["reply"],
                "label": LABELS[lab["label"]],
                "class": lab["class"],
                "provenance": f"{row['model']}, prompt {row['prompt']!r}, params {json.dumps(row['params'])}; "
                "tests/reply/corpus/generate_smollm2.py",
            }
        )
    return out


def main() -> None:
    rows = audiotrust() + smollm2()
    with (HERE / "replies.jsonl").open("w", encoding="utf-8") as fh:
        for r in rows:
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")
    print(f"{len(rows)} replies -> {HERE / 'replies.jsonl'}")


if __name__ == "__main__":
    main()
