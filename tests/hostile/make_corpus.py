"""Write the hostile-file corpus: tests/hostile/files/<reader>/<name> and expected.json (what each must produce).

Run `python tests/hostile/make_corpus.py` to regenerate it (deterministic). Each entry of expected.json says
``{"expect": "error", "says": [...]}`` (the command exits 2 with one message holding every string) or
``{"expect": "ok", "n": N}`` (read correctly: N articles / clips / rows). test_hostile_corpus.py runs every file.
Readers: corpus (`corpus check`), config (an LLM config), wav (a one-clip manifest through `mishap clips`),
manifest (a clip manifest), closedform (a HalluAudio / yes-no set for `run closedform`).
"""

from __future__ import annotations

import io
import json
import shutil
import struct
from pathlib import Path

HERE = Path(__file__).resolve().parent / "files"
EXPECTED: dict[str, dict] = {}
T = "The National Bank raised the base rate to 16.75 percent on March 12, 2024."


def put(
    rel: str,
    data: bytes | str,
    expect: str = "error",
    *says: str,
    n: int | None = None,
    env: dict[str, str] | None = None,
) -> None:
    p = HERE / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    EXPECTED[rel] = {"expect": expect, "says": list(says)} if expect == "error" else {"expect": "ok", "n": n}
    if env:
        EXPECTED[rel]["env"] = env


def wav(
    rate: int = 16000,
    ch: int = 1,
    width: int = 2,
    data: bytes | None = None,
    declared: int | None = None,
    fmt_tag: int = 1,
    riff: bytes = b"RIFF",
    fmt: bool = True,
    data_chunk: bool = True,
) -> bytes:
    data = (b"\x10\x00" * ch * 1600) if data is None else data
    declared = len(data) if declared is None else declared
    body = b"WAVE"
    if fmt:
        body += struct.pack("<4sIHHIIHH", b"fmt ", 16, fmt_tag, ch, rate, rate * ch * width, ch * width, width * 8)
    if data_chunk:
        body += struct.pack("<4sI", b"data", declared) + data
    return struct.pack("<4sI", riff, 4 + len(body)) + body


def jl(*rows: object) -> str:
    return "".join((r if isinstance(r, str) else json.dumps(r, ensure_ascii=False)) + "\n" for r in rows)


def art(i: int, **kw: object) -> dict:
    return {"id": f"en-{i}", "language": "en", "text": f"{T} Item {i}.", **kw}


