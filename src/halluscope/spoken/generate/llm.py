"""LLM generators 'openai/<model>' and 'hf/<path>': the seed 000 App. A.1 rewrite protocol.

One prompt per article x type x severity (English canonical wording, Russian/Kazakh deltas); the
rewrite is the text after the localized "(full text)" header; the step-3 report is the generator's
self-assessment, its localized scale mapped to 1..5. A context-inconsistency rewrite must keep every
number and stay within +/-15% of the source length. A reply that fails extraction or a check is
recorded with the reason and asked again (a new request: the attempt number is part of its key), up
to ``retries`` more times (GenerateOptions.retries); then the item is reported failed with every reason. Each retry samples differently
(llm._base.retry_params), so a greedy model does not repeat the rejected reply.

Every request carries a ``max_tokens`` derived from the article (GenerateOptions: base + per-token x the
article's estimated tokens, or a fixed value); a reply cut there is reported as truncated. Besides the App. A.1
checks, the screen rejects a rewrite that echoes the prompt's instructions or the step-3 report, is far shorter
than the source (fabrication, contradiction), or is in another language than the source (langid).

Calls for a whole stage run concurrently in ``prepare`` (build.py calls it before the stage runner);
``rewrite`` then hands out the prepared results, or runs the protocol for one item on its own.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from halluscope.backends.llm import (
    LLM_BACKENDS,
    Caller,
    CallStats,
    ChatBackend,
    GenerateOptions,
    LLMConfig,
    load_llm_config,
)
from halluscope.backends.runner import StageKey, arun_calls, ask_until_parsed
from halluscope.core.errors import ItemError
from halluscope.core.records import (
    Article,
    ChatMessage,
    HallucinationType,
    Language,
    RewriteAttempt,
    RewriteLog,
    SelfAssessment,
    Severity,
    Usage,
    Variant,
)
from halluscope.core.stages import Stage
from halluscope.core.store import Store
from halluscope.prompts import prompt_hash, severity_texts, template
from halluscope.prompts.protocol import (
    DIMENSIONS,
    count_ratings,
    dimension_for_label,
    full_text_markers,
)
from halluscope.reply import find_refusal, labelled_lines, read_rating
from halluscope.spoken.generate.base import GENERATORS, Assignment, variant_id
from halluscope.spoken.generate.rules import LENGTH_TOLERANCE, numbers_in

VERSION = 1
LOG_STAGE = "generate_log"  # RewriteLog records, keyed like the generate stage (same fingerprint)


def severity_description(type: HallucinationType, severity: Severity, language: Language, wording: str) -> str:
    """{SEVERITY LEVEL DESCRIPTION}; fabrication has an English-batch and a Russian/Kazakh-batch wording."""
    texts = severity_texts()["generation"][type]
    if type == "fabrication":
        key = wording if wording != "by_language" else ("en" if language == "en" else "ru_kk")
        texts = texts[key]
    return texts[severity]


def generation_messages(
    article: Article, type: HallucinationType, severity: Severity, *, wording: str = "by_language"
) -> list[ChatMessage]:
    prompt = template(f"generate/{type}.{article.language}").render(
        {
            "ARTICLE TEXT": article.text,
            "SEVERITY LEVEL DESCRIPTION": severity_description(type, severity, article.language, wording),
        }
    )
    return [ChatMessage(role="user", content=prompt)]


def _plain(text: str) -> str:
    return text.replace("**", "").replace("__", "")


def extract_full_text(reply: str, language: Language) -> str | None:
    """The text after the last localized "(full text)" header that has any text after it."""
    clean = _plain(reply)
    for m in reversed(list(full_text_markers(language).finditer(clean))):
        lines = [
            ln
            for ln in re.sub(r"^[\s:：\-—–]*", "", clean[m.end() :]).splitlines()
            if not re.fullmatch(r"\s*(```\w*|[-*_=]{3,})\s*", ln)
        ]
        body = re.sub(r"\n{3,}", "\n\n", "\n".join(re.sub(r"^#+\s*", "", ln) for ln in lines)).strip()
        if len(body) >= 2 and body[0] == body[-1] and body[0] in "\"'«":
            body = body[1:-1].strip()
        if body:
            return body
    return None


def _rated_lines(head: str, language: Language) -> list[tuple[str, str, int]]:
    """(label, value, 1..5) for every 'label: rating' line (or table row), skipping echoes of the scale."""
    out = []
    for label, value, nxt in labelled_lines(head):
        if not value.strip():  # "- Fluency:" with the rating on the next line
            value = nxt
        if count_ratings(value, language) >= 3:  # "Evaluate each dimension as: Low, Very Low, ..."
            continue
        r = read_rating(value, language, leading=True)
        if r.is_answer:
            out.append((label.strip(), value.strip(), int(r.value)))  # type: ignore[arg-type]
    return out


def parse_self_assessment(
    reply: str, *, item_id: str, generator: str, language: Language, type: HallucinationType, severity: Severity
) -> SelfAssessment:
    """Read the step-3 report from the part of the reply before the full-text header."""
    clean = _plain(reply)
    markers = list(full_text_markers(language).finditer(clean))
    head = clean[: markers[-1].start()] if markers else clean
    rows = _rated_lines(head, language)
    dims = DIMENSIONS[type]
    found: dict[str, tuple[str, int]] = {}
    matched_at: dict[int, str] = {}
    for i, (label, value, r) in enumerate(rows):
        dim = dimension_for_label(label, type)
        if dim is not None and dim.abbr not in found:
            found[dim.abbr] = (value, r)
            matched_at[i] = dim.abbr
    if len(found) < len(dims) and len(rows) == len(dims) and all(dims[i].abbr == a for i, a in matched_at.items()):
        # translated names the alias lists do not know: the report follows the template's order
        found = {d.abbr: (rows[i][1], rows[i][2]) for i, d in enumerate(dims)}
    return SelfAssessment(
        item_id=item_id,
        generator=generator,
        language=language,
        type=type,
        severity=severity,
        ratings={d.abbr: found[d.abbr][1] for d in dims if d.abbr in found},
        verbal={d.abbr: found[d.abbr][0] for d in dims if d.abbr in found},
        unrated=tuple(d.abbr for d in dims if d.abbr not in found),
    )


MIN_LENGTH_RATIO = 0.5  # a fabrication or contradiction rewrite under half the source's words is no rewrite
ECHO_WORDS = 4  # a run of this many words from the prompt's instructions (not in the article) is an echo


def max_tokens_for(article: Article, options: GenerateOptions) -> int:
    """The reply's token bound: fixed, or base + per_token x the article's tokens (estimated as characters / 3)."""
    if options.max_tokens is not None:
        return options.max_tokens
    return options.max_tokens_base + int(options.max_tokens_per_token * -(-len(article.text) // 3))


def _words(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())


def prompt_echo(rewritten: str, prompt: str, source: str) -> str | None:
    """A run of ECHO_WORDS words the rewrite shares with the prompt's instructions but not with the article."""
    instructions = " ".join(_words(prompt.replace(source, " ")))
    article = " ".join(_words(source))
    words = _words(rewritten)
    for i in range(len(words) - ECHO_WORDS + 1):
        run = " ".join(words[i : i + ECHO_WORDS])
        if f" {run} " in f" {instructions} " and f" {run} " not in f" {article} ":
            return run
    return None


