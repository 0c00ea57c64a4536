"""The web app: server-rendered pages and the JSON API, as one Starlette application.

Pages (Jinja2, autoescaped: every name, message and log is escaped) work without JavaScript;
only the replay viewer on a match page uses it. The API under /api/ gives the same data as
JSON. Who is asking: an `Authorization: Bearer TOKEN` header (API), or the token cookie set by
the login form (pages); a token sees logs and submissions of its own author only. A form's POST
is refused when a browser says it comes from another origin (arena.serve.forms).

Every error is an answer, never a traceback: API errors are one line of JSON
(`{"error": "..."}`) with a 4xx status, page errors a short page with the same line; an
unexpected failure is logged on the server and answered 500 in the same way.
"""
from __future__ import annotations

import logging
import math
from importlib import resources
from dataclasses import dataclass
from typing import Any, Callable
from urllib.parse import quote

from jinja2 import Environment, PackageLoader, select_autoescape
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import (HTMLResponse, JSONResponse, RedirectResponse, Response,
                                 StreamingResponse)
from starlette.routing import Route

from arena.render import shown_time
from arena.render.replay import render_replay_html
from arena.serve import author_view, export, headtohead, paging, views
from arena.serve.lists import page_links, page_params, pairs_json, pairs_of
from arena.serve.admission import SubmissionError, recheck, submit
from arena.serve.authors import Author, AuthorError, authenticate, retire_bot
from arena.serve.db import Ladder, ServiceDB, ladder_id
from arena.serve.forms import client_gone, read_capped, refuse_cross_site, replayed
from arena.serve.uploads import UploadError, UploadLimits

log = logging.getLogger(__name__)

TOKEN_COOKIE = "arena_token"
PAGE_POLICY = ("default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; "
               "base-uri 'none'; frame-ancestors 'none'")
"""Pages run no script (but the ladder's live standings): markup that slipped through could
do nothing."""
LADDER_POLICY = PAGE_POLICY + "; script-src 'self'; connect-src 'self'"
"""A ladder page runs one script, /live.js (the service's own), that reads the ladder's JSON."""
MATCH_POLICY = PAGE_POLICY + "; frame-src 'self'"
"""A match page runs no script either; it frames its replay viewer."""
REPLAY_POLICY = ("default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; "
                 "form-action 'none'; base-uri 'none'; frame-ancestors 'self'; "
                 "sandbox allow-scripts")
"""The replay viewer (/matches/ID/replay): one inline script, no network, in a sandbox of its
own (an opaque origin: no cookie, no storage) even when opened outside its frame."""


HOME_STANDINGS = 10
"""Rows of each ladder's standings on the home page; its ladder page pages them all."""


@dataclass
class Service:
    """What the routes need: the database, the ladders served, the limits, and a way to tell
    the admission thread that a submission waits."""

    db: ServiceDB
    ladders: dict[str, Ladder]
    limits: UploadLimits
    submissions_per_hour: int
    on_submission: Callable[[], None]
    playing: Callable[[str], list[dict]] = lambda ladder: []
    """The ladder's matches being played now (arena.serve.player.MatchPlayer.playing)."""
    matches_per_minute: int | None = None
    """The service's pace (`arena serve --matches-per-minute`), or None: unpaced."""


def create_app(service: Service) -> Starlette:
    """The app serving `service`: its routes find it as `request.app.state.service`."""
    app = Starlette(routes=ROUTES, exception_handlers={
        HTTPException: http_error, SubmissionError: refused, UploadError: refused,
        AuthorError: conflict, paging.CursorError: bad_cursor, ClientDisconnect: client_gone,
        Exception: server_error})
    app.state.service = service
    return app


_pages = Environment(loader=PackageLoader("arena.serve", "templates"),
                     autoescape=select_autoescape(default=True, default_for_string=True))
_pages.filters["utc"] = shown_time
_pages.filters["elo"] = lambda value: "-" if value is None or math.isnan(value) \
    else f"{value:+.0f}"