def corpus() -> None:
    c = "corpus/"
    rows3 = [art(i) for i in range(3)]
    put(c + "ok.jsonl", jl(*rows3), "ok", n=3)
    put(c + "ok_bom_crlf.jsonl", b"\xef\xbb\xbf" + jl(*rows3).replace("\n", "\r\n").encode(), "ok", n=3)
    put(c + "ok.csv", "id,language,text\n" + "".join(f'en-{i},en,"{T}, item {i}"\n' for i in range(3)), "ok", n=3)
    put(
        c + "ok_multiline.csv",
        'id,language,text\nen-1,en,"line one\nline two, still the text"\nen-2,en,plain\n',
        "ok",
        n=2,
    )
    put(c + "ok.tsv", "id\tlanguage\ttext\n" + "".join(f"en-{i}\ten\t{T} {i}\n" for i in range(3)), "ok", n=3)
    put(c + "ok_quote_doubled.csv", 'id,language,text\nen-1,en,"he said ""yes"" twice"\n', "ok", n=1)
    put(c + "ok_kz_alias.jsonl", jl({"id": "k1", "language": "kz", "text": "Алматы қаласы."}), "ok", n=1)
    put(
        c + "ok_unicode_ids.jsonl",
        jl(
            {"id": "ру-1", "language": "ru", "text": "Банк поднял ставку."},
            {"id": "../../etc/passwd", "language": "en", "text": T},
        ),
        "ok",
        n=2,
    )
    put(c + "ok_tilde_id_no_collision.jsonl", jl(art(1, id="x~other"), art(2, id="x")), "ok", n=2)
    put(c + "ok_extra_column.csv", "id,language,text,extra\nen-1,en,text here,zzz\n", "ok", n=1)
    put(c + "ok_parquet_like_name.jsonl", jl(art(1, topic="economy", url="https://x.kz/a")), "ok", n=1)
    lines = ["id\tlanguage\ttext"] + [f"en-{i}\ten\tsome text {i}" for i in range(40)]
    unclosed = list(lines)
    unclosed[3] = 'en-2\ten\t"opens a quote that never closes'
    put(c + "unclosed_quote.tsv", "\n".join(unclosed) + "\n", "error", "row 4", "never closes")
    late = list(lines)
    late[3], late[30] = 'en-2\ten\t"opens a quote', 'en-29\ten\tand closes it here"'
    put(c + "quote_closes_late.tsv", "\n".join(late) + "\n", "error", "row 4", "look like rows")
    late2 = list(late)
    late2[30] = 'en-29\ten\tcloses" with text after'
    put(c + "quote_closes_then_text.tsv", "\n".join(late2) + "\n", "error", "row 4", "runs on to line 31")
    put(
        c + "unclosed_quote.csv",
        'id,language,text\nen-1,en,"never closed\nen-2,en,b\nen-3,en,c\n',
        "error",
        "row 2",
        "never closes",
    )
    put(c + "quote_mid_cell.csv", 'id,language,text\nen-1,en,ab"c"d\n', "ok", n=1)
    put(c + "quote_then_text.csv", 'id,language,text\nen-1,en,"abc"def\n', "error", "row 2", "unreadable CSV")
    put(c + "dup_header.csv", "id,language,text,text\nen-1,en,a,b\n", "error", "text appear more than once")
    put(c + "dup_header_blank.csv", "id,language,text,,\nen-1,en,a,,\n", "ok", n=1)
    put(c + "missing_column.csv", "id,text\nen-1,a\n", "error", "missing column(s) language")
    put(c + "not_a_header.csv", "en-1,en,some text\n", "error", "the first row is not a header")
    put(c + "comma_header_tsv.tsv", "id,language,text\nen-1,en,a\n", "error", "comma-separated")
    put(c + "ragged.csv", "id,language,text\nen-1,en,a,b\n", "error", "has 4 cell(s)")
    put(c + "empty.csv", "", "error", "no header row")
    put(c + "header_only.csv", "id,language,text\n", "error", "no articles")
    put(c + "empty.jsonl", "", "error", "no articles")
    put(c + "blank_lines.jsonl", "\n\n\n", "error", "no articles")
    put(
        c + "cp1251.csv",
        "id,language,text\nru-1,ru,Банк поднял ставку\n".encode("cp1251"),
        "error",
        "not UTF-8",
        "cp1251",
    )
    put(c + "cp1252.jsonl", jl(art(1, text="café résumé naïve")).encode("cp1252"), "error", "not UTF-8")
    put(c + "koi8.tsv", "id\tlanguage\ttext\nru-1\tru\tБанк поднял ставку\n".encode("koi8_r"), "error", "not UTF-8")
    put(c + "utf16_bom.jsonl", jl(*rows3).encode("utf-16"), "error", "UTF-16")
    put(c + "utf16le_nobom.csv", "id,language,text\nen-1,en,abc\n".encode("utf-16-le"), "error", "UTF-16")
    put(c + "nul_byte.jsonl", jl(art(1)).encode() + b"\x00\x00", "error", "NUL")
    put(c + "nul_in_text.jsonl", jl(art(1, text="a\u0000b")), "error", "NUL character")
    put(c + "gzip.jsonl", b"\x1f\x8b\x08\x00" + bytes(40), "error", "gzip")
    put(c + "zip_as_csv.csv", b"PK\x03\x04" + bytes(40), "error", "zip archive")
    put(c + "pdf.jsonl", b"%PDF-1.4\n" + bytes(20), "error", "PDF")
    put(c + "png.csv", b"\x89PNG\r\n\x1a\n" + bytes(20), "error", "PNG")
    put(c + "sqlite.jsonl", b"SQLite format 3\x00" + bytes(80), "error", "SQLite")
    put(c + "wav_as_corpus.jsonl", wav(), "error", "WAV")
    put(c + "random_binary.jsonl", bytes(range(256)) * 4, "error", "binary")
    put(c + "parquet_garbage.parquet", b"PAR1" + b"garbage" * 10, "error", "cannot read parquet")
    put(c + "unsupported.xlsx", b"PK\x03\x04", "error", "unsupported corpus format")
    put(c + "no_extension", jl(art(1)), "error", "unsupported corpus format")
    put(c + "malformed.jsonl", '{"id": "en-1", "language": "en", "text": "a"\n', "error", "malformed JSON", "row 1")
    put(c + "trailing_comma.jsonl", '{"id": "en-1", "language": "en", "text": "a",}\n', "error", "malformed JSON")
    put(c + "deep_nesting.jsonl", "[" * 20_000 + "]" * 20_000 + "\n", "error", "row 1")
    put(c + "huge_int.jsonl", '{"id": ' + "9" * 5000 + ', "language": "en", "text": "a"}\n', "error", "row 1")
    put(c + "dup_key.jsonl", '{"id": "en-1", "id": "en-2", "language": "en", "text": "a"}\n', "error", "appears twice")
    put(c + "array_row.jsonl", '["en-1", "en", "text"]\n', "error", "expected an object")
    put(c + "scalar_row.jsonl", '"just a string"\n', "error", "expected an object")
    put(c + "id_number.jsonl", jl(art(1, id=42)), "error", "field 'id'", "a number")
    put(c + "text_list.jsonl", jl(art(1, text=["a", "b"])), "error", "field 'text'", "a list")
    put(c + "text_object.jsonl", jl(art(1, text={"a": 1})), "error", "field 'text'", "an object")
    put(c + "text_bool.jsonl", jl(art(1, text=True)), "error", "a boolean")
    put(c + "text_null.jsonl", jl(art(1, text=None)), "error", "missing or empty")
    put(c + "text_blank.jsonl", jl(art(1, text="   ")), "error", "missing or empty")
    put(
        c + "lone_surrogate.jsonl", '{"id": "en-1", "language": "en", "text": "a\\ud800b"}\n', "error", "lone surrogate"
    )
    put(c + "bad_language.jsonl", jl(art(1, language="de")), "error", "unsupported language code 'de'")
    put(c + "dup_id.jsonl", jl(art(1), art(1)), "error", "duplicate id 'en-1'")
    put(
        c + "derived_id_collision.jsonl",
        jl(art(1, id="x"), art(2, id="x~context_inconsistency~mild")),
        "error",
        "row 2",
        "row 1",
        "x~context_inconsistency~mild",
        "rewrite of article 'x'",
    )
    put(
        c + "derived_id_collision_first.jsonl",
        jl(art(1, id="a~fabrication~severe"), art(2, id="a")),
        "error",
        "row 1",
        "row 2",
        "rewrite of article 'a'",
    )
    put(
        c + "derived_id_collision.csv",
        "id,language,text\ny,en,a\ny~contradiction~moderate,en,b\n",
        "error",
        "rewrite of article 'y'",
    )
    put(c + "optional_number.jsonl", jl(art(1, topic=7)), "error", "field 'topic'")
    put(
        c + "field_too_big.jsonl",
        jl(art(1, text="x" * 2000)),
        "error",
        "over the per-field limit",
        env={"HALLUSCOPE_MAX_FIELD_BYTES": "1000"},
    )
    put(
        c + "record_too_many_lines.csv",
        'id,language,text\nen-1,en,"' + "a line of prose\n" * 30 + '"\n',
        "error",
        "spans 31 physical lines",
        env={"HALLUSCOPE_MAX_FIELD_LINES": "20"},
    )
    put(
        c + "file_too_big.jsonl",
        jl(*rows3),
        "error",
        "over the per-file limit",
        env={"HALLUSCOPE_MAX_FILE_BYTES": "100"},
    )
    put(c + "cr_only.csv", "id,language,text\ren-1,en,a\r", "error", "CR only")
    put(
        c + "nested_quotes_many_lines.csv",
        'id,language,text\nen-1,en,"' + "\n".join(f"en-{i},en,row {i}" for i in range(2, 30)) + '"\n',
        "error",
        "look like rows",
    )


