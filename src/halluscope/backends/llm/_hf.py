"""'hf/<path>': local transformers generation with the tokenizer's chat template, batched.

<path> is a transformers directory, a GGUF file ('<file>.gguf' or '<dir>?gguf=<file>', de-quantized once and
cached, see _gguf.py) or a packaged model by name ('smollm2-135m-instruct', from the smollm extra).

Requests arriving together are batched (left padding) up to ``batch_size``; temperature 0 decodes
greedily, otherwise it samples with a seed drawn from the configured seed and the batch's request
keys, so a sampled reply depends on its batch mates (it is stored, so a rerun reads it back).
Batches run on the backend's ``executor`` pool: in this process by default, or on Ray actors that each
load the model once (``executor=RayExecutor(...)``; one batch per actor at a time). The driver logs
every call, so the store has one writer either way.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from halluscope.backends.llm._base import OPTIONAL_PARAMS, CallLog, LocalChatBackend
from halluscope.backends.llm._config import HFOptions, LLMConfig, resolve_options
from halluscope.core.errors import HalluscopeError, MissingExtraError
from halluscope.core.executors import LOCAL, ItemTask, Pool, Resources, torch_threads
from halluscope.core.hashing import TORCH_SEED_MAX, seed_from
from halluscope.core.records import ModelRequest, ModelResponse
from halluscope.core.spec import ModelSpec

if TYPE_CHECKING:
    from halluscope.backends.llm._prefix import PrefixCache
    from halluscope.backends.llm._structured import Grammars

DEFAULT_PARAMS = {"max_new_tokens": 512, "temperature": 0.0, "top_p": 1.0, "seed": 0}


class HFBackend(LocalChatBackend):
    """A causal LM and its tokenizer from a local directory."""

    # a request's OpenAI response_format (a JSON schema) is decoded under its grammar (_structured.py)
    optional_params = (*OPTIONAL_PARAMS, "response_format")

    def __init__(self, path: str, options: HFOptions, mitigation: object = None) -> None:
        self.path = options.path or path  # a second spec name may serve the same checkpoint
        self.spec = f"hf/{path}"
        self.default_params = DEFAULT_PARAMS
        self.options = options
        self.mitigation = mitigation  # a halluscope.mitigation.MitigationConfig (DoLa) or None
        self.executor = None  # where batches run (None: this process); see halluscope.core.executors
        self._model: Any = None  # the transformers model and tokenizer, loaded by load()
        self._tok: Any = None
        self._queue: asyncio.Queue | None = None
        self._worker: asyncio.Task | None = None
        self._pool: Pool | None = None
        self._slots: asyncio.Semaphore | None = None
        self._running: set[asyncio.Task] = set()
        self._prefixes: PrefixCache | None = None  # with options.prefix_cache (built on first use, in the worker)
        self._grammars: Grammars | None = (
            None  # compiled response_format schemas of the loaded tokenizer (_structured.Grammars)
        )

    def __getstate__(self) -> dict:  # what a Ray worker receives: configuration, no model or event loop state
        state = dict(self.__dict__)
        state.update(
            executor=None,
            _model=None,
            _tok=None,
            _queue=None,
            _worker=None,
            _pool=None,
            _running=set(),
            _slots=None,
            _prefixes=None,
            _grammars=None,
        )
        return state

    @property
    def structured_output(self) -> bool:
        """Whether a request's response_format is enforced while decoding (xgrammar installed, plain decoding)."""
        from halluscope.backends.llm._structured import available

        return self.mitigation is None and available()

    def identity(self) -> dict:
        out = {"backend": self.spec, "params": self._params(None)}
        for k in ("path", "gguf"):  # only when set: fingerprints of plain specs stay what they were
            if getattr(self.options, k):
                out[k] = getattr(self.options, k)
        return out

    # -- model ----------------------------------------------------------------------------------
    def _load(self) -> None:
        if self._model is not None:
            return
        try:
            import torch
            from transformers import AutoModelForCausalLM, AutoTokenizer
        except ImportError as exc:
            raise MissingExtraError("transformers", "hf") from exc
        from halluscope.backends.llm._gguf import PACKAGED, converted, gguf_source

        gguf = gguf_source(self.path, self.options.gguf)
        where = str(converted(gguf)) if gguf is not None else self.path  # GGUF: de-quantized once, then cached
        if not where or not Path(where).is_dir():
            raise HalluscopeError(
                f"'{self.spec}': expected 'hf/<directory>' holding a transformers causal LM "
                f"and its tokenizer, 'hf/<file>.gguf', 'hf/<dir>?gguf=<file>' or one of "
                f"{', '.join(PACKAGED)}; got '{self.path}'"
            )
        tok = AutoTokenizer.from_pretrained(where)
        if self.options.chat_template:
            tok.chat_template = self.options.chat_template
        if not getattr(tok, "chat_template", None):
            raise HalluscopeError(
                f"the tokenizer in {self.path} has no chat template; set chat_template in the "
                f'[models."{self.spec}"] section of the LLM config'
            )
        tok.padding_side = "left"
        if tok.pad_token is None:
            tok.pad_token = tok.eos_token
        device = self.options.device
        if device == "auto":
            device = "cuda" if torch.cuda.is_available() else "cpu"
        dtype = {
            "auto": torch.bfloat16 if device.startswith("cuda") else torch.float32,
            "float32": torch.float32,
            "bfloat16": torch.bfloat16,
            "float16": torch.float16,
        }[self.options.dtype]
        model = AutoModelForCausalLM.from_pretrained(where, dtype=dtype).to(device).eval()
        self._tok, self._model, self._device = tok, model, device

    def prompt(self, request: ModelRequest) -> str:
        return self._tok.apply_chat_template(
            [m.model_dump() for m in request.messages], tokenize=False, add_generation_prompt=True
        )

    def _generate(self, requests: list[ModelRequest]) -> list[dict]:
        import torch

        if self.mitigation is not None:  # contrastive decoding runs one request at a time (batch size 1)
            if any(r.params.get("response_format") for r in requests):
                raise HalluscopeError(
                    f"{self.spec}: response_format (a JSON schema) is not enforced under a decoding-time mitigation; "
                    "drop the mitigation, or ask without a schema"
                )
            return [self._generate_mitigated(r) for r in requests]

        params = requests[0].params
        tok, model = self._tok, self._model
        prompts = [self.prompt(r) for r in requests]
        enc = tok(prompts, return_tensors="pt", padding=True, add_special_tokens=False).to(self._device)
        kwargs = {
            "max_new_tokens": int(params["max_new_tokens"]),
            "pad_token_id": tok.pad_token_id,
            "eos_token_id": tok.eos_token_id,
        }
        if float(params["temperature"]) > 0:
            blob = json.dumps([params["seed"], sorted(r.key() for r in requests)]).encode()
            torch.manual_seed(seed_from(blob) % TORCH_SEED_MAX)
            kwargs.update(do_sample=True, temperature=float(params["temperature"]), top_p=float(params["top_p"]))
            if params.get("top_k"):  # the model card's top-k (seed 001, Table 5); absent: transformers' default
                kwargs["top_k"] = int(params["top_k"])
        else:
            kwargs.update(do_sample=False, temperature=None, top_p=None)
        if params.get("repetition_penalty") not in (None, 1, 1.0):
            kwargs["repetition_penalty"] = float(params["repetition_penalty"])
        if params.get("response_format"):  # every token masked to the schema's grammar (_structured.py)
            if self._grammars is None:
                from halluscope.backends.llm._structured import Grammars

                self._grammars = Grammars(tok, model.config.vocab_size, self.spec)
            kwargs["logits_processor"] = [self._grammars.processor(params["response_format"])]
        reused = None
        if (
            self.options.prefix_cache and not kwargs["do_sample"] and "logits_processor" not in kwargs
        ):  # a shared prompt prefix computed once (_prefix.py); a grammar's processor serves one generate() call
            if self._prefixes is None:
                from halluscope.backends.llm._prefix import PrefixCache as Prefixes

                self._prefixes = Prefixes()
            reused = self._prefixes.generate(model, tok, prompts, kwargs)
        if reused is not None:
            new, lengths = [ids for ids, _ in reused], [n for _, n in reused]
        else:
            with torch.inference_mode():
                out = model.generate(**enc, **kwargs)
            new = out[:, enc["input_ids"].shape[1] :].tolist()
            lengths = [int(m.sum()) for m in enc["attention_mask"]]
        results = []
        for i, ids in enumerate(new):
            finish = "length"
            if tok.eos_token_id in ids:
                ids = ids[: ids.index(tok.eos_token_id)]
                finish = "stop"
            results.append(
                {
                    "text": tok.decode(ids, skip_special_tokens=True),
                    "finish_reason": finish,
                    "prompt_tokens": lengths[i],
                    "completion_tokens": len(ids) + (finish == "stop"),
                }
            )
        return results

    def _generate_mitigated(self, request: ModelRequest) -> dict:
        from halluscope.mitigation import decode, sampler

        tok, params = self._tok, request.params
        enc = dict(tok([self.prompt(request)], return_tensors="pt", add_special_tokens=False).to(self._device))
        res = decode(
            self._model,
            enc,
            self.mitigation,
            max_tokens=int(params["max_new_tokens"]),  # type: ignore[arg-type]
            eos=[tok.eos_token_id],
            temperature=float(params["temperature"]),
            top_p=float(params["top_p"]),
            generator=sampler(params),
            top_k=int(params.get("top_k") or 0),
            repetition_penalty=float(params.get("repetition_penalty") or 1.0),
        )
        ids = res.tokens[:-1] if res.finish_reason == "stop" else res.tokens
        return {
            "text": tok.decode(ids, skip_special_tokens=True),
            "finish_reason": res.finish_reason,
            "prompt_tokens": int(enc["attention_mask"][0].sum()),
            "completion_tokens": len(res.tokens),
            "mitigation": res.summary(self.mitigation),
        }  # type: ignore[arg-type]

    # -- batching ---------------------------------------------------------------------------------
    async def open(self) -> None:
        self._pool = pool = (self.executor or LOCAL).pool("hf", _Generate(self))
        await pool.start()  # loads the model (here, or once per Ray worker)
        self._slots = asyncio.Semaphore(pool.size)
        self._queue = asyncio.Queue()
        self._worker = asyncio.create_task(self._batches())

    async def aclose(self) -> None:
        for task in [self._worker, *self._running]:
            if task is not None:
                task.cancel()
                try:
                    await task
                except asyncio.CancelledError:
                    pass
        self._worker = None
        if self._pool is not None:
            await self._pool.close()
            self._pool = None

    async def send(self, request: ModelRequest, log: CallLog) -> ModelResponse:
        assert self._queue is not None, "open() first"
        fut: asyncio.Future[ModelResponse] = asyncio.get_running_loop().create_future()
        await self._queue.put((request, log, fut))
        return await fut

    async def _batches(self) -> None:
        """Wait for a free worker, then take what is queued (up to batch_size) as its next batch."""
        loop = asyncio.get_running_loop()
        slots, queue = self._slots, self._queue
        assert slots is not None and queue is not None, "open() starts the batches"
        while True:
            await slots.acquire()
            batch = [await queue.get()]
            deadline = loop.time() + self.options.batch_wait_s
            while len(batch) < self.options.batch_size:
                try:
                    batch.append(await asyncio.wait_for(queue.get(), max(0.0, deadline - loop.time())))
                except asyncio.TimeoutError:
                    break
            groups: dict[str, list] = {}
            for item in batch:  # one generate() call per set of decoding parameters
                groups.setdefault(json.dumps(item[0].params, sort_keys=True), []).append(item)
            for n, items in enumerate(groups.values()):
                if n:
                    await slots.acquire()
                task = asyncio.create_task(self._run(items))
                self._running.add(task)
                task.add_done_callback(self._running.discard)

    async def _run(self, items: list) -> None:
        loop = asyncio.get_running_loop()
        pool, slots = self._pool, self._slots
        assert pool is not None and slots is not None, "open() starts the pool"
        try:
            t0 = loop.time()
            try:
                ok, value = await pool.call([r for r, _, _ in items])
            except Exception as exc:  # the workers themselves failed (not one batch): the callers see it raised
                for _, _, fut in items:
                    if not fut.done():
                        fut.set_exception(exc)
                return
            if not ok:  # a failed batch fails its requests, with the reason
                for request, log, fut in items:
                    log(
                        request=request,
                        payload={"params": request.params, "tag": request.tag},
                        response={"error": value},
                        status="error",
                        latency_s=None,
                    )
                    if not fut.done():
                        fut.set_result(
                            ModelResponse(
                                key=request.key(),
                                backend=self.spec,
                                status="error",
                                error=f"generation failed: {value}",
                                attempts=1,
                            )
                        )
                return
            latency = (loop.time() - t0) / len(items)
            for (request, log, fut), (prompt, out) in zip(items, value):
                log(
                    request=request,
                    payload={
                        "prompt": prompt,
                        "params": request.params,
                        "nonce": request.nonce,
                        "tag": request.tag,
                        "batch": len(items),
                    },
                    response=out,
                    status="ok",
                    latency_s=round(latency, 4),
                )
                if not fut.done():
                    fut.set_result(self._response(request, out, latency_s=latency, cached=False))
        finally:
            slots.release()


