"""The App. A.3 reply parser on awkward replies: prose, several objects, wrong keys, ru/kk, refusals, empties."""

import pytest

from halluscope.spoken.detect.zeroshot import label_of, messages
from halluscope.spoken.detect.zeroshot_parse import parse_reply

CASES = [
    # (reply, task, status, answer)
    ('{"binary": "yes"}', "binary", "ok", "yes"),
    ('Sure! After listening carefully: {"binary": "No"}. Let me know if you need more.', "binary", "ok", "no"),
    ('```json\n{"binary": "yes"}\n```', "binary", "ok", "yes"),
    ('Output format: {"binary": "yes/no"}\nStep 1: the rate... Final: {"binary": "yes"}', "binary", "ok", "yes"),
    ('{"binary": "yes"}\n\nOn reflection: {"binary": "no"}', "binary", "ok", "no"),
    ('{"hallucination": "yes"}', "binary", "ok", "yes"),
    ('{"answer": true}', "binary", "ok", "yes"),
    ('{"ответ": "Нет"}', "binary", "ok", "no"),
    ('{"binary": "да"}', "binary", "ok", "yes"),
    ('{"binary": "иә"}', "binary", "ok", "yes"),
    ('{"binary": "жоқ"}', "binary", "ok", "no"),
    ("{'binary': 'yes',}", "binary", "ok", "yes"),
    ('The answer is "binary": "no" as requested', "binary", "ok", "no"),
    ('{"result": {"binary": "yes"}}', "binary", "ok", "yes"),
    ('{"binary": "maybe"}', "binary", "unparsable", None),
    ("yes", "binary", "unparsable", None),
    ("", "binary", "unparsable", None),
    ("   \n", "binary", "unparsable", None),
    (None, "binary", "unparsable", None),
    ('{"binary": ', "binary", "unparsable", None),
    ("I'm sorry, but I cannot listen to audio files.", "binary", "refusal", None),
    ("Please provide the audio so I can analyze it.", "binary", "refusal", None),
    ("К сожалению, я не могу прослушать аудио.", "binary", "refusal", None),
    ("Кешіріңіз, мен аудионы тыңдай алмаймын.", "binary", "refusal", None),
    ('{"type": "factual_fabrication"}', "type", "ok", "fabrication"),
    ('{"type": "Factual Contradiction"}', "type", "ok", "contradiction"),
    ('{"hallucination_type": "contextual_inconsistency"}', "type", "ok", "context_inconsistency"),
    ('{"тип": "противоречие"}', "type", "ok", "contradiction"),
    ('{"type": "none"}', "type", "ok", "none"),
    ('{"type": "factual_contradiction/factual_fabrication/contextual_inconsistency/none"}', "type", "unparsable", None),
    ('{"degree": "moderate"}', "severity", "ok", "moderate"),
    ('{"severity": "Severe"}', "severity", "ok", "severe"),
    ('{"степень": "умеренная"}', "severity", "ok", "moderate"),
    ('{"дәреже": "жеңіл"}', "severity", "ok", "mild"),
    ('{"degree": "none"}', "severity", "ok", "none"),
    ('{"binary": "yes"}', "severity", "unparsable", None),  # an answer to another task is no answer
]


@pytest.mark.parametrize("reply,task,status,answer", CASES)
def test_awkward_replies(reply, task, status, answer):
    p = parse_reply(reply, task)
    assert (p.status, p.answer) == (status, answer), p
    if status != "ok":
        assert p.reason


def test_none_and_labels_never_fold_into_a_class():
    assert label_of("binary", "yes") == "hallucinated" and label_of("binary", "no") == "original"
    assert label_of("type", "none") is None and label_of("severity", "none") is None
    assert label_of("type", "fabrication") == "fabrication"


def test_prompts_follow_the_appendix():
    audio = messages("binary", medium="audio", prompting="direct", system="qwen-omni", text=None)
    assert audio[0].role == "system" and audio[0].content.startswith("You are Qwen, a virtual human")
    assert "analyzing audio content" in audio[1].content and "Text to analyze" not in audio[1].content
    assert audio[1].content.endswith('Output format: {"binary": "yes/no"}')
    text = messages("severity", medium="text", prompting="cot", system=None, text="Prices rose.")
    assert len(text) == 1 and "think step-by-step about the severity" in text[0].content
    assert "audio" not in text[0].content and text[0].content.endswith("Text to analyze: Prices rose.")
    assert '{"degree": "mild/moderate/severe/none"}' in text[0].content