def config() -> None:
    c = "config/"
    put(c + "ok.toml", '[openai]\nbase_url = "http://127.0.0.1:9/v1"\n', "ok")
    put(c + "ok.json", '{"openai": {"base_url": "http://127.0.0.1:9/v1"}}', "ok")
    put(c + "ok_bom.json", b"\xef\xbb\xbf" + b'{"openai": {"base_url": "http://127.0.0.1:9/v1"}}', "ok")
    put(
        c + "cp1251.toml",
        '# Конфигурация\n[openai]\nbase_url = "http://x/v1"\n'.encode("cp1251"),
        "error",
        "not UTF-8",
        "cp1251",
    )
    put(c + "binary.toml", bytes(range(256)) * 3, "error", "binary")
    put(c + "random.json", bytes((i * 7919) % 256 for i in range(600)), "error")
    put(c + "utf16.json", '{"openai": {}}'.encode("utf-16"), "error", "UTF-16")
    put(c + "deep.json", "[" * 100_000 + "]" * 100_000, "error", "nested too deeply")
    put(c + "deep_objects.json", '{"a": ' * 20_000 + "1" + "}" * 20_000, "error", "nested too deeply")
    put(c + "deep.toml", "a = " + "[" * 20_000 + "]" * 20_000 + "\n", "error", "nested too deeply")
    put(c + "bad.toml", "[openai\nbase_url = 1\n", "error", "cannot parse")
    put(c + "bad.json", '{"openai": ', "error", "cannot parse")
    put(c + "api_key.toml", '[openai]\napi_key = "sk-secret"\n', "error", "keys are never read from config files")
    put(c + "nested_token.json", '{"models": {"x": {"token": "t"}}}', "error", "'token' found")
    put(c + "gzip.toml", b"\x1f\x8b\x08\x00" + bytes(30), "error", "gzip")
    put(c + "huge_int.json", '{"x": ' + "9" * 5000 + "}", "error", "cannot parse")


