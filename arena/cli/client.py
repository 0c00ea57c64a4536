"""The ladder service's HTTP client (`arena submit`, `arena author recheck`): one request at a
time, no redirects followed (the token goes to --server alone), a bounded answer read within
an overall deadline, checked before use; the server's texts are printed escaped."""
from __future__ import annotations

import http.client
import json
import threading
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

from arena.errors import ArenaError, visible

MAX_ANSWER_BYTES = 1 << 20   # a submission's answer is a few hundred bytes; its log tail a few KiB
REQUEST_SECONDS = 60.0       # all of one request: connecting, sending, the whole answer
WAIT_SECONDS = 600.0         # all of `--wait`: a check that takes longer is left to the web page
POLL_SECONDS = 1.0
_NOT_ARENA = "(is --server an arena service?)"


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    """Follows no redirect: urllib would send the token on to wherever it points."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        return None   # the 3xx answer then comes back as an HTTPError


_OPENER = urllib.request.OpenerDirector()
for _handler in (urllib.request.ProxyHandler(), urllib.request.HTTPHandler(),
                 urllib.request.HTTPSHandler(), urllib.request.HTTPDefaultErrorHandler(),
                 _NoRedirects(), urllib.request.HTTPErrorProcessor()):
    _OPENER.add_handler(_handler)   # http(s) only: no file:, ftp: or data: URLs


def base_url(server: str) -> str:
    """--server without its trailing slash; an ArenaError unless it is an http(s) URL."""
    parts = urllib.parse.urlsplit(server)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ArenaError(f"--server wants the service's http:// or https:// address, e.g. "
                         f"http://127.0.0.1:8000, not {visible(server)!r}")
    return server.rstrip("/")


def call(url: str, token: str, data: bytes | None = None,
         content_type: str | None = None) -> dict[str, Any]:
    """The service's JSON object answering a request (POST with `data`), read whole within
    REQUEST_SECONDS; its refusal, a redirect, silence or a malformed answer as a one-line
    ArenaError."""
    headers = {"Authorization": f"Bearer {token}"}
    if content_type:
        headers["Content-Type"] = content_type
    request = urllib.request.Request(url, data=data, headers=headers,
                                     method="GET" if data is None else "POST")
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["body"] = _exchange(request)
        except BaseException as error:   # handed to the caller's thread
            outcome["error"] = error

    worker = threading.Thread(target=run, name="arena-client", daemon=True)
    worker.start()
    worker.join(REQUEST_SECONDS)
    if worker.is_alive():   # the socket timeout is per read: a trickling server beats it
        raise ArenaError(f"the service at {_origin(url)} did not answer within "
                         f"{REQUEST_SECONDS:g} s: try again later, or check --server")
    if "error" in outcome:
        raise outcome["error"]
    return _parse(outcome["body"])


def _exchange(request: urllib.request.Request) -> bytes:
    """The answer's body (at most MAX_ANSWER_BYTES), or an ArenaError."""
    try:
        with _OPENER.open(request, timeout=REQUEST_SECONDS) as response:
            return _read(response)
    except urllib.error.HTTPError as error:
        with error:
            if 300 <= error.code < 400:
                target = error.headers.get("Location") or "elsewhere"
                raise ArenaError(
                    f"the service at {_origin(request.full_url)} redirected to "
                    f"{visible(urllib.parse.urljoin(request.full_url, target))}: give the "
                    "final address as --server (redirects are not followed: they would "
                    "carry your token)") from None
            raise ArenaError(f"the service refused: {_refusal(error)}") from None
    except urllib.error.URLError as error:
        raise ArenaError(f"cannot reach the service at {_origin(request.full_url)} "
                         f"({visible(str(error.reason))}): check --server") from None
    except (http.client.HTTPException, OSError) as error:
        what = visible(str(error)) or type(error).__name__
        raise ArenaError(f"the server's answer was cut short ({what}) {_NOT_ARENA}") from None


def _read(response) -> bytes:
    """At most MAX_ANSWER_BYTES of the answer; an ArenaError if there is more, or if the
    connection ends before the promised length."""
    body = b""
    while len(body) <= MAX_ANSWER_BYTES:
        chunk = response.read(MAX_ANSWER_BYTES + 1 - len(body))
        if not chunk:
            break
        body += chunk
    if len(body) > MAX_ANSWER_BYTES:
        raise ArenaError(f"the server's answer is longer than {MAX_ANSWER_BYTES >> 20} MiB "
                         f"{_NOT_ARENA}")
    if getattr(response, "length", None):   # bytes promised by Content-Length, never sent
        raise ArenaError(f"the server's answer was cut short {_NOT_ARENA}")
    return body


def _refusal(error: urllib.error.HTTPError) -> str:
    """The refusal's one-line `error` text, escaped; else its HTTP status."""
    try:
        message = json.loads(_read(error))["error"]
    except (ArenaError, ValueError, KeyError, TypeError, RecursionError,
            http.client.HTTPException, OSError):
        message = None
    return visible(message) if isinstance(message, str) and message \
        else f"HTTP {error.code}"


def _parse(body: bytes) -> dict[str, Any]:
    """The answer as a JSON object, or an ArenaError (not JSON, not an object, too deep,
    numbers too long)."""
    try:
        answer = json.loads(body, parse_constant=_no_constant)
    except (ValueError, RecursionError):   # JSONDecodeError and int-digit limits are ValueErrors
        raise ArenaError(f"the server's answer is not JSON {_NOT_ARENA}") from None
    if not isinstance(answer, dict):
        raise ArenaError(f"the server's answer is not a JSON object {_NOT_ARENA}")
    return answer


def _no_constant(name: str):
    raise ValueError(f"{name} is not JSON")


def submission(answer: dict[str, Any]) -> dict[str, Any]:
    """A submission's answer, checked: `id` a number, `status` and `url` texts, `reason` and
    `log` texts if given; else an ArenaError."""
    fields = {"id": int, "status": str, "url": str}
    for key, kind in fields.items():
        value = answer.get(key)
        if not isinstance(value, kind) or isinstance(value, bool):
            raise ArenaError(f"the server's answer has no {key} {_NOT_ARENA}")
    for key in ("reason", "log"):
        if answer.get(key) is not None and not isinstance(answer[key], str):
            raise ArenaError(f"the server's answer has a {key} that is not text {_NOT_ARENA}")
    return answer


def _origin(url: str) -> str:
    return visible(url.split("/api/")[0])
