"""The offline 'rules' generator: deterministic, lexicon-driven rewrites by type x severity.

seed 000, App. A.1 definitions, realised with edits that keep word forms grammatical:
- contradiction: flip relations (antonyms), replace core entities, change amounts;
- fabrication: insert plausible unsupported statements; at mild, shift a date, name or place slightly;
- context inconsistency: swap causal/temporal connectives and emphasis, swap entity roles, reorder,
  insert number-free causal claims, while every number stays exactly as in the source (verified)
  and the length stays within +/-15% (the A.1 template's rule).
Only word forms listed in the language lexicon are substituted, always case-matched (Russian/Kazakh
paradigms), so Kazakh suffixes are never glued onto a different stem.
"""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path

from halluscope.core.errors import HalluscopeError, ItemError
from halluscope.core.hashing import derived_seed
from halluscope.core.records import Article, Change, HallucinationType, Severity, Variant
from halluscope.core.spec import options_model
from halluscope.spoken.generate.base import GENERATORS, variant_id

VERSION = 1
MIN_CHANGES = {"mild": 1, "moderate": 2, "severe": 4}
LENGTH_TOLERANCE = 0.15  # App. A.1, context inconsistency: output within +/-15% of the source length
_NUM = re.compile(
    r"(?<![\w.,])\d{1,3}(?:(?:,\d{3})+|(?:[ \u00a0]\d{3})+)?(?:[.,]\d+)?(?![\w]|[.,]\d)|(?<![\w.,])\d+(?:[.,]\d+)?(?![\w]|[.,]\d)"
)
_SENT = re.compile(r"(?<=[.!?])\s+(?=[\"'«“A-ZА-ЯЁӘҒҚҢӨҰҮҺІ0-9])")
DECIMAL_SEP = {"en": ".", "ru": ",", "kk": ","}


def numbers_in(text: str) -> Counter[str]:
    """Every numeric token as written (used to verify context-inconsistency rewrites)."""
    return Counter(m.group(0).replace("\u00a0", " ") for m in _NUM.finditer(text))


def split_sentences(text: str) -> list[str]:
    return [s for s in _SENT.split(text.strip()) if s.strip()]


@lru_cache(maxsize=None)
def load_lexicon(language: str, path: str | None = None) -> dict:
    if path is None:
        ref = resources.files("halluscope") / "spoken" / "generate" / "lexicon" / f"{language}.json"
        data = json.loads(ref.read_text(encoding="utf-8"))
    else:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    for key in (
        "antonyms",
        "entities",
        "months",
        "connective_swaps",
        "intensity_swaps",
        "fabrication_sentences",
        "context_sentences",
        "severe_framing",
    ):
        if key not in data:
            raise HalluscopeError(f"lexicon for '{language}' lacks the key '{key}'")
    return data


@dataclass
class _Edit:
    kind: str
    start: int
    end: int
    after: str


@dataclass
class _Group:
    """Edits that stand or fall together (e.g. every mention of one entity replaced consistently)."""

    kind: str
    edits: list[_Edit]
    keeps_numbers: bool = True

    def span(self) -> list[tuple[int, int]]:
        return [(e.start, e.end) for e in self.edits]


@lru_cache(maxsize=65536)  # one pattern per lexicon form; re's own cache (512) thrashes on a lexicon this size
def _word_re(form: str) -> re.Pattern[str]:
    return re.compile(r"(?<!\w)" + re.escape(form) + r"(?!\w)")


def _cap(s: str) -> str:
    return s[:1].upper() + s[1:]


def _at_sentence_start(text: str, pos: int) -> bool:
    return re.fullmatch(r"\s*", text[:pos]) is not None or re.search(r"[.!?][\s\"'»”]*$", text[:pos]) is not None


def _occurrences(text: str, form: str) -> list[tuple[int, int, bool]]:
    """(start, end, capitalise-the-replacement) for the form and its capitalised variant."""
    found = [(m.start(), m.end(), _at_sentence_start(text, m.start())) for m in _word_re(form).finditer(text)]
    if _cap(form) != form:
        found += [(m.start(), m.end(), True) for m in _word_re(_cap(form)).finditer(text)]
    return found


