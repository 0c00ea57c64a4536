"""`arena submit` and `arena author recheck` against hostile servers (real HTTP, a local server
in a thread): no redirect is followed (the token reaches --server alone), answers are
bounded in size and time, malformed answers and refusals are one line `arena: error: ...`,
and the server's texts reach the terminal escaped."""
from __future__ import annotations

import http.server
import json
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.cli import client, main

SAMPLES = Path(__file__).resolve().parent.parent / "sample_bots"
TOKEN = "s3cret-token"


class Server:
    """A local HTTP server answering every request with `answer(handler)`; it keeps each
    request's path and Authorization header."""

    def __init__(self, answer):
        self.seen: list[tuple[str, str | None]] = []
        self.stop = threading.Event()
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def handle_any(self):
                outer.seen.append((self.path, self.headers.get("Authorization")))
                length = int(self.headers.get("Content-Length") or 0)
                if length:
                    self.rfile.read(length)
                answer(self)

            do_GET = do_POST = handle_any

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.stop.set()
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def serve():
    servers = []

    def start(answer) -> Server:
        servers.append(Server(answer))
        return servers[-1]
    yield start
    for server in servers:
        server.close()


def send(handler, code: int, body: bytes, headers=()) -> None:
    handler.send_response(code)
    handler.send_header("Content-Type", "application/json")
    for key, value in headers:
        handler.send_header(key, value)
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


def replying(code: int, body: bytes | dict, headers=()):
    data = json.dumps(body).encode() if isinstance(body, dict) else body
    return lambda handler: send(handler, code, data, headers)


def recheck(server: Server, *more: str):
    return CliRunner().invoke(main, ["author", "recheck", "3", "--server", server.url,
                                     "--token", TOKEN, *more])


def one_line_error(result, words: str) -> None:
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), \
        result.exc_info
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("arena: error: ") and words in lines[0], \
        result.output


@pytest.mark.parametrize("code", [301, 302, 303, 307, 308])
def test_a_redirect_is_not_followed_and_the_other_host_never_sees_the_token(serve, code):
    elsewhere = serve(replying(200, {"id": 7, "status": "admitted", "url": "/stolen"}))
    server = serve(replying(code, b"", [("Location", f"{elsewhere.url}/steal")]))
    result = CliRunner().invoke(main, ["submit", str(SAMPLES / "greedy"), "--server",
                                       server.url, "--token", TOKEN])
    one_line_error(result, f"redirected to {elsewhere.url}/steal: give the final address "
                           "as --server")
    assert server.seen == [("/api/submissions?ladder=mandala%3A2", f"Bearer {TOKEN}")]
    assert elsewhere.seen == []


def test_an_answer_over_1_mib_is_refused(serve):
    def huge(handler):
        handler.send_response(200)
        handler.end_headers()   # no Content-Length: read until the connection ends
        try:
            handler.wfile.write(b'{"id": 1, "status": "' + b"A" * (3 << 20))
        except OSError:
            pass
        handler.close_connection = True
    one_line_error(recheck(serve(huge)), "the server's answer is longer than 1 MiB")


def test_a_trickling_answer_is_cut_off_at_the_overall_deadline(serve, monkeypatch):
    monkeypatch.setattr(client, "REQUEST_SECONDS", 1.0)
    server = None

    def trickle(handler):
        handler.send_response(200)
        handler.send_header("Content-Length", "1000")
        handler.end_headers()
        while not server.stop.is_set():   # a byte well within any per-read timeout
            handler.wfile.write(b" ")
            handler.wfile.flush()
            time.sleep(0.1)
    server = serve(trickle)
    started = time.monotonic()
    result = recheck(server)
    one_line_error(result, "did not answer within 1 s")
    assert time.monotonic() - started < 5