def page(request: Request, template: str, status: int = 200, policy: str = PAGE_POLICY,
         private: bool = False, **context: Any) -> HTMLResponse:
    """A page; `private`: it shows what only the signed-in reader may see (kept by no cache)."""
    viewer = author_of(request, allow_cookie=True)
    html = _pages.get_template(template).render(viewer=viewer, **context)
    headers = {"Content-Security-Policy": policy, "X-Content-Type-Options": "nosniff"}
    if private:
        headers["Cache-Control"] = "private, no-store"
    return HTMLResponse(html, status_code=status, headers=headers)


def author_of(request: Request, allow_cookie: bool) -> Author | None:
    db = request.app.state.service.db
    header = request.headers.get("authorization", "")
    if header.lower().startswith("bearer "):
        return authenticate(db, header[7:].strip())
    if allow_cookie:
        return authenticate(db, request.cookies.get(TOKEN_COOKIE))
    return None


def need(value: Any, what: str) -> Any:
    if value is None:
        raise HTTPException(404, f"no such {what}")
    return value


ROW_ID_MAX = 2 ** 63 - 1
"""SQLite's largest integer: a bigger id in a path names nothing (and overflows a query)."""


def submission_in_path(request: Request) -> int:
    value = request.path_params["id"]
    if value > ROW_ID_MAX:
        raise HTTPException(404, "no such submission")
    return value


# -- errors: every one an answer of one line, never a traceback -------------------------------
def error(request: Request, status: int, message: str) -> Response:
    if request.url.path.startswith("/api/"):
        return JSONResponse({"error": message}, status_code=status)
    html = _pages.get_template("error.html").render(status=status, message=message,
                                                    viewer=None)
    return HTMLResponse(html, status_code=status, headers={
        "Content-Security-Policy": PAGE_POLICY, "X-Content-Type-Options": "nosniff"})


async def http_error(request: Request, exc: HTTPException) -> Response:
    message = exc.detail if isinstance(exc.detail, str) else "bad request"
    if exc.status_code == 404 and message == "Not Found":
        message = f"nothing at {request.url.path}: see / for the ladders"
    return error(request, exc.status_code, message)


async def refused(request: Request, exc: SubmissionError | UploadError) -> Response:
    """A submission or re-check refused: its own status, or 400 for the upload itself."""
    return error(request, getattr(exc, "status", 400), str(exc))


async def conflict(request: Request, exc: AuthorError) -> Response:
    """What an author asked of the data cannot be done (no such bot, retired already)."""
    return error(request, 409, str(exc))


async def bad_cursor(request: Request, exc: paging.CursorError) -> Response:
    return error(request, 400, str(exc))


async def server_error(request: Request, exc: Exception) -> Response:
    log.error("%s %s failed", request.method, request.url.path, exc_info=exc)
    return error(request, 500, "internal error: the service logged it; try again later")


# -- pages ------------------------------------------------------------------------------------
def home(request: Request) -> Response:
    service: Service = request.app.state.service
    return page(request, "home.html", ladders=[
        views.ladder_view(service.db, ladder, service.ladders, limit=HOME_STANDINGS)
        for ladder in service.db.ladders()], pace=service.matches_per_minute,
                provisional_matches=views.PROVISIONAL_MATCHES,
                provisional_interval=views.PROVISIONAL_INTERVAL)


def ladder_page(request: Request) -> Response:
    service: Service = request.app.state.service
    ladder = need(service.db.ladder(request.path_params["ladder"]), "ladder")
    cursor, limit = page_params(request, default_limit=30)
    matches = views.matches(service.db, ladder=ladder.id, limit=limit, cursor=cursor)
    ranks, rank_limit = page_params(request, default_limit=50, prefix="standings_")
    view = views.ladder_view(service.db, ladder, service.ladders, rank_limit, ranks)
    retired_cursor, retired_limit = page_params(request, default_limit=20, prefix="retired_")
    retired = views.retired_bots(service.db, ladder, retired_limit, retired_cursor)
    return page(request, "ladder.html", policy=LADDER_POLICY, ladder=view, retired=retired,
                pace=service.matches_per_minute,
                retired_links=page_links(request, retired, "retired", "retired_"),
                standings_links=page_links(request, view.standings, "standings", "standings_"),
                request_cursor=ranks.text() if ranks else "", request_limit=rank_limit,
                playing=service.playing(ladder.id),
                matches=matches, links=page_links(request, matches),
                **pairs_of(request, headtohead.ladder_pairs(service.db, ladder.id)),
                provisional_matches=views.PROVISIONAL_MATCHES,
                provisional_interval=views.PROVISIONAL_INTERVAL)


