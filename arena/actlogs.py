"""The arena's own lines in a bot log, and a bot log read back per match, seat and ply.

A bot's log holds its processes' stderr, each line behind its process tag (`TAG| text`), and
lines the arena writes, which never carry a tag:

    == arena: match ID: GAME, seat S of N, DATE UTC; process TAG ==   a match starts
    == arena: match ID ply K; process TAG ==                          act K is asked

The act line goes through the bot's own stderr pipe (see `arena.sandbox.logdrain`), so it
is in order with what the bot printed: every line of process TAG after it, up to its next
arena line, was printed while that act was the bot's (it is frozen between its acts). Lines
after the match header and before the first act are the start-up and new-match ones (ply -1).

No bot can write an arena line: its lines always start with its tag, and the drain shows
every character that could start a line of its own as text.
"""
from __future__ import annotations

import os
import re
from typing import Iterable

from arena.errors import visible

LOG_HEADER = "== arena:"   # starts the arena's own lines in a bot log
LOG_PREFIX_END = "| "      # a bot's lines in its log start with its process tag and this
BEFORE_FIRST_ACT = -1      # the ply of lines printed before a match's first act

_HEADER = re.compile(r"^== arena: (?P<text>.*); process (?P<tag>\S+) ==$")
_MATCH_START = re.compile(r"^match (?P<match>.*): [^,]*, seat (?P<seat>\d+) of \d+, .*$")
_ACT = re.compile(r"^match (?P<match>.*) ply (?P<ply>\d+)$")

ActLines = dict[tuple[str, int], dict[int, list[str]]]
"""(match id, seat) -> ply -> the bot's lines printed while that act was its own."""


def header_line(text: str, tag: str) -> bytes:
    """An arena line naming process `tag`, with anything unprintable in `text` escaped."""
    if not text.isprintable():   # checked first: every act writes one
        text = visible(text)
    return f"{LOG_HEADER} {text}; process {tag} ==\n".encode(errors="replace")


def act_text(match: str, ply: int) -> str:
    """What the arena line of act `ply` of match `match` says (before `; process TAG`)."""
    return f"match {match} ply {ply}"


def split_log(lines: Iterable[str]) -> ActLines:
    """Each match's, seat's and ply's own lines of a bot log (its lines, see `log_lines`),
    without their process tag. Lines of a process before any arena line naming it, and
    lines of no process (a truncation note), belong to no act and are left out."""
    where: dict[str, tuple[str, int, int]] = {}   # tag -> (match, seat, ply) now
    found: ActLines = {}
    for line in lines:
        header = _HEADER.match(line) if line.startswith(LOG_HEADER) else None
        if header:
            tag, text = header["tag"], header["text"]
            start, act = _MATCH_START.match(text), _ACT.match(text)
            if start:
                where[tag] = (start["match"], int(start["seat"]), BEFORE_FIRST_ACT)
            elif act and tag in where and where[tag][0] == act["match"]:
                where[tag] = (act["match"], where[tag][1], int(act["ply"]))
            continue
        tag, separator, text = line.partition(LOG_PREFIX_END)
        if not separator or tag not in where:
            continue
        match, seat, ply = where[tag]
        found.setdefault((match, seat), {}).setdefault(ply, []).append(text)
    return found


MatchLogs = dict[str, dict[int, dict[int, list[str]]]]
"""match id -> seat -> ply -> the bot's lines printed while that act was its own."""


def logs_by_match(paths: Iterable[str | os.PathLike]) -> MatchLogs:
    """Every match's lines in the bot logs at `paths`, each log read once (missing ones are
    skipped: a built-in bot has none); matches in the order first seen."""
    from arena.sandbox import log_lines

    found: MatchLogs = {}
    for path in paths:
        if not os.path.isfile(path):
            continue
        for (match, seat), plies in split_log(log_lines(path)).items():
            for ply, lines in plies.items():
                found.setdefault(match, {}).setdefault(seat, {}).setdefault(ply, []).extend(lines)
    return found


def match_logs(paths: Iterable[str | os.PathLike], match: str) -> dict[int, dict[int, list[str]]]:
    """seat -> ply -> lines of match `match`, from the bot logs at `paths`."""
    return logs_by_match(paths).get(match, {})


def matches_in(paths: Iterable[str | os.PathLike]) -> list[str]:
    """The match ids the bot logs at `paths` hold lines of, first seen first."""
    return list(logs_by_match(paths))