def test_wait_gives_up_on_a_check_that_never_ends(serve, monkeypatch):
    monkeypatch.setattr(client, "WAIT_SECONDS", 1.0)
    monkeypatch.setattr(client, "POLL_SECONDS", 0.1)
    server = serve(replying(200, {"id": 4, "status": "checking", "url": "/submissions/4"}))
    started = time.monotonic()
    result = recheck(server, "--wait")
    assert result.exit_code == 2, result.output
    assert result.output.splitlines()[-1] == (
        f"arena: error: submission 4 was still being checked after 1 s: its verdict will be "
        f"on {server.url}/submissions/4")
    assert time.monotonic() - started < 5 and len(server.seen) > 2


def _cut_short(handler):
    handler.send_response(200)
    handler.send_header("Content-Length", "1000")
    handler.end_headers()
    handler.wfile.write(b'{"id":')
    handler.close_connection = True


@pytest.mark.parametrize("answer, words", [
    (replying(200, b"<html>hello</html>"), "is not JSON"),
    (replying(200, b"[1, 2]"), "is not a JSON object"),
    (replying(200, b"{}"), "has no id"),
    (replying(200, {"id": "1", "status": "checking", "url": "/x"}), "has no id"),
    (replying(200, {"id": 1, "status": "rejected", "url": "/x", "log": [1]}),
     "has a log that is not text"),
    (_cut_short, "was cut short"),
    (replying(200, b"[" * 100000 + b"]" * 100000), "is not JSON"),
    (replying(200, b'{"id": ' + b"9" * 5000 + b', "status": "x", "url": "/"}'),
     "is not JSON"),
    (replying(200, b'{"id": NaN, "status": Infinity, "url": 1}'), "is not JSON"),
], ids=["html", "list", "empty", "text-id", "list-log", "cut-short", "deep", "bigint", "nan"])
def test_a_malformed_answer_is_one_line_without_a_traceback(serve, answer, words):
    result = recheck(serve(answer), "--wait")
    one_line_error(result, f"the server's answer {words} (is --server an arena service?)")


def test_the_servers_texts_are_printed_escaped(serve):
    server = serve(replying(200, {
        "id": 1, "status": "rejected", "url": "/\x1b]52;c;cHduZWQ=\x07x",
        "reason": "\x1b[2Jbad\nline", "log": "\x1b]0;T\x07log\n\tmore\r", "recheck": "/r"}))
    result = recheck(server, "--wait")
    assert result.exit_code == 1, result.output
    assert "\x1b" not in result.output and "\x07" not in result.output \
        and "\r" not in result.output
    assert f"submission 1: rejected ({server.url}/\\x1b]52;c;cHduZWQ=\\x07x)" in result.output
    assert "submission 1: rejected: \\x1b[2Jbad\\nline\n" in result.output
    assert "\\x1b]0;T\\x07log\n\tmore\\r\n" in result.output   # the log keeps its lines


def test_a_refusal_is_printed_escaped(serve):
    result = recheck(serve(replying(400, {"error": "\x1b]0;PWNED\x07\x1b[2Jrefused"})))
    one_line_error(result, "the service refused: \\x1b]0;PWNED\\x07\\x1b[2Jrefused")


def test_a_refusal_without_a_text_error_names_its_status(serve):
    one_line_error(recheck(serve(replying(400, {"error": {"a": [1]}}))),
                   "the service refused: HTTP 400")


def test_a_server_that_is_not_http_is_refused():
    result = CliRunner().invoke(main, ["author", "recheck", "3", "--server", "file:///etc",
                                       "--token", TOKEN])
    one_line_error(result, "--server wants the service's http:// or https:// address")


def test_wait_follows_a_check_to_its_verdict(serve):
    answers = iter([{"id": 9, "status": "checking", "url": "/submissions/9"}] * 2
                   + [{"id": 9, "status": "admitted", "url": "/submissions/9"}])

    def next_answer(handler):
        send(handler, 200, json.dumps(next(answers)).encode())
    server = serve(next_answer)
    result = recheck(server, "--wait")
    assert result.exit_code == 0, result.output
    assert result.output.splitlines() == [
        "submission 9 re-checks submission 3",
        f"submission 9: checking ({server.url}/submissions/9)", "submission 9: admitted"]
    assert all(auth == f"Bearer {TOKEN}" for _, auth in server.seen)