def language_of(text: str, candidates: Sequence[str]) -> str:
    """langid's guess among ``candidates`` (its model ships with the package)."""
    try:
        from langid.langid import LanguageIdentifier, model
    except ImportError as exc:
        from halluscope.core.errors import MissingExtraError

        raise MissingExtraError("langid", "llm") from exc
    ident = _identifier(tuple(candidates), LanguageIdentifier, model)
    return ident.classify(text)[0]


_IDENTIFIERS: dict = {}


def _identifier(candidates: tuple[str, ...], cls, model):
    if candidates not in _IDENTIFIERS:
        ident = cls.from_modelstring(model, norm_probs=True)
        ident.set_languages(list(candidates))
        _IDENTIFIERS[candidates] = ident
    return _IDENTIFIERS[candidates]


LANGID_CANDIDATES = ("en", "ru", "kk", "uk", "be", "ky", "de", "fr", "es", "tr", "zh")


def check_rewrite(
    source: str,
    rewritten: str,
    type: HallucinationType,
    *,
    finish_reason: str | None = None,
    prompt: str | None = None,
    language: Language | None = None,
) -> tuple[dict[str, bool], list[str]]:
    """Post-generation checks and the reasons of those that failed (App. A.1 for context inconsistency; the
    echo, length and language screens when ``prompt`` and ``language`` are given)."""
    checks = {
        "full_text_found": True,
        "complete": finish_reason != "length",
        "differs_from_source": " ".join(rewritten.split()) != " ".join(source.split()),
    }
    reasons = []
    if not checks["complete"]:
        reasons.append("reply cut off at the token limit (finish_reason=length)")
    if not checks["differs_from_source"]:
        reasons.append("rewrite identical to the source")
    if prompt is not None:
        echo = prompt_echo(rewritten, prompt, source)
        report = [label for label, _, _ in _rated_lines(rewritten, language or "en")]
        checks["no_prompt_echo"] = echo is None and len(report) < 2
        if echo is not None:
            reasons.append(f"echoes the prompt's instructions ('{echo}'), not a rewrite of the article")
        elif len(report) >= 2:
            reasons.append(f"contains the step-3 report ({', '.join(report[:3])}), not only the rewrite")
    if type != "context_inconsistency" and prompt is not None:
        ratio = len(rewritten.split()) / max(1, len(source.split()))
        checks["not_too_short"] = ratio >= MIN_LENGTH_RATIO
        if not checks["not_too_short"]:
            n = len(rewritten.split())
            reasons.append(
                f"far too short: {n} word{'s' * (n != 1)} for a {len(source.split())}-word source "
                f"({ratio:.2f}x, at least {MIN_LENGTH_RATIO:.2f}x expected)"
            )
    if language is not None:
        expected = language_of(source, LANGID_CANDIDATES)  # the source's language as langid sees it
        got = language_of(rewritten, LANGID_CANDIDATES)
        checks["same_language"] = got == expected
        if got != expected:
            reasons.append(f"written in '{got}', the source in '{expected}' (expected {language}; langid)")
    if type == "context_inconsistency":
        src, out = set(numbers_in(source)), set(numbers_in(rewritten))
        checks["numbers_preserved"] = src == out
        if src != out:
            reasons.append(f"numbers changed: missing {sorted(src - out)}, added {sorted(out - src)}")
        ratio = len(rewritten.split()) / max(1, len(source.split()))
        checks["length_within_15pct"] = abs(ratio - 1.0) <= LENGTH_TOLERANCE
        if not checks["length_within_15pct"]:
            reasons.append(
                f"length {ratio:.2f}x the source in words (allowed {1 - LENGTH_TOLERANCE:.2f}-{1 + LENGTH_TOLERANCE:.2f})"
            )
    return checks, reasons


