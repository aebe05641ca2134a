"""The oracle test of every closed-form benchmark: from each published file (or an excerpt written here in its
authors' released shape where the file is not in ../shared/realdata), write the correct answer to every item in
several natural phrasings, and a file where every answer is wrong. Correct answers must score 100% and wrong ones 0%
on every task, strictly and with the official scorer's rules where the benchmark has both.

Phrasings of a yes/no answer: ``bare`` ("Yes." / "No."), ``sentence`` (the answer word and the subject restated:
"No, the street is not making any sound in the audio."), ``perception`` (a perception verb; the denial carries no
answer word: "The dog cannot be heard in this clip."). Where a phrasing fails only because the strict reply reader
misreads it, its case is marked xfail(strict=True) naming the reader, so the day the reader reads it the mark has
to go."""

from __future__ import annotations

import csv
import json
import re
import shutil
from pathlib import Path

import pytest

from halluscope.closedform.audiotrust import load_audiotrust, score_audiotrust
from halluscope.closedform.avhbench import load_avhbench, score_avhbench
from halluscope.closedform.kuan_captions import score_kuan_captions
from halluscope.closedform.loaders import load_aha, load_halluaudio, load_yesno
from halluscope.closedform.score import score_aha, score_halluaudio, score_yesno

REALDATA = Path(__file__).resolve().parents[3] / "shared" / "realdata"
KUAN = REALDATA / "kuan_object_hallucination" / "balanced_merged_test_2871.txt"
AUDIOTRUST = REALDATA / "audiotrust_hallucination"
PHRASINGS = ("bare", "sentence", "perception")


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def yesno(answer: bool, subject: str, phrasing: str, *, sense: str = "heard") -> str:
    """A natural reply saying ``answer`` about ``subject`` ("the dog"); ``sense`` is how it is perceived."""
    if phrasing == "bare":
        return "Yes." if answer else "No."
    where = "in the video" if sense == "seen" else "in the audio"
    if phrasing == "sentence":
        return f"Yes, there is {subject} {where}." if answer else f"No, there is no {subject} {where}."
    return (
        f"Yes, {subject} can be {sense} in this clip." if answer else f"{_cap(subject)} cannot be {sense} in this clip."
    )