def wavs() -> None:
    c = "wav/"
    import numpy as np
    import soundfile as sf

    put(c + "ok_16k_mono.wav", wav(), "ok", n=1)
    put(c + "ok_stereo.wav", wav(ch=2), "ok", n=1)
    put(c + "ok_8k.wav", wav(rate=8000), "ok", n=1)
    put(c + "ok_streaming_size.wav", wav(declared=0xFFFFFFFF), "ok", n=1)
    put(c + "ok_espeak_size.wav", wav(declared=0x7FFFF000), "ok", n=1)
    for subtype, name in (("PCM_24", "ok_24bit.wav"), ("FLOAT", "ok_float.wav"), ("PCM_U8", "ok_8bit.wav")):
        b = io.BytesIO()
        sf.write(b, np.full(800, 0.1, dtype="float32"), 16000, format="WAV", subtype=subtype)
        put(c + name, b.getvalue(), "ok", n=1)
    b = io.BytesIO()
    sf.write(b, np.full(800, 0.1, dtype="float32"), 16000, format="FLAC")
    put(c + "ok.flac", b.getvalue(), "ok", n=1)
    put(c + "rate_zero.wav", wav(rate=0), "error", "0 Hz")
    put(c + "channels_zero.wav", wav(ch=0, data=b"\0" * 100), "error", "0 channel(s)")
    put(c + "stereo_6_bytes.wav", wav(ch=2, data=b"\1" * 6), "error", "not a whole number of 4-byte frames")
    put(c + "odd_bytes_mono.wav", wav(data=b"\1" * 7), "error", "not a whole number")
    put(c + "claims_1s_has_8_bytes.wav", wav(data=b"\0" * 8, declared=32000), "error", "truncated", "1.000 s")
    put(c + "claims_4gb.wav", wav(data=b"\0" * 8, declared=4_000_000_000), "error", "truncated")
    put(c + "claims_2x.wav", wav(declared=6400), "error", "truncated")
    put(c + "24bit_truncated.wav", wav(width=3, data=b"\0" * 30, declared=48000), "error", "truncated")
    put(c + "no_data.wav", wav(data=b""), "error", "no audio samples")
    put(c + "no_fmt_chunk.wav", wav(fmt=False), "error", "no 'fmt ' chunk")
    put(c + "no_data_chunk.wav", wav(data_chunk=False), "error", "no 'data' chunk")
    put(c + "riff_only.wav", b"RIFF", "error")
    put(c + "header_only.wav", wav()[:44], "error")
    put(c + "garbage_after_riff.wav", b"RIFF\x00\x00\x00\x00WAVEjunkjunkjunk", "error")
    put(c + "mp3_named_wav.wav", b"ID3\x03\x00\x00\x00\x00\x00\x00" + bytes(200), "error", "not a readable")
    put(c + "text_named_wav.wav", "this is not audio\n", "error", "not a readable")
    put(c + "empty.wav", b"", "error", "not a readable")
    put(c + "unknown_format_tag.wav", wav(fmt_tag=0x1234), "error", "not a readable")


