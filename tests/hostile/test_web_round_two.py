"""The viewer under hostile requests, round two (HTTP level, cheap): numbers too long to convert, a store locked
by another process (503 "store busy, retrying", then the retry stores the rating once), and one-line errors."""

from __future__ import annotations

import http.client
import json
import shutil
import socket
import subprocess
import sys
import uuid

import pytest

from halluscope.core.store import STORE_NAME
from halluscope.view.quality import QualityLabels
from halluscope.view.server import ViewServer

TOKEN = "web-round-two-token"
LOCKER = """
import sqlite3, sys
db = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=1)
db.execute("BEGIN EXCLUSIVE")
db.execute("CREATE TABLE IF NOT EXISTS held_by_test (x)")
print("locked", flush=True)
sys.stdin.readline()
db.execute("ROLLBACK")
"""


@pytest.fixture()
def srv(tiny_runs, tmp_path, monkeypatch):
    shutil.copytree(tiny_runs["ok"], tmp_path / "run", ignore=shutil.ignore_patterns(".lock"))
    monkeypatch.setattr(ViewServer, "busy_s", 0.5)
    with ViewServer(tmp_path / "run", token=TOKEN) as s:
        yield s


def call(srv, method: str, path: str, body: bytes | None = None) -> tuple[int, dict]:
    conn = http.client.HTTPConnection(srv.host, srv.port, timeout=20)
    conn.request(method, path, body=body, headers={"X-Halluscope-Token": TOKEN, "Content-Type": "application/json"})
    r = conn.getresponse()
    status, data = r.status, r.read()
    conn.close()
    return status, json.loads(data) if data else {}


def test_numbers_too_long_to_convert(srv, caplog):
    status, data = call(srv, "GET", "/api/chunk/" + "7" * 5000)
    assert status == 404 and len(data["error"]) < 80
    with socket.create_connection((srv.host, srv.port), timeout=20) as s:
        s.sendall(
            f"POST /api/quality HTTP/1.1\r\nHost: {srv.host_port}\r\nX-Halluscope-Token: {TOKEN}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {'4' * 4400}\r\n\r\n".encode()
        )
        reply = b""
        while chunk := s.recv(65536):
            reply += chunk
    assert reply.startswith(b"HTTP/1.0 413") or reply.startswith(b"HTTP/1.1 413")
    assert not any(r.exc_info or r.levelname == "ERROR" for r in caplog.records)


def test_a_locked_store_gives_503_and_the_retry_stores_the_rating_once(srv):
    item = next(k.split(":", 1)[1] for k in srv.view.audio)
    body = json.dumps(
        {
            "save_id": uuid.uuid4().hex,
            "item_id": item,
            "annotator": "busy",
            "intelligibility": "fully",
            "fidelity": "faithful",
        }
    ).encode()
    locker = subprocess.Popen(
        [sys.executable, "-c", LOCKER, str(srv.view.run_dir / STORE_NAME)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert locker.stdout.readline().strip() == "locked"
        status, data = call(srv, "POST", "/api/quality", body)
        assert status == 503 and data["error"].startswith("store busy, retrying")
        assert call(srv, "GET", "/api/index")[0] == 200  # reads are answered meanwhile
    finally:
        locker.communicate("go\n", timeout=20)
    status, data = call(srv, "POST", "/api/quality", body)  # the form's retry: the same save id
    assert status == 200 and data["duplicate"] is False
    assert call(srv, "POST", "/api/quality", body)[1]["duplicate"] is True
    labels = QualityLabels(srv.view.run_dir)
    try:
        assert [r["annotator"] for r in labels.all()] == ["busy"]
    finally:
        labels.close()