def bot_of(request: Request, prefix: str = "") -> views.BotView:
    """The bot the path names, with the page of its versions the query asks for (20 by
    default; `prefix`: a page's `versions_cursor`)."""
    cursor, limit = page_params(request, default_limit=20, prefix=prefix)
    return need(views.bot(request.app.state.service.db, request.path_params["author"],
                          request.path_params["name"], limit, cursor), "bot")


def bot_page(request: Request) -> Response:
    service: Service = request.app.state.service
    bot = bot_of(request, "versions_")
    viewer = author_of(request, allow_cookie=True)
    logs = views.bot_logs(service.db, bot) if viewer and viewer.id == bot.author_id \
        else None
    cursor, limit = page_params(request, default_limit=50)
    matches = views.matches(service.db, bot_id=bot.id, limit=limit, cursor=cursor)
    return page(request, "bot.html", private=logs is not None, bot=bot, logs=logs,
                matches=matches,
                version_links=page_links(request, bot.page, "versions", "versions_"),
                links=page_links(request, matches),
                **pairs_of(request, headtohead.bot_opponents(service.db, bot.id)))


def bots_page(request: Request) -> Response:
    service: Service = request.app.state.service
    cursor, limit = page_params(request, default_limit=50)
    found = views.bots(service.db, limit, cursor)
    return page(request, "bots.html", bots=found, links=page_links(request, found, "bots"))


def match_page(request: Request) -> Response:
    service: Service = request.app.state.service
    match = need(views.match(service.db, request.path_params["match"]), "match")
    return page(request, "match.html", policy=MATCH_POLICY, match=match)


LIVE_SCRIPT = (resources.files("arena.serve") / "templates" / "live.js").read_text()


def live_script(request: Request) -> Response:
    """The ladder page's live standings (templates/live.js): it polls /api/ladders/ID."""
    return Response(LIVE_SCRIPT, media_type="text/javascript", headers={
        "X-Content-Type-Options": "nosniff", "Cache-Control": "max-age=300"})


def match_replay(request: Request) -> Response:
    """The replay viewer, with the log lines of the reader's own bots only."""
    service: Service = request.app.state.service
    match = need(views.match(service.db, request.path_params["match"]), "match")
    viewer = author_of(request, allow_cookie=True)
    logs = views.match_logs(service.db, match, viewer.id if viewer else None)
    return HTMLResponse(render_replay_html(match.record, logs=logs), headers={
        "Content-Security-Policy": REPLAY_POLICY, "X-Content-Type-Options": "nosniff",
        "Cache-Control": "private, no-store"})


def author_page(request: Request) -> Response:
    """An author's bots, versions and submissions; why one was rejected, for them alone."""
    service: Service = request.app.state.service
    cursor, limit = page_params(request, default_limit=50)
    bots_cursor, bots_limit = page_params(request, default_limit=20, prefix="bots_")
    found = need(author_view.author(service.db, request.path_params["author"], limit, cursor,
                                    bots_limit, bots_cursor), "author")
    viewer = author_of(request, allow_cookie=True)
    mine = viewer is not None and viewer.id == found.id
    return page(request, "author.html", author=found, mine=mine,
                links=page_links(request, found.submissions, "submissions"),
                bot_links=page_links(request, found.bots, "bots", "bots_"),
                private=mine)


def submission_page(request: Request) -> Response:
    service: Service = request.app.state.service
    viewer = author_of(request, allow_cookie=True)
    found = need(views.submission(service.db, submission_in_path(request)), "submission")
    mine = viewer is not None and viewer.id == found.author_id
    return page(request, "submission.html", private=mine, submission=found, mine=mine)


def submit_form(request: Request) -> Response:
    service: Service = request.app.state.service
    return page(request, "submit.html", ladders=list(service.ladders.values()))


