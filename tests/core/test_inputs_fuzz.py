"""Fuzz: no byte string and no JSON value makes any input reader fail with anything but the tool's own error.

Deterministic (derandomize=True, no example database) and small enough for the default suite; raise
HALLUSCOPE_FUZZ_EXAMPLES for a longer run.
"""

import json
import os
import tempfile
from pathlib import Path

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import (  # noqa: E402
    HealthCheck,
    given,
    settings,
    strategies as st,  # noqa: E402
)

from halluscope.core.errors import HalluscopeError  # noqa: E402
from halluscope.core.inputs import FORMATS, Field, read_json, read_rows, read_text  # noqa: E402

EXAMPLES = int(os.environ.get("HALLUSCOPE_FUZZ_EXAMPLES", "60"))
FUZZ = settings(
    max_examples=EXAMPLES, derandomize=True, database=None, deadline=None, suppress_health_check=list(HealthCheck)
)
FIELDS = (
    Field("id"),
    Field("language"),
    Field("text"),
    Field("flag", "bool", required=False),
    Field("n", "scalar", required=False),
    Field("note", required=False, empty_ok=True),
)
SUFFIX = {"jsonl": ".jsonl", "csv": ".csv", "tsv": ".tsv", "parquet": ".parquet"}
_DIR = tempfile.TemporaryDirectory(prefix="halluscope-fuzz-")


def _file(name: str, data: bytes) -> Path:
    path = Path(_DIR.name) / name
    path.write_bytes(data)
    return path


def _only_our_errors(fn, *args, **kwargs):
    try:
        fn(*args, **kwargs)
    except HalluscopeError:
        pass  # anything else (UnicodeDecodeError, KeyError, RecursionError, pyarrow's errors ...) fails the test


# hostile-looking bytes: random, or text-like with the odd invalid byte, BOMs, CR, NUL, quotes and delimiters
_pieces = st.sampled_from(
    [
        b"\xef\xbb\xbf",
        b"\r\n",
        b"\n",
        b"\r",
        b"\x00",
        b'"',
        b",",
        b"\t",
        b"{",
        b"}",
        b"[",
        b"#",
        b"\xe9",
        b"\xff\xfe",
        b"PAR1",
        b"id,language,text\n",
        b'{"id": "a", "language": "en", "text": "t"}\n',
        "Привет".encode(),
        "Сәлем".encode("utf-8")[:3],
        b"\\ud800",
        b"[" * 5000,
        b"9" * 5000,
    ]
)
_known = st.sampled_from(
    [
        b"[" * 5000,
        b'{"id": ' * 3000,
        b"9" * 5000,
        b'{"id": 1e999999}',
        b"\xef\xbb\xbf",
        b"\r",
        '{"id": "1"}'.encode("utf-16"),
        b'{"text": "\\udc00"}',
        b"\n" * 50,
        b'""",""\n',
    ]
)
hostile_bytes = st.one_of(
    _known, st.binary(max_size=300), st.lists(st.one_of(_pieces, st.binary(max_size=8)), max_size=30).map(b"".join)
)

# any code point, lone surrogates included (json.dumps writes them as \\udXXX escapes)
texts = st.one_of(
    st.text(st.characters(exclude_categories=()), max_size=20),
    st.sampled_from(["\ud800", "a\udfffb", "\x00", " ", "", "id", "text", "../x"]),
)
json_scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True, allow_infinity=True), texts)
json_values = st.recursive(
    json_scalars, lambda c: st.lists(c, max_size=3) | st.dictionaries(texts, c, max_size=3), max_leaves=8
)
# records that look like the real thing, with any JSON value in any field
records = st.one_of(
    json_values,
    st.fixed_dictionaries(
        {
            "id": json_values,
            "language": st.sampled_from(["en", "ru", "kk", "kz", "xx", ""]) | json_values,
            "text": json_values,
        },
        optional={
            "topic": json_values,
            "translated": json_values,
            "domain": st.sampled_from(["music", "sound"]) | json_values,
            "source": json_values,
            "audio": json_values,
            "description": json_values,
            "reference": json_values,
            "hypothesis": json_values,
            "prompt": json_values,
            "question": json_values,
            "index": json_values,
            "question_id": json_values,
            "rubric": json_values,
            "flag": json_values,
            "n": json_values,
        },
    ),
)


def _jsonl(rows, ensure_ascii: bool) -> bytes:
    # surrogatepass: a lone surrogate in a text becomes the invalid UTF-8 a careless writer produces
    return "".join(json.dumps(r, ensure_ascii=ensure_ascii) + "\n" for r in rows).encode("utf-8", "surrogatepass")


@FUZZ
@given(data=hostile_bytes, fmt=st.sampled_from(FORMATS))
def test_any_bytes_in_any_format(data, fmt):
    from halluscope.closedform.run import load_rows

    _only_our_errors(read_rows, _file("f" + SUFFIX[fmt], data), FIELDS, what="fuzz file")
    _only_our_errors(read_rows, _file("c.txt", data), FIELDS, what="fuzz file", format="tsv", comments=True)
    _only_our_errors(load_rows, "yesno", [_file("q.txt", b"entry_id\taudio_index\tprompt_text\n" + data)], None)


@FUZZ
@given(data=hostile_bytes)
def test_any_bytes_as_a_json_document_or_text(data):
    _only_our_errors(read_json, _file("d.json", data), what="fuzz document")
    _only_our_errors(read_text, _file("d.txt", data), what="fuzz text")


@FUZZ
@given(body=hostile_bytes)
def test_any_bytes_after_a_valid_csv_header(body):
    from halluscope.spoken.corpus import load_articles
    from halluscope.spoken.realworld import load_fakes

    path = _file("c.csv", b"id,language,text,translated\r\n" + body)
    _only_our_errors(load_articles, path)
    _only_our_errors(load_fakes, path)


@FUZZ
@given(rows=st.lists(records, max_size=4), ensure_ascii=st.booleans())
def test_any_json_values_in_every_row_loader(rows, ensure_ascii):
    from halluscope.closedform.run import load_rows
    from halluscope.metrics.scoring import score_asr_file
    from halluscope.mishap.clips import load_manifest
    from halluscope.mishap.evidence import FtsEvidence
    from halluscope.spoken.corpus import load_articles
    from halluscope.spoken.realworld import load_fakes

    path = _file("r.jsonl", _jsonl(rows, ensure_ascii))
    for loader in (load_articles, load_fakes, score_asr_file, load_manifest, FtsEvidence):
        _only_our_errors(loader, path)
    for fmt in ("halluaudio", "aha"):
        _only_our_errors(load_rows, fmt, [path], None)


@FUZZ
@given(
    doc=st.one_of(
        json_values,
        st.fixed_dictionaries(
            {
                "context": st.lists(records, max_size=7) | json_values,
                "knowledge": st.lists(records, max_size=7) | json_values,
            }
        ),
    )
)
def test_any_json_document_as_judge_examples(doc):
    from halluscope.mishap.judge import load_examples

    _only_our_errors(load_examples, _file("examples.json", json.dumps(doc).encode("utf-8", "surrogatepass")))
