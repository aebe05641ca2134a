"""Clip manifests from seed 001's six sources (Table 3), each from small files written in the dataset's own layout;
every manifest is then read by 'mishap clips' (load_manifest) with source ids, licences and splits kept."""

import json

import numpy as np
import pytest
import soundfile as sf
from typer.testing import CliRunner

from halluscope.cli.main import app
from halluscope.core.errors import InputError
from halluscope.mishap.clips import load_manifest
from halluscope.mishap.sources import write_source_manifest


def _wav(path, fmt="WAV"):
    path.parent.mkdir(parents=True, exist_ok=True)
    t = np.arange(8000) / 16000
    sf.write(str(path), (0.2 * np.sin(2 * np.pi * 330 * t)).astype(np.float32), 16000, format=fmt)
    return path


def _load(source, root, tmp_path, **kw):
    out = tmp_path / f"{source}.jsonl"
    n = write_source_manifest(source, root, out, **kw)
    clips = load_manifest(out)
    assert len(clips) == n
    return {c.id: c for c in clips}


def test_song_describer_one_clip_per_track(tmp_path):
    root = tmp_path / "sdd"
    root.mkdir()
    (root / "song_describer.csv").write_text(
        "caption_id,track_id,caption,is_valid_subset,familiarity,artist_id,album_id,path,duration\n"
        '12,1048,"A calm piano piece, slow and soft.",True,0,1,2,48/1048.2min.mp3,120\n'
        "7,1048,Solo piano with reverb.,True,0,1,2,48/1048.2min.mp3,120\n"
        "3,2001,Upbeat rock with distorted guitars.,False,1,3,4,01/2001.2min.mp3,120\n",
        encoding="utf-8",
    )
    _wav(root / "audio" / "48" / "1048.2min.mp3")
    _wav(root / "audio" / "01" / "2001.2min.mp3")
    clips = _load("songdescriber", root, tmp_path)
    c = clips["songdescriber-1048"]
    assert (
        c.description == "Solo piano with reverb." and c.domain == "music" and c.source_id == "1048"
    )  # lowest caption id
    assert c.split == "valid_subset" and clips["songdescriber-2001"].split == "all" and "CC-BY-SA" in c.license


def test_mridangam_metadata_from_file_names(tmp_path):
    root = tmp_path / "mridangam_stroke_1.5"
    _wav(root / "C#" / "224030__akshaylaya__tha-c#-001.wav")
    _wav(root / "B" / "224031__akshaylaya__bheem-b-002.wav")
    clips = _load("mridangam", root, tmp_path)
    assert clips["mridangam-224030__akshaylaya__tha-c#-001"].description == "Mridangam stroke 'tha' at tonic C#."
    assert all(c.description_kind == "metadata" and c.license == "CC-BY-3.0" for c in clips.values())


def test_clotho_first_caption_and_metadata_licence(tmp_path):
    root = tmp_path / "clotho"
    root.mkdir()
    (root / "clotho_captions_development.csv").write_text(
        "file_name,caption_1,caption_2,caption_3,caption_4,caption_5\n"
        "Door creak.wav,A wooden door creaks slowly as it opens.,b,c,d,e\n",
        encoding="utf-8",
    )
    (root / "clotho_metadata_development.csv").write_text(
        "file_name,keywords,sound_id,sound_link,start_end_samples,manufacturer,license\n"
        "Door creak.wav,door,12345,https://freesound.org/s/12345,,someone,https://creativecommons.org/licenses/by/3.0/\n",
        encoding="utf-8",
    )
    _wav(root / "development" / "Door creak.wav")
    c = _load("clotho", root, tmp_path)["clotho-Door creak"]
    assert c.description.startswith("A wooden door") and c.source_id == "12345" and "by/3.0" in c.license
    assert c.split == "development"