async def submit_from_form(request: Request) -> Response:
    """The submit page's form, from a signed-in author: who sends it is known before its
    body (up to the packed cap) is read, so an unknown sender holds no buffer."""
    service: Service = request.app.state.service
    refuse_cross_site(request)
    author = author_of(request, allow_cookie=True)
    if author is None:
        raise HTTPException(401, "sign in first (/login, with the token `arena author add` "
                                 "printed for you), then send the form")
    body = await read_capped(request, service.limits.packed_bytes + 64 * 1024)
    form = await replayed(request, body).form(max_files=1, max_fields=4,
                                             max_part_size=1024 * 1024)
    upload = form.get("bot")
    if upload is None or isinstance(upload, str):
        raise HTTPException(400, "no bot file: choose your bot folder packed as .tar.gz")
    data = await upload.read()
    submission_id = await run_in_threadpool(store_submission, service, author,
                                            str(form.get("ladder") or ""), data)
    return RedirectResponse(f"/submissions/{submission_id}", status_code=303)


def form_author(request: Request, form) -> Author:
    """Who sent a form: its token field, else the signed-in cookie."""
    token = str(form.get("token") or "") or request.cookies.get(TOKEN_COOKIE)
    author = authenticate(request.app.state.service.db, token)
    if author is None:
        raise HTTPException(401, "unknown token: paste the token `arena author add` "
                                 "printed for you")
    return author


async def recheck_from_form(request: Request) -> Response:
    refuse_cross_site(request)
    body = await read_capped(request, 16 * 1024)
    form = await replayed(request, body).form(max_files=0, max_fields=2)
    new_id = ask_recheck(request.app.state.service, form_author(request, form),
                         submission_in_path(request))
    return RedirectResponse(f"/submissions/{new_id}", status_code=303)


async def retire_from_form(request: Request) -> Response:
    """The bot page's form: its signed-in author retires the bot (nobody else may)."""
    refuse_cross_site(request)
    body = await read_capped(request, 16 * 1024)
    form = await replayed(request, body).form(max_files=0, max_fields=2)
    author = form_author(request, form)
    owner, name = request.path_params["author"], request.path_params["name"]
    if author.name != owner:
        raise HTTPException(403, f"{owner}/{name} is another author's bot: you may retire "
                                 "only your own")
    await run_in_threadpool(retire_bot, request.app.state.service.db, owner, name)
    return RedirectResponse(f"/bots/{owner}/{name}", status_code=303)


async def login(request: Request) -> Response:
    if request.method == "GET":
        return page(request, "login.html")
    refuse_cross_site(request)   # else another site could sign a reader in as its own author
    body = await read_capped(request, 16 * 1024)
    form = await replayed(request, body).form(max_files=0, max_fields=2)
    token = str(form.get("token") or "")
    author = authenticate(request.app.state.service.db, token)
    if author is None:
        raise HTTPException(401, "unknown token: paste the token `arena author add` "
                                 "printed for you")
    response = RedirectResponse("/", status_code=303)
    response.set_cookie(TOKEN_COOKIE, token, httponly=True, samesite="strict")
    return response


def logout(request: Request) -> Response:
    refuse_cross_site(request)
    response = RedirectResponse("/", status_code=303)
    response.delete_cookie(TOKEN_COOKIE)
    return response


# -- API --------------------------------------------------------------------------------------
def api_ladders(request: Request) -> Response:
    service: Service = request.app.state.service
    return JSONResponse({"ladders": [views.ladder_summary(service.db, ladder, service.ladders)
                                     for ladder in service.db.ladders()],
                         "matches_per_minute": service.matches_per_minute})


def api_ladder(request: Request) -> Response:
    service: Service = request.app.state.service
    ladder = need(service.db.ladder(request.path_params["ladder"]), "ladder")
    cursor, limit = page_params(request, default_limit=100)
    latest = request.query_params.get("live") == "1"   # the live page's polls
    return JSONResponse({**views.ladder_json(service.db, ladder, service.ladders, limit, cursor,
                                             latest), "playing": service.playing(ladder.id),
                         "matches_per_minute": service.matches_per_minute})


def api_head_to_head(request: Request) -> Response:
    service: Service = request.app.state.service
    ladder = need(service.db.ladder(request.path_params["ladder"]), "ladder")
    return pairs_json(request, headtohead.ladder_pairs(service.db, ladder.id),
                      ladder=ladder.id)


