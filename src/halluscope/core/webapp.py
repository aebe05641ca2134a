"""The loopback web server shared by the MISHAP annotation app and the sample viewer.

Security model (docs/tutorials/mishap.md, "Security model"), the same for every app built on it:

* The printed URL carries a per-session token in its fragment (``/#token=...``), which browsers never send to a
  server; the page moves it into ``sessionStorage`` and sends it in the ``X-Halluscope-Token`` header, which
  cross-site forms and ``no-cors`` fetches cannot set. No cookie at all.
* Every request: ``Host`` must be the bound host:port (DNS rebinding), ``Origin`` (when present) the app's own
  origin, ``Sec-Fetch-Site`` (when present, API paths) same-origin or none. Writes need ``application/json`` (else
  415), a valid ``Content-Length`` (absent 411, not a number 400, over the limit 413) and a strict body.
* Bounded: at most :data:`MAX_THREADS` requests are handled at once (more wait in a queue of :data:`BACKLOG`, beyond
  that 503); each request must deliver its headers and body within :data:`DEADLINE_S` (a client trickling bytes is
  dropped); headers over :data:`MAX_HEADER_BYTES` are 431; every handler error is a 4xx/503 with a one-line reason
  (a store locked by another process: 503 "store busy, retrying", and the pages retry), never a traceback.
* With ``--allow-remote`` on a wildcard address the Host must be an IP address, ``localhost`` or this machine's name
  (a DNS-rebinding name is refused), with the app's port.
* Files (clips) are served only from regular files (no symlink on the path) inside allowed roots, and only when
  their sha256 equals the recorded one (:func:`read_verified`).

An app subclasses :class:`LoopbackApp` and fills ``static`` (token-free pages), ``api_get`` and ``api_post``.
"""

from __future__ import annotations

import errno
import heapq
import hmac
import json
import logging
import os
import secrets
import socket
import stat
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from urllib.parse import urlsplit

from pydantic import ValidationError

from halluscope.core.errors import HalluscopeError
from halluscope.core.hashing import sha256_hex
from halluscope.core.hosts import _wildcard_host, parse_host as parse_host

log = logging.getLogger(__name__)

MAX_BODY = 64_000  # bytes of one write request
MAX_AUDIO = 512 * 2**20
TIMEOUT_S = 15.0  # a connection idle this long is closed and its thread freed
BACKLOG = 256  # listen queue: 200 users' saves arriving at once are accepted, not reset
MAX_THREADS = 32  # requests handled at once; the others wait (up to BACKLOG more), beyond that 503
DEADLINE_S = 10.0  # a request's line, headers and body must arrive within this (slow clients are dropped)
MAX_HEADER_BYTES = 16_384  # all request headers together (431 beyond)
MAX_NUMBER_DIGITS = 12  # Content-Length and numbers in paths: longer is refused before any conversion
BUSY_S = 4.0  # a save waits this long for another process's lock on the store, then 503 (and the page retries)
TOKEN_HEADER = "X-Halluscope-Token"
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; media-src 'self' blob:; connect-src 'self'; "
    "img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)


class _Deadlines:
    """One thread that shuts the socket of every request that has not delivered its headers and body in time."""

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, object]] = []
        self._cond = threading.Condition()
        self._n = 0
        self._stopped = False
        threading.Thread(target=self._loop, daemon=True, name="halluscope-deadlines").start()

    def add(self, seconds: float, handler: object) -> int:
        with self._cond:
            self._n += 1
            heapq.heappush(self._heap, (time.monotonic() + seconds, self._n, handler))
            self._cond.notify()
            return self._n

    def stop(self) -> None:
        with self._cond:
            self._stopped = True
            self._cond.notify()

    def _loop(self) -> None:
        while True:
            with self._cond:
                while not self._stopped and (not self._heap or self._heap[0][0] > time.monotonic()):
                    self._cond.wait(None if not self._heap else max(0.0, self._heap[0][0] - time.monotonic()))
                if self._stopped:
                    return
                _, n, handler = heapq.heappop(self._heap)
            handler._expire(n)  # type: ignore[attr-defined]