@dataclass
class RulesGenerator:
    """Deterministic given (seed, article, type, severity); see the module docstring for the edits."""

    lexicon_dir: str | None = None
    tries: int = 8  # random edits drawn before the article is reported unalterable (not a model call)
    spec: str = field(default="rules", init=False)

    def config(self) -> dict:
        return {"generator": "rules", "version": VERSION, "lexicon_dir": self.lexicon_dir}

    def _lexicon(self, language: str) -> dict:
        path = None if self.lexicon_dir is None else str(Path(self.lexicon_dir) / f"{language}.json")
        return load_lexicon(language, path)

    # -- candidate edits on the source text ---------------------------------------------------
    def _pairs(self, text: str, pairs: list[list[str]], kind: str) -> list[_Group]:
        groups = []
        for a, b in pairs:
            for src, dst in ((a, b), (b, a)):
                for s, e, cap in _occurrences(text, src):
                    groups.append(_Group(kind, [_Edit(kind, s, e, _cap(dst) if cap else dst)]))
        return groups

    def _paradigm_hits(self, text: str, paradigms: list[dict]) -> dict[int, list[tuple[int, int, str, bool]]]:
        """entity index -> [(start, end, case, capitalised)] of its forms found in the text."""
        hits: dict[int, list[tuple[int, int, str, bool]]] = {}
        for idx, forms in enumerate(paradigms):
            seen: set[tuple[int, int]] = set()
            # longest forms first so 'Астананың' is not matched as 'Астана'
            for case, form in sorted(forms.items(), key=lambda kv: -len(kv[1])):
                for s, e, cap in _occurrences(text, form):
                    if any(s < e2 and s2 < e for s2, e2 in seen):
                        continue
                    seen.add((s, e))
                    hits.setdefault(idx, []).append((s, e, case, cap))
        return hits

    def _entity_replacements(
        self, text: str, lex: dict, rng: random.Random, classes: tuple[str, ...] | None = None
    ) -> list[_Group]:
        """Replace every mention of one entity by another entity of its class, case by case."""
        groups = []
        for cls, paradigms in lex["entities"].items():
            if classes is not None and cls not in classes:
                continue
            hits = self._paradigm_hits(text, paradigms)
            present = set(hits)
            for idx, occ in hits.items():
                others = [
                    j
                    for j in range(len(paradigms))
                    if j not in present and all(case in paradigms[j] for _, _, case, _ in occ)
                ]
                if not others:
                    continue
                j = rng.choice(others)
                edits = [
                    _Edit(f"entity:{cls}", s, e, _cap(paradigms[j][case]) if cap else paradigms[j][case])
                    for s, e, case, cap in occ
                ]
                groups.append(_Group(f"entity:{cls}", edits))
        return groups

    def _role_swaps(self, text: str, lex: dict) -> list[_Group]:
        """Swap two entities of one class that both occur in the article (relations change, facts stay)."""
        groups = []
        for cls, paradigms in lex["entities"].items():
            hits = self._paradigm_hits(text, paradigms)
            ids = sorted(hits)
            for x in range(len(ids)):
                for y in range(x + 1, len(ids)):
                    a, b = ids[x], ids[y]
                    if not all(c in paradigms[b] for *_, c, _ in hits[a]) or not all(
                        c in paradigms[a] for *_, c, _ in hits[b]
                    ):
                        continue
                    edits = [
                        _Edit("role_swap", s, e, _cap(paradigms[b][c]) if cap else paradigms[b][c])
                        for s, e, c, cap in hits[a]
                    ]
                    edits += [
                        _Edit("role_swap", s, e, _cap(paradigms[a][c]) if cap else paradigms[a][c])
                        for s, e, c, cap in hits[b]
                    ]
                    groups.append(_Group("role_swap", edits))
        return groups

    def _month_shifts(self, text: str, lex: dict) -> list[_Group]:
        """Move a date to the neighbouring month, same case (a 'slightly incorrect date')."""
        months = lex["months"]
        groups = []
        for idx, occ in self._paradigm_hits(text, months).items():
            for s, e, case, cap in occ:
                for step in (-1, 1):
                    new = months[(idx + step) % 12].get(case)
                    if new:
                        groups.append(_Group("date", [_Edit("date", s, e, _cap(new) if cap else new)]))
        return groups

    def _number_changes(self, text: str, language: str, rng: random.Random, *, slight: bool) -> list[_Group]:
        groups = []
        for m in _NUM.finditer(text):
            token = m.group(0)
            after_text = text[m.end() : m.end() + 2]
            if after_text.startswith("-") or after_text.startswith("%-"):
                continue  # a suffix is glued to the number (Kazakh '5-ке', Russian '5-й'): its form depends on the number
            new = _alter_number(token, language, rng, slight=slight)
            if new and new != token:
                groups.append(_Group("number", [_Edit("number", m.start(), m.end(), new)], keeps_numbers=False))
        return groups

    # -- sentence-level operations -------------------------------------------------------------
    def _fill(self, template: str, language: str, rng: random.Random, year: int) -> str:
        sep = DECIMAL_SEP[language]
        return template.format(
            num=str(rng.choice([5, 6, 7, 8, 9, 10, 12, 15, 20, 25, 30, 40, 50, 60, 75, 120, 150, 200, 250, 300, 500])),
            pct=f"{rng.randint(2, 40)}{sep}{rng.randint(1, 9)}",
            year=str(year + rng.randint(1, 3)),
        )

    def rewrite(self, article: Article, *, type: HallucinationType, severity: Severity, seed: int) -> Variant:
        lex = self._lexicon(article.language)
        last_reason = "no attempt"
        for attempt in range(self.tries):
            rng = random.Random(derived_seed(seed, article.id, type, severity, attempt))
            try:
                text, changes, checks = self._attempt(article, lex, type, severity, rng)
            except ItemError as exc:
                last_reason = str(exc)
                continue
            failed = [k for k, ok in checks.items() if not ok]
            if failed:
                last_reason = f"checks failed: {', '.join(failed)}"
                continue
            return Variant(
                id=variant_id(article.id, type, severity),
                article_id=article.id,
                language=article.language,
                text=text,
                label=1,
                type=type,
                severity=severity,
                generator=self.spec,
                seed=seed,
                changes=tuple(changes),
                checks=checks,
            )
        raise ItemError(
            f"rules generator could not make a {severity} {type} rewrite of article '{article.id}' "
            f"after {self.tries} attempts ({last_reason}); the article may lack alterable facts "
            "for this type, or extend the lexicon (RulesGenerator(lexicon_dir=...))"
        )

    def _attempt(self, article: Article, lex: dict, type: str, severity: str, rng: random.Random):
        text, lang = article.text, article.language
        need = MIN_CHANGES[severity]
        if type == "contradiction":
            pools = {
                "antonym": self._pairs(text, lex["antonyms"], "antonym"),
                "entity": self._entity_replacements(text, lex, rng),
                "number": self._number_changes(text, lang, rng, slight=False),
            }
        elif type == "fabrication":
            slight = self._month_shifts(text, lex) + self._number_changes(text, lang, rng, slight=True)
            # App. A.1 mild fabrication: 'slightly incorrect dates, locations, or names'
            names = self._entity_replacements(text, lex, rng, classes=("person", "city"))
            pools = {"slight": slight, "entity": names}
        else:  # context inconsistency: nothing here may touch a number
            pools = {
                "connective": self._pairs(text, lex["connective_swaps"], "connective"),
                "intensity": self._pairs(text, lex["intensity_swaps"], "intensity"),
                "role_swap": self._role_swaps(text, lex),
            }
            if severity == "severe":
                pools["antonym"] = self._pairs(text, lex["antonyms"], "antonym")
        sentences = split_sentences(text)
        bounds = _sentence_bounds(text, sentences)
        lead_end = bounds[0][1] if bounds else len(text)

        # token-level edits: mild wants 1, moderate 2, severe as many as available (at least need)
        token_target = {"mild": 1, "moderate": rng.randint(2, 3), "severe": max(need, 6)}[severity]
        if type == "fabrication":
            token_target = {"mild": 1, "moderate": 1, "severe": 2}[severity]
        chosen = _choose(
            pools,
            token_target,
            rng,
            prefer_lead=(severity == "severe"),
            lead_end=lead_end,
            avoid_lead=(severity == "mild"),
        )
        edits = sorted((e for g in chosen for e in g.edits), key=lambda e: e.start)
        changes: list[Change] = []
        out = text
        for e in reversed(edits):
            out = out[: e.start] + e.after + out[e.end :]
        for e in edits:
            changes.append(
                Change(kind=e.kind, before=text[e.start : e.end], after=e.after, sentence=_sentence_of(bounds, e.start))
            )
        # sentence-level operations
        out_sents = split_sentences(out)
        year = _article_year(article)
        if type == "fabrication":
            n_insert = {"mild": 0, "moderate": 2, "severe": 3}[severity]
            templates = rng.sample(lex["fabrication_sentences"], k=min(n_insert, len(lex["fabrication_sentences"])))
            for tpl in templates:
                sent = self._fill(tpl, lang, rng, year)
                pos = rng.randint(1, len(out_sents))
                out_sents.insert(pos, sent)
                changes.append(Change(kind="insert", before="", after=sent, sentence=min(pos, len(sentences)) - 1))
            if severity == "severe":
                framing = rng.choice(lex["severe_framing"])
                out_sents.append(framing)
                changes.append(Change(kind="framing", before="", after=framing, sentence=-1))
        elif type == "context_inconsistency":
            budget = int(LENGTH_TOLERANCE * len(text.split()))
            extra = 0
            if severity in ("moderate", "severe") and len(out_sents) >= 3:
                i = rng.randint(1, len(out_sents) - 2)
                out_sents[i], out_sents[i + 1] = out_sents[i + 1], out_sents[i]
                changes.append(
                    Change(kind="reorder", before=sentences[min(i, len(sentences) - 1)], after=out_sents[i], sentence=i)
                )
            n_claims = {"mild": 0 if changes else 1, "moderate": 1, "severe": 2}[severity]
            pool = list(lex["context_sentences"]) + (list(lex["severe_framing"]) if severity == "severe" else [])
            rng.shuffle(pool)
            for claim in pool:
                if n_claims == 0:
                    break
                words = len(claim.split())
                if extra + words > budget or _NUM.search(claim):
                    continue
                pos = rng.randint(1, len(out_sents))
                out_sents.insert(pos, claim)
                extra += words
                n_claims -= 1
                changes.append(
                    Change(kind="insert_claim", before="", after=claim, sentence=min(pos, len(sentences)) - 1)
                )
        out = " ".join(out_sents)
        if len(changes) < need:
            raise ItemError(f"only {len(changes)} applicable edit(s), {severity} needs at least {need}")
        checks = {"changed": out != text, "min_changes": len(changes) >= need}
        if severity == "severe":
            checks["core_changed"] = any(c.sentence in (0, -1) for c in changes)
        if type == "context_inconsistency":
            checks["numbers_preserved"] = numbers_in(out) == numbers_in(text)
            ratio = len(out.split()) / max(1, len(text.split()))
            checks["length_within_15pct"] = abs(ratio - 1.0) <= LENGTH_TOLERANCE
        return out, changes, checks