def api_retired(request: Request) -> Response:
    """The ladder's retired bots, paged, the last retired first."""
    service: Service = request.app.state.service
    ladder = need(service.db.ladder(request.path_params["ladder"]), "ladder")
    cursor, limit = page_params(request, default_limit=100)
    found = views.retired_bots(service.db, ladder, limit, cursor)
    return JSONResponse({"ladder": ladder.id, "retired": [
        {"bot": bot.bot, "retired": views.iso(bot.retired), "matches": bot.matches}
        for bot in found.items], "next_cursor": found.older, "newer_cursor": found.newer})


def api_export(request: Request) -> Response:
    """Every record of a ladder as JSON Lines, streamed (arena.serve.export)."""
    service: Service = request.app.state.service
    ladder = need(service.db.ladder(request.path_params["ladder"]), "ladder")
    return StreamingResponse(export.ladder_lines(service.db, ladder.id),
                             media_type="application/jsonl", headers={
                                 "Content-Disposition": f'attachment; filename="{ladder.id}.jsonl"',
                                 "X-Content-Type-Options": "nosniff"})


def api_bots(request: Request) -> Response:
    """Every bot, paged: those playing newest first, then the retired ones."""
    service: Service = request.app.state.service
    cursor, limit = page_params(request, default_limit=100)
    found = views.bots(service.db, limit, cursor)
    return JSONResponse({"bots": [bot.json() for bot in found.items],
                         "next_cursor": found.older, "newer_cursor": found.newer})


def api_bot(request: Request) -> Response:
    """The bot and a page of its versions (`cursor`, `limit`), the newest first."""
    service: Service = request.app.state.service
    bot = bot_of(request)
    found = headtohead.page(headtohead.bot_opponents(service.db, bot.id), None, 100)
    more = f"/api/bots/{bot.author}/{bot.name}/head-to-head?cursor={quote(found.older)}" \
        if found.older else None
    return JSONResponse({**views.bot_json(bot), "next_cursor": bot.older,
                         "newer_cursor": bot.newer, "head_to_head": [
                             pair.json() for pair in found.items], "head_to_head_next": more})


def api_bot_head_to_head(request: Request) -> Response:
    service: Service = request.app.state.service
    author, name = request.path_params["author"], request.path_params["name"]
    bot_id = need(views.bot_id(service.db, author, name), "bot")
    return pairs_json(request, headtohead.bot_opponents(service.db, bot_id),
                      bot=f"{author}/{name}")


def api_bot_logs(request: Request) -> Response:
    """The logs of a page of the bot's versions, as /api/bots/AUTHOR/NAME pages them."""
    service: Service = request.app.state.service
    bot = bot_of(request)
    viewer = author_of(request, allow_cookie=False)
    if viewer is None:
        raise HTTPException(401, "a bot's logs need its author's token: send "
                                 "Authorization: Bearer TOKEN")
    if viewer.id != bot.author_id:
        raise HTTPException(403, "these logs belong to another author")
    return JSONResponse({"logs": views.bot_logs(service.db, bot), "next_cursor": bot.older,
                         "newer_cursor": bot.newer})


def api_matches(request: Request) -> Response:
    service: Service = request.app.state.service
    params = request.query_params
    cursor, limit = page_params(request, default_limit=50)
    bot_id = None
    if "bot" in params:
        author, _, name = params["bot"].partition("/")
        bot_id = need(views.bot_id(service.db, author, name), "bot")
    found = views.matches(service.db, ladder=params.get("ladder"), bot_id=bot_id, limit=limit,
                          cursor=cursor)
    return JSONResponse({"matches": [m.summary() for m in found.items],
                         "next_cursor": found.older, "newer_cursor": found.newer})


def api_match(request: Request) -> Response:
    service: Service = request.app.state.service
    match = need(views.match(service.db, request.path_params["match"]), "match")
    return JSONResponse({**match.summary(), "record": match.record})


def api_submissions(request: Request) -> Response:
    service: Service = request.app.state.service
    viewer = author_of(request, allow_cookie=False)
    if viewer is None:
        raise HTTPException(401, "your submissions need your token: send "
                                 "Authorization: Bearer TOKEN")
    cursor, limit = page_params(request, default_limit=100)
    found = views.submissions_of(service.db, viewer.id, limit, cursor)
    return JSONResponse({"submissions": [s.json(mine=True) for s in found.items],
                         "next_cursor": found.older, "newer_cursor": found.newer})


