"""Planning a league: its bots loaded and checked, its matches scheduled, once, before anything
is created (arena.league.lifecycle then opens or creates its folder).

`LeagueKind` is what differs between a league (`arena league run`) and an A/B test
(`arena sprt`, arena.league.ab_test): how bots and matches are planned from the config, what
is stored, and what a folder that already holds one means.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Mapping, Sequence

from arena.bots.manifest import BuiltinBot, is_builtin, resolve_bot
from arena.errors import ArenaError
from arena.keys import LeagueKey
from arena.league.config import LeagueConfig, LeagueError
from arena.league.schedule import MatchSpec, expand
from arena.league.store import BotEntry
from engine import registry


@dataclass(frozen=True)
class Planned:
    """A checked league: its config (bots as absolute folders, rules version set), its bots
    and every match of its schedule."""

    config: LeagueConfig
    bots: list[BotEntry]
    specs: list[MatchSpec]


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


def load_bots(config: LeagueConfig) -> list[BotEntry]:
    """The config's bots, after its game, player count, options and time control are checked."""
    game = registry.get(config.game)
    game.resolve_options(config.options, config.players)
    config.timing()
    return [load_bot(source, config.game) for source in config.bots]


def require_sandbox(config: LeagueConfig, bots: Sequence[BotEntry]) -> None:
    """Refuses a sandboxed league with bot folders on a machine without a usable sandbox:
    before any folder exists, not in every worker."""
    if config.sandbox and any(not is_builtin(bot.source) for bot in bots):
        from arena import sandbox
        sandbox.require()


def settled(config: LeagueConfig, bots: Sequence[BotEntry], **changes: Any) -> LeagueConfig:
    """The config as stored: bots as absolute folders (so the league resumes from any working
    directory) and the engine's rules version."""
    return replace(config, bots=tuple(bot.source for bot in bots),
                   rules=registry.get(config.game).rules(), **changes)


class LeagueKind:
    """A league of `arena league run`: every bot against every other (or a gauntlet), on the
    schedule of arena.league.schedule.expand. A folder holds one league; `arena league
    resume` finishes it."""

    noun = "league"
    continues = False
    """Whether running the same command again on a folder that holds one continues it."""
    new_version = "start a new league for the new version"
    """What to do with a bot that changed since the league started."""

    def plan(self, config: LeagueConfig, key: LeagueKey) -> Planned:
        """Checks a league config and plans its bots and matches (deals from `key`), creating
        nothing."""
        bots = load_bots(config)
        require_sandbox(config, bots)
        _check_names(bots)
        specs = expand([bot.name for bot in bots], config.players, config.deals, config.seed,
                       key, gauntlet=_gauntlet_name(config.gauntlet, bots),
                       max_tables=config.max_tables, seating=config.seating)
        return Planned(settled(config, bots), bots, specs)

    def stored(self, config: LeagueConfig) -> dict:
        return config.to_json()

    def planned(self, specs: Sequence[MatchSpec]) -> int:
        """How many matches the store says the league plans (its progress: done of planned)."""
        return len(specs)

    def holds(self, stored: Mapping[str, Any]) -> bool:
        """Whether a stored config is one of this kind."""
        return "sprt" not in stored

    def refuse_other(self, folder: Path) -> LeagueError:
        return LeagueError(f"{folder} holds an A/B test: continue it by running the same "
                           "`arena sprt` command again")

    def reopened(self, config: LeagueConfig | None, stored: Mapping[str, Any]) -> LeagueConfig:
        """The config to play a reopened folder by: the stored one (leagues are resumed)."""
        return LeagueConfig.from_json(stored)

    def check_same(self, folder: Path, config: LeagueConfig, stored: Mapping[str, Any]) -> None:
        """Refuses a folder holding another league than `config` (when one is continued)."""


LEAGUE = LeagueKind()


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
