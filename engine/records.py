"""Match records (`arena-record/1`, docs/notation.md): build, read, replay and verify.

Pure: works on dicts and JSON text, never on files. A record holds the explicit starting
position (`setup`) and every move, chance included, so replaying it needs no random number
generator — only the game's own rules, reached through the registry.

- `build_record` writes the dict a match produces (options reduced to the non-default ones).
- `read` checks a record's shape, game, options and setup; anything wrong there raises
  `RecordError` ("cannot be read": `arena verify` reports ply null, exit status 2).
- `replay` applies the moves one by one; the first bad entry raises `ReplayError` with its
  0-based ply (exit status 1).
- `verify` gives the one JSON-able verdict line of `arena verify` for a record.
"""
from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from engine import registry
from engine.core import CHANCE, EngineError, Game, State

FORMAT = "arena-record/1"
ENDS = ("normal", "forfeit")
REQUIRED_KEYS = ("format", "game", "options", "players", "setup", "moves")

# Exit statuses of `arena verify`, per record; the command exits with the highest.
VERIFIED, FAILED, UNREADABLE = 0, 1, 2


class RecordError(EngineError, ValueError):
    """A record that cannot be read: bad JSON, bad shape, unknown game or option, bad setup."""

    def __init__(self, problem: str):
        self.problem = problem
        super().__init__(f"record cannot be read: {problem}")


class ReplayError(EngineError):
    """A readable record whose replay fails at move `ply` (len(moves) for the end/result)."""

    def __init__(self, ply: int, problem: str):
        self.ply = ply
        self.problem = problem
        super().__init__(f"ply {ply}: {problem}")


@dataclass(frozen=True)
class Record:
    """A record that has been read: its game resolved, its options complete, its setup legal."""

    game: Game
    players: list[str]
    options: dict[str, Any]          # every option, defaults filled in
    setup: dict[str, Any]
    moves: list[tuple[int | str, str]]
    result: dict[str, Any] | None
    seed: int | None = None

    def start(self) -> State:
        """A fresh state at the record's starting position."""
        return self.game.start(len(self.players), dict(self.options), copy.deepcopy(self.setup))


# -- writing ----------------------------------------------------------------------------------

def build_record(*, game_id: str, options: Mapping[str, Any], players: Sequence[str],
                 seed: int | None, setup: Mapping[str, Any], moves: Sequence[Sequence[Any]],
                 result: Mapping[str, Any] | None, extras: Mapping[str, Any] | None = None
                 ) -> dict[str, Any]:
    """An `arena-record/1` dict; `options` may be complete, only non-default ones are kept.

    `moves` are `[seat | "chance", move]` pairs; `result` is `normal_result(state)` or a
    forfeit result (None leaves it out); `extras` are further keys that readers may ignore.
    """
    game = registry.get(game_id)
    record: dict[str, Any] = {
        "format": FORMAT, "game": game_id,
        "options": game.non_default_options(options),
        "players": list(players), "seed": seed,
        # A JSON round trip copies the setup and proves it is JSON (no tuples, no sets).
        "setup": json.loads(json.dumps(setup)),
        "moves": [[seat, move] for seat, move in moves],
    }
    if result is not None:
        record["result"] = json.loads(json.dumps(result))
    record["rules"] = game.rules()   # an extra key: replays need the same rules version
    for key, value in (extras or {}).items():
        if key in record or key == "result":
            raise ValueError(f"extra record key {key!r} would replace a key of the format")
        record[key] = value
    return record


def normal_result(state: State) -> dict[str, Any]:
    """The `result` of a match that ended by the rules."""
    return {"scores": state.scores(), "ranks": state.ranks(), "end": "normal"}


def forfeit_result(players: int, seat: int, reason: str, detail: str = "") -> dict[str, Any]:
    """The `result` of a match that `seat` forfeited: the forfeit rule, which `verify` checks.

    The engine's running scores mean nothing mid-match, so a forfeit scores 1 for every other
    seat and 0 for the forfeiter; the others share rank 1 and the forfeiter ranks last (with
    two players: the other wins).
    """
    scores = [0 if index == seat else 1 for index in range(players)]
    ranks = [players if index == seat else 1 for index in range(players)]
    forfeit = {"seat": seat, "reason": reason}
    if detail:
        forfeit["detail"] = detail
    return {"scores": scores, "ranks": ranks, "end": "forfeit", "forfeit": forfeit}


def to_json(record: Mapping[str, Any]) -> str:
    """Record text: one top-level key per line and one move per line, easy to read and diff."""
    lines = []
    for key, value in record.items():
        if key == "moves" and value:
            moves = ",\n".join(f"  {json.dumps(entry)}" for entry in value)
            lines.append(f'"moves": [\n{moves}\n]')
        else:
            lines.append(f"{json.dumps(key)}: {json.dumps(value)}")
    return "{\n" + ",\n".join(lines) + "\n}\n"