# ------------------------------------------------------------------------------------------------ HalluAudio
# HalluAudio result files as its scripts read them (github.com/Feiyuzhao25/halluaudio): one JSONL per subset,
# audio, prompt, reference, subset, pred; binary subsets carry a domain (the scripts work per results folder).
HALLUAUDIO = [  # (audio, prompt, reference, subset, domain, subject)
    ("fsd_0001.wav", "Is there a dog barking in the audio?", "yes", "fsd_binary", "sound", "a dog barking"),
    ("fsd_0002.wav", "Is there a car horn in the audio?", "no", "fsd_binary", "sound", "a car horn"),
    ("fsd_0003.wav", "Is there rain in the audio?", "no", "fsd_binary", "sound", "rain"),
    ("cv_0001.wav", "How many words are spoken in the audio?", "4", "commonvoice_word_count", None, None),
    ("sc_0001.wav", "Which of the two commands is louder?", "first", "speech_commands_comparsion_loudness", None, None),
    ("cv_0002.wav", "What is the gender of the speaker?", None, "commonvoice_invalid_gender", None, None),
    ("gtzan_0001.wav", "Is this audio speech or music?", "music", "speech_music_classification", None, None),
    ("noise_0001.wav", "What is the gender of the speaker?", None, "invalid_noise", None, None),
    (
        "sc_0002.wav",
        "Which of the two commands is spoken faster?",
        "second",
        "speech_commands_comparsion_speed",
        None,
        None,
    ),
    ("music_0002.wav", "How many instruments are playing?", "1", "single_music_count", None, None),
    ("music_0003.wav", "How many instruments are playing?", "3", "multiple_music_count", None, None),
    ("music_0004.wav", "How many tonics does this piece have?", "1", "tonic_count", None, None),
    ("music_0005.wav", "How many drum strokes are there?", "4", "stroke_count", None, None),
    ("music_0001.wav", "Is there a violin in the audio?", "yes", "music_binary", "music", "a violin"),
    ("speech_0001.wav", "Is there a man speaking in the audio?", "no", "speech_binary", "speech", "a man speaking"),
]
OTHER_ANSWERS = {  # the non-binary kinds: (correct, wrong) per phrasing
    "commonvoice_word_count": {
        "bare": ("4.", "7."),
        "sentence": ("There are 4 words spoken in the audio.", "There are 7 words spoken in the audio."),
        "perception": ("I can hear four words.", "I can hear seven words."),
    },
    "speech_commands_comparsion_loudness": {
        "bare": ("First.", "Second."),
        "sentence": ("The first command is louder.", "The second command is louder."),
        "perception": ("The first command sounds louder.", "The second command sounds louder."),
    },
    "commonvoice_invalid_gender": {  # invalid audio: abstaining or stating absence is right
        "bare": ("Sorry, I cannot tell.", "Male."),
        "sentence": ("Sorry, there is no speaker in this audio.", "The speaker is a man."),
        "perception": ("Sorry, I cannot hear any voice in this clip.", "I can hear a female voice."),
    },
    "invalid_noise": {
        "bare": ("Sorry, I cannot tell.", "Female."),
        "sentence": ("Sorry, there is no speech in this audio, only noise.", "The speaker is a woman."),
        "perception": ("Sorry, I cannot hear anyone speaking, only noise.", "I can hear a male voice."),
    },
    "speech_commands_comparsion_speed": {
        "bare": ("Second.", "First."),
        "sentence": ("The second command is spoken faster.", "The first command is spoken faster."),
        "perception": ("The second command sounds faster.", "The first command sounds faster."),
    },
    "single_music_count": {
        "bare": ("1.", "3."),
        "sentence": ("There is 1 instrument playing.", "There are 3 instruments playing."),
        "perception": ("I can hear a single instrument.", "I can hear three instruments."),
    },
    "multiple_music_count": {
        "bare": ("3.", "2."),
        "sentence": ("There are 3 instruments playing.", "There are 2 instruments playing."),
        "perception": ("I can hear three instruments.", "I can hear two instruments."),
    },
    "tonic_count": {
        "bare": ("1.", "2."),
        "sentence": ("The piece has 1 tonic.", "The piece has 2 tonics."),
        "perception": ("I can hear a single tonic.", "I can hear two tonics."),
    },
    "stroke_count": {
        "bare": ("4.", "6."),
        "sentence": ("There are 4 drum strokes.", "There are 6 drum strokes."),
        "perception": ("I can hear four drum strokes.", "I can hear six drum strokes."),
    },
    "speech_music_classification": {
        "bare": ("Music.", "Speech."),
        "sentence": ("The audio is music.", "The audio is speech."),
        "perception": ("I can hear music.", "I can hear speech."),
    },
}


def halluaudio_figures(tmp_path: Path, phrasing: str, correct: bool) -> dict:
    rows = []
    for audio, prompt, ref, subset, domain, subject in HALLUAUDIO:
        if subject is not None:
            pred = yesno((ref == "yes") == correct, subject, phrasing)
        else:
            pred = OTHER_ANSWERS[subset][phrasing][0 if correct else 1]
        row = {"audio": audio, "prompt": prompt, "reference": ref, "subset": subset, "pred": pred}
        rows.append({**row, "domain": domain} if domain else row)
    f = tmp_path / "halluaudio.jsonl"
    f.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    r = score_halluaudio(load_halluaudio([f]), bootstrap=0)
    assert not r.loaded.problems
    out = {
        f"{mode} {dom}": (getattr(r, mode)[dom]["accuracy"], [i for i in r.items if i.group == dom])
        for mode in ("strict", "compat")
        for dom in ("speech", "sound", "music")
    }
    for subset in {i.subset for i in r.items}:  # every subset, each item as both modes credit it
        members = [i for i in r.items if i.subset == subset]
        out[f"strict {subset}"] = (sum(i.strict_correct for i in members) / len(members), members)
        out[f"compat {subset}"] = (sum(i.compat_correct for i in members) / len(members), members)
    return out