@dataclass
class LLMGenerator:
    """The App. A.1 protocol on any chat backend; see the module docstring."""

    backend: ChatBackend
    options: GenerateOptions = field(default_factory=GenerateOptions)
    stats: CallStats | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        self.spec = self.backend.spec
        self._prepared: dict[str, Variant | ItemError] = {}

    @classmethod
    def create(cls, spec: str, *, config: LLMConfig | None = None, **options: object) -> LLMGenerator:
        config = config if config is not None else load_llm_config()
        return cls(LLM_BACKENDS.create(spec, config=config, **options), config.generate)

    def config(self) -> dict:
        o = self.options
        return {
            "generator": "llm",
            "version": VERSION,
            **self.backend.identity(),
            "max_attempts": o.retries + 1,  # the stored key (core.names.STORED_KEYS): fingerprints unchanged
            "fabrication_wording": o.fabrication_wording,
            "max_tokens": o.max_tokens or {"base": o.max_tokens_base, "per_token": o.max_tokens_per_token},
            "screen": {"min_length_ratio": MIN_LENGTH_RATIO, "echo_words": ECHO_WORDS, "langid": True},
            "prompts": prompt_hash(),
        }

    # -- the stage hook ---------------------------------------------------------------------------
    def prepare(
        self, store: Store, stage: Stage, assignments: Sequence[Assignment], *, seed: int, quiet: bool = False
    ) -> None:
        """Run every assignment's protocol concurrently; each call and each RewriteLog goes to the store."""
        if not assignments:
            return
        results, self.stats = asyncio.run(self._run_all(store, stage.fingerprint, assignments, seed, quiet=quiet))
        self._prepared.update(results)

    def rewrite(self, article: Article, *, type: HallucinationType, severity: Severity, seed: int) -> Variant:
        vid = variant_id(article.id, type, severity)
        if vid not in self._prepared:
            results, self.stats = asyncio.run(
                self._run_all(None, None, [Assignment(article, type, severity)], seed, quiet=True)
            )
            self._prepared.update(results)
        result = self._prepared.pop(vid)
        if isinstance(result, ItemError):
            raise result
        return result

    async def _run_all(
        self, store: Store | None, fp: str | None, assignments: Sequence[Assignment], seed: int, *, quiet: bool
    ) -> tuple[dict[str, Variant | ItemError], CallStats]:
        """The protocol of every assignment on the one runner: its RewriteLog goes to the log stage (every given
        assignment is asked: the build passes only those not done), its Variant or ItemError comes back."""
        out: dict[str, Variant | ItemError] = {}

        async def fn(caller: Caller, a: Assignment) -> RewriteLog:
            out[a.variant_id], log = await self._protocol(caller, a, seed)
            return log

        logs = StageKey(LOG_STAGE, fp) if store is not None and fp is not None else None
        items = [(a.variant_id, a) for a in assignments]
        res = await arun_calls(
            store,
            logs,
            items,
            self.backend,
            fn,
            description=f"rewrite calls ({self.spec})",
            quiet=quiet,
            redo=[i for i, _ in items],
        )
        return out, res.stats

    async def _protocol(self, caller: Caller, a: Assignment, seed: int) -> tuple[Variant | ItemError, RewriteLog]:
        article, vid = a.article, a.variant_id
        messages = generation_messages(article, a.type, a.severity, wording=self.options.fabrication_wording)
        first = self.backend.request(
            messages, tag=f"generate:{vid}", params={"max_tokens": max_tokens_for(article, self.options)}
        )
        asked, attempts, checks = await ask_rewrite(
            caller, first, article, a.type, self.options.retries, prompt=messages[-1].content
        )
        sa = None
        if asked.ok:
            sa = parse_self_assessment(
                asked.raw_text or "",
                item_id=vid,
                generator=self.spec,
                language=article.language,
                type=a.type,
                severity=a.severity,
            )
        log = RewriteLog(
            item_id=vid,
            generator=self.spec,
            attempts=attempts,
            accepted=asked.ok,
            self_assessment=sa,
            usage=Usage(prompt_tokens=asked.prompt_tokens, completion_tokens=asked.completion_tokens),
            cost_usd=asked.cost_usd,
        )
        if asked.ok:
            return Variant(
                id=vid,
                article_id=article.id,
                language=article.language,
                text=asked.value,
                label=1,
                type=a.type,
                severity=a.severity,
                generator=self.spec,
                seed=seed,
                checks=checks,
            ), log
        why = "; ".join(f"#{t.nonce} {t.status}: {t.reason}" for t in attempts)
        return ItemError(
            f"{self.spec}: no acceptable {a.severity} {a.type} rewrite of '{article.id}' after "
            f"{len(attempts)} attempt(s) ({why})"
        ), log


