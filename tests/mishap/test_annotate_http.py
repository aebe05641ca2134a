"""The annotation API under hostile requests, over raw sockets and http.client: CSRF headers, body limits, malformed
JSON, idle connections, 200 parallel saves, idempotent retries, audio integrity, and the CLI's inputs."""

import http.client
import json
import logging
import os
import shutil
import socket
import sys
import threading
import uuid

import pytest

from halluscope.mishap.annotate import MAX_NOTE, Annotations, AnnotationServer, annotation_items
from support import scripted
from support.view_helpers import http_get

TOKEN = "test-token-http-1"


@pytest.fixture(scope="module")
def run(annotate_run_copy, tmp_path_factory):
    return annotate_run_copy(tmp_path_factory.mktemp("annotate-http"))


@pytest.fixture()
def srv(run):
    with AnnotationServer(run, token=TOKEN, timeout_s=2.0) as s:
        yield s


def good(srv, **over):
    body = {
        "save_id": uuid.uuid4().hex,
        "answer_id": srv.items[0]["id"],
        "annotator": "ann",
        "label": "grounded",
        "note": "",
        "mode": "independent",
    }
    body.update(over)
    return body


def raw(srv, request: bytes) -> tuple[int, dict, bytes]:
    """Send bytes as they are; read the whole reply (the server closes after an error)."""
    with socket.create_connection((srv.host, srv.port), timeout=10) as s:
        s.sendall(request)
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {k.lower(): v.strip() for k, v in (line.split(":", 1) for line in lines[1:])}
    return int(lines[0].split()[1]), headers, body


def post(srv, body, *, headers=None, raw_body: bytes | None = None):
    conn = http.client.HTTPConnection(srv.host, srv.port, timeout=10)
    h = {"Content-Type": "application/json", "X-Halluscope-Token": TOKEN}
    h.update(headers or {})
    h = {k: v for k, v in h.items() if v is not None}
    conn.request("POST", "/api/label", body=raw_body if raw_body is not None else json.dumps(body).encode(), headers=h)
    r = conn.getresponse()
    status, data = r.status, r.read()
    conn.close()
    return status, json.loads(data) if data else None


def rows(run, annotator):
    ann = Annotations(run)
    try:
        return [a for a in ann.all() if a.annotator == annotator]
    finally:
        ann.close()


def test_csrf_headers(srv, run):
    port = srv.port
    cases = [  # (extra headers, expected status, words in the error)
        ({"X-Halluscope-Token": None}, 403, "token"),
        ({"X-Halluscope-Token": "wrong-token-http"}, 403, "token"),
        ({"Cookie": f"mishap_token={TOKEN}", "X-Halluscope-Token": None}, 403, "token"),
        ({"Origin": f"http://127.0.0.1:{port + 1}"}, 403, "cross-origin"),  # another local port: same-site
        ({"Origin": "null"}, 403, "cross-origin"),
        ({"Origin": f"http://localhost:{port}"}, 403, "cross-origin"),
        ({"Host": f"evil.example:{port}"}, 403, "Host"),  # DNS rebinding
        ({"Host": f"127.0.0.1:{port + 1}"}, 403, "Host"),
        ({"Sec-Fetch-Site": "same-site"}, 403, "same-site"),
        ({"Sec-Fetch-Site": "cross-site"}, 403, "cross-site"),
        ({"Content-Type": "text/plain"}, 415, "application/json"),
        ({"Content-Type": "application/x-www-form-urlencoded"}, 415, "application/json"),
        ({"Content-Type": "multipart/form-data; boundary=x"}, 415, "application/json"),
        ({"Content-Type": None}, 415, "none"),
    ]
    for extra, want, words in cases:
        status, data = post(srv, good(srv, annotator="csrf"), headers=extra)
        assert status == want and words in data["error"], (extra, status, data)
    assert rows(run, "csrf") == []
    # the same request with the app's own headers is stored, with a charset parameter too
    status, data = post(
        srv,
        good(srv, annotator="csrf"),
        headers={
            "Origin": f"http://127.0.0.1:{port}",
            "Sec-Fetch-Site": "same-origin",
            "Content-Type": "application/json; charset=utf-8",
        },
    )
    assert status == 200 and data["ok"] and not data["duplicate"]
    assert len(rows(run, "csrf")) == 1
    # reads are guarded the same way; a preflight is never granted
    for method, path, extra in (
        ("GET", "/api/items", {"Host": f"evil.example:{port}"}),
        ("GET", "/", {"Host": f"evil.example:{port}"}),
        ("GET", "/api/labels?annotator=csrf", {"Origin": f"http://127.0.0.1:{port + 1}"}),
        ("OPTIONS", "/api/label", {"Origin": f"http://127.0.0.1:{port + 1}"}),
    ):
        conn = http.client.HTTPConnection(srv.host, srv.port, timeout=10)
        conn.request(method, path, headers={"X-Halluscope-Token": TOKEN, **extra})
        r = conn.getresponse()
        assert r.status == 403 and "Access-Control-Allow-Origin" not in dict(r.getheaders()), (method, path)
        conn.close()