class Refused(Exception):
    """A request the app answers with an HTTP error and a JSON ``{"error": message}``."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status, self.message = status, message


def problems(exc: ValidationError) -> str:
    """A pydantic error as one line per field, with what was got (long strings by length only)."""
    out = []
    for e in exc.errors(include_url=False):
        where = ".".join(str(p) for p in e["loc"]) or "body"
        got = e.get("input")
        shown = f"{len(got)} characters" if isinstance(got, str) and len(got) > 60 else repr(got)[:80]
        out.append(f"{where}: {e['msg']}" + ("" if e["type"] in ("json_invalid", "missing") else f" (got {shown})"))
    return "; ".join(out)


def read_verified(
    path: str | Path,
    sha256: str | None,
    roots: Sequence[Path],
    *,
    redo: str,
    roots_name: str = "the run directory",
    since: str = "it was recorded",
    max_bytes: int = MAX_AUDIO,
) -> bytes:
    """The bytes of a regular file inside ``roots`` whose sha256 is ``sha256``; HalluscopeError saying why not.

    For the messages: ``redo`` names the command that records the file again, ``roots_name`` the allowed folders,
    ``since`` when the hash was taken."""
    path = Path(os.path.abspath(path))  # a relative path is compared as the absolute one it names
    real = Path(os.path.realpath(path))
    roots = [Path(os.path.realpath(r)) for r in roots]
    if real != path:
        raise HalluscopeError(f"{path} is, or goes through, a symbolic link (to {real})")
    if not any(real.is_relative_to(r) for r in roots):
        raise HalluscopeError(f"{path} lies outside {roots_name} ({', '.join(map(str, roots))})")
    if not sha256:
        raise HalluscopeError(f"{path}: no sha256 is recorded for it; re-run {redo}")
    try:  # O_NOFOLLOW: a symlink swapped in after the check is refused; O_NONBLOCK: a FIFO does not hang us
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        raise HalluscopeError(f"{path} cannot be opened ({exc.strerror})") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise HalluscopeError(f"{path} is not a regular file")
        if st.st_size > max_bytes:
            raise HalluscopeError(f"{path} is {st.st_size} bytes, over the {max_bytes}-byte limit")
        with os.fdopen(os.dup(fd), "rb") as fh:
            data = fh.read(max_bytes + 1)
    except OSError as exc:
        raise HalluscopeError(f"{path} cannot be read ({exc.strerror})") from None
    finally:
        os.close(fd)
    got = sha256_hex(data)
    if got != sha256:
        raise HalluscopeError(
            f"{path} changed since {since}: sha256 {got[:16]}... != recorded {sha256[:16]}...; "
            f"re-run {redo} if the change is intended"
        )
    return data


Reply = tuple[int, bytes, str]  # status, body, content type


def _line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text if len(text) <= 200 else text[:197] + "..."


def json_reply(obj: object, status: int = 200) -> Reply:
    return status, json.dumps(obj, ensure_ascii=False).encode(), "application/json; charset=utf-8"


class LoopbackApp:
    """A token-guarded threading HTTP server on loopback; ``url`` carries the token (in its fragment).

    Subclasses set ``static`` (path -> (loader of bytes, content type), served without the token: they hold no
    secret) and implement ``api_get(path, query)`` and ``api_post(path, body)`` returning a :data:`Reply` or
    raising :class:`Refused`; every other path is 404.
    """

    server_version = "halluscope"
    what = "the app"
    static: dict[str, tuple[Callable[[], bytes], str]] = {}
    post_paths: frozenset[str] = frozenset()
    max_body = MAX_BODY
    max_threads = MAX_THREADS
    deadline_s = DEADLINE_S
    csp = CSP

    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        token: str | None = None,
        allow_remote: bool = False,
        timeout_s: float = TIMEOUT_S,
    ) -> None:
        host, wildcard = parse_host(host, allow_remote, self.what)
        if not 0 <= port <= 65535:
            raise HalluscopeError(f"port: expected 0-65535 (0 picks a free port), got {port}")
        self.token = token or secrets.token_urlsafe(18)
        if len(self.token) < 8 or not all(c.isascii() and (c.isalnum() or c in "-_.~") for c in self.token):
            raise HalluscopeError("token: expected at least 8 characters among letters, digits and - _ . ~")
        app = self
        self._deadlines = _Deadlines()
        log = logging.getLogger(type(self).__module__)  # refusals and errors go to the app's own logger

        class Handler(BaseHTTPRequestHandler):
            server_version = app.server_version
            sys_version = ""
            timeout = timeout_s  # socket timeout: an idle or slow client is dropped, its thread freed

            def log_message(self, *args: object) -> None:
                pass

            def _send(self, status: int, body: bytes, ctype: str) -> None:
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Content-Security-Policy", app.csp)
                self.send_header("X-Content-Type-Options", "nosniff")
                self.send_header("Referrer-Policy", "no-referrer")
                self.send_header("Cache-Control", "no-store")
                self.send_header("Cross-Origin-Resource-Policy", "same-origin")
                if status == 503:
                    self.send_header("Retry-After", "1")
                if status >= 400:
                    self.close_connection = True
                    self.send_header("Connection", "close")
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(body)

            def _json(self, status: int, obj: object) -> None:
                self._send(*json_reply(obj, status))

            def _guard(self, *, api: bool) -> None:
                """Host, Origin, Sec-Fetch-Site for every request; the token header for the API."""
                own = app.host_port if not wildcard else None
                given_host = self.headers.get("Host", "")
                if own is not None and given_host != own or own is None and not _wildcard_host(given_host, app.port):
                    shown = own or f"<an address of this machine>:{app.port}"
                    raise Refused(
                        403, f"forbidden: Host {given_host[:100]!r} is not this app's {shown}; open {app.origin}/"
                    )
                origin = self.headers.get("Origin")
                if origin is not None and origin != f"http://{given_host}":
                    raise Refused(403, f"forbidden: cross-origin request from {origin!r}")
                site = self.headers.get("Sec-Fetch-Site")
                if api and site is not None and site not in ("same-origin", "none"):
                    raise Refused(403, f"forbidden: {site} request")
                if api:
                    given = self.headers.get(TOKEN_HEADER)
                    if given is None or not hmac.compare_digest(given.encode("utf-8", "replace"), app.token.encode()):
                        raise Refused(403, f"forbidden: wrong or missing token (the {TOKEN_HEADER} header)")

            def handle_one_request(self) -> None:
                """One request under a deadline for its line, headers and body (``_expire`` shuts a late one)."""
                self._expired, self._done = False, False
                self._ticket = app._deadlines.add(app.deadline_s, self)
                try:
                    super().handle_one_request()
                finally:
                    self._read_done()

            def _expire(self, ticket: int) -> None:
                if ticket != self._ticket or self._done:
                    return
                self._expired, self.close_connection = True, True
                log.info("dropped %s: the request did not arrive within %g s", self.client_address[0], app.deadline_s)
                try:
                    self.connection.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

            def _read_done(self) -> None:
                self._done = True  # the request is read: from here the socket timeout alone applies
                if self._expired:
                    raise ConnectionAbortedError("request deadline passed")

            def _run(self, handler) -> None:  # type: ignore[no-untyped-def]
                """One request: a refusal is a JSON error with a one-line reason; never a traceback."""
                try:
                    size = sum(len(k) + len(v) + 4 for k, v in self.headers.items())
                    if size > MAX_HEADER_BYTES:
                        raise Refused(
                            431, f"request headers of {size} bytes are over the {MAX_HEADER_BYTES}-byte limit"
                        )
                    if self.command != "POST":
                        self._read_done()
                    handler()
                except Refused as exc:
                    log.info(
                        "refused %s %s from %s: %s", self.command, self.path[:200], self.client_address[0], exc.message
                    )
                    self._json(exc.status, {"error": exc.message})
                except (ConnectionError, TimeoutError):  # the client went away, or was too slow
                    self.close_connection = True
                except (ValueError, OverflowError, UnicodeError) as exc:  # a request the checks above let through
                    log.info("bad request %s %s: %s", self.command, self.path[:200], _line(exc))
                    self._json(400, {"error": f"bad request: {_line(exc)}"})
                except Exception as exc:  # noqa: BLE001 - one line in the log, the traceback at debug level only
                    log.error(
                        "internal error on %s %s: %s: %s", self.command, self.path[:200], type(exc).__name__, _line(exc)
                    )
                    log.debug("internal error", exc_info=True)
                    self._json(
                        500, {"error": f"internal error ({type(exc).__name__}); the server's log has the details"}
                    )

            def do_GET(self) -> None:  # noqa: N802
                self._run(self._get)

            do_HEAD = do_GET

            def do_OPTIONS(self) -> None:  # noqa: N802  (a CORS preflight: never granted)
                self._run(self._options)

            def do_POST(self) -> None:  # noqa: N802
                self._run(self._post)

            def _get(self) -> None:
                parts = urlsplit(self.path)
                self._guard(api=parts.path not in app.static)
                if parts.path in app.static:  # no secret in these: the token arrives in the URL fragment
                    load, ctype = app.static[parts.path]
                    return self._send(200, load(), ctype)
                self._send(*app.api_get(parts.path, parts.query))

            def _options(self) -> None:
                self._guard(api=True)
                raise Refused(405, "method not allowed")

            def _body(self) -> bytes:
                if self.headers.get("Transfer-Encoding"):
                    raise Refused(411, "length required: send Content-Length, not Transfer-Encoding")
                lengths = self.headers.get_all("Content-Length") or []
                if not lengths:
                    raise Refused(411, "length required: no Content-Length header")
                raw = lengths[0].strip()
                if len(lengths) > 1 or not raw.isdigit() or not raw.isascii():
                    shown = ", ".join(lengths)
                    raise Refused(
                        400,
                        "Content-Length: expected one non-negative integer, got "
                        f"{shown[:40]!r}{'...' if len(shown) > 40 else ''}",
                    )
                if len(raw.lstrip("0")) > MAX_NUMBER_DIGITS or int(raw) > app.max_body:
                    raise Refused(
                        413,
                        f"request body of {raw[:20]}{'...' if len(raw) > 20 else ''} bytes is over the "
                        f"{app.max_body}-byte limit",
                    )
                body = self.rfile.read(int(raw))
                self._read_done()
                if len(body) < int(raw):
                    raise ConnectionAbortedError("the body ended early")
                return body

            def _post(self) -> None:
                self._guard(api=True)
                path = urlsplit(self.path).path
                if path not in app.post_paths:
                    raise Refused(404, "not found")
                ctype = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
                if ctype != "application/json":
                    raise Refused(415, f"Content-Type: expected application/json, got {ctype or 'none'!r}")
                self._send(*app.api_post(path, self._body()))

        family = socket.AF_INET6 if ":" in host else socket.AF_INET

        class Server(HTTPServer):
            """A bounded pool of MAX_THREADS handler threads; a connection beyond the pool and its queue gets 503."""

            request_queue_size = BACKLOG
            address_family = family
            pool = ThreadPoolExecutor(max_workers=app.max_threads, thread_name_prefix="halluscope-http")
            slots = threading.BoundedSemaphore(app.max_threads + BACKLOG)

            def process_request(self, request, client_address):  # type: ignore[no-untyped-def]
                if not self.slots.acquire(blocking=False):
                    try:
                        request.sendall(
                            b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
                            b"Retry-After: 1\r\nConnection: close\r\nContent-Length: 34\r\n\r\n"
                            b'{"error": "server busy, retrying"}'
                        )
                    except OSError:
                        pass
                    self.shutdown_request(request)
                    return
                self.pool.submit(self._work, request, client_address)

            def _work(self, request, client_address):  # type: ignore[no-untyped-def]
                try:
                    self.finish_request(request, client_address)
                except Exception:  # noqa: BLE001 - the handler answers its own errors; a dead socket ends here
                    log.debug("connection error", exc_info=True)
                finally:
                    self.shutdown_request(request)
                    self.slots.release()

            def server_close(self) -> None:
                super().server_close()
                self.pool.shutdown(wait=False, cancel_futures=True)

            def server_bind(self) -> None:  # HTTPServer's would do a reverse DNS lookup of the address
                self.socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                self.socket.bind(self.server_address)
                self.server_address = self.socket.getsockname()
                self.server_name, self.server_port = host, self.server_address[1]

        try:
            self._httpd = Server((host, port), Handler)
        except OSError as exc:
            self._deadlines.stop()
            self.close()
            why = {
                errno.EADDRINUSE: "is already in use (another halluscope server?)",
                errno.EACCES: "needs privileges (ports below 1024)",
                errno.EADDRNOTAVAIL: "is not an address of this machine",
            }.get(exc.errno or 0, f"cannot be bound ({exc})")
            raise HalluscopeError(
                f"{host} port {port} {why}. Fix: pick another port (0 picks a free one) or host"
            ) from None
        self.host, self.port = host, self._httpd.server_address[1]
        self._thread: threading.Thread | None = None

    # -- what an app provides --------------------------------------------------------------------------------
    def api_get(self, path: str, query: str) -> Reply:
        raise Refused(404, "not found")

    def api_post(self, path: str, body: bytes) -> Reply:
        raise Refused(404, "not found")

    def close(self) -> None:
        """Release what the app holds (called on stop, and when binding fails)."""

    # -- the server ----------------------------------------------------------------------------------------------
    @property
    def host_port(self) -> str:
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"

    @property
    def origin(self) -> str:
        return f"http://{self.host_port}"

    @property
    def url(self) -> str:
        return f"{self.origin}/#token={self.token}"

    def start(self):  # type: ignore[no-untyped-def]
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        self._httpd.serve_forever()

    def stop(self) -> None:
        if self._thread is not None:
            self._httpd.shutdown()
        self._httpd.server_close()
        self._deadlines.stop()
        self.close()

    def __enter__(self):  # type: ignore[no-untyped-def]
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
