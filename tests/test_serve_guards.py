"""The service against misbehaving clients, over real sockets to a real uvicorn server run
with the service's own connection settings (arena.serve.connections, short deadlines here):
half-sent requests and slow bodies are closed at their deadline, connections past the cap
are refused at once; forms refuse what another origin sends (arena.serve.forms), the submit
form refuses an unknown sender before reading its body, a client gone mid-body is no
traceback, an id beyond SQLite's integers is 404, and a name that is not UTF-8 is the
upload's fault."""
from __future__ import annotations

import http.client
import io
import json
import logging
import socket
import tarfile
import time
from contextlib import contextmanager
from typing import Iterator

import pytest

from arena.serve.app import ROUTES, TOKEN_COOKIE, Service, create_app
from arena.serve.authors import add_author
from arena.serve.connections import uvicorn_settings
from arena.serve.db import ServiceDB
from arena.serve.uploads import UploadLimits
from serving import app_server

HEADERS_SECONDS, BODY_SECONDS, MOST_CONNECTIONS = 1.0, 1.5, 40


@contextmanager
def guarded_server(app, **bounds) -> Iterator[int]:
    """`app` on uvicorn as `arena serve` runs it (with `bounds`), on a free port of
    127.0.0.1, in a thread: its port. uvicorn leaves logging alone, so caplog sees its
    records."""
    with app_server(app, log_config=None, log_level=None,
                    **uvicorn_settings(**bounds)) as url:
        yield int(url.rsplit(":", 1)[1])


@pytest.fixture
def served(tmp_path, caplog):
    caplog.set_level(logging.INFO)
    db = ServiceDB.open(tmp_path / "data")
    ladder = db.ensure_ladder("mandala", 2, "mandala/1", {"move_time": 1.0})
    token = add_author(db, "alice")
    app = create_app(Service(db, {ladder.id: ladder}, UploadLimits(), submissions_per_hour=5,
                             on_submission=lambda: None))
    with guarded_server(app, headers_seconds=HEADERS_SECONDS, body_seconds=BODY_SECONDS,
                        most_connections=MOST_CONNECTIONS) as port:
        yield port, token