# -- reading ----------------------------------------------------------------------------------

def read(record: str | bytes | Mapping[str, Any]) -> Record:
    """Checks a record (JSON text or its dict) and returns it read; RecordError if it cannot be.

    Checked: the format string, required keys and their types, a known game (under the same
    rules version when the record names one: key `rules`, e.g. `mandala/1`), options the game
    knows with values it accepts, the player count, the shape of every move entry and of the
    result, and that the setup is a legal deal (the game's own `start` decides).
    """
    data = _parse_json(record) if isinstance(record, (str, bytes)) else record
    if not isinstance(data, Mapping):
        raise RecordError(f"a record is a JSON object, not {_json_kind(data)}")
    missing = [key for key in REQUIRED_KEYS if key not in data]
    if missing:
        raise RecordError(f"missing key{'s' if len(missing) > 1 else ''} {', '.join(missing)}")
    if data["format"] != FORMAT:
        raise RecordError(f"format is {data['format']!r}; this reader knows {FORMAT!r}")
    if not isinstance(data["game"], str):
        raise RecordError(f"game must be a game id string, not {_json_kind(data['game'])}")
    try:
        game = registry.get(data["game"])
    except registry.UnknownGameError as error:
        raise RecordError(str(error)) from None
    rules = data.get("rules", game.rules())   # records from elsewhere may not say
    if rules != game.rules():
        raise RecordError(f"the match was played under rules {rules!r}; this engine plays "
                          f"{game.rules()!r}: replay it with the Arena version of those rules")
    players = data["players"]
    if not (isinstance(players, list) and players and all(isinstance(p, str) for p in players)):
        raise RecordError("players must be a non-empty list of player names")
    options = data["options"]
    if not isinstance(options, Mapping):
        raise RecordError(f"options must be an object, not {_json_kind(options)}")
    try:
        resolved = game.resolve_options(options, len(players))
    except EngineError as error:   # unknown option, bad value, wrong player count
        raise RecordError(str(error)) from None
    seed = data.get("seed")
    if seed is not None and not _is_int(seed):
        raise RecordError(f"seed must be an integer or null, not {_json_kind(seed)}")
    moves = _read_moves(data["moves"], len(players))
    stored = data.get("result")   # absent or null: no stored result to compare with
    result = None if stored is None else _read_result(stored, len(players))
    setup = data["setup"]
    if not isinstance(setup, Mapping):
        raise RecordError(f"setup must be an object, not {_json_kind(setup)}")
    read_record = Record(game, list(players), resolved, copy.deepcopy(dict(setup)), moves,
                         result, seed)   # keys a reader does not know are ignored
    _check_setup(read_record)
    return read_record


def _parse_json(text: str | bytes) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as error:   # JSONDecodeError, bad UTF-8, deep nesting
        raise RecordError(f"not JSON ({error})") from None


def _check_setup(record: Record) -> None:
    # The game alone knows what a legal deal is. Its contract is InvalidSetupError, but a
    # setup of the wrong shape can trip a lookup first: from an untrusted file that is still
    # "not a legal deal", never a crash of the reader.
    try:
        record.start()
    except (EngineError, KeyError, IndexError, TypeError, ValueError, AttributeError) as error:
        detail = str(error) or type(error).__name__
        raise RecordError(f"setup is not a legal deal of {record.game.id}: {detail}") from None


def _read_moves(moves: Any, players: int) -> list[tuple[int | str, str]]:
    if not isinstance(moves, list):
        raise RecordError(f"moves must be a list, not {_json_kind(moves)}")
    entries = []
    for ply, entry in enumerate(moves):
        if not (isinstance(entry, list) and len(entry) == 2 and isinstance(entry[1], str)):
            raise RecordError(f"moves[{ply}] must be a [seat, move] pair with a move string, "
                              f"got {json.dumps(entry)}")
        seat = entry[0]
        if seat != CHANCE and not (_is_int(seat) and 0 <= seat < players):
            raise RecordError(f"moves[{ply}]: seat {json.dumps(seat)} is neither "
                              f"{CHANCE!r} nor a seat 0..{players - 1}")
        entries.append((seat, entry[1]))
    return entries


def _read_result(result: Any, players: int) -> dict[str, Any]:
    if not isinstance(result, Mapping):
        raise RecordError(f"result must be an object, not {_json_kind(result)}")
    for key in ("scores", "ranks"):
        values = result.get(key)
        if not (isinstance(values, list) and len(values) == players
                and all(_is_int(value) for value in values)):
            raise RecordError(f"result.{key} must be a list of {players} integers")
    end = result.get("end")
    if end not in ENDS:
        raise RecordError(f"result.end must be one of {', '.join(ENDS)}, not {json.dumps(end)}")
    forfeit = result.get("forfeit")
    if end == "forfeit":
        if not (isinstance(forfeit, Mapping) and _is_int(forfeit.get("seat"))
                and 0 <= forfeit["seat"] < players and isinstance(forfeit.get("reason"), str)):
            raise RecordError('a forfeit result needs result.forfeit = {"seat": 0..'
                              f'{players - 1}, "reason": "..."}}')
    elif forfeit is not None:
        raise RecordError('result.forfeit is given but result.end is "normal"')
    return dict(result)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _json_kind(value: Any) -> str:
    kinds = {dict: "an object", list: "a list", str: "a string", bool: "a boolean",
             int: "a number", float: "a number", type(None): "null"}
    return kinds.get(type(value), type(value).__name__)