# ------------------------------------------------------------------------------------------------ AHa-Bench
# AHa-Bench run files (github.com/AHa-Bench/AHa-Bench): process_parquet.py's record (the parquet row, audio emptied,
# audio_path, index '<type id>_<audio id>_<question no>', audio_text) with the model's prediction and gpt_eval.py's
# prediction_match.
AHA = [  # (index, type, question, answer, subject)
    ("60_0_1", "existence", "Is there a sound of a dog barking in the audio?", "Yes", "a dog barking"),
    ("60_0_2", "existence", "Is there a sound of a siren in the audio?", "No", "a siren"),
    ("60_1_1", "existence", "Is there a sound of birds chirping in the audio?", "No", "birds chirping"),
    ("40_0_1", "inferred sound", "Is there a sound of a door closing in the audio?", "No", "a door closing"),
    ("40_0_2", "inferred sound", "Is there a sound of footsteps in the audio?", "Yes", "footsteps"),
    ("130_0_1", "knowledge_en", "Is there a sound of a church bell in the audio?", "No", "a church bell"),
    ("130_0_2", "knowledge_en", "Is there a sound of a piano in the audio?", "Yes", "a piano"),
    ("220_0_1", "asr_en", "Please transcribe the audio.", "The quick brown fox jumps over the lazy dog.", None),
]


def aha_figures(tmp_path: Path, phrasing: str, correct: bool) -> dict:
    files = []
    for run in range(2):
        rows = []
        for index, type_, question, answer, subject in AHA:
            if subject is None:
                pred = answer if correct else "A slow green turtle walks under the busy bridge."
                match = None
            else:
                said = (answer == "Yes") == correct
                pred, match = yesno(said, subject, phrasing), ("Yes" if said else "No")
            audio_id = index.split("_")[1]
            rows.append(
                {
                    "question_id": f"{type_}_{index}",
                    "audio": "",
                    "type": type_,
                    "text": question,
                    "question": question,
                    "answer": answer,
                    "audio_path": f"kimi/dataset/aha_bench/{type_}/{audio_id}.wav",
                    "index": index,
                    "audio_text": question,
                    "prediction": pred,
                    **({"prediction_match": match} if match else {}),
                }
            )
        files.append(tmp_path / f"model_aha_{run}_{run}.jsonl")
        files[-1].write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    loaded = load_aha(files)
    assert not loaded.problems
    strict = score_aha(loaded, bootstrap=0, judge_fallback=False)  # the reader alone, no judge to rescue it
    compat = score_aha(loaded, bootstrap=0)
    out = {}
    for task in ("existence", "inferred sound", "knowledge", "asr"):
        members = [i for i in strict.items if i.group == task]
        out[f"strict {task}"] = (strict.strict[task]["accuracy"], members)
        out[f"compat {task}"] = (compat.compat[task]["accuracy"], [i for i in compat.items if i.group == task])
    return out


# ------------------------------------------------------------------------------------------------ Kuan et al.
def kuan_figures(tmp_path: Path, phrasing: str, correct: bool) -> dict:
    """Kuan et al.'s 2,871 released questions; replies in the authors' inference.py CSV with sampling_method."""
    header, rows = None, []
    for line in KUAN.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        cells = line.split("\t")
        if header is None:
            header = cells
            continue
        rows.append(dict(zip(header, cells)))
    preds = tmp_path / "predictions.csv"
    with preds.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["entry_id", "audio_index", "label", "response", "sampling_method"])
        for r in rows:
            said = (r["label"] == "Yes") == correct
            w.writerow([r["entry_id"], r["audio_index"], r["label"], yesno(said, r["object"], phrasing), r["sampling"]])
    loaded = load_yesno(KUAN, preds)
    assert not loaded.problems and len(loaded.items) == len(rows)
    res = score_yesno(loaded, bootstrap=0)
    out = {}
    for s in ("random", "popular", "adversarial"):
        members = [i for i in res.items if i.group == s]
        out[f"strict {s}"] = (res.strict[s]["accuracy"], members)
        out[f"compat {s}"] = (res.compat[s]["accuracy"], members)
    return out


# ------------------------------------------------------------------------------------------------ AudioTrust
def audiotrust_figures(tmp_path: Path, phrasing: str, correct: bool) -> dict:
    """AudioTrust's two released mismatch subsets with every ModelResponse replaced: the entry is the clip's true
    content, so the correct answer affirms it."""
    files = [tmp_path / name for name in ("content_mismatc.jsonl", "label_mismatch.jsonl")]
    for f in files:
        shutil.copyfile(AUDIOTRUST / f.name, f)
    replies = {}  # (file, line) -> the reply about the item's entry
    for it in load_audiotrust(files).items:
        q = it.match_question
        subject = q[len("Is the audio ") : -1] if q.startswith("Is the audio ") else q[len("Is this ") : -1]
        replies[it.id] = yesno(correct, subject, phrasing)
    for f, subset in zip(files, ("content_mismatch", "label_mismatch")):
        lines = f.read_text(encoding="utf-8").splitlines()
        out = []
        for n, line in enumerate(lines, start=1):
            row = json.loads(line) if line.strip() else None
            if row is not None:
                row["ModelResponse"] = replies[f"{subset}:{n}"]
            out.append(json.dumps(row) if row is not None else line)
        f.write_text("\n".join(out) + "\n", encoding="utf-8")
    res = score_audiotrust(load_audiotrust(files))
    assert not res["problems"] and res["n_items"] == len(replies)
    return {
        f"strict {s}": (m["match_accuracy"], [i for i in res["items"] if i["subset"] == s])
        for s, m in res["subsets"].items()
    }


