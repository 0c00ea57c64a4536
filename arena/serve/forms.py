"""What a request passes before the service reads its body: a form's POST comes from the
service's own pages (not another site's, nor another port's on the same host), and a body is
read under a cap. A client that goes away mid-body is no error of the service's."""
from __future__ import annotations

import logging
from urllib.parse import urlsplit

from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response

log = logging.getLogger(__name__)

DEFAULT_PORTS = {"http": 80, "https": 443}
SAME_ORIGIN_FETCHES = {"same-origin", "none"}
"""Sec-Fetch-Site values of a form sent from the service's own page, or typed by hand."""


def _origin(scheme: str, netloc: str) -> tuple[str, str, int | None] | None:
    """(scheme, host, port) with the scheme's default port filled in; None if unreadable."""
    try:
        parts = urlsplit(f"{scheme}://{netloc}")
        port = parts.port or DEFAULT_PORTS.get(parts.scheme)
    except ValueError:
        return None
    return parts.scheme, (parts.hostname or ""), port


def refuse_cross_site(request: Request) -> None:
    """403 for a form's POST from another origin. Browsers say where a form was sent from
    (`Origin`, `Sec-Fetch-Site`); a request with neither (the CLI, curl) is not a browser
    acting for a signed-in reader unawares, so it passes. SameSite cookies alone let a page of
    another port of this host through, and do nothing against signing a reader in as someone
    else."""
    sent_from = request.headers.get("origin")
    if sent_from is not None:
        own = _origin(request.url.scheme, request.headers.get("host", ""))
        parts = urlsplit(sent_from) if "://" in sent_from else None
        theirs = _origin(parts.scheme, parts.netloc) if parts else None
        if own is None or theirs != own:
            raise HTTPException(403, f"refused: this form was sent from another site "
                                     f"({sent_from[:100]}); use this service's own pages")
    fetch = request.headers.get("sec-fetch-site")
    if fetch is not None and fetch.lower() not in SAME_ORIGIN_FETCHES:
        raise HTTPException(403, f"refused: this form was sent from another site "
                                 f"(Sec-Fetch-Site: {fetch[:40]}); use this service's own "
                                 "pages")


async def read_capped(request: Request, cap: int) -> bytes:
    """The request body, refused with 413 as soon as it passes `cap` bytes."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > cap:
        raise HTTPException(413, f"the upload is over the {cap // 1024} KiB limit: leave "
                                 "out what the bot does not need")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > cap:
            raise HTTPException(413, f"the upload is over the {cap // 1024} KiB limit: leave "
                                     "out what the bot does not need")
        chunks.append(chunk)
    return b"".join(chunks)


def replayed(request: Request, body: bytes) -> Request:
    """A request whose body is `body` (already read under the cap), for the form parser."""
    sent = False

    async def receive() -> dict:
        nonlocal sent
        if sent:
            return {"type": "http.disconnect"}
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return Request(request.scope, receive)


async def client_gone(request: Request, exc: ClientDisconnect) -> Response:
    """The client closed the connection before its body was sent: nobody reads an answer,
    and it is not the service's failure (no traceback), so one short line at most."""
    log.info("%s %s: the client went away before sending the whole request", request.method,
             request.url.path)
    return Response(status_code=400)