async def ask_rewrite(
    caller: Caller, first, article: Article, type: str, retries: int, *, prompt: str | None = None
) -> tuple[Any, tuple[RewriteAttempt, ...], dict | None]:
    """The rewrite protocol of one request on backends.runner.ask_until_parsed: each reply screened
    (``screen_rewrite``), rejected ones asked again up to ``retries`` more times. Returns the Asked outcome (its
    value the accepted text), a RewriteAttempt per attempt (a retry's reason says how it was sampled) and the
    accepted rewrite's checks."""
    limit = first.params.get("max_tokens", first.params.get("max_new_tokens")) if prompt is not None else None
    screened: dict[str, tuple] = {}

    def screen(resp):
        attempt, text, checks = screen_rewrite(resp, article, type, 0, prompt=prompt, max_tokens=limit)
        screened[resp.key] = (attempt, checks)
        return (text, None) if text is not None else (None, f"{attempt.status}: {attempt.reason}")

    asked = await ask_until_parsed(caller, first, screen, retries, parse_refusals=True)
    out = []
    for a in asked.attempts:
        if a.key in screened:
            attempt = screened[a.key][0].model_copy(update={"nonce": a.nonce})
        else:  # no reply at all
            attempt = RewriteAttempt(nonce=a.nonce, call_key=a.key, status="error", reason=asked.error)
        if a.note:
            attempt = attempt.model_copy(update={"reason": (attempt.reason or attempt.status) + a.note})
        out.append(attempt)
    return asked, tuple(out), screened[asked.keys[-1]][1] if asked.ok else None


