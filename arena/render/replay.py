"""A stored match, step by step: the positions of a record replayed through the engine, and
the replay viewer, one self-contained HTML page that steps through them.

`steps(record)` yields the start and the position after every move (the engine's own render,
each seat's observation, who moved what, how long it took). `render_replay_html(record)` is
the viewer: the template `templates/replay.html` with its script (`replay.js`) and style
(`replay.css`) inline, no files, no network. At each ply K (the position before record entry
K) it draws the table and every seat's view as cards and tiles, lists the legal moves (the
engine's) with the one played marked, shows the bots' log lines of that act when given, and
marks a forfeit; `#ply-K` opens it at K, the arrow keys and Home/End step.

Every text comes from the record or a log, which bots partly wrote (names, moves, lines):
the page carries it as JSON inside a script element with `<`, `>` and `&` escaped, and the
script only builds DOM nodes and sets `textContent`, so nothing in them can become markup.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Iterator, Mapping

from markupsafe import Markup

from arena.errors import ArenaError
from arena.render import templates
from engine import records
from engine.core import State


@dataclass(frozen=True)
class Step:
    """The position after move `ply` (ply None: the start)."""

    ply: int | None
    seat: int | str | None     # who moved: a seat, "chance", or None at the start
    move: str | None
    seconds: float | None      # the mover's time (None: chance, the start, not recorded)
    cpu_seconds: float | None
    state: State


def steps(record: Mapping[str, Any]) -> Iterator[Step]:
    """The start, then the position after each move; RecordError/ReplayError (EngineError)
    for a record that cannot be read or replayed."""
    read = records.read(dict(record))
    times = list(record.get("times") or [])
    cpu_times = list(record.get("cpu_times") or [])
    state = read.start()
    yield Step(None, None, None, None, None, state.clone())
    for ply, (seat, move) in enumerate(read.moves):
        records.apply_entry(state, ply, seat, move)
        yield Step(ply, seat, move, _at(times, ply), _at(cpu_times, ply), state.clone())


def _at(values: list, index: int) -> float | None:
    value = values[index] if index < len(values) else None
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def seat_names(record: Mapping[str, Any]) -> list[str]:
    """"name (version8)" per seat when the record names versions, else the player names."""
    bots = record.get("bots") or []
    names = []
    for index, player in enumerate(record["players"]):
        bot = bots[index] if index < len(bots) and isinstance(bots[index], dict) else {}
        version = str(bot.get("version", ""))[:8]
        names.append(f"{player} ({version})" if version else str(player))
    return names


def seed_note(record: Mapping[str, Any]) -> str:
    """What the record's seed is (derived, not a --seed) and how to play the match again: the
    command `arena play` kept in the record, else `--setup-from` for its deal."""
    seed = record.get("seed")
    if seed is None:
        return ""
    replay = record.get("replay") if isinstance(record.get("replay"), dict) else {}
    typed, command = replay.get("seed"), replay.get("command")
    if isinstance(typed, int) and isinstance(command, str):
        what = "chance draws" if "--setup-from" in command.split() else "deal and chance draws"
        return (f"seed {seed} is the match's derived seed (its {what}), made from --seed "
                f"{typed} with the key of the installation that played it (--seed takes "
                f"{typed}, not {seed}); replay this match there with: {command}")
    return (f"seed {seed} is the match's derived seed (its deal and chance draws), not a "
            f"--seed; `arena play {record['game']} --setup-from` with this record deals it "
            "again, to any bots")


def describe_result(record: Mapping[str, Any]) -> str:
    result = record.get("result")
    if not result:
        return "no result stored"
    text = f"scores {result['scores']}, ranks {result['ranks']}, end {result['end']}"
    forfeit = result.get("forfeit")
    if forfeit:
        text += (f"; forfeit by seat {forfeit['seat']} ({forfeit['reason']})"
                 + (f": {forfeit['detail']}" if forfeit.get("detail") else ""))
    return text


def _own_keys(observations: list[list[dict]]) -> list[str]:
    """The observation fields that differ between seats somewhere in the match (a hand, a
    drawn card): kept per seat; every other field once per position."""
    keys: set[str] = set()
    for views in observations:
        for key in views[0]:
            if key != "seat" and any(view[key] != views[0][key] for view in views[1:]):
                keys.add(key)
    return sorted(keys)


def _changed(now: dict, before: dict) -> dict:
    """The fields of `now` that differ from `before` (a position is mostly the one before);
    a list as long as before as {"~": {index: item}}, its changed items (one garden of four)."""
    changed = {}
    for key, value in now.items():
        old = before.get(key)
        if old == value:
            continue
        if isinstance(value, list) and isinstance(old, list) and len(old) == len(value):
            changed[key] = {"~": {index: item for index, (item, was) in
                                  enumerate(zip(value, old)) if item != was}}
        else:
            changed[key] = value
    return changed


def _page_data(record: Mapping[str, Any],
               logs: Mapping[int, Mapping[int, list[str]]] | None = None) -> dict:
    """The viewer's data. One frame per ply K, the position before record entry K (the last
    one after every move: the end, or the position the forfeiter faced): who decides, the
    legal moves, the move played, its time, and the observations, as changes from the frame
    before: the public fields once, each seat's own fields (`own`) per seat."""
    names = seat_names(record)
    players = len(names)
    forfeit = (record.get("result") or {}).get("forfeit")
    positions = list(steps(record))
    moves = [tuple(entry) for entry in record["moves"]]
    observations = [[step.state.observation(seat) for seat in range(players)]
                    for step in positions]
    own = _own_keys(observations)
    used = [0.0] * players   # seconds each seat used before this frame
    frames, public_before, own_before = [], {}, [{} for _ in range(players)]
    for ply, (step, views) in enumerate(zip(positions, observations)):
        mover, move = moves[ply] if ply < len(moves) else (None, None)
        if ply == len(moves) and forfeit:
            mover = forfeit["seat"]
        public = {key: value for key, value in views[0].items()
                  if key not in own and key != "seat"}
        own_now = [{key: view[key] for key in own} for view in views]
        frame: dict[str, Any] = {
            "p": _changed(public, public_before),
            "o": [_changed(mine, before) for mine, before in zip(own_now, own_before)],
            "clock": [round(seconds, 3) for seconds in used]}
        public_before, own_before = public, own_now
        if mover is not None:
            frame["seat"] = mover
        if move is not None:
            frame["move"] = move
        if isinstance(mover, int) and not step.state.is_over():
            frame["legal"] = step.state.legal_moves()
        if ply + 1 < len(positions):   # the time of entry K, stored with its step
            after = positions[ply + 1]
            if after.seconds is not None and isinstance(mover, int):
                frame["ms"] = round(after.seconds * 1000, 1)
                used[mover] += after.seconds
            if after.cpu_seconds is not None:
                frame["cpu_ms"] = round(after.cpu_seconds * 1000, 1)
        frames.append(frame)
    last = positions[-1].state
    control = record.get("time_control") or {}
    return {
        "game": record["game"], "names": names, "own": own, "frames": frames,
        "result": describe_result(record),
        "final": last.render_result() if last.is_over() else "",
        "forfeit": None if not forfeit else {**forfeit, "ply": len(moves)},
        "bank": control.get("bank"), "increment": control.get("increment") or 0.0,
        "logs": {str(seat): {str(ply): [str(line) for line in lines]
                             for ply, lines in plies.items()}
                 for seat, plies in (logs or {}).items()},
    }


