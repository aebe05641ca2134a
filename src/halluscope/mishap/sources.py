"""Clip manifests from the six sources of seed 001 (section 3.1, Table 3): each dataset's own caption, metadata or
transcript files as released, turned into the manifest 'mishap clips' reads, keeping the source's id, licence and
split. Music: Song Describer, Mridangam Stroke 1.5; sound: Clotho v2.1, FSD50K; speech: LibriSpeech, Common Voice.

Each importer reads the folder a user downloads (layouts below), checks every audio file it names exists, and
reports every problem together (file, row, field, fix). Audio paths are written absolute.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path

from halluscope.core.errors import InputError, Problems
from halluscope.core.inputs import Field, read_json, read_rows, read_text

Row = dict[str, str]

LICENSES = {
    "librispeech": "CC-BY-4.0",
    "commonvoice": "CC0-1.0",
    "mridangam": "CC-BY-3.0",
    "songdescriber": "CC-BY-SA-4.0 (captions); audio: the MTG-Jamendo track's own CC licence",
}


def _clip(problems: Problems, audio: Path, row: int | None, field: str, **kw: str | None) -> Row | None:
    if not audio.is_file():
        problems.add(
            f"audio file {audio} not found",
            row=row,
            field=field,
            fix="point the importer at the dataset folder as released (audio beside its metadata)",
        )
        return None
    return {"audio": str(audio.resolve()), **{k: v for k, v in kw.items() if v is not None}}  # type: ignore[misc]


def song_describer(root: Path) -> Iterator[Row]:
    """ROOT/song_describer.csv (caption_id, track_id, caption, is_valid_subset, path, ...) and ROOT/audio/<path>;
    one clip per track, its first caption (lowest caption_id)."""
    csv = root / "song_describer.csv"
    rows = read_rows(
        csv,
        [
            Field("caption_id"),
            Field("track_id"),
            Field("caption"),
            Field("path"),
            Field("is_valid_subset", required=False),
        ],
        what="Song Describer captions",
        format="csv",
    )
    problems = Problems(str(csv))
    best: dict[str, tuple[int, int, dict]] = {}
    for r in rows.rows:
        v = r.values
        key = int(v["caption_id"]) if v["caption_id"].strip().isdigit() else 10**12
        if v["track_id"] not in best or key < best[v["track_id"]][0]:
            best[v["track_id"]] = (key, r.number, v)
    for track, (_, number, v) in sorted(best.items()):
        c = _clip(
            problems,
            root / "audio" / v["path"],
            number,
            "path",
            id=f"songdescriber-{track}",
            domain="music",
            source="songdescriber",
            description=v["caption"].strip(),
            description_kind="caption",
            source_id=track,
            license=LICENSES["songdescriber"],
            split="valid_subset" if (v.get("is_valid_subset") or "").strip().lower() in ("true", "1") else "all",
        )
        if c:
            yield c
    problems.raise_if_any("Song Describer dataset")


_STROKE = re.compile(r"__(?P<stroke>[a-z]+)-(?P<tonic>[a-g]#?)-(?P<n>\d+)$", re.I)


def mridangam(root: Path) -> Iterator[Row]:
    """ROOT/<tonic>/<id>__<author>__<stroke>-<tonic>-<n>.wav (Mridangam Stroke 1.5): the stroke and tonic in the
    file name are the clip's metadata."""
    problems = Problems(str(root))
    files = sorted(root.glob("*/*.wav"))
    if not files:
        raise InputError("no <tonic>/*.wav files", file=str(root), fix="pass the unpacked mridangam_stroke_1.5 folder")
    for f in files:
        m = _STROKE.search(f.stem)
        if m is None:
            problems.add(f"file name {f.name!r} is not '<id>__<author>__<stroke>-<tonic>-<n>.wav'", field="file name")
            continue
        tonic = f.parent.name
        yield {
            "audio": str(f.resolve()),
            "id": f"mridangam-{f.stem}",
            "domain": "music",
            "source": "mridangam",
            "description": f"Mridangam stroke '{m['stroke'].lower()}' at tonic {tonic}.",
            "description_kind": "metadata",
            "source_id": f.stem,
            "license": LICENSES["mridangam"],
            "split": "all",
        }
    problems.raise_if_any("Mridangam Stroke dataset")


def clotho(root: Path, split: str = "development") -> Iterator[Row]:
    """ROOT/clotho_captions_<split>.csv (file_name, caption_1..caption_5), ROOT/<split>/<file_name>, and when present
    ROOT/clotho_metadata_<split>.csv (file_name, sound_id, license, ...); the first caption describes the clip."""
    caps = read_rows(
        root / f"clotho_captions_{split}.csv",
        [Field("file_name"), Field("caption_1")],
        what="Clotho captions",
        format="csv",
    )
    meta: dict[str, dict] = {}
    mpath = root / f"clotho_metadata_{split}.csv"
    if mpath.is_file():
        for r in read_rows(
            mpath,
            [Field("file_name"), Field("sound_id", required=False), Field("license", required=False)],
            what="Clotho metadata",
            format="csv",
        ).rows:
            meta[r.values["file_name"]] = r.values
    problems = Problems(caps.file)
    for r in caps.rows:
        name = r.values["file_name"]
        m = meta.get(name, {})
        c = _clip(
            problems,
            root / split / name,
            r.number,
            "file_name",
            id=f"clotho-{Path(name).stem}",
            domain="sound",
            source="clotho",
            description=r.values["caption_1"].strip(),
            description_kind="caption",
            source_id=(m.get("sound_id") or name),
            license=m.get("license") or None,
            split=split,
        )
        if c:
            yield c
    problems.raise_if_any("Clotho dataset")