def screen_rewrite(
    resp, article: Article, type: str, nonce: int, *, prompt: str | None = None, max_tokens: int | None = None
) -> tuple[RewriteAttempt, str | None, dict | None]:
    """One reply to a rewrite request: its attempt record, and the accepted text with its checks (None if not)."""
    if resp.status in ("error", "refusal", "unparsable"):
        return RewriteAttempt(nonce=nonce, call_key=resp.key, status=resp.status, reason=resp.error), None, None
    cut = resp.finish_reason == "length"
    limit = f"max_tokens={max_tokens}" if max_tokens else "the token limit"
    text = extract_full_text(resp.text or "", article.language)
    if text is None:
        if refusal := find_refusal(resp.text):  # a refusal in words, not flagged by the API
            return (
                RewriteAttempt(nonce=nonce, call_key=resp.key, status="refusal", reason=f"refusal: '{refusal}'"),
                None,
                None,
            )
        if cut:
            return (
                RewriteAttempt(
                    nonce=nonce,
                    call_key=resp.key,
                    status="truncated",
                    reason=f"reply cut at {limit} (finish_reason=length) before any text after a "
                    "'(full text)' header; raise max_tokens_per_token or set max_tokens in "
                    "the [generate] section of the LLM config",
                ),
                None,
                None,
            )
        return (
            RewriteAttempt(
                nonce=nonce, call_key=resp.key, status="rejected", reason="no text after a '(full text)' header"
            ),
            None,
            None,
        )
    checks, reasons = check_rewrite(
        article.text,
        text,
        type,
        finish_reason=resp.finish_reason,
        prompt=prompt,
        language=article.language if prompt is not None else None,
    )
    if cut:
        return (
            RewriteAttempt(
                nonce=nonce,
                call_key=resp.key,
                status="truncated",
                reason=f"reply cut at {limit} (finish_reason=length) inside the full text",
            ),
            None,
            None,
        )
    if reasons:
        return RewriteAttempt(nonce=nonce, call_key=resp.key, status="rejected", reason="; ".join(reasons)), None, None
    return RewriteAttempt(nonce=nonce, call_key=resp.key, status="accepted"), text, checks


@GENERATORS.register("openai")
def _openai(model: str, **options: object) -> LLMGenerator:
    return LLMGenerator.create(f"openai/{model}", **options)  # type: ignore[arg-type]


@GENERATORS.register("hf")
def _hf(model: str, **options: object) -> LLMGenerator:
    return LLMGenerator.create(f"hf/{model}", **options)  # type: ignore[arg-type]