def _describe_control(control: Mapping[str, Any]) -> str:
    parts = []
    if control.get("move_time") is not None:
        parts.append(f"{control['move_time']:g} s per move")
    if control.get("bank") is not None:
        parts.append(f"bank {control['bank']:g} s + {control.get('increment') or 0:g} s per move")
    return ", ".join(parts) or "no time control recorded"


def _json_for_script(value: Any) -> str:
    """JSON that cannot end its <script> element or open a comment, whatever it holds."""
    try:   # NaN or Infinity would be no JSON to the page's parser: it would show nothing
        text = json.dumps(value, separators=(",", ":"), allow_nan=False)
    except ValueError as error:
        raise ArenaError(f"the replay page cannot hold this record: {error} (a record holds "
                         "only finite numbers)") from None
    return (text.replace("&", "\\u0026")
            .replace("<", "\\u003c").replace(">", "\\u003e"))


def render_replay_html(record: Mapping[str, Any], *,
                       logs: Mapping[int, Mapping[int, list[str]]] | None = None) -> str:
    """The replay viewer for `record` (an arena-record/1 dict), one self-contained page.
    `logs` (seat -> ply -> lines, as `arena.actlogs.match_logs` reads them; ply -1: before
    the first act) are shown at their plies: pass only the seats the reader may see."""
    data = _page_data(record, logs)
    title = (f"{record['game']}: " + " vs ".join(data["names"])
             + (f", derived seed {record['seed']}" if record.get("seed") is not None else ""))
    environment = templates()
    script, style = (environment.loader.get_source(environment, name)[0]
                     for name in ("replay.js", "replay.css"))
    return environment.get_template("replay.html").render(
        title=title, result=data["result"], seed=seed_note(record),
        control=_describe_control(record.get("time_control") or {}),
        data_json=Markup(_json_for_script(data)), script=Markup(script), style=Markup(style))