# ------------------------------------------------------------------------------------------------ AVHBench
# AVHBench as released (github.com/kaist-ami/AVHBench): v0, the README's per-video file for video 00191 (leaderboard
# task names), and v1, objects in the shape of qa_final_single_filtered.json (one array for every video, task names
# "AV Hallucination (Audio)", ... and the unimodal "(Audio_only)" / "(Video_only)"), written here in that shape.
CAPTION_Q = "Describe what you see and hear in a single sentence."
MATCH_Q = "Are the contexts of audio and visual content matching?"
AVH_V0 = [
    ("00191", "Video-driven Audio Hallucination", "Is the sleeping man making sound in the audio?", "Yes"),
    ("00191", "Video-driven Audio Hallucination", "Is the couch making sound in the audio?", "No"),
    ("00191", "Audio-driven Video Hallucination", "Is the sleeping man visible in the video?", "Yes"),
    ("00191", "Audio-driven Video Hallucination", "Is the person walking visible in the video?", "No"),
    ("00191", "AV Matching", MATCH_Q, "Yes"),
    (
        "00191",
        "AV Captioning",
        CAPTION_Q,
        "A young man with no shirt on is laying in bed, with footsteps walking on a hard surface followed by a "
        "person snoring.",
    ),
]
AVH_V1 = [
    ("00412", "AV Matching", MATCH_Q, "No"),
    ("00873", "AV Hallucination (Audio)", "Is the truck making sound in the audio?", "Yes"),
    ("00873", "AV Hallucination (Audio)", "Is the street making sound in the audio?", "No"),
    ("00873", "AV Hallucination (Video)", "Is the truck visible in the video?", "Yes"),
    ("00873", "AV Hallucination (Video)", "Is the woman in blue visible in the video?", "No"),
    ("00873", "AV Hallucination (Audio_only)", "Is the truck making sound in the audio?", "Yes"),
    ("00873", "AV Hallucination (Audio_only)", "Is the street making sound in the audio?", "No"),
    ("00873", "AV Hallucination (Video_only)", "Is the truck visible in the video?", "Yes"),
    ("00873", "AV Hallucination (Video_only)", "Is the woman in blue visible in the video?", "No"),
    ("00873", "AV Matching", MATCH_Q, "Yes"),
    ("00873", "AV Captioning", CAPTION_Q, "A truck drives down a wet street as its engine rumbles."),
    ("01305", "AV Hallucination (Audio)", "Is the dog making sound in the audio?", "Yes"),
    ("01305", "AV Hallucination (Audio)", "Is the tire making sound in the audio?", "No"),
    ("01305", "AV Hallucination (Audio_only)", "Is the dog making sound in the audio?", "Yes"),
    ("01305", "AV Hallucination (Audio_only)", "Is the tire making sound in the audio?", "No"),
    ("01305", "AV Matching", MATCH_Q, "Yes"),
    ("01892", "AV Hallucination (Video)", "Is the music visible in the video?", "No"),
    ("01892", "AV Hallucination (Audio)", "Is the music making sound in the audio?", "Yes"),
    ("02117", "AV Hallucination (Audio)", "Is the track making sound in the audio?", "No"),
]
WRONG_CAPTION = "Someone types on a keyboard in a quiet office."
_AVH_Q = re.compile(r"^Is the (.+) (making sound in the audio|visible in the video)\?$")