def _sentence_bounds(text: str, sentences: list[str]) -> list[tuple[int, int]]:
    bounds, pos = [], 0
    for s in sentences:
        start = text.find(s, pos)
        bounds.append((start, start + len(s)))
        pos = start + len(s)
    return bounds


def _sentence_of(bounds: list[tuple[int, int]], pos: int) -> int:
    for i, (s, e) in enumerate(bounds):
        if s <= pos < e:
            return i
    return -1


def _article_year(article: Article) -> int:
    if article.date and article.date[:4].isdigit():
        return int(article.date[:4])
    years = [int(y) for y in re.findall(r"(?<!\d)(?:19|20)\d{2}(?!\d)", article.text)]
    return max(years) if years else 2024


def _choose(
    pools: dict[str, list[_Group]],
    target: int,
    rng: random.Random,
    *,
    prefer_lead: bool,
    lead_end: int,
    avoid_lead: bool,
) -> list[_Group]:
    """Pick up to ``target`` non-overlapping groups, drawing from the pools in turn for variety."""
    chosen: list[_Group] = []
    taken: list[tuple[int, int]] = []

    def free(g: _Group) -> bool:
        return all(not (s < e2 and s2 < e) for s, e in g.span() for s2, e2 in taken)

    order = list(pools)
    rng.shuffle(order)
    shuffled = {k: rng.sample(v, len(v)) for k, v in pools.items()}
    for k in shuffled:
        in_lead = [g for g in shuffled[k] if g.edits[0].start < lead_end]
        rest = [g for g in shuffled[k] if g.edits[0].start >= lead_end]
        if prefer_lead:
            shuffled[k] = in_lead + rest
        elif avoid_lead:
            shuffled[k] = rest + in_lead
    progress = True
    while len(chosen) < target and progress:
        progress = False
        for k in order:
            while shuffled[k]:
                g = shuffled[k].pop(0)
                if free(g):
                    chosen.append(g)
                    taken.extend(g.span())
                    progress = True
                    break
            if len(chosen) >= target:
                break
    return chosen


