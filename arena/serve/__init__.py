"""`arena serve`: a ladder service that authors submit bots to, always playing, read in a browser.

One process: an HTTP app (`app.py`, Starlette on uvicorn, Jinja2 pages and a JSON API), a
thread that checks submissions (`admission.py`) and a thread that keeps playing matches on
the league's worker processes (`player.py`), picking them with `scheduler.py` and refitting
ratings from the database as they land (`standings.py`). Everything lives in one folder: the
SQLite database (`db.py`) and the submitted bots, unpacked read-only (`uploads.py`). Authors
and their tokens: `authors.py`. The admission check is `arena bot check`'s compliance run
(`compliance.py`).

The web stack is Starlette on uvicorn with Jinja2 templates: a well-kept ASGI stack that
brings routing, multipart uploads with limits and a production HTTP server, and templates
that escape by default, instead of a home-made server.
"""
