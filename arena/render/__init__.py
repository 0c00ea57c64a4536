"""HTML for people: the ladder page (ladder_page), the ladder site of linked bot and match
pages (ladder_site) and the replay viewer (replay), all made from the Jinja2 templates in
`templates/` with autoescaping on, so no text from a record or a bot can become markup."""
from __future__ import annotations

import time
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from jinja2 import Environment


@lru_cache(maxsize=1)
def templates() -> Environment:
    """The templates of `arena/render/templates`, autoescaped (strings included). jinja2 is
    loaded here, on the first page made: commands that print text need none of it."""
    from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
    return Environment(loader=PackageLoader("arena.render", "templates"),
                       autoescape=select_autoescape(default=True, default_for_string=True),
                       undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True)


def shown_time(moment: float | None) -> str:
    """A stored unix time as pages show it, `2026-12-02 12:34 UTC`; "-" when not known (None,
    or 0 in a league store written before matches kept their start)."""
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(moment)) if moment else "-"