def fsd50k(root: Path, split: str = "dev") -> Iterator[Row]:
    """ROOT/FSD50K.ground_truth/<split>.csv (fname, labels[, split]), ROOT/FSD50K.<split>_audio/<fname>.wav and,
    when present, ROOT/FSD50K.metadata/<split>_clips_info_FSD50K.json (title, description, license per fname): the
    uploader's description (HTML removed) describes the clip, else its labels (metadata)."""
    gt = read_rows(
        root / "FSD50K.ground_truth" / f"{split}.csv",
        [Field("fname", "scalar"), Field("labels"), Field("split", required=False)],
        what="FSD50K ground truth",
        format="csv",
    )
    info_path = root / "FSD50K.metadata" / f"{split}_clips_info_FSD50K.json"
    info = read_json(info_path, what="FSD50K clip info") if info_path.is_file() else {}
    problems = Problems(gt.file)
    for r in gt.rows:
        fname = r.values["fname"]
        i = info.get(fname, {}) if isinstance(info, dict) else {}
        text = re.sub(r"<[^>]+>", " ", str(i.get("description") or ""))
        text = " ".join(text.split())
        labels = r.values["labels"].replace("_", " ").replace(",", ", ")
        c = _clip(
            problems,
            root / f"FSD50K.{split}_audio" / f"{fname}.wav",
            r.number,
            "fname",
            id=f"fsd50k-{fname}",
            domain="sound",
            source="fsd50k",
            description=text or f"Sound events: {labels}.",
            description_kind="caption" if text else "metadata",
            source_id=fname,
            license=str(i.get("license")) if i.get("license") else None,
            split=r.values.get("split") or split,
        )
        if c:
            yield c
    problems.raise_if_any("FSD50K dataset")


def librispeech(root: Path) -> Iterator[Row]:
    """ROOT/<subset>/<speaker>/<chapter>/<speaker>-<chapter>.trans.txt ('<utterance id> <TRANSCRIPT>' lines) and
    <utterance id>.flac beside it; the subset folder's name (e.g. dev-clean) is the split."""
    files = sorted(root.glob("*/*/*/*.trans.txt"))
    if not files:
        raise InputError(
            "no <subset>/<speaker>/<chapter>/*.trans.txt files",
            file=str(root),
            fix="pass the LibriSpeech folder that holds dev-clean/, test-clean/, ...",
        )
    for f in files:
        problems = Problems(str(f))
        for n, line in enumerate(read_text(f, what="LibriSpeech transcript").splitlines(), 1):
            if not line.strip():
                continue
            utt, _, text = line.strip().partition(" ")
            if not text:
                problems.add(f"expected '<utterance id> <transcript>', got {line[:60]!r}", row=n)
                continue
            c = _clip(
                problems,
                f.parent / f"{utt}.flac",
                n,
                "utterance id",
                id=f"librispeech-{utt}",
                domain="speech",
                source="librispeech",
                description=text.strip(),
                description_kind="transcript",
                source_id=utt,
                license=LICENSES["librispeech"],
                split=f.parents[2].name,
            )
            if c:
                yield c
        problems.raise_if_any("LibriSpeech transcript")


def commonvoice(root: Path, split: str = "validated") -> Iterator[Row]:
    """ROOT/<split>.tsv (client_id, path, sentence, locale, ...) and ROOT/clips/<path> (Common Voice 22.0)."""
    tsv = read_rows(
        root / f"{split}.tsv",
        [Field("path"), Field("sentence"), Field("locale", required=False)],
        what="Common Voice sentences",
        format="tsv",
    )
    problems = Problems(tsv.file)
    for r in tsv.rows:
        path = r.values["path"]
        c = _clip(
            problems,
            root / "clips" / path,
            r.number,
            "path",
            id=f"commonvoice-{Path(path).stem}",
            domain="speech",
            source="commonvoice",
            description=r.values["sentence"].strip(),
            description_kind="transcript",
            source_id=Path(path).stem,
            license=LICENSES["commonvoice"],
            split=split if not r.values.get("locale") else f"{r.values['locale']}/{split}",
        )
        if c:
            yield c
    problems.raise_if_any("Common Voice dataset")


IMPORTERS: dict[str, Callable[..., Iterator[Row]]] = {
    "songdescriber": song_describer,
    "mridangam": mridangam,
    "clotho": clotho,
    "fsd50k": fsd50k,
    "librispeech": librispeech,
    "commonvoice": commonvoice,
}
SPLITS = {"clotho": "development", "fsd50k": "dev", "commonvoice": "validated"}  # importers that take a split


def write_source_manifest(source: str, root: str | Path, out: str | Path, *, split: str | None = None) -> int:
    """Write ROOT's clips as a MISHAP manifest (JSON Lines) at OUT; returns the number of clips."""
    from halluscope.core.fs import atomic_write

    if source not in IMPORTERS:
        raise InputError(f"unknown source {source!r}", field="SOURCE", fix=f"use one of {', '.join(IMPORTERS)}")
    root = Path(root)
    if not root.is_dir():
        raise InputError("is not a folder", file=str(root), fix=f"pass the unpacked {source} dataset folder")
    if split is not None and source not in SPLITS:
        raise InputError(f"{source} takes no split (its layout names the split)", field="split")
    kw = {"split": split} if split is not None else {}
    rows = list(IMPORTERS[source](root, **kw))
    if not rows:
        raise InputError(
            f"no clips found for {source}",
            file=str(root),
            fix="check the folder layout (see halluscope.mishap.sources)",
        )
    atomic_write(out, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    return len(rows)
