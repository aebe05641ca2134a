"""The annotation app, round two: slow clients dropped under a bounded pool while others are answered, a store
locked by another process answers 503 and the retry stores the label once (label reads meanwhile do not wait),
numbers too long to convert, huge headers, the Host check on a wildcard address, formula cells in the export, and
the token never written into RUN (the lock file names the command without it and goes away on exit)."""

from __future__ import annotations

import csv
import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid

import pytest

from halluscope.core.fs import LOCK_NAME, RunLock
from halluscope.core.store import STORE_NAME
from halluscope.mishap.annotate import Annotations, AnnotationServer, annotation_items, export_labels
from support import pythonpath

TOKEN = "round-two-token-7f3a"


@pytest.fixture(scope="module")
def run(annotate_run_copy, tmp_path_factory):
    return annotate_run_copy(tmp_path_factory.mktemp("annotate-r2"))


@pytest.fixture()
def srv(run):
    with AnnotationServer(run, token=TOKEN, timeout_s=5.0) as s:
        yield s


def body(srv, **over):
    b = {
        "save_id": uuid.uuid4().hex,
        "answer_id": srv.items[0]["id"],
        "annotator": "r2",
        "label": "grounded",
        "note": "",
        "mode": "independent",
    }
    b.update(over)
    return b


def request(srv, method, path, payload=None, headers=None):
    conn = http.client.HTTPConnection(srv.host, srv.port, timeout=20)
    h = {"X-Halluscope-Token": TOKEN, "Content-Type": "application/json", **(headers or {})}
    conn.request(method, path, body=None if payload is None else json.dumps(payload).encode(), headers=h)
    r = conn.getresponse()
    status, data = r.status, r.read()
    conn.close()
    return status, json.loads(data) if data else None


def raw(srv, data: bytes) -> tuple[int, bytes]:
    with socket.create_connection((srv.host, srv.port), timeout=20) as s:
        s.sendall(data)
        got = b""
        while chunk := s.recv(65536):
            got += chunk
    head, _, rest = got.partition(b"\r\n\r\n")
    return int(head.split()[1]), rest


def test_slow_clients_are_dropped_and_the_pool_stays_bounded(run):
    with AnnotationServer(run, token=TOKEN, timeout_s=30.0) as srv:
        srv.deadline_s, started = 2.0, time.monotonic()
        slow = [socket.create_connection((srv.host, srv.port), timeout=10) for _ in range(6)]
        stop = threading.Event()
        dropped: list[int] = []

        def trickle(i: int, s: socket.socket) -> None:  # one byte every 0.3 s: never a whole request line
            try:
                for b in b"GET /api/items HTTP/1.1\r\nHost: x\r\n" * 10:
                    if stop.is_set():
                        return
                    s.sendall(bytes([b]))
                    time.sleep(0.3)
            except OSError:
                dropped.append(i)

        threads = [threading.Thread(target=trickle, args=(i, s), daemon=True) for i, s in enumerate(slow)]
        for t in threads:
            t.start()
        answered = [request(srv, "GET", "/api/items")[0] for _ in range(5)]  # served meanwhile
        assert answered == [200] * 5
        for s in slow:  # the server closes each slow connection: recv sees the end, not our own timeout
            s.settimeout(15)
            assert s.recv(100) == b""
        stop.set()
        assert time.monotonic() - started < 30  # bounded test: the deadline, not the 30 s socket timeout, dropped them
        pool = [t for t in threading.enumerate() if t.name.startswith("halluscope-http")]
        assert 0 < len(pool) <= srv.max_threads
        for s in slow:
            s.close()
        assert request(srv, "GET", "/api/items")[0] == 200


LOCKER = """
import sqlite3, sys, time
db = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=1)
db.execute("BEGIN EXCLUSIVE")
db.execute("CREATE TABLE IF NOT EXISTS held_by_test (x)")
print("locked", flush=True)
sys.stdin.readline()
db.execute("ROLLBACK")
"""