def api_submission(request: Request) -> Response:
    service: Service = request.app.state.service
    found = need(views.submission(service.db, submission_in_path(request)), "submission")
    viewer = author_of(request, allow_cookie=False)
    return JSONResponse(found.json(mine=viewer is not None and viewer.id == found.author_id))


async def api_submit(request: Request) -> Response:
    service: Service = request.app.state.service
    author = author_of(request, allow_cookie=False)
    if author is None:
        raise HTTPException(401, "unknown or missing token: send Authorization: Bearer "
                                 "TOKEN (from `arena author add`)")
    data = await read_capped(request, service.limits.packed_bytes)
    submission_id = await run_in_threadpool(   # unpacking is slow: not on the event loop
        store_submission, service, author, request.query_params.get("ladder", ""), data)
    return JSONResponse({"id": submission_id, "status": "checking",
                         "url": f"/submissions/{submission_id}"}, status_code=202)


def api_recheck(request: Request) -> Response:
    author = author_of(request, allow_cookie=False)
    if author is None:
        raise HTTPException(401, "a re-check needs your token: send Authorization: "
                                 "Bearer TOKEN")
    old_id = submission_in_path(request)
    new_id = ask_recheck(request.app.state.service, author, old_id)
    return JSONResponse({"id": new_id, "status": "checking", "recheck_of": old_id,
                         "url": f"/submissions/{new_id}"}, status_code=202)


# -- what the routes ask of the admission thread ------------------------------------------------
def store_submission(service: Service, author: Author, ladder_text: str, data: bytes) -> int:
    """Stores an upload for its check (SubmissionError or UploadError when refused)."""
    ladder = service.ladders.get(_ladder_param(ladder_text))
    if ladder is None:
        raise HTTPException(404, f"ladder {ladder_text!r} is not served here (ladders: "
                                 f"{', '.join(service.ladders)})")
    submission_id = submit(service.db, author, ladder, data, limits=service.limits,
                           per_hour=service.submissions_per_hour)
    service.on_submission()
    return submission_id


def ask_recheck(service: Service, author: Author, submission_id: int) -> int:
    new_id = recheck(service.db, author, submission_id, service.submissions_per_hour)
    service.on_submission()
    return new_id


ROUTES = [
    Route("/", home), Route("/ladders/{ladder}", ladder_page), Route("/live.js", live_script),
    Route("/bots", bots_page), Route("/bots/{author}/{name}", bot_page),
    Route("/matches/{match}", match_page),
    Route("/bots/{author}/{name}/retire", retire_from_form, methods=["POST"]),
    Route("/matches/{match}/replay", match_replay),
    Route("/authors/{author}", author_page),
    Route("/submissions/{id:int}", submission_page),
    Route("/submissions/{id:int}/recheck", recheck_from_form, methods=["POST"]),
    Route("/submit", submit_form, methods=["GET"]),
    Route("/submit", submit_from_form, methods=["POST"]),
    Route("/login", login, methods=["GET", "POST"]),
    Route("/logout", logout, methods=["POST"]),
    Route("/api/ladders", api_ladders), Route("/api/ladders/{ladder}", api_ladder),
    Route("/api/ladders/{ladder}/export.jsonl", api_export),
    Route("/api/ladders/{ladder}/head-to-head", api_head_to_head),
    Route("/api/ladders/{ladder}/retired", api_retired),
    Route("/api/bots", api_bots), Route("/api/bots/{author}/{name}", api_bot),
    Route("/api/bots/{author}/{name}/logs", api_bot_logs),
    Route("/api/bots/{author}/{name}/head-to-head", api_bot_head_to_head),
    Route("/api/matches", api_matches), Route("/api/matches/{match}", api_match),
    Route("/api/submissions", api_submissions, methods=["GET"]),
    Route("/api/submissions", api_submit, methods=["POST"]),
    Route("/api/submissions/{id:int}", api_submission),
    Route("/api/submissions/{id:int}/recheck", api_recheck, methods=["POST"]),
]


def _ladder_param(text: str) -> str:
    """`mandala:2` (as the CLI writes it) or `mandala-2p` (as URLs do) -> `mandala-2p`."""
    game, sep, players = text.partition(":")
    if sep and players.isdigit():
        return ladder_id(game, int(players))
    return text