@pytest.mark.parametrize(
    "length, want, words",
    [
        (b"Content-Length: -1\r\n", 400, "non-negative integer"),
        (b"Content-Length: abc\r\n", 400, "non-negative integer"),
        (b"Content-Length: 1e3\r\n", 400, "non-negative integer"),
        (b"Content-Length: +5\r\n", 400, "non-negative integer"),
        (b"Content-Length: 5\r\nContent-Length: 6\r\n", 400, "non-negative integer"),
        (b"", 411, "Content-Length"),
        (b"Transfer-Encoding: chunked\r\n", 411, "Transfer-Encoding"),
        (b"Content-Length: 99999999999999999999\r\n", 413, "limit"),
        (b"Content-Length: 64001\r\n", 413, "limit"),
    ],
)
def test_body_limits_cannot_be_bypassed(srv, run, length, want, words):
    body = json.dumps(good(srv, annotator="limits")).encode()
    req = (
        (
            f"POST /api/label HTTP/1.1\r\nHost: 127.0.0.1:{srv.port}\r\nContent-Type: application/json\r\n"
            f"X-Halluscope-Token: {TOKEN}\r\n"
        ).encode()
        + length
        + b"\r\n"
        + body
    )
    status, headers, data = raw(srv, req)
    assert status == want and words in json.loads(data)["error"]
    assert headers.get("connection") == "close"
    assert rows(run, "limits") == []


def test_malformed_json_is_a_400_with_a_message(srv, run):
    aid = srv.items[0]["id"]
    bad = {
        "list answer_id": (json.dumps(good(srv, answer_id=[aid])).encode(), "answer_id"),
        "bare list": (b"[]", "object"),
        "bare string": (b'"x"', "object"),
        "empty body": (b"", "JSON"),
        "lone surrogate": (json.dumps(good(srv, note="\ud800")).encode(), "JSON"),
        "lone surrogate in the id": (json.dumps(good(srv, answer_id="\udfff")).encode(), "JSON"),
        "invalid utf-8": (b'{"save_id": "\xff\xfe", "answer_id": "x"}', "JSON"),
        "number label": (json.dumps(good(srv, label=1)).encode(), "label"),
        "unknown label": (json.dumps(good(srv, label="maybe")).encode(), "label"),
        "null note": (json.dumps(good(srv, note=None)).encode(), "note"),
        "object annotator": (json.dumps(good(srv, annotator={"a": 1})).encode(), "annotator"),
        "bad annotator": (json.dumps(good(srv, annotator="<script>")).encode(), "annotator"),
        "bool mode": (json.dumps(good(srv, mode=True)).encode(), "mode"),
        "unknown field": (json.dumps(good(srv, extra=1)).encode(), "extra"),
        "no save id": (json.dumps({k: v for k, v in good(srv).items() if k != "save_id"}).encode(), "save_id"),
        "short save id": (json.dumps(good(srv, save_id="x")).encode(), "save_id"),
        "unknown answer": (json.dumps(good(srv, answer_id="no-such-answer")).encode(), "unknown response"),
        "deep nesting": (b"[" * 5000 + b"]" * 5000, "JSON"),
        "truncated": (json.dumps(good(srv))[:-5].encode(), "JSON"),
        "note over the limit": (
            json.dumps(good(srv, annotator="ann", note="x" * (MAX_NOTE + 1))).encode(),
            f"at most {MAX_NOTE} characters",
        ),
    }
    for name, (body, words) in bad.items():
        status, data = post(srv, None, raw_body=body)
        assert status == 400 and words in data["error"], (name, status, data)
        assert "Traceback" not in data["error"]
    assert rows(run, "ann") == []  # the over-long note was refused whole, not cut
    status, data = post(srv, good(srv, annotator="ann", note="é" * MAX_NOTE))  # exactly the limit, non-ASCII
    assert status == 200 and len(rows(run, "ann")[0].note) == MAX_NOTE