def test_fsd50k_description_or_labels(tmp_path):
    root = tmp_path / "fsd"
    (root / "FSD50K.ground_truth").mkdir(parents=True)
    (root / "FSD50K.metadata").mkdir()
    (root / "FSD50K.ground_truth" / "dev.csv").write_text(
        'fname,labels,mids,split\n64760,"Electric_guitar,Guitar,Music","/m/02sgy,/m/0342h,/m/04rlf",train\n'
        '16399,"Dog,Bark","/m/0bt9lr,/m/05tny_",val\n',
        encoding="utf-8",
    )
    (root / "FSD50K.metadata" / "dev_clips_info_FSD50K.json").write_text(
        json.dumps(
            {
                "64760": {
                    "title": "riff",
                    "description": "A <b>distorted</b> guitar riff.",
                    "tags": [],
                    "license": "http://creativecommons.org/licenses/by/3.0/",
                    "uploader": "u",
                }
            }
        ),
        encoding="utf-8",
    )
    _wav(root / "FSD50K.dev_audio" / "64760.wav")
    _wav(root / "FSD50K.dev_audio" / "16399.wav")
    clips = _load("fsd50k", root, tmp_path)
    assert clips["fsd50k-64760"].description == "A distorted guitar riff." and clips["fsd50k-64760"].split == "train"
    dog = clips["fsd50k-16399"]
    assert dog.description == "Sound events: Dog, Bark." and dog.description_kind == "metadata" and dog.split == "val"


def test_librispeech_and_common_voice_transcripts(tmp_path):
    root = tmp_path / "LibriSpeech"
    chap = root / "dev-clean" / "84" / "121123"
    chap.mkdir(parents=True)
    (chap / "84-121123.trans.txt").write_text(
        "84-121123-0000 GO DO YOU HEAR\n84-121123-0001 BUT IN LESS THAN FIVE MINUTES\n"
    )
    _wav(chap / "84-121123-0000.flac", "FLAC")
    _wav(chap / "84-121123-0001.flac", "FLAC")
    clips = _load("librispeech", root, tmp_path)
    c = clips["librispeech-84-121123-0000"]
    assert c.description == "GO DO YOU HEAR" and c.split == "dev-clean" and c.license == "CC-BY-4.0"
    cv = tmp_path / "cv" / "en"
    cv.mkdir(parents=True)
    (cv / "validated.tsv").write_text(
        "client_id\tpath\tsentence_id\tsentence\tup_votes\tdown_votes\tlocale\n"
        "abc\tcommon_voice_en_1.mp3\ts1\tThe train leaves at noon.\t2\t0\ten\n",
        encoding="utf-8",
    )
    _wav(cv / "clips" / "common_voice_en_1.mp3")
    c = _load("commonvoice", cv, tmp_path)["commonvoice-common_voice_en_1"]
    assert c.description == "The train leaves at noon." and c.split == "en/validated" and c.license == "CC0-1.0"


def test_missing_audio_and_bad_names_are_reported_together(tmp_path):
    root = tmp_path / "LibriSpeech"
    chap = root / "dev-clean" / "84" / "121123"
    chap.mkdir(parents=True)
    (chap / "84-121123.trans.txt").write_text("84-121123-0000 GO DO YOU HEAR\nBROKENLINE\n84-121123-0002 NO AUDIO\n")
    _wav(chap / "84-121123-0000.flac", "FLAC")
    with pytest.raises(InputError) as exc:
        write_source_manifest("librispeech", root, tmp_path / "o.jsonl")
    msg = str(exc.value)
    assert "row 2" in msg and "row 3" in msg and "84-121123-0002.flac not found" in msg
    assert not (tmp_path / "o.jsonl").exists()
    with pytest.raises(InputError, match="unknown source"):
        write_source_manifest("audiocaps", root, tmp_path / "o.jsonl")
    with pytest.raises(InputError, match="takes no split"):
        write_source_manifest("librispeech", root, tmp_path / "o.jsonl", split="x")


def test_sources_cli_then_clips(tmp_path):
    root = tmp_path / "mridangam"
    _wav(root / "D" / "1__a__thi-d-001.wav")
    out = tmp_path / "m.jsonl"
    res = CliRunner().invoke(app, ["mishap", "sources", "mridangam", str(root), "--out", str(out)])
    assert res.exit_code == 0, res.output
    res = CliRunner().invoke(app, ["mishap", "clips", str(tmp_path / "run"), "--manifest", str(out)])
    assert res.exit_code == 0, res.output
    from halluscope.core.store import Store
    from halluscope.mishap.clips import kept_clips

    with Store(tmp_path / "run") as store:
        clip = next(iter(kept_clips(store).values()))
    assert clip.source_id == "1__a__thi-d-001" and clip.license == "CC-BY-3.0"