class _Generate(ItemTask):
    """A batch of requests -> [(prompt, reply)], on whichever worker holds it; the model loads in ``setup``."""

    def __init__(self, backend: HFBackend) -> None:
        self.backend = backend

    def setup(self, resources: Resources | None) -> None:
        torch_threads(resources)
        self.backend._load()

    def __call__(self, requests: list[ModelRequest]) -> list[tuple[str, dict]]:
        self.backend._load()
        outs = self.backend._generate(requests)
        return [(self.backend.prompt(r), out) for r, out in zip(requests, outs)]


def create_hf(spec: ModelSpec, *, config: LLMConfig | None = None, **options: object) -> HFBackend:
    """'hf/<dir>' (registered in CHAT_BACKENDS); ``mitigation=dola`` (with DoLa's options, in the spec or as
    keywords) decodes with DoLa. Options in the spec are part of its name ('hf/<dir>?mitigation=dola')."""
    from halluscope.mitigation import AUDIO_METHODS, FIELDS, split_mitigation

    options, mitigation = split_mitigation({**spec.options, **options})
    if mitigation is not None and mitigation.method in AUDIO_METHODS:
        raise HalluscopeError(
            f"'{spec}': {mitigation.method} contrasts audio and a text LM has none; "
            "the hf backend offers mitigation=dola (use hf-audio/<dir> for aad, vcd, mti)"
        )
    backend = HFBackend(
        spec.model, resolve_options(HFOptions, spec.name, config, options, ("mitigation", *FIELDS)), mitigation
    )
    backend.spec = str(spec)
    return backend
