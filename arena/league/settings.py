"""A LeagueConfig from a league config file and command-line flags, type-checked.

A league config file (`arena league run --config FILE`) has these keys, all optional but
`game` and `bots`; flags given on the command line win over the file::

    name = "mandala-demo"             # folder results/NAME
    game = "mandala"
    bots = ["../sample_bots/greedy", "../sample_bots/random"]   # relative to this file
    players = 2
    deals = 10
    seed = 1
    move_time = 0.5                   # and/or tc = "10+0.1"; startup_time = 10
    gauntlet = "greedy"
    tables = 60                       # most groups of 3-4 bots (a balanced sample above)
    seating = "independent"           # or "mirrored": one deal in every seating (trusted bots)
    [options]                         # rule options of the game
"""
from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any, Iterable, Mapping

from arena.clock import TimeControl
from arena.league.config import LeagueConfig, LeagueError
from arena.league.schedule import DEFAULT_MAX_TABLES, DEFAULT_SEATING
from engine import registry

# Each key of a league config file and the TOML types it takes.
CONFIG_KEYS = {"name": (str,), "game": (str,), "bots": (list,), "players": (int,),
               "deals": (int,), "seed": (int,), "options": (dict,), "move_time": (int, float),
               "tc": (str,), "startup_time": (int, float), "gauntlet": (str,),
               "tables": (int,), "seating": (str,), "unsafe_no_sandbox": (bool,)}


def read_config_file(path: Path) -> dict:
    """The settings of a league config file, type-checked, with bot folders made relative to
    the file (so a config works from any working directory)."""
    try:
        settings = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise LeagueError(f"cannot read league config {path}: {error.strerror}") from None
    except UnicodeDecodeError as error:
        raise LeagueError(f"league config {path} is not UTF-8 text (byte {error.start}): "
                          "save it as UTF-8") from None
    except tomllib.TOMLDecodeError as error:
        raise LeagueError(f"league config {path} is not valid TOML: {error}") from None
    except RecursionError:
        raise LeagueError(f"league config {path} nests arrays or tables too deeply to read: "
                          "a league config needs only [options]") from None
    unknown = sorted(set(settings) - set(CONFIG_KEYS))
    if unknown:
        raise LeagueError(f"league config {path} has unknown keys {', '.join(unknown)} "
                          f"(known: {', '.join(sorted(CONFIG_KEYS))})")
    for key, value in settings.items():
        wrong_bool = isinstance(value, bool) and bool not in CONFIG_KEYS[key]
        if wrong_bool or not isinstance(value, CONFIG_KEYS[key]):
            kinds = " or ".join(kind.__name__ for kind in CONFIG_KEYS[key])
            raise LeagueError(f"league config {path}: {key} must be of type {kinds}, "
                              f"not {value!r}")
    bots = settings.get("bots", [])
    if not all(isinstance(bot, str) for bot in bots):
        raise LeagueError(f"league config {path}: bots must be a list of folders")
    settings["bots"] = [bot if Path(bot).is_absolute() or not (path.parent / bot).is_dir()
                        else str(path.parent / bot) for bot in bots] or None
    if settings["bots"] is None:
        del settings["bots"]
    return settings


def config_from_settings(settings: Mapping[str, Any], option_pairs: Iterable[str] = ()
                         ) -> LeagueConfig:
    """A LeagueConfig from file settings and flags merged (keys of CONFIG_KEYS), plus
    `--option KEY=VALUE` pairs; `seed` must be set."""
    if not settings.get("game"):
        raise LeagueError("no game given: use --game GAME (see `arena games`)")
    if not settings.get("bots"):
        raise LeagueError("no bots given: use --bot FOLDER once per bot")
    game = registry.get(settings["game"])
    players = settings.get("players", 2 if game.min_players <= 2 <= game.max_players
                           else game.min_players)
    options = dict(settings.get("options", {}))
    options.update(game.parse_options(option_pairs))
    resolved = game.resolve_options(options, players)
    timing = TimeControl.from_cli(settings.get("move_time"), settings.get("tc"),
                                  settings.get("startup_time"))
    return LeagueConfig(
        game=game.id, bots=tuple(settings["bots"]), players=players,
        deals=settings.get("deals", 10), seed=settings["seed"],
        options=game.non_default_options(resolved), time_control=timing.to_record(),
        gauntlet=settings.get("gauntlet"),
        max_tables=settings.get("tables", DEFAULT_MAX_TABLES),
        seating=settings.get("seating", DEFAULT_SEATING),   # checked by expand()
        sandbox=not settings.get("unsafe_no_sandbox", False))