def ask(port: int, method: str, path: str, body: bytes = b"",
        headers: dict | None = None) -> tuple[int, dict, str]:
    """One request (redirects not followed): status, headers, body."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.request(method, path, body=body, headers=headers or {})
        answer = connection.getresponse()
        return answer.status, dict(answer.getheaders()), answer.read().decode()
    finally:
        connection.close()


def half_sent(port: int, data: bytes) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    sock.sendall(data)
    return sock


def closed_by_server(sock: socket.socket, within: float) -> bytes | None:
    """What the server sent before closing the connection within `within` seconds, or None
    if it is still open then."""
    sock.settimeout(within)
    received = b""
    try:
        while chunk := sock.recv(4096):
            received += chunk
    except TimeoutError:
        return None
    except ConnectionResetError:
        pass
    return received


def tracebacks(caplog) -> list[str]:
    return [f"{record.name}: {record.getMessage()}" for record in caplog.records
            if record.exc_info or "Traceback" in record.getMessage()
            or "Exception in ASGI" in record.getMessage()]


# -- connections: deadlines and a cap -------------------------------------------------------------

def test_half_sent_requests_are_closed_at_their_deadline_and_others_still_answered(served):
    port, _ = served
    started = time.monotonic()
    idle = [half_sent(port, b"") for _ in range(5)]
    halves = [half_sent(port, b"GET / HTTP/1.1\r\n") for _ in range(20)]
    trickle = half_sent(port, b"GET / HTTP/1.1\r\nHost: x\r\n")
    for _ in range(5):   # a header line now and then never earns more time
        time.sleep(0.3)
        try:
            trickle.sendall(b"X-a: b\r\n")
        except OSError:
            break
    assert ask(port, "GET", "/api/ladders")[0] == 200   # the service answers meanwhile
    for sock in [*idle, *halves, trickle]:
        assert closed_by_server(sock, within=HEADERS_SECONDS + 3) == b""
        sock.close()
    assert time.monotonic() - started < HEADERS_SECONDS + 5


def test_a_slow_body_is_closed_at_its_deadline_without_a_traceback(served, caplog):
    port, _ = served
    sock = half_sent(port, b"POST /login HTTP/1.1\r\nHost: x\r\nContent-Type: application/"
                           b"x-www-form-urlencoded\r\nContent-Length: 1000\r\n\r\ntoken=")
    started = time.monotonic()
    assert closed_by_server(sock, within=BODY_SECONDS + 3) == b""
    assert BODY_SECONDS - 0.5 < time.monotonic() - started < BODY_SECONDS + 3
    sock.close()
    time.sleep(0.3)
    assert not tracebacks(caplog)


def test_a_kept_alive_connection_trickling_its_next_request_is_closed(served):
    port, _ = served
    sock = half_sent(port, b"GET /api/ladders HTTP/1.1\r\nHost: x\r\n\r\n")
    assert sock.recv(4096).startswith(b"HTTP/1.1 200")
    sock.sendall(b"GET / HTTP/1.1\r\n")
    started = time.monotonic()
    for _ in range(8):   # every byte cancels uvicorn's keep-alive timer, not this deadline
        time.sleep(0.3)
        try:
            sock.sendall(b"X")
        except OSError:
            break
    assert closed_by_server(sock, within=HEADERS_SECONDS + 3) is not None
    assert time.monotonic() - started < HEADERS_SECONDS + 4
    sock.close()


def test_connections_past_the_cap_are_refused_at_once_and_the_service_recovers(served):
    port, _ = served
    held = [half_sent(port, b"GET / HTTP/1.1\r\n") for _ in range(MOST_CONNECTIONS)]
    time.sleep(0.2)
    extra = half_sent(port, b"GET /api/ladders HTTP/1.1\r\nHost: x\r\n\r\n")
    answer = closed_by_server(extra, within=3)
    assert answer is not None and answer.startswith(b"HTTP/1.1 503"), answer
    assert answer.endswith(b"too many connections: try again in a while")
    extra.close()
    for sock in held:   # their deadline frees every slot
        assert closed_by_server(sock, within=HEADERS_SECONDS + 3) == b""
        sock.close()
    assert ask(port, "GET", "/api/ladders")[0] == 200


# -- forms: same origin only; who sends a submission, before its body ---------------------------

def form_posts() -> list[str]:
    """Every POST route of the pages (the API's take Bearer tokens, never a cookie)."""
    paths = [route.path for route in ROUTES if "POST" in (route.methods or ())
             and not route.path.startswith("/api/")]
    assert {"/login", "/logout", "/submit"} <= set(paths)
    return [path.replace("{id:int}", "1").replace("{author}", "alice").replace("{name}", "x")
            for path in paths]


@pytest.mark.parametrize("forged", [
    {"Origin": "http://evil.example"}, {"Origin": "null"},
    {"Origin": "http://127.0.0.1:1"},   # another port of this host: same site, not origin
    {"Sec-Fetch-Site": "cross-site"}, {"Sec-Fetch-Site": "same-site"}])
def test_every_form_refuses_what_another_origin_sends(served, forged):
    port, token = served
    for path in form_posts():
        status, headers, body = ask(port, "POST", path, f"token={token}".encode(), {
            "Content-Type": "application/x-www-form-urlencoded",
            "Cookie": f"{TOKEN_COOKIE}={token}", **forged})
        assert status == 403, (path, status, body)
        assert "refused: this form was sent from another site" in body, body
        assert "set-cookie" not in {name.lower() for name in headers}   # no login CSRF


def test_forms_from_the_own_origin_or_without_those_headers_pass(served):
    port, token = served
    form = {"Content-Type": "application/x-www-form-urlencoded"}
    for extra in ({"Origin": f"http://127.0.0.1:{port}", "Sec-Fetch-Site": "same-origin"},
                  {"Origin": f"http://127.0.0.1:{port}"}, {"Sec-Fetch-Site": "none"}, {}):
        status, headers, _ = ask(port, "POST", "/login", f"token={token}".encode(),
                                 {**form, **extra})
        assert status == 303 and TOKEN_COOKIE in headers.get("set-cookie", ""), extra
        assert ask(port, "POST", "/logout", b"", {**form, **extra})[0] == 303
    status, _, body = ask(port, "POST", "/submissions/1/recheck", b"", {
        **form, "Cookie": f"{TOKEN_COOKIE}={token}", "Origin": f"http://127.0.0.1:{port}"})
    assert status not in (401, 403), body   # past the checks: no such submission


def test_the_submit_form_refuses_an_unknown_sender_before_reading_the_body(served):
    port, token = served
    head = (b"POST /submit HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; "
            b"boundary=zz\r\nContent-Length: %d\r\n" % (5 * 1024 * 1024))
    for cookie in (b"", b"Cookie: arena_token=not-a-token\r\n"):
        sock = half_sent(port, head + cookie + b"\r\n" + bytes(1024))
        sock.settimeout(5)   # answered now, though 5 MiB are announced and 1 KiB sent
        answer = b""
        while b"</html>" not in answer:
            answer += sock.recv(65536)
        assert answer.startswith(b"HTTP/1.1 401"), answer[:200]
        assert b"sign in first" in answer
        sock.close()
    status, _, body = ask(port, "POST", "/submit", b"--zz--\r\n", {
        "Content-Type": "multipart/form-data; boundary=zz",
        "Cookie": f"{TOKEN_COOKIE}={token}"})
    assert status == 400 and "no bot file" in body   # signed in: the form is read


# -- clients gone mid-body, ids beyond SQLite, names that are not UTF-8 -------------------------

def test_a_client_gone_mid_body_logs_no_traceback(served, caplog):
    port, token = served
    sends = [b"POST /login HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-"
             b"urlencoded\r\nContent-Length: 10000\r\n\r\ntoken=",
             b"POST /submit HTTP/1.1\r\nHost: x\r\nCookie: arena_token=%s\r\nContent-Type: "
             b"multipart/form-data; boundary=zz\r\nContent-Length: 100000\r\n\r\n--zz\r\n"
             % token.encode(),
             b"POST /api/submissions?ladder=mandala:2 HTTP/1.1\r\nHost: x\r\nAuthorization: "
             b"Bearer %s\r\nContent-Length: 100000\r\n\r\n\x1f\x8b" % token.encode()]
    for data in sends:
        sock = half_sent(port, data)
        time.sleep(0.3)   # the app is reading the body
        sock.close()
    time.sleep(0.5)
    assert not tracebacks(caplog), tracebacks(caplog)
    gone = [r for r in caplog.records if r.name == "arena.serve.forms"]
    assert len(gone) <= len(sends) and all("\n" not in r.getMessage() for r in gone)
    assert ask(port, "GET", "/api/ladders")[0] == 200


@pytest.mark.parametrize("number", [2 ** 63, 99999999999999999999999])
def test_ids_beyond_sqlites_integers_are_404(served, caplog, number):
    port, token = served
    bearer = {"Authorization": f"Bearer {token}"}
    for method, path, headers in [
            ("GET", f"/api/submissions/{number}", {}),
            ("POST", f"/api/submissions/{number}/recheck", bearer),
            ("GET", f"/submissions/{number}", {}),
            ("POST", f"/submissions/{number}/recheck", {"Cookie": f"{TOKEN_COOKIE}={token}"})]:
        status, _, body = ask(port, method, path, headers=headers)
        assert status == 404 and "no such submission" in body, (path, status, body)
        if path.startswith("/api/"):
            assert body.count("\n") == 0 and json.loads(body)["error"] == "no such submission"
    assert not tracebacks(caplog)


def test_an_upload_with_a_name_that_is_not_utf8_is_refused_as_its_fault(served):
    port, token = served
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz", format=tarfile.GNU_FORMAT,
                      encoding="utf-8", errors="surrogateescape") as tar:
        info = tarfile.TarInfo(b"\xff\xfe.txt".decode("utf-8", "surrogateescape"))
        info.size = 1
        tar.addfile(info, io.BytesIO(b"x"))
    status, _, body = ask(port, "POST", "/api/submissions?ladder=mandala:2",
                          buffer.getvalue(), {"Authorization": f"Bearer {token}"})
    assert status == 400 and body.count("\n") == 0, body
    assert json.loads(body)["error"] == ("the upload's entry '\\udcff\\udcfe.txt' has a name "
                                         "that is not UTF-8: rename it")
