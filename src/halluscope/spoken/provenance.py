"""Provenance x veracity (seed 000, section 4.3 and Table 5): is a detector's flag about facts or about style?

Four cells, each a set of items scored by one trained detector: human/truthful (the truthful negatives of
the real-world split), human/false (the fact-checked fakes), LLM/truthful (faithful LLM rewrites of the
same truthful articles, made under a hallucination-free instruction) and LLM/false (the synthetic
hallucinations of the test split). The flag rate (halluscope.metrics.rates.flag_rates) is the share predicted
"hallucinated"; a prediction the detector could not make (None) is counted in n, is not a flag, and is reported
as invalid.

Faithful rewrites need an LLM ('openai/<model>' or 'hf/<path>'): the question is whether machine-written
style alone raises the flag rate, and the offline 'rules' generator cannot paraphrase, so it is refused.
"""

from __future__ import annotations

from collections.abc import Sequence

from halluscope.backends.runner import CallSummary
from halluscope.core.errors import HalluscopeError, ItemError
from halluscope.core.hashing import sha256_hex
from halluscope.core.records import Article, ChatMessage, RewriteLog, Usage, Variant
from halluscope.core.spec import ModelSpec
from halluscope.core.stages import Stage
from halluscope.core.store import Store

CELLS = ("human/truthful", "human/false", "llm/truthful", "llm/false")
FAITHFUL_SUFFIX = "~faithful"
FAITHFUL_TEMPLATE = "faithful/rewrite"
FAITHFUL_LOG_STAGE = "realworld_faithful_log"
LANGUAGE_NAMES = {"en": "English", "ru": "Russian", "kk": "Kazakh"}


# -- faithful LLM rewrites ----------------------------------------------------------------------------


def faithful_id(article_id: str) -> str:
    return article_id + FAITHFUL_SUFFIX


def faithful_messages(article: Article) -> list[ChatMessage]:
    """The hallucination-free rewrite instruction (halluscope's wording: the spec does not print its prompt)."""
    from halluscope.prompts import template

    prompt = template(FAITHFUL_TEMPLATE).render(
        {"ARTICLE TEXT": article.text, "LANGUAGE": LANGUAGE_NAMES[article.language]}
    )
    return [ChatMessage(role="user", content=prompt)]


def faithful_prompt_hash() -> str:
    from halluscope.prompts import template

    return sha256_hex(template(FAITHFUL_TEMPLATE).text, 16)


def faithful_backend(spec: str, config: object | None = None) -> object:
    """The chat backend of an LLM generator spec; 'rules' and other non-LLM generators are refused."""
    provider = ModelSpec.parse(spec).provider
    if provider not in ("openai", "hf"):
        raise HalluscopeError(
            f"faithful rewrites need an LLM generator ('openai/<model>' or 'hf/<path>'), got '{spec}': the "
            "provenance analysis asks whether machine-written style alone raises the flag rate, and the 'rules' "
            "generator cannot paraphrase a text without changing it"
        )
    from halluscope.backends.llm import create_backend

    return create_backend(spec, config=config)  # type: ignore[arg-type]


def faithful_config(backend: object, *, retries: int) -> dict:
    # 'max_attempts' (= retries + 1) is the stored key (core.names.STORED_KEYS): stored fingerprints unchanged
    return {
        "generator": backend.identity(),  # type: ignore[attr-defined]
        "prompt": faithful_prompt_hash(),  # type: ignore[attr-defined]
        "max_attempts": retries + 1,
        "version": 1,
    }


def faithful_rewrites(
    store: Store,
    stage: Stage,
    backend: object,
    articles: Sequence[Article],
    *,
    seed: int,
    retries: int = 2,
    quiet: bool = False,
) -> CallSummary[Variant]:
    """One faithful rewrite per article, resumable; every call and a RewriteLog per item go to the store.

    A reply is accepted when it has text after a '(full text)' header, differs from the source, keeps
    every number and stays within +/-15% of the source length (the checks of a context rewrite, which
    must not change facts either); otherwise it is asked again, up to ``retries`` more times.
    """
    from halluscope.backends.runner import run_calls

    async def fn(caller, a: Article) -> Variant | str:
        result, log = await _protocol(caller, backend, a, seed, retries)
        store.put(FAITHFUL_LOG_STAGE, stage.fingerprint, faithful_id(a.id), log)
        return str(result) if isinstance(result, ItemError) else result

    return run_calls(
        store,
        stage,
        [(faithful_id(a.id), a) for a in articles],
        backend,  # type: ignore[arg-type]
        fn,
        Variant,  # type: ignore[arg-type]
        description=f"faithful rewrites ({backend.spec})",  # type: ignore[attr-defined]
        quiet=quiet,
    )  # type: ignore[attr-defined]


async def _protocol(
    caller: object, backend: object, article: Article, seed: int, retries: int
) -> tuple[Variant | ItemError, RewriteLog]:
    from halluscope.spoken.generate.llm import ask_rewrite

    vid, spec = faithful_id(article.id), backend.spec  # type: ignore[attr-defined]
    # faithful rewrites obey the context-inconsistency checks: every number kept, length within 15%
    asked, attempts, checks = await ask_rewrite(
        caller,
        backend.request(  # type: ignore[attr-defined]
            faithful_messages(article),  # type: ignore[attr-defined]
            tag=f"faithful:{vid}",
        ),
        article,
        "context_inconsistency",
        retries,
    )
    log = RewriteLog(
        item_id=vid,
        generator=spec,
        attempts=attempts,
        accepted=asked.ok,
        usage=Usage(prompt_tokens=asked.prompt_tokens, completion_tokens=asked.completion_tokens),
    )
    if asked.ok:
        return Variant(
            id=vid,
            article_id=article.id,
            language=article.language,
            text=asked.value,
            label=0,
            generator=spec,
            seed=seed,
            checks=checks,
        ), log
    why = "; ".join(f"#{t.nonce} {t.status}: {t.reason}" for t in attempts)
    return ItemError(
        f"{spec}: no acceptable faithful rewrite of '{article.id}' after {len(attempts)} attempt(s) ({why})"
    ), log
