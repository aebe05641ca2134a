"""JSON as models write it: every tolerance the reply reader promises, and records for JSON Lines replies."""

import pytest

from halluscope.reply import json_records, json_values, last_json, objects


@pytest.mark.parametrize(
    "reply,expected",
    [
        ('{"a": "x"}', {"a": "x"}),
        ("{'a': 'x'}", {"a": "x"}),  # single quotes
        ('{"a": "x",}', {"a": "x"}),  # trailing comma
        ('{"a": True, "b": None}', {"a": True, "b": None}),  # Python literals
        ("{a: x}", {"a": "x"}),  # unquoted key and value
        ('{"a": "x"', {"a": "x"}),  # no closing brace
        ('```json\n{"a": "x"}\n```', {"a": "x"}),  # fenced, with the tag
        ('```\n{"a": "x"}\n```', {"a": "x"}),  # fenced, without it
        ('Sure! {"a": "x"} Hope this helps.', {"a": "x"}),
    ],
)
def test_tolerances(reply, expected):
    assert last_json(reply) == expected


def test_objects_in_order_with_nested_and_the_last_wins():
    text = 'draft {"a": 1} then {"b": {"a": 2}} and [{"q": "x"}]'
    assert objects(text) == [{"a": 1}, {"b": {"a": 2}}, {"a": 2}, {"q": "x"}]
    assert last_json(text, list) == [{"q": "x"}] and json_values("[music] is no JSON", list) == []
    assert last_json("no braces here") is None and last_json(None) is None


def test_json_records_for_jsonl_replies():
    recs, why = json_records(
        '```jsonl\n{"idx": 0, "cleaned": "a"}\n{"idx": 1, "cleaned": "b"}\n```', {"idx": int, "cleaned": str}
    )
    assert why is None and [r["idx"] for r in recs] == [0, 1]
    recs, why = json_records('{"idx": 0, "cleaned": "a"}\n{"idx": "1", "cleaned": "b"}', {"idx": int, "cleaned": str})
    assert recs is None and "idx (int)" in why
    assert json_records("nothing", {"idx": int}) == (None, "no JSON object in the reply")