def test_idle_connections_are_closed(run):
    with AnnotationServer(run, token=TOKEN, timeout_s=0.3) as srv:
        socks = [socket.create_connection((srv.host, srv.port), timeout=30) for _ in range(20)]
        # half-sent requests too: a request line without the end of the headers, a body shorter than announced
        socks[0].sendall(b"GET /api/items HTTP/1.1\r\n")
        body = json.dumps(good(srv, annotator="idle")).encode()
        socks[1].sendall(
            f"POST /api/label HTTP/1.1\r\nHost: 127.0.0.1:{srv.port}\r\nX-Halluscope-Token: {TOKEN}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n".encode()
            + body[:-1]
        )
        for s in socks:
            assert s.recv(100) == b""  # the server hung up (recv would raise after 30 s if it had not)
            s.close()
        assert raw(srv, f"GET /app.css HTTP/1.0\r\nHost: 127.0.0.1:{srv.port}\r\n\r\n".encode())[0] == 200
    assert rows(run, "idle") == []  # the label whose last byte never came is not stored


def test_200_parallel_saves_each_stored_once(srv, run):
    assert srv._httpd.request_queue_size >= 128
    n = 200
    items = srv.items
    bodies = [
        good(
            srv,
            annotator=f"par{i % 7}",
            answer_id=items[i % len(items)]["id"],
            label=("grounded", "hallucinated")[i % 2],
            note=f"n{i}",
        )
        for i in range(n)
    ]

    def fire(all_bodies):
        barrier = threading.Barrier(len(all_bodies))
        results = [None] * len(all_bodies)

        def one(i):
            barrier.wait()
            try:
                results[i] = post(srv, all_bodies[i])
            except OSError as exc:  # a reset connection would land here
                results[i] = (None, repr(exc))

        threads = [threading.Thread(target=one, args=(i,)) for i in range(len(all_bodies))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return results

    first = fire(bodies)
    assert [r[0] for r in first] == [200] * n, [r for r in first if r[0] != 200][:3]
    assert not any(r[1]["duplicate"] for r in first)
    again = fire(bodies)  # every save retried at once (a lost reply): nothing is stored twice
    assert [r[0] for r in again] == [200] * n and all(r[1]["duplicate"] for r in again)
    stored = [a for w in range(7) for a in rows(run, f"par{w}")]
    assert len(stored) == n
    assert sorted(a.note for a in stored) == sorted(f"n{i}" for i in range(n))
    # a save id reused for a different label is a conflict, not an overwrite
    status, data = post(srv, {**bodies[0], "label": "hallucinated" if bodies[0]["label"] == "grounded" else "grounded"})
    assert status == 409 and "different label" in data["error"]


def test_save_ids_survive_an_old_table(tmp_path):
    """A label table from before save ids gains the column; old rows stay."""
    import sqlite3

    d = tmp_path / "old"
    d.mkdir()
    db = sqlite3.connect(d / "halluscope.sqlite")
    db.executescript(
        "CREATE TABLE mishap_annotations (id INTEGER PRIMARY KEY AUTOINCREMENT, answer_id TEXT NOT NULL, "
        "annotator TEXT NOT NULL, label TEXT NOT NULL, note TEXT NOT NULL DEFAULT '', mode TEXT NOT NULL, "
        "created REAL NOT NULL); INSERT INTO mishap_annotations VALUES (1, 'a', 'x', 'grounded', '', "
        "'independent', 1.0);"
    )
    db.commit()
    db.close()
    ann = Annotations(d)
    assert ann.save(answer_id="b", annotator="x", label="hallucinated", save_id="s-12345678")[1] is True
    assert ann.save(answer_id="b", annotator="x", label="hallucinated", save_id="s-12345678")[1] is False
    assert [(a.answer_id, a.label) for a in ann.all()] == [("a", "grounded"), ("b", "hallucinated")]
    ann.close()


def test_audio_served_only_when_it_matches_the_record(tmp_path_factory, caplog):
    run = scripted.build_run(tmp_path_factory.mktemp("annotate-audio"), judge=False)
    _, clips = annotation_items(run)
    caplog.set_level(logging.WARNING, logger="halluscope.mishap.annotate")
    with AnnotationServer(run, token=TOKEN) as srv:

        def get(cid):
            return http_get(srv, f"/audio/{cid}", {"X-Halluscope-Token": TOKEN})[:2]

        ids = sorted(clips)
        a, b, c, d, e = ids[:5]
        assert get(a)[0] == 200
        pa = clips[a].audio
        original = open(pa, "rb").read()
        with open(pa, "r+b") as fh:  # one byte changed
            fh.seek(60)
            fh.write(bytes([original[60] ^ 1]))
        status, body = get(a)
        assert status == 409 and b"sha256" in body and b"changed since import" in body
        assert any(a in r.getMessage() and "sha256" in r.getMessage() for r in caplog.records)

        pb = clips[b].audio  # a symlink to a file with the very same bytes: still refused
        copy = tmp_path_factory.mktemp("elsewhere") / "same.wav"
        shutil.copyfile(pb, copy)
        os.replace(pb, str(pb) + ".orig")
        os.symlink(copy, pb)
        status, body = get(b)
        assert status == 409 and b"symbolic link" in body

        pc = clips[c].audio  # a symlink out to /etc/passwd
        os.replace(pc, str(pc) + ".orig")
        os.symlink("/etc/passwd", pc)
        status, body = get(c)
        assert status == 409 and b"root:" not in body

        pd = clips[d].audio  # a folder in its place
        os.replace(pd, str(pd) + ".orig")
        os.mkdir(pd)
        assert get(d)[0] == 409

        pe = clips[e].audio  # deleted
        os.replace(pe, str(pe) + ".orig")
        status, body = get(e)
        assert status == 409 and b"cannot be opened" in body
        os.replace(str(pe) + ".orig", pe)
        assert get(e)[0] == 200  # put back unchanged: served again

        # a clip recorded outside the run and the manifest's folder is refused even when its bytes match
        outside = tmp_path_factory.mktemp("outside") / "x.wav"
        shutil.copyfile(pe, outside)
        srv.clips[e] = srv.clips[e].model_copy(update={"audio": str(outside.resolve())})
        status, body = get(e)
        assert status == 409 and b"outside the run directory" in body


def _main(monkeypatch, capsys, *args):
    from halluscope.cli.main import main

    monkeypatch.setattr(sys, "argv", ["halluscope", "mishap", "annotate", *map(str, args)])
    with pytest.raises(SystemExit) as exit_:
        main()
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return exit_.value.code, " ".join(err.split())


def test_cli_inputs_exit_2_with_a_message(run, tmp_path, monkeypatch, capsys):
    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen()
    try:
        code, err = _main(monkeypatch, capsys, run, "--port", busy.getsockname()[1])
        assert code == 2 and "already in use" in err and "another port" in err
    finally:
        busy.close()
    for args, words in (
        (["--host", "not a host"], "expected an IP address"),
        (["--host", "example.com"], "expected an IP address"),
        (["--host", "::"], "loopback"),
        (["--host", "0.0.0.0"], "loopback"),
        (["--host", "192.0.2.1", "--allow-remote"], "not an address of this machine"),
        (["--port", "70000"], "port"),
        (["--port", "-1"], "port"),
        (["--sample", "-3"], "sample"),
        (["--sample", "0"], "sample"),
        (["--token", "short"], "token: expected"),
        (["--token", "has spaces in it"], "token: expected"),
        (["--export", tmp_path / "missing" / "labels.csv"], "does not exist"),
        (["--export", tmp_path], "is a folder"),
    ):
        code, err = _main(monkeypatch, capsys, run, *args)
        assert code == 2 and words in err, (args, err)
    assert not (tmp_path / "missing").exists()
    code, err = _main(monkeypatch, capsys, tmp_path / "typo-run", "--export", tmp_path / "l.csv")
    assert code == 2 and "no run at" in err and not (tmp_path / "typo-run").exists()
    code, err = _main(monkeypatch, capsys, tmp_path / "typo-run")
    assert code == 2 and "no run at" in err and not (tmp_path / "typo-run").exists()


def test_ipv6_loopback(run):
    try:
        socket.socket(socket.AF_INET6).close()
    except OSError:
        pytest.skip("no IPv6 on this machine")
    with AnnotationServer(run, host="::1", token=TOKEN) as srv:
        assert srv.url.startswith(f"http://[::1]:{srv.port}/#token=")
        conn = http.client.HTTPConnection("::1", srv.port, timeout=10)
        conn.request("GET", "/api/items", headers={"X-Halluscope-Token": TOKEN})
        r = conn.getresponse()
        assert r.status == 200 and json.loads(r.read())["items"]


def test_an_unexpected_error_is_a_500_with_a_message(srv, run, monkeypatch, caplog):
    def broken(**kw):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(srv.labels, "save", broken)
    status, data = post(srv, good(srv, annotator="boom"))
    assert status == 500 and "RuntimeError" in data["error"] and "log" in data["error"]
    # one line naming the error in the log, no traceback (that is at debug level only)
    lines = [r for r in caplog.records if "internal error" in r.getMessage() and r.levelname == "ERROR"]
    assert lines and "RuntimeError: disk on fire" in lines[0].getMessage() and not lines[0].exc_info