# -- replaying --------------------------------------------------------------------------------

def replay(record: Record) -> State:
    """The state after every move of the record; ReplayError at the first entry that fails."""
    state = record.start()
    for ply, (seat, move) in enumerate(record.moves):
        apply_entry(state, ply, seat, move)
    return state


def apply_entry(state: State, ply: int, seat: int | str, move: str) -> None:
    """Applies one record entry, checking that `seat` is the one to move."""
    mover = state.to_move()
    if mover is None:
        raise ReplayError(ply, f"move {move!r} after the end of the game")
    if seat == CHANCE and not state.game.has_chance:
        raise ReplayError(ply, f"chance move {move!r}, but game {state.game.id} "
                               "has no chance moves")
    if seat != mover:
        raise ReplayError(ply, f"the entry is for {_who(seat)} but {_who(mover)} is to move")
    try:
        state.apply(move)
    except EngineError as error:   # IllegalMoveError by contract
        raise ReplayError(ply, f"{_who(seat)}: {error}") from None


def _who(seat: int | str | None) -> str:
    return "chance" if seat == CHANCE else f"seat {seat}"


# -- verifying --------------------------------------------------------------------------------

def verify(record: str | bytes | Mapping[str, Any]) -> dict[str, Any]:
    """The verdict line of `arena verify` for one record (see docs/notation.md).

    `{"ok": true, "scores", "ranks", "end"}` (plus `"forfeit"` for a forfeit) when every
    move is legal and the game ends exactly at the last move with the stored result, if any;
    a forfeited match must stop before the end and reports its stored result. Otherwise
    `{"ok": false, "ply": K, "error": ...}`, K null for a record that cannot be read.
    """
    try:
        read_record = read(record)
        state = replay(read_record)
        return _verdict(read_record, state)
    except RecordError as error:
        return {"ok": False, "ply": None, "error": str(error)}
    except ReplayError as error:
        return {"ok": False, "ply": error.ply, "error": error.problem}


def _verdict(record: Record, state: State) -> dict[str, Any]:
    end = len(record.moves)
    stored = record.result
    if stored is not None and stored["end"] == "forfeit":
        _check_forfeit(record, state, stored)
        return {"ok": True, "scores": stored["scores"], "ranks": stored["ranks"],
                "end": "forfeit", "forfeit": stored["forfeit"]}
    if not state.is_over():
        raise ReplayError(end, f"the moves stop before the end of the game "
                               f"({_who(state.to_move())} is to move)")
    scores, ranks = list(state.scores()), list(state.ranks())
    if stored is not None and (stored["scores"], stored["ranks"]) != (scores, ranks):
        raise ReplayError(end, f"the stored result (scores {stored['scores']}, ranks "
                               f"{stored['ranks']}) differs from the replay (scores {scores}, "
                               f"ranks {ranks})")
    return {"ok": True, "scores": scores, "ranks": ranks, "end": "normal"}


def _check_forfeit(record: Record, state: State, stored: Mapping[str, Any]) -> None:
    """A forfeit result must follow the forfeit rule: the game not over, the forfeiter the
    seat to decide next (or any seat before the first move: a bot that failed to start), and
    the scores and ranks those of `forfeit_result`."""
    end = len(record.moves)
    if state.is_over():
        raise ReplayError(end, "the result says forfeit, but the moves play the game to its "
                               "normal end")
    seat = stored["forfeit"]["seat"]
    if record.moves and state.to_move() != seat:
        raise ReplayError(end, f"the result says seat {seat} forfeited, but after the last "
                               f"move {_who(state.to_move())} is to move")
    expected = forfeit_result(len(record.players), seat, stored["forfeit"]["reason"])
    if (stored["scores"], stored["ranks"]) != (expected["scores"], expected["ranks"]):
        raise ReplayError(end, f"the stored result (scores {stored['scores']}, ranks "
                               f"{stored['ranks']}) breaks the forfeit rule: seat {seat} "
                               f"forfeiting gives scores {expected['scores']}, ranks "
                               f"{expected['ranks']}")


def exit_status(verdict: Mapping[str, Any]) -> int:
    """0 verified, 1 a move or the result fails, 2 the record cannot be read."""
    if verdict["ok"]:
        return VERIFIED
    return UNREADABLE if verdict["ply"] is None else FAILED
