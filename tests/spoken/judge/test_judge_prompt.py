"""The App. A.2 judge prompt, its type-dependent dimensions and the reading of judge replies."""

import pytest

from halluscope.core.records import Variant
from halluscope.spoken.judge import judge_messages, parse_judgement, stratified_sample


def test_prompt_carries_the_type_dependent_seven_dimensions():
    p = judge_messages(original="ORIG", rewritten="NEW", type="context_inconsistency", severity="moderate")[0].content
    assert p.startswith("You are a professional news-quality evaluator (judge only; do NOT rewrite the article).")
    assert "TYPE: context_inconsistency\n" in p
    assert (
        "SEVERITY: moderate — Moderate context inconsistency: noticeable distortions of context/emphasis "
        "that change interpretation."
    ) in p
    assert (
        "Dimensions:\n- Internal Consistency\n- Logical Coherence\n- Fluency\n- Overall Coherence\n"
        "- Relevance to Original News\n- Satisfaction with Inconsistency Level\n- Adequacy of Inconsistency Type\n"
    ) in p
    assert '{"Internal Consistency", "Logical Coherence", "Fluency",' in p
    assert p.rstrip().endswith("ORIGINAL:\nORIG\n\nREWRITTEN:\nNEW")
    fab = judge_messages(original="o", rewritten="n", type="fabrication", severity="severe")[0].content
    assert "- Factual accuracy\n- Credibility\n" in fab and "- Satisfaction with fabrication level\n" in fab
    assert "significantly contradict real-world knowledge" in fab
    assert "Internal Consistency" not in fab


FAB = [
    "Factual accuracy",
    "Credibility",
    "Fluency",
    "Coherence",
    "Relevance",
    "Satisfaction with fabrication level",
    "Adequacy of type",
]


def test_reads_json_in_fences_and_verbal_ratings_in_three_languages():
    words = ["Very Low", "low", "Средняя", "Жоғары", "Өте жоғары", "очень низкий", "те тмен"]
    body = ", ".join(f'"{k}": "{w}"' for k, w in zip(FAB, words))
    scores, why = parse_judgement("Sure.\n```json\n{" + body + "}\n```", "fabrication")
    assert why is None
    assert scores == {"FA": 1, "Cr": 2, "Fl": 3, "Co": 4, "Re": 5, "Sa": 1, "AT": 1}


def test_abbreviations_integers_and_lenient_json():
    scores, why = parse_judgement(
        "{'FA': 1, 'Cr': 2, 'Fl': 3, 'Co': 4, 'Re': 5, 'Sa': 4, 'AT': 'High',}", "contradiction"
    )
    assert why is None and scores["AT"] == 4 and scores["FA"] == 1


@pytest.mark.parametrize(
    "reply,reason",
    [
        ("I cannot rate this.", "no JSON object"),
        ('{"Factual accuracy": "Low", "Credibility": "Excellent"}', "no readable rating for Cr, Fl, Co, Re, Sa, AT"),
        # a missing closing brace is tolerated (issue 12): FA is read, the rest is missing
        ('{"Factual accuracy": "Low", broken', "no readable rating for Cr, Fl, Co, Re, Sa, AT"),
    ],
)
def test_unreadable_replies_give_a_reason(reply, reason):
    scores, why = parse_judgement(reply, "fabrication")
    assert scores == {} and reason in why


def test_the_last_rating_per_dimension_wins_and_negated_ratings_do_not_count():
    draft = ", ".join(f'"{k}": "Low"' for k in FAB)
    final = ", ".join(f'"{k}": "High"' for k in FAB)
    scores, why = parse_judgement(f"Draft: {{{draft}}}\nOn reflection, the final ratings: {{{final}}}", "fabrication")
    assert why is None and set(scores.values()) == {4}
    negated = final.replace('"Fluency": "High"', '"Fluency": "not high"')
    scores, why = parse_judgement("{" + negated + "}", "fabrication")
    assert scores == {} and "Fl" in why and "negated" in why


def test_stratified_sample_per_cell_is_seeded_and_reports_short_cells():
    vs = [
        Variant(
            id=f"{lang}{i}~{t}~{s}",
            article_id=f"{lang}{i}",
            language=lang,
            text="t",
            label=1,
            type=t,
            severity=s,
            generator="g",
        )
        for lang in ("en", "kk")
        for i in range(5)
        for t in ("fabrication", "contradiction")
        for s in ("mild", "severe")
    ]
    vs.append(Variant(id="en9", article_id="en9", language="en", text="t", label=0, generator="original"))
    a = stratified_sample(vs, per_cell=3, seed=1)
    assert len(a.ids) == 2 * 2 * 2 * 3 and "en9" not in a.ids
    assert a == stratified_sample(list(reversed(vs)), per_cell=3, seed=1)
    assert a.ids != stratified_sample(vs, per_cell=3, seed=2).ids
    assert a.cells[("fabrication", "mild", "en")] == (5, 3)
    assert a.short_cells[("context_inconsistency", "mild", "kk")] == (0, 0)
    assert len(stratified_sample(vs, per_cell=8, seed=1).ids) == len(vs) - 1