def test_a_locked_store_answers_503_then_the_retry_stores_the_label_once(srv, run):
    locker = subprocess.Popen(
        [sys.executable, "-c", LOCKER, str(run / STORE_NAME)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert locker.stdout.readline().strip() == "locked"
        b = body(srv, annotator="busy-test")
        got: dict = {}
        t = threading.Thread(target=lambda: got.update(r=request(srv, "POST", "/api/label", b)), daemon=True)
        t.start()
        time.sleep(0.5)
        status, labels = request(srv, "GET", "/api/labels?annotator=busy-test")  # a read while the save waits
        assert status == 200 and labels["labels"] == {}
        assert t.is_alive()  # the read was answered while the save was still waiting for the lock
        t.join(20)
        status, data = got["r"]
        assert status == 503 and data["error"].startswith("store busy, retrying")
    finally:
        locker.communicate("go\n", timeout=20)
    status, data = request(srv, "POST", "/api/label", b)  # the page's retry: the same save id
    assert status == 200 and data["duplicate"] is False
    assert request(srv, "POST", "/api/label", b)[1]["duplicate"] is True
    ann = Annotations(run)
    try:
        assert [a.annotator for a in ann.all()].count("busy-test") == 1
    finally:
        ann.close()


def test_numbers_too_long_to_convert_and_huge_headers_are_refused_in_one_line(srv, caplog):
    head = f"Host: {srv.host_port}\r\nX-Halluscope-Token: {TOKEN}\r\nContent-Type: application/json\r\n"
    status, rest = raw(srv, f"POST /api/label HTTP/1.1\r\n{head}Content-Length: {'9' * 4400}\r\n\r\n".encode())
    assert status == 413 and b"over the" in rest and len(rest) < 300
    many = "".join(f"X-F{i}: {'a' * 900}\r\n" for i in range(40))
    status, rest = raw(srv, f"GET /api/items HTTP/1.1\r\n{head}{many}\r\n".encode())
    assert status == 431
    assert not any(r.exc_info for r in caplog.records)


def test_the_host_check_on_a_wildcard_address(run):
    with AnnotationServer(run, host="0.0.0.0", token=TOKEN, allow_remote=True) as srv:

        def get(host: str) -> int:
            conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=10)
            conn.request("GET", "/api/items", headers={"Host": host, "X-Halluscope-Token": TOKEN})
            status = conn.getresponse().status
            conn.close()
            return status

        assert get(f"127.0.0.1:{srv.port}") == 200 and get(f"localhost:{srv.port}") == 200
        assert get(f"{socket.gethostname()}:{srv.port}") == 200
        assert get(f"attacker.example:{srv.port}") == 403  # a DNS-rebinding name, right port
        assert get("127.0.0.1:1") == 403


def test_the_export_defuses_formula_cells(run, tmp_path):
    items = sorted(it["id"] for it in annotation_items(run)[0])
    ann = Annotations(run)
    notes = ['=HYPERLINK("http://x")', "+1+1", "-2", "@SUM(A1)", "\tTab", "plain note"]
    try:
        for i, note in enumerate(notes):
            ann.add(answer_id=items[i % len(items)], annotator=f"formula{i}", label="grounded", note=note)
    finally:
        ann.close()
    out = tmp_path / "labels.csv"
    export_labels(run, out)
    got = {r["annotator"]: r["note"] for r in csv.DictReader(out.open(encoding="utf-8"))}
    assert [got[f"formula{i}"] for i in range(len(notes))] == ["'" + n for n in notes[:5]] + ["plain note"]


def test_the_token_never_reaches_the_run_directory(run, tmp_path):
    """`halluscope mishap annotate RUN --token T`: serve, save a label, stop; grep -r T over RUN finds nothing, and
    RUN/.lock (which names the command without the token) is gone."""
    token = "secret-token-" + uuid.uuid4().hex[:12]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": pythonpath()}
    proc = subprocess.Popen(
        [sys.executable, "-m", "halluscope", "mishap", "annotate", str(run), "--token", token, "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )
    try:
        line = ""
        for line in proc.stdout:  # type: ignore[union-attr]
            if "Open:" in line:
                break
        url = line.split("Open:")[1].split()[0]
        port = int(url.split("]:")[-1].split(":")[-1].split("/")[0])
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
        items = {"X-Halluscope-Token": token}
        conn.request("GET", "/api/items", headers=items)
        first = json.loads(conn.getresponse().read())["items"][0]["id"]
        conn.request(
            "POST",
            "/api/label",
            body=json.dumps(
                {
                    "save_id": uuid.uuid4().hex,
                    "answer_id": first,
                    "annotator": "grep",
                    "label": "hallucinated",
                    "note": "n",
                }
            ).encode(),
            headers={**items, "Content-Type": "application/json"},
        )
        assert conn.getresponse().status == 200
        conn.close()
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(30)
    found = subprocess.run(["grep", "-r", "-l", token, str(run)], capture_output=True, text=True)
    assert found.returncode == 1 and found.stdout == ""  # grep: 1 = no match
    assert not (run / LOCK_NAME).exists()


def test_the_lock_file_names_the_command_without_secrets_and_goes_away(tmp_path, monkeypatch):
    monkeypatch.setattr(
        sys,
        "argv",
        ["halluscope", "mishap", "annotate", "RUN", "--token", "T0PSECRET1", "--api-key=sk-abc", "--max-tokens", "64"],
    )
    lock = RunLock(tmp_path).acquire()
    try:
        info = json.loads((tmp_path / LOCK_NAME).read_text())
        assert info["command"] == "halluscope mishap annotate RUN --token REDACTED --api-key=REDACTED --max-tokens 64"
        assert oct((tmp_path / LOCK_NAME).stat().st_mode & 0o777) == "0o644" and info["pid"] == os.getpid()
    finally:
        lock.release()
    assert not (tmp_path / LOCK_NAME).exists()
    again = RunLock(tmp_path).acquire()  # a fresh holder makes a fresh file
    assert (tmp_path / LOCK_NAME).exists()
    again.release()


def test_beyond_the_pool_and_its_queue_a_connection_gets_503(run, monkeypatch):
    import halluscope.core.webapp as webapp

    monkeypatch.setattr(webapp, "BACKLOG", 0)
    monkeypatch.setattr(AnnotationServer, "max_threads", 1)
    with AnnotationServer(run, token=TOKEN) as srv:
        srv.deadline_s = 3.0
        held = socket.create_connection((srv.host, srv.port), timeout=10)  # takes the one slot, sends nothing
        held.sendall(b"G")
        time.sleep(0.3)
        status, rest = raw(srv, b"GET /api/items HTTP/1.1\r\n\r\n")
        assert status == 503 and b"server busy, retrying" in rest
        held.settimeout(10)
        assert held.recv(10) == b""  # the deadline frees the slot
        held.close()
        time.sleep(0.2)
        assert request(srv, "GET", "/api/items")[0] == 200
