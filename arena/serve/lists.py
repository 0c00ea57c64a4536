"""Lists in pages and the API: what `?cursor=` and `?limit=` ask for (refused with 400 in
one line), the "older" and "newer" links of a page's list, and the head to head pairs a page
at a time (arena.serve.paging says how cursors name a place in a list).
"""
from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from arena.serve import headtohead, paging


def page_params(request: Request, default_limit: int,
                prefix: str = "") -> tuple[paging.Cursor | None, int]:
    """`?cursor=` and `?limit=` of a list (page or API), refused with 400 in one line;
    `prefix`: of a page's second list (the ladder page's `standings_cursor`)."""
    params = request.query_params
    limit = int_param(params.get(f"{prefix}limit", str(default_limit)), f"{prefix}limit", 1,
                       paging.MAX_LIMIT)
    return paging.parse(params.get(f"{prefix}cursor")), limit   # CursorError: 400


def page_links(request: Request, found: paging.Page, anchor: str = "matches",
               prefix: str = "") -> dict[str, str | None]:
    """The "older" and "newer" links of a page's list: its own URL with the other cursor,
    scrolled to the list (`#anchor`)."""
    def link(cursor: str | None) -> str | None:
        if cursor is None:
            return None
        query = {**request.query_params, f"{prefix}cursor": cursor}
        return f"{request.url.path}?{urlencode(query)}#{anchor}"
    return {"older": link(found.older), "newer": link(found.newer)}


def pairs_of(request: Request, pairs: list[headtohead.HeadToHead]) -> dict[str, Any]:
    """A page's head to head table, paged by `?pairs_cursor=` and `?pairs_limit=`."""
    cursor, limit = page_params(request, default_limit=50, prefix="pairs_")
    found = headtohead.page(pairs, cursor, limit)
    return {"head_to_head": found,
            "pair_links": page_links(request, found, "head-to-head", "pairs_")}


def pairs_json(request: Request, pairs: list[headtohead.HeadToHead], **about: str) -> Response:
    """A page of head to head pairs in the API, by `?cursor=` and `?limit=`."""
    cursor, limit = page_params(request, default_limit=100)
    found = headtohead.page(pairs, cursor, limit)
    return JSONResponse({**about, "head_to_head": [pair.json() for pair in found.items],
                         "next_cursor": found.older, "newer_cursor": found.newer})


def int_param(text: str, name: str, low: int, high: int) -> int:
    try:
        value = int(text)
    except ValueError:
        value = None
    if value is None or not low <= value <= high:
        raise HTTPException(400, f"{name} must be a whole number from {low} to {high}, "
                                 f"not {text!r}")
    return value