def _agreement_class(n: float, is_int: bool, language: str) -> int:
    """Numbers whose following noun takes the same form (Russian 1 / 2-4 / 5+, English 1 / other)."""
    if not is_int:
        return 3
    n = int(n)
    if language == "ru":
        if n % 10 == 1 and n % 100 != 11:
            return 0
        if 2 <= n % 10 <= 4 and not 12 <= n % 100 <= 14:
            return 1
        return 2
    if language == "en":
        return 0 if n == 1 else 2
    return 2  # Kazakh nouns stay singular after any numeral


def _alter_number(token: str, language: str, rng: random.Random, *, slight: bool) -> str | None:
    raw = token.replace("\u00a0", " ")
    dec_sep = DECIMAL_SEP[language]
    thousands = None
    body = raw
    if " " in raw:
        thousands, body = " ", raw.replace(" ", "")
    elif language == "en" and "," in raw:
        thousands, body = ",", raw.replace(",", "")
    decimals = 0
    if dec_sep in body:
        decimals = len(body.split(dec_sep)[1])
        value = float(body.replace(dec_sep, "."))
    elif not body.isdigit():
        return None
    else:
        value = float(body)
    is_int = decimals == 0
    if is_int and 1900 <= value <= 2100 and thousands is None:
        # a year: shift it (1-2 years is 'slightly incorrect', 3-6 a contradiction)
        delta = rng.choice([1, 2]) if slight else rng.choice([3, 4, 5, 6])
        return str(int(value) + rng.choice([-1, 1]) * delta)
    if value == 0:
        return None
    cls = _agreement_class(value, is_int, language)
    for _ in range(50):
        factor = rng.uniform(1.05, 1.2) if slight else rng.uniform(1.4, 3.0)
        if rng.random() < 0.5:
            factor = 1.0 / factor
        new = value * factor
        if is_int:
            new_i = max(2, int(round(new)))
            if value >= 100:  # keep round-looking amounts round
                mag = 10 ** (len(str(int(value))) - 2)
                new_i = max(mag, int(round(new_i / mag)) * mag)
            if new_i == int(value) or _agreement_class(new_i, True, language) != cls:
                continue
            s = str(new_i)
            if thousands:
                s = f"{new_i:,}".replace(",", thousands)
            return s
        s = f"{new:.{decimals}f}"
        if float(s) == value or float(s) <= 0:
            continue
        return s.replace(".", dec_sep)
    return None


@GENERATORS.register("rules", options=options_model(RulesGenerator, skip=("lexicon_dir",)))
def _rules(model: str, **options: object) -> RulesGenerator:
    return RulesGenerator(lexicon_dir=model or None, **options)  # type: ignore[arg-type]