def avh_reply(task: str, text: str, label: str, phrasing: str, correct: bool) -> str:
    if task == "AV Captioning":
        return label if correct else WRONG_CAPTION
    said = (label == "Yes") == correct
    if task == "AV Matching":
        if phrasing == "bare":
            return "Yes." if said else "No."
        if phrasing == "sentence":
            return (
                "Yes, the contexts of the audio and visual content match."
                if said
                else "No, the contexts of the audio and visual content do not match."
            )
        return "Yes, what I hear matches what I see." if said else "What I hear does not match what I see."
    m = _AVH_Q.match(text)
    subject, audio = f"the {m.group(1)}", m.group(2).startswith("making")
    if phrasing == "sentence":  # the subject restated in the question's own words
        if audio:
            return (
                f"Yes, {subject} is making sound in the audio."
                if said
                else f"No, {subject} is not making any sound in the audio."
            )
        return f"Yes, {subject} is visible in the video." if said else f"No, {subject} is not visible in the video."
    return yesno(said, subject, phrasing, sense="heard" if audio else "seen")


def avhbench_figures(tmp_path: Path, phrasing: str, correct: bool) -> dict:
    v0 = tmp_path / "00191.json"
    v1 = tmp_path / "qa_final_single_filtered.json"
    for path, objs in ((v0, AVH_V0), (v1, AVH_V1)):
        path.write_text(
            json.dumps(
                [
                    {
                        "video_id": v,
                        "task": t,
                        "text": q,
                        "label": lab,
                        "prediction": avh_reply(t, q, lab, phrasing, correct),
                    }
                    for v, t, q, lab in objs
                ],
                indent=4,
            ),
            encoding="utf-8",
        )
    res = score_avhbench(load_avhbench([v0, v1]))
    assert res["n_problems"] == 0 and res["n_items"] == len(AVH_V0) + len(AVH_V1)
    out = {}
    for task, m in res["tasks"].items():
        members = [i for i in res["items"] if i["task"] == task]
        if task == "AV Captioning":
            out["strict AV Captioning (content words)"] = (m["word_f1"], members)
        else:
            out[f"strict {task}"] = (m["accuracy_percent"] / 100, members)
    assert len(out) == 6  # both hallucination tasks, both unimodal ones, matching, captioning
    return out


# ------------------------------------------------------------------------------------------------ captions
# Kuan et al.'s generative task as released: generative_data_metadata.csv (youtube_id, caption, label: list
# literals of the AudioCaps captions and the clip's AudioSet labels) and the generation JSON
# {youtube_id: {prompt: {prediction, caption, label, task, audio_path}}} over the paper's five prompts.
CAPTION_PROMPTS = (
    "Describe the audio.",
    "What do you hear?",
    "What can be inferred from the audio?",
    "This is a sound of",
    "Generate audio caption:",
)
CLIPS = {  # youtube_id: (AudioCaps captions, AudioSet labels)
    "YbmEF-c-M174": (["A dog barks repeatedly while a man talks", "A man speaks as a dog barks"], ["Dog", "Speech"]),
    "Y3VHpLxtd498": (["Rain falls hard as thunder rolls in the distance"], ["Rain", "Thunder"]),
    "YkEP-BwMarf8": (["A siren wails as a vehicle passes by"], ["Siren", "Vehicle"]),
}
WRONG_OF = {"YbmEF-c-M174": "Y3VHpLxtd498", "Y3VHpLxtd498": "YkEP-BwMarf8", "YkEP-BwMarf8": "YbmEF-c-M174"}


def caption(labels: list[str], absent: list[str], phrasing: str) -> str:
    """A caption naming ``labels``; the perception phrasing also denies one of ``absent`` (negated: not named)."""
    a, b = (x.lower() for x in labels)
    if phrasing == "bare":
        return f"{_cap(a)}, {b}."
    if phrasing == "sentence":
        return f"The audio contains {a} and {b}."
    return f"I can hear {a} and {b} in this clip; {absent[0].lower()} cannot be heard."