def manifests() -> None:
    c = "manifest/"
    head = "id,domain,source,audio,description\n"
    put(c + "bad_domain.csv", head + "c1,video,s,../wav/ok_16k_mono.wav,a dog barks\n", "error", "domain 'video'")
    put(
        c + "dup_clip.csv",
        head + "c1,sound,s,../wav/ok_16k_mono.wav,a\nc1,sound,s,../wav/ok_16k_mono.wav,b\n",
        "error",
        "duplicate clip id 'c1'",
    )
    put(c + "missing_audio_file.csv", head + "c1,sound,s,nowhere.wav,a dog barks\n", "error", "not found")
    put(c + "audio_is_dir.csv", head + "c1,sound,s,../wav,a dog barks\n", "error", "field 'audio'")
    put(c + "lying_wav.csv", head + "c1,sound,s,../wav/claims_1s_has_8_bytes.wav,a dog\n", "error", "truncated")
    put(
        c + "unclosed_quote.csv",
        head + 'c1,sound,s,../wav/ok_16k_mono.wav,"a dog\nc2,sound,s,x.wav,b\n',
        "error",
        "never closes",
    )
    put(
        c + "missing_column.csv", "id,domain,audio,description\nc1,sound,x.wav,a\n", "error", "missing column(s) source"
    )
    put(
        c + "ok.csv",
        head + "c1,sound,s,../wav/ok_16k_mono.wav,a dog barks\nc2,music,s,../wav/ok_stereo.wav,a piano\n",
        "ok",
        n=2,
    )


def closedform() -> None:
    c = "closedform/"
    put(c + "clips/a.wav", wav(), "ok", n=None)
    EXPECTED.pop(c + "clips/a.wav")  # a clip the sets point at, not a case of its own
    row = {"prompt": "Is there a dog?", "reference": "yes", "subset": "s"}
    put(c + "ok.jsonl", jl({**row, "audio": "clips/a.wav"}), "ok", n=1)
    put(c + "dotdot.jsonl", jl({**row, "audio": "../../secret.wav"}), "error", "row 1", "outside", "never read")
    put(c + "absolute.jsonl", jl({**row, "audio": "/etc/passwd"}), "error", "row 1", "outside")
    put(c + "dotdot_inside_then_out.jsonl", jl({**row, "audio": "clips/../../wav/ok_16k_mono.wav"}), "error", "outside")
    put(c + "home.jsonl", jl({**row, "audio": "~/secret.wav"}), "error", "outside")
    put(c + "no_audio.jsonl", jl(row), "error", "no audio path")
    put(
        c + "yesno_dotdot.tsv",
        "entry_id\taudio_index\tprompt_text\n1\t../../../etc/shadow\tIs there a cat?\n",
        "error",
        "outside",
    )


def main() -> None:
    if HERE.exists():
        shutil.rmtree(HERE)
    corpus()
    config()
    wavs()
    manifests()
    closedform()
    (HERE / "expected.json").write_text(json.dumps(EXPECTED, indent=1, ensure_ascii=False, sort_keys=True) + "\n")
    print(f"{len(EXPECTED)} cases in {HERE}")


if __name__ == "__main__":
    main()
