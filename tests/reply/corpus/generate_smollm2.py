"""Regenerate smollm2_raw.jsonl: SmolLM2-135M-Instruct (hf/smollm2-135m-instruct, packaged GGUF, offline) answering
presence questions about sound scenes given as a caption (the text the cascade's LLM sees in place of audio), or
with no scene at all. Replies are stored verbatim with the prompt, question and decoding parameters; the labels in
replies.jsonl were then given by reading each reply, not by running the reader.

    HF_HUB_OFFLINE=1 .venv/bin/python tests/reply/corpus/generate_smollm2.py
"""

from __future__ import annotations

import json
from pathlib import Path

from halluscope.backends.llm import complete_all, create_backend

SCENES = [  # (caption, subjects present, subjects absent) in the style of AudioCaps captions
    ("A dog barks repeatedly while birds chirp in the background", ["dog barking", "birds"], ["cat", "siren"]),
    ("A man speaks over the sound of a car engine idling", ["speech", "car engine"], ["music", "dog"]),
    ("Jazz music plays with a saxophone solo", ["jazz music", "saxophone"], ["drums", "rain"]),
    ("Heavy rain falls on a roof and thunder rumbles", ["rain", "thunder"], ["footsteps", "guitar"]),
    ("A police siren wails as traffic passes by", ["siren", "traffic"], ["birds", "piano"]),
    ("A woman laughs and a baby cries", ["laughter", "baby crying"], ["telephone", "engine"]),
    ("Water runs from a tap into a sink", ["water running"], ["speech", "dog"]),
    ("Someone types on a keyboard and a phone rings", ["typing", "telephone ringing"], ["music", "wind"]),
    ("A train horn blows as a train passes on the tracks", ["train", "horn"], ["cat", "applause"]),
    ("A crowd applauds and cheers", ["applause", "cheering"], ["violin", "rain"]),
    ("Wind blows strongly and leaves rustle", ["wind", "rustling leaves"], ["speech", "car horn"]),
    ("A piano melody plays softly", ["piano"], ["guitar", "dog barking"]),
    ("A cat meows while a clock ticks", ["cat meowing", "clock ticking"], ["dog", "music"]),
    ("Footsteps on gravel and a door slams", ["footsteps", "door slamming"], ["rain", "speech"]),
]
SHAPES = [  # how the question is put (the closed-form benchmarks' shapes)
    (
        "caption_yesno",
        "Audio description: {caption}.\nQuestion: Is there a sound of {s} in the audio? Answer yes or no.",
    ),
    ("caption_free", "Here is what a recording contains: {caption}. Can you hear {s} in the audio?"),
    ("caption_contain", "The clip: {caption}.\nDoes the audio contain the sound of {s}?"),
    ("no_audio", "Is there a sound of {s} in the audio?"),
]


def main() -> None:
    out = Path(__file__).with_name("smollm2_raw.jsonl")
    backend = create_backend("hf/smollm2-135m-instruct")
    rows, requests = [], []
    for si, (caption, present, absent) in enumerate(SCENES):
        for s, truth in (
            [(p, "yes") for p in present[:1]] + [(a, "no") for a in absent[:1]] + [(p, "yes") for p in present[1:2]]
        ):
            for shape, tmpl in SHAPES:
                if shape == "no_audio" and truth == "no":
                    continue
                prompt = tmpl.format(caption=caption, s=s)
                question = prompt.splitlines()[-1].split(": ", 1)[-1] if "\n" in prompt else prompt.split(". ")[-1]
                seed = len(rows)
                params = {"max_new_tokens": 40, "temperature": 0.7, "top_p": 0.95, "seed": seed}
                requests.append(backend.request([{"role": "user", "content": prompt}], params=params, tag=f"q{seed}"))
                rows.append(
                    {
                        "scene": si,
                        "caption": caption if shape != "no_audio" else None,
                        "shape": shape,
                        "subject": s,
                        "truth": truth,
                        "prompt": prompt,
                        "question": question,
                        "params": params,
                    }
                )
    done = len(out.read_text(encoding="utf-8").splitlines()) if out.exists() else 0  # resumable, in chunks
    for start in range(done, len(rows), 12):
        responses, stats = complete_all(backend, requests[start : start + 12])
        with out.open("a", encoding="utf-8") as fh:
            for row, resp in zip(rows[start : start + 12], responses):
                fh.write(
                    json.dumps(
                        {
                            **row,
                            "model": "hf/smollm2-135m-instruct (SmolLM2-135M-Instruct.Q4_1.gguf)",
                            "reply": resp.text,
                            "status": resp.status,
                        },
                        ensure_ascii=False,
                    )
                    + "\n"
                )
        print(f"{start + len(responses)} of {len(rows)} replies -> {out}; {stats.line()}", flush=True)


if __name__ == "__main__":
    main()