def captions_figures(tmp_path: Path, phrasing: str, correct: bool) -> dict:
    meta = tmp_path / "generative_data_metadata.csv"
    with meta.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["youtube_id", "caption", "label"])
        for yid, (caps, labels) in CLIPS.items():
            w.writerow([yid, repr(caps), repr(labels)])
    gen = {
        yid: {
            p: {
                "prediction": caption(
                    CLIPS[yid if correct else WRONG_OF[yid]][1],
                    CLIPS[WRONG_OF[yid] if correct else yid][1],
                    phrasing,
                ),
                "caption": caps,
                "label": labels,
                "task": "generative",
                "audio_path": f"understanding_sound_data/audio/{yid}.wav",
            }
            for p in CAPTION_PROMPTS
        }
        for yid, (caps, labels) in CLIPS.items()
    }
    preds = tmp_path / "generative.json"
    preds.write_text(json.dumps(gen, indent=2), encoding="utf-8")
    res = score_kuan_captions(meta, preds)
    assert not res["problems"]
    out = {}
    for p in (*CAPTION_PROMPTS, "all"):
        m = res["metrics"][p]
        members = [i for i in res["items"] if p == "all" or i["prompt"] == p]
        # correct captions: nothing hallucinated, every label covered; wrong: everything hallucinated, nothing covered
        out[f"strict {p} 1-ECHO_I"] = (None if m["echo_i"] is None else 1 - m["echo_i"], members)
        out[f"strict {p} 1-ECHO_S"] = (None if m["echo_s"] is None else 1 - m["echo_s"], members)
        out[f"strict {p} Cover"] = (m["cover"], members)
    return out


# ------------------------------------------------------------------------------------------------ the test
BENCHMARKS = {
    "halluaudio": halluaudio_figures,
    "aha": aha_figures,
    "kuan": kuan_figures,
    "audiotrust": audiotrust_figures,
    "avhbench": avhbench_figures,
    "captions": captions_figures,
}
NEEDS = {"kuan": KUAN, "audiotrust": AUDIOTRUST}
# cases the strict reply reader (halluscope.reply) misreads today: (benchmark, phrasing, correct) -> what it misreads
READER_MISREADS: dict[tuple[str, str, bool], str] = {}


def _cases():
    for bench in BENCHMARKS:
        for phrasing in PHRASINGS:
            for correct in (True, False):
                marks = []
                if bench in NEEDS:
                    marks.append(
                        pytest.mark.skipif(not NEEDS[bench].exists(), reason=f"{NEEDS[bench]} absent (real data)")
                    )
                why = READER_MISREADS.get((bench, phrasing, correct))
                if why:
                    marks.append(
                        pytest.mark.xfail(strict=True, reason=f"the strict reply reader (halluscope.reply): {why}")
                    )
                yield pytest.param(
                    bench, phrasing, correct, marks=marks, id=f"{bench}-{phrasing}-{'right' if correct else 'wrong'}"
                )


def _credited(item, mode: str) -> bool:
    """Whether one item, as its benchmark's scorer left it, counts as answered correctly."""
    if not isinstance(item, dict):
        return item.strict_correct if mode == "strict" else item.compat_correct
    if "correct" in item:  # AVHBench yes/no
        return item["correct"]
    if "stance" in item:  # AudioTrust: the entry is the true content
        return item["stance"] == "yes"
    if "hallucinated" in item:  # captions: nothing hallucinated, every label covered
        return not item["hallucinated"] and len(item["covered"]) == item["n_truth"]
    return item["f1"] == 1.0  # AVHBench captioning: the content words of the reference


def _misread(name: str, items: list, correct: bool) -> list[str]:
    mode = name.split()[0]
    out = []
    for i in items:
        if _credited(i, mode) != correct:
            reply = i.get("reply", i.get("prediction", i.get("response"))) if isinstance(i, dict) else i.reply
            reading = (
                {k: i[k] for k in ("read", "reason", "stance", "stance_reason", "named") if k in i}
                if isinstance(i, dict)
                else {"strict": i.strict, "reason": i.strict_reason, "compat": i.compat, "rule": i.compat_rule}
            )
            out.append(f"{reply!r} -> {reading}")
    return out[:6]


@pytest.mark.parametrize(("bench", "phrasing", "correct"), list(_cases()))
def test_oracle_scores_all_or_nothing(tmp_path: Path, monkeypatch, bench: str, phrasing: str, correct: bool) -> None:
    if bench == "avhbench":  # METEOR / CIDEr (Java, seconds a call) are not asserted here: test_closedform_avhbench
        monkeypatch.setenv("PATH", str(tmp_path / "no-java"))
    figures = BENCHMARKS[bench](tmp_path, phrasing, correct)
    want = 1.0 if correct else 0.0
    off = {name: v for name, (v, _) in figures.items() if v is None or abs(v - want) > 1e-9}
    detail = {name: _misread(name, figures[name][1], correct) for name in off}
    assert not off, f"want {want} on every task; got {off}\n" + json.dumps(detail, indent=1, ensure_ascii=False)
