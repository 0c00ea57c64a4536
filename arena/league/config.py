"""What a league is: its settings (`LeagueConfig`, from flags and a TOML file), its bots, and
the checks that refuse a bad league before anything is created.

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
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from arena.bots.manifest import BUILTIN, BuiltinBot, resolve_bot
from arena.clock import TimeControl
from arena.errors import ArenaError
from arena.keys import LeagueKey
from arena.league.schedule import DEFAULT_MAX_TABLES, DEFAULT_SEATING, MatchSpec, expand
from arena.league.store import BotEntry
from engine import registry

# Each key of a league config file and the TOML types it takes.
CONFIG_KEYS = {"name": (str,), "game": (str,), "bots": (list,), "players": (int,),
               "deals": (int,), "seed": (int,), "options": (dict,), "move_time": (int, float),
               "tc": (str,), "startup_time": (int, float), "gauntlet": (str,),
               "tables": (int,), "seating": (str,), "unsafe_no_sandbox": (bool,)}


class LeagueError(ArenaError):
    """A league that cannot be started or resumed as asked."""


@dataclass(frozen=True)
class LeagueConfig:
    """Everything that fixes a league's matches; stored in its database as JSON."""

    game: str
    bots: tuple[str, ...]
    """Bot folders (absolute paths) or built-in bot names (`random`, `greedy`)."""
    players: int = 2
    deals: int = 10
    seed: int = 0
    options: Mapping[str, Any] = field(default_factory=dict)
    """Rule options that differ from the game's defaults."""
    time_control: Mapping[str, Any] = field(default_factory=lambda: TimeControl().to_record())
    gauntlet: str | None = None
    max_tables: int = DEFAULT_MAX_TABLES
    seating: str = DEFAULT_SEATING
    """`independent` (a deal per match) or `mirrored` (a table's deal in every seating);
    arena.league.schedule."""
    sandbox: bool = True
    rules: str | None = None
    """The engine's rules version (`mandala/1`), set when the league starts; None in leagues
    made before versions were stored."""

    def to_json(self) -> dict:
        data = asdict(self)
        data["bots"] = list(self.bots)
        data["options"] = dict(self.options)
        data["time_control"] = dict(self.time_control)
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "LeagueConfig":
        # Leagues stored before the seating mode existed all played mirrored deals.
        return cls(**{"seating": "mirrored", **data, "bots": tuple(data["bots"])})

    def timing(self) -> TimeControl:
        return TimeControl(**self.time_control)


@dataclass(frozen=True)
class RunPlan:
    """What a worker needs to play any match of the league (small and picklable)."""

    game: str
    players: int
    options: Mapping[str, Any]
    time_control: Mapping[str, Any]
    bots: tuple[BotEntry, ...]
    fresh_bots: bool = False
    sandbox: bool = True
    log_dir: str | None = None
    """Where bot processes' stderr logs go (one file per bot version)."""
    log_names: tuple[tuple[str, str], ...] = ()
    """(bot name, log file name in `log_dir`) for bots whose log is not named after their
    manifest name and version: the service keeps one log per author and version, since two
    authors may submit byte-identical bots."""
    pool_bots: int | None = None
    """Most bot processes one worker keeps at once (None: the bot host's default): a service's
    workers live for days and meet every version of its ladders, so their pools are capped."""


# -- from a file and flags ----------------------------------------------------------------------

def read_config_file(path: Path) -> dict:
    """The settings of a league config file, type-checked, with bot folders made relative to
    the file (so a config works from any working directory)."""
    try:
        settings = tomllib.loads(path.read_text())
    except OSError as error:
        raise LeagueError(f"cannot read league config {path}: {error.strerror}") from None
    except tomllib.TOMLDecodeError as error:
        raise LeagueError(f"league config {path} is not valid TOML: {error}") from None
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


# -- checking -----------------------------------------------------------------------------------

def load_bot(source: str, game_id: str) -> BotEntry:
    """A league bot (arena.bots.resolve_bot's rule); refuses one that does not play the game."""
    try:
        bot = resolve_bot(source, game_id)
    except LeagueError:
        raise
    except ArenaError as error:
        raise LeagueError(str(error)) from None
    if isinstance(bot, BuiltinBot):
        return BotEntry(bot.name, "builtin", bot.source, (game_id,))
    return BotEntry(bot.name, bot.version, str(bot.folder), tuple(bot.games))


def check_config(config: LeagueConfig, key: LeagueKey
                 ) -> tuple[list[BotEntry], list[MatchSpec]]:
    """Checks a league config and returns its bots and schedule (deals from `key`), creating
    nothing."""
    game = registry.get(config.game)
    game.resolve_options(config.options, config.players)   # player count and options
    config.timing()
    bots = [load_bot(source, config.game) for source in config.bots]
    if config.sandbox and any(not bot.source.startswith(BUILTIN) for bot in bots):
        from arena import sandbox
        sandbox.require()   # refuse before any folder exists, not in every worker
    _check_names(bots)
    specs = expand([bot.name for bot in bots], config.players, config.deals, config.seed, key,
                   gauntlet=_gauntlet_name(config.gauntlet, bots),
                   max_tables=config.max_tables, seating=config.seating)
    return bots, specs


def _check_names(bots: Sequence[BotEntry]) -> None:
    seen: dict[str, BotEntry] = {}
    for bot in bots:
        if bot.name in seen and seen[bot.name].source == bot.source:
            raise LeagueError(f"bot {bot.source} is given twice: give each bot once")
        if bot.name in seen:
            raise LeagueError(
                f"bots {seen[bot.name].source} and {bot.source} are both named {bot.name!r}: "
                "a league needs distinct names (change `name` in one bot.toml)")
        seen[bot.name] = bot


def _gauntlet_name(gauntlet: str | None, bots: Sequence[BotEntry]) -> str | None:
    """The gauntlet bot's league name, given its name or its folder."""
    if gauntlet is None or gauntlet in {bot.name for bot in bots}:
        return gauntlet
    folder = str(Path(gauntlet).resolve())
    for bot in bots:
        if bot.source == folder:
            return bot.name
    return gauntlet   # expand() names the bots it could have been
