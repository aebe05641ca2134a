"""The seed 000 App. A protocol as data: quality dimensions per type, rating scales, full-text markers.

Rating words in English, Russian (both grammatical genders the templates use) and Kazakh map to 1..5
(Very Low = 1 ... Very High = 5). The Kazakh words are also accepted without their Kazakh-specific
letters ("те тмен", "Жоары"), the form in which the spec's text renders them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from halluscope.core.records import HallucinationType

__all__ = [
    "DIMENSION_ORDER",
    "DIMENSIONS",
    "Dimension",
    "dimension_for_label",
    "full_text_markers",
    "rating_value",
    "scale_phrases",
]


@dataclass(frozen=True)
class Dimension:
    """One quality dimension: abbreviation, the name the prompts use, and names models translate it to."""

    abbr: str
    name: str
    aliases: tuple[str, ...] = ()


_FA = (
    "фактическая точность",
    "фактологическая точность",
    "точность фактов",
    "фактическая достоверность",
    "фактілік дәлдік",
    "фактілік дұрыстық",
    "нақтылық",
    "деректік дәлдік",
)
_CR = (
    "достоверность",
    "правдоподобие",
    "правдоподобность",
    "убедительность",
    "надежность",
    "надёжность",
    "сенімділік",
    "нанымдылық",
    "шынайылық",
)
_FL = (
    "беглость",
    "плавность",
    "гладкость",
    "читабельность",
    "стилистическая гладкость",
    "еркіндік",
    "тілдік еркіндік",
    "оқылымдылық",
    "ағындылық",
    "жатықтық",
    "тегістік",
)
_CO = (
    "связность",
    "когерентность",
    "целостность",
    "согласованность",
    "үйлесімділік",
    "байланыстылық",
    "біртұтастық",
    "когеренттілік",
)
_RE = (
    "релевантность",
    "актуальность",
    "соответствие оригиналу",
    "соответствие исходной новости",
    "өзектілік",
    "релеванттылық",
    "түпнұсқаға сәйкестік",
)
_SA = (
    "удовлетворенность",
    "удовлетворённость",
    "соответствие уровню",
    "удовлетворение",
    "қанағаттану",
    "қанағаттанушылық",
    "деңгейге сәйкестік",
    "деңгейіне қанағаттану",
)
_AT = (
    "адекватность типа",
    "соответствие типу",
    "адекватность вида",
    "адекватность типу",
    "түрдің сәйкестігі",
    "түрге сәйкестік",
    "типтің сәйкестігі",
    "типке сәйкестік",
    "түрінің сәйкестігі",
)
_IC = (
    "внутренняя согласованность",
    "внутренняя последовательность",
    "внутренняя непротиворечивость",
    "ішкі үйлесімділік",
    "ішкі сәйкестік",
    "ішкі жүйелілік",
    "ішкі бірізділік",
)
_LC = (
    "логическая связность",
    "логическая последовательность",
    "логическая согласованность",
    "логикалық байланыс",
    "логикалық үйлесімділік",
    "логикалық жүйелілік",
    "логикалық бірізділік",
)

# seed 000, App. A.2: type-dependent dimension sets (seven per type, nine in all)
DIMENSIONS: dict[HallucinationType, tuple[Dimension, ...]] = {
    "contradiction": (
        Dimension("FA", "Factual accuracy", _FA),
        Dimension("Cr", "Credibility", _CR),
        Dimension("Fl", "Fluency", _FL),
        Dimension("Co", "Coherence", _CO),
        Dimension("Re", "Relevance", _RE),
        Dimension("Sa", "Satisfaction with contradiction level", ("satisfaction",) + _SA),
        Dimension("AT", "Adequacy of type", ("adequacy",) + _AT),
    ),
    "fabrication": (
        Dimension("FA", "Factual accuracy", _FA),
        Dimension("Cr", "Credibility", _CR),
        Dimension("Fl", "Fluency", _FL),
        Dimension("Co", "Coherence", _CO),
        Dimension("Re", "Relevance", _RE),
        Dimension("Sa", "Satisfaction with fabrication level", ("satisfaction",) + _SA),
        Dimension("AT", "Adequacy of type", ("adequacy",) + _AT),
    ),
    "context_inconsistency": (
        Dimension("IC", "Internal Consistency", _IC),
        Dimension("LC", "Logical Coherence", _LC),
        Dimension("Fl", "Fluency", _FL),
        Dimension("Co", "Overall Coherence", ("coherence",) + _CO),
        Dimension("Re", "Relevance to Original News", ("relevance",) + _RE),
        Dimension("Sa", "Satisfaction with Inconsistency Level", ("satisfaction",) + _SA),
        Dimension("AT", "Adequacy of Inconsistency Type", ("adequacy",) + _AT),
    ),
}
# seed 000, section 3.4: the order in which the nine dimensions are listed
DIMENSION_ORDER = ("AT", "Fl", "Co", "LC", "IC", "Cr", "FA", "Re", "Sa")

_SCALES: dict[str, list[tuple[str, int]]] = {
    "en": [(r"very\s+low", 1), (r"low", 2), (r"medium", 3), (r"moderate", 3), (r"high", 4), (r"very\s+high", 5)],
    "ru": [(r"очень\s+низк\w*", 1), (r"низк\w*", 2), (r"средн\w*", 3), (r"высок\w*", 4), (r"очень\s+высок\w*", 5)],
    "kk": [
        (r"өте\s+төмен\w*", 1),
        (r"төмен\w*", 2),
        (r"орташа\w*", 3),
        (r"жоғары\w*", 4),
        (r"өте\s+жоғары\w*", 5),
        (r"те\s+тмен", 1),
        (r"тмен", 2),
        (r"жоары", 4),
        (r"те\s+жоары", 5),
    ],
}


def scale_phrases(language: str) -> list[tuple[str, int]]:
    """Rating patterns for a language ('any': all three), English always included, longest first."""
    if language == "any":
        pairs = [p for lang in ("en", "ru", "kk") for p in _SCALES[lang]]
    else:
        pairs = _SCALES["en"] + ([] if language == "en" else _SCALES.get(language, []))
    return sorted(pairs, key=lambda p: -len(p[0]))


def _scale_re(language: str) -> re.Pattern[str]:
    alts = "|".join(f"(?P<r{i}>{p})" for i, (p, _) in enumerate(scale_phrases(language)))
    return re.compile(rf"(?<!\w)(?:{alts})(?!\w)", re.IGNORECASE)


_SCALE_RE = {lang: _scale_re(lang) for lang in ("en", "ru", "kk", "any")}


def rating_value(value: object, language: str = "en", *, leading: bool = False) -> int | None:
    """The first rating word in a value (or a bare integer 1..5) as 1..5; None when there is none.

    With ``leading`` the word must open the value ("Low - the text ..."), not merely occur in it.
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if 1 <= value <= 5 else None
    if isinstance(value, float) and value.is_integer():
        return rating_value(int(value), language)
    if not isinstance(value, str):
        return None
    text = value.replace("ё", "е").replace("Ё", "Е")
    scale = _SCALE_RE.get(language, _SCALE_RE["en"])
    m = scale.match(text.lstrip(" \t*_-—–:(\"'«")) if leading else scale.search(text)
    if m:
        phrases = scale_phrases(language)
        return next(phrases[int(k[1:])][1] for k, v in m.groupdict().items() if v is not None)
    bare = re.fullmatch(r"\s*([1-5])(?:\s*/\s*5)?\s*\.?\s*", text)
    return int(bare.group(1)) if bare else None


