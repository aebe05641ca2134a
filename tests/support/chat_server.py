"""A loopback server speaking the chat-completions protocol, with scripted replies, for tests."""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Reply:
    """One scripted answer: a completion with ``content``, or a raw ``body``, after ``delay`` seconds."""

    content: str | None = None
    status: int = 200
    body: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    truncate: bool = False  # promise more bytes than are sent, then close the connection
    refusal: str | None = None
    finish_reason: str = "stop"


def completion(
    content: str | None, *, model: str = "m", refusal: str | None = None, finish_reason: str = "stop"
) -> str:
    return json.dumps(
        {
            "id": "chatcmpl-test",
            "object": "chat.completion",
            "created": 0,
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content, "refusal": refusal},
                    "finish_reason": finish_reason,
                }
            ],
            "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18},
        },
        ensure_ascii=False,
    )


def user_text(request: dict) -> str:
    """The user turns' text; for content-part messages (audio requests), their text parts."""
    out = []
    for m in request["messages"]:
        if m["role"] == "user":
            c = m["content"]
            out.append(c if isinstance(c, str) else " ".join(p.get("text", "") for p in c if p.get("type") == "text"))
    return "\n".join(out)


class ChatServer:
    """``script(request_body, n)`` returns the Reply for the n-th request (1-based) carrying that body.

    Counts every request it receives, overall and per user prompt, so tests can see repeated calls.
    """

    def __init__(self, script: Callable[[dict, int], Reply]) -> None:
        self.script = script
        self.requests: list[dict] = []
        self.headers: list[dict] = []
        self.per_prompt: Counter[str] = Counter()
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                n = int(self.headers.get("Content-Length", 0))
                req = json.loads(self.rfile.read(n))
                with server._lock:
                    server.requests.append(req)
                    server.headers.append({k.lower(): v for k, v in self.headers.items()})
                    prompt = user_text(req)
                    server.per_prompt[prompt] += 1
                    count = server.per_prompt[prompt]
                reply = server.script(req, count)
                if reply.delay:
                    time.sleep(reply.delay)
                body = (
                    reply.body
                    if reply.body is not None
                    else completion(
                        reply.content,
                        model=req.get("model", "m"),
                        refusal=reply.refusal,
                        finish_reason=reply.finish_reason,
                    )
                )
                data = body.encode("utf-8")
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    for k, v in reply.headers.items():
                        self.send_header(k, v)
                    self.send_header("Content-Length", str(len(data) + (100 if reply.truncate else 0)))
                    self.end_headers()
                    self.wfile.write(data[: len(data) // 2] if reply.truncate else data)
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a stall past its timeout)
                if reply.truncate:
                    self.close_connection = True

        class Server(ThreadingHTTPServer):
            request_queue_size = 128  # the default 5 overflows at concurrency 8 and resets connections
            daemon_threads = True

        self._httpd = Server(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    @property
    def count(self) -> int:
        return len(self.requests)

    def __enter__(self) -> ChatServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


# -- replies in the seed 000 App. A.1 output format ---------------------------------------------------

REPORT_NAMES = {
    "en": {
        "fabrication": [
            "Factual accuracy",
            "Credibility",
            "Fluency",
            "Coherence",
            "Relevance",
            "Satisfaction with fabrication level",
            "Adequacy of type",
        ],
        "contradiction": [
            "Factual accuracy",
            "Credibility",
            "Fluency",
            "Coherence",
            "Relevance",
            "Satisfaction with contradiction level",
            "Adequacy of type",
        ],
        "context_inconsistency": [
            "Internal Consistency",
            "Logical Coherence",
            "Fluency",
            "Overall Coherence",
            "Relevance to Original News",
            "Satisfaction with Inconsistency Level",
            "Adequacy of Inconsistency Type",
        ],
    },
    "ru": {
        "fabrication": [
            "Фактическая точность",
            "Достоверность",
            "Беглость",
            "Связность",
            "Релевантность",
            "Удовлетворенность уровнем фабрикации",
            "Адекватность типа",
        ],
        "contradiction": [
            "Фактическая точность",
            "Достоверность",
            "Беглость",
            "Связность",
            "Релевантность",
            "Удовлетворенность уровнем противоречия",
            "Адекватность типа",
        ],
        "context_inconsistency": [
            "Внутренняя согласованность",
            "Логическая связность",
            "Беглость",
            "Общая связность",
            "Релевантность исходной новости",
            "Удовлетворенность уровнем несоответствия",
            "Адекватность типа несоответствия",
        ],
    },
    "kk": {
        "fabrication": [
            "Фактілік дәлдік",
            "Сенімділік",
            "Еркіндік",
            "Үйлесімділік",
            "Өзектілік",
            "Қанағаттану деңгейі",
            "Түрдің сәйкестігі",
        ],
        "contradiction": [
            "Фактілік дәлдік",
            "Сенімділік",
            "Еркіндік",
            "Үйлесімділік",
            "Өзектілік",
            "Қанағаттану деңгейі",
            "Түрдің сәйкестігі",
        ],
        "context_inconsistency": [
            "Ішкі үйлесімділік",
            "Логикалық байланыс",
            "Еркіндік",
            "Жалпы үйлесімділік",
            "Өзектілік",
            "Қанағаттану деңгейі",
            "Түрдің сәйкестігі",
        ],
    },
}
SCALE_WORDS = {
    "en": ["Very Low", "Low", "Medium", "High", "Very High"],
    "ru": ["Очень низкая", "Низкая", "Средняя", "Высокая", "Очень высокая"],
    "kk": ["Өте төмен", "Төмен", "Орташа", "Жоғары", "Өте жоғары"],
}
MARKERS = {"en": "(full text)", "ru": "(полный текст)", "kk": "(толық мәтін)"}
CI_MARKERS = {"en": "(full text)", "ru": "(полный текст на русском языке)", "kk": "(толық мәтіні қазақ тілінде)"}


def a1_reply(
    rewritten: str | None,
    *,
    language: str = "en",
    type: str = "fabrication",
    ratings: tuple[int, ...] = (2, 3, 4, 4, 5, 4, 5),
    marker: bool = True,
) -> str:
    """A reply shaped like the App. A.1 format: extraction, version, report, deviations, full text."""
    names = REPORT_NAMES[language][type]
    words = SCALE_WORDS[language]
    report = "\n".join(f"- **{n}**: {words[r - 1]}" for n, r in zip(names, ratings))
    mark = (CI_MARKERS if type == "context_inconsistency" else MARKERS)[language]
    tail = f"- Severity description {mark}:\n{rewritten}" if marker else f"Here is the article:\n{rewritten}"
    return (
        "1. Narrative: the central bank changed its rate. Entities: National Bank.\n\n"
        "2. Version of the news: see below.\n\n"
        f"3. Report:\n{report}\n\n"
        "4. Deviations:\n- Sentence 1: the high rate was changed.\n\n"
        f"5. Full text:\n{tail}\n"
    )


def article_of(prompt: str) -> str:
    """The {ARTICLE TEXT} an App. A.1 prompt carries."""
    import re

    m = re.search(r"Original news: (.*?)\n\nFollow this structure", prompt, re.S) or re.search(
        r"Original news article[^\n]*:\n(.*?)\n\nYour task:", prompt, re.S
    )
    assert m, prompt[:200]
    return m.group(1)


def type_of(prompt: str) -> tuple[str, str]:
    """(type, language) of an App. A.1 prompt."""
    import re

    type_ = (
        "context_inconsistency"
        if "context inconsistency" in prompt
        else "fabrication"
        if "factual fabrications" in prompt
        else "contradiction"
    )
    lang = (
        "ru"
        if re.search(r"\*\*Russian\*\*|\(in Russian\)", prompt)
        else "kk"
        if re.search(r"\*\*Kazakh\*\*|\(in Kazakh\)", prompt)
        else "en"
    )
    return type_, lang


def good_rewrite(source: str) -> str:
    """A rewrite that keeps every number and the length: a few words changed."""
    words = source.split()
    words[0] = words[0] + "-X"
    return " ".join(words) + " Indeed."