def count_ratings(text: str, language: str) -> int:
    """How many rating words a string holds (a line listing the whole scale holds five)."""
    return len(_SCALE_RE.get(language, _SCALE_RE["en"]).findall(text))


def _norm(label: str) -> str:
    label = re.sub(r"[^\w\s]", " ", label.lower().replace("ё", "е").replace("_", " "))
    return " ".join(label.split())


def dimension_for_label(label: str, type: HallucinationType) -> Dimension | None:
    """The dimension of a type that a label names: abbreviation, English name or a known translation."""
    norm = _norm(label)
    if not norm:
        return None
    best: tuple[int, Dimension] | None = None
    for dim in DIMENSIONS[type]:
        if norm == dim.abbr.lower():
            return dim
        for name in (dim.name, *dim.aliases):
            n = _norm(name)
            if n and re.search(rf"(?<!\w){re.escape(n)}(?!\w)", norm) and (best is None or len(n) > best[0]):
                best = (len(n), dim)
    return best[1] if best else None


# seed 000, App. A.1: the rewritten text follows the localized "(full text)" header
_MARKERS = {
    "en": [r"\(\s*full\s+text\s*\)"],
    "ru": [r"\(\s*полный\s+текст(?:\s+на\s+русском\s+языке)?\s*\)"],
    "kk": [r"\(\s*толық\s+мәтін(?:і)?(?:\s+қазақ\s+тілінде)?\s*\)", r"\(\s*толы\s+мтн(?:\s+аза\s+тлнде)?\s*\)"],
}


def full_text_markers(language: str) -> re.Pattern[str]:
    """The language's markers plus the English one (models often keep the English header)."""
    pats = _MARKERS["en"] + ([] if language == "en" else _MARKERS.get(language, []))
    return re.compile("|".join(pats), re.IGNORECASE)
