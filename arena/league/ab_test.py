"""An A/B test between two versions of a bot (`arena sprt`): duplicate pairs played like a
league, stopped by the SPRT (arena.stats.sprt) as soon as it decides.

The test is a league underneath: one folder, one database (arena.league.store) with the settings,
the bots and every match record, played by the league's workers (arena.league.workers). Its
schedule is `arena.league.schedule.duplicate_pairs` up to `max_pairs`; the test stops when the
log-likelihood ratio leaves its bounds (the matches in flight are dropped). Running the same
test again in the same folder continues it: the stored pairs count, the schedule goes on
where it stopped, and a test already decided is only reported.

NEW and OLD given as folders are named `new-NAME` and `old-NAME` in the test (the two may be
copies of one bot); built-in bots keep their names.
"""
from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Callable

from arena.stats import sprt
from arena.bots.manifest import BUILTIN
from arena.keys import LeagueKey
from arena.league.lifecycle import League, lock_folder, run
from arena.league.config import LeagueConfig, LeagueError, load_bot
from arena.stats.ratings import Outcome
from arena.league.schedule import duplicate_pairs
from arena.league.store import DB_NAME, BotEntry, Store, StoreError, read_outcomes
from arena.league.workers import Executor
from engine import registry


@dataclass(frozen=True)
class Hypotheses:
    """What the test decides between, and how sure it must be."""

    elo0: float = 0.0
    elo1: float = 5.0
    alpha: float = 0.05
    beta: float = 0.05
    model: str = "logistic"
    max_pairs: int = 10_000

    def check(self) -> None:
        if not self.elo1 > self.elo0:
            raise LeagueError(f"--elo1 ({self.elo1:g}) must be above --elo0 ({self.elo0:g})")
        for name in ("alpha", "beta"):
            value = getattr(self, name)
            if not 0 < value < 0.5:
                raise LeagueError(f"--{name} must be between 0 and 0.5, got {value:g}")
        if self.max_pairs < 1:
            raise LeagueError(f"--max-pairs must be at least 1, not {self.max_pairs}")


class Standing:
    """The pairs finished so far and what the SPRT makes of them."""

    def __init__(self, new: str, old: str, hypotheses: Hypotheses):
        self.new, self.old, self.hypotheses = new, old, hypotheses
        self.tally = sprt.Tally()
        self.halves: dict[str, float] = {}     # pair id -> NEW's score in its first game

    def add(self, outcome: Outcome) -> None:
        """One finished match; a pair counts once both its games are in."""
        pair = outcome.match_id.split(":")[0][:-1]
        score = self._new_score(outcome)
        first = self.halves.pop(pair, None)
        if first is None:
            self.halves[pair] = score
        else:
            self.tally.add_pair(first, score)

    def _new_score(self, outcome: Outcome) -> float:
        names = [label.split("@")[0] for label in outcome.bots]
        mine, theirs = outcome.ranks[names.index(self.new)], outcome.ranks[names.index(self.old)]
        return 1.0 if mine < theirs else 0.5 if mine == theirs else 0.0

    def llr(self) -> float:
        h = self.hypotheses
        return sprt.llr(self.tally.pentanomial, h.elo0, h.elo1, h.model)

    def decision(self) -> str | None:
        h = self.hypotheses
        return sprt.decision(self.llr(), h.alpha, h.beta) if self.tally.pairs else None

    def over(self) -> bool:
        return self.decision() is not None or self.tally.pairs >= self.hypotheses.max_pairs


class Decided(Exception):
    """Raised from the match callback to stop the run: the test has its answer."""


def _bots(config: LeagueConfig) -> list[BotEntry]:
    """NEW, OLD and the field, checked; NEW and OLD folders renamed by their role."""
    bots = [load_bot(source, config.game) for source in config.bots]
    for index, role in ((0, "new"), (1, "old")):
        if not bots[index].source.startswith(BUILTIN):
            bots[index] = replace(bots[index], name=f"{role}-{bots[index].name}")
    names = [bot.name for bot in bots]
    if names[0] == names[1]:
        raise LeagueError(f"NEW and OLD are both the built-in bot {names[0]}: give a bot "
                          "folder for at least one of them")
    if len(set(names)) != len(names):
        raise LeagueError(f"the field repeats a bot or NEW/OLD ({', '.join(names)}): give "
                          "each field bot once, and none of NEW and OLD")
    if config.sandbox and any(not bot.source.startswith(BUILTIN) for bot in bots):
        from arena import sandbox
        sandbox.require()
    return bots


def open_test(folder: Path, config: LeagueConfig, hypotheses: Hypotheses,
              seed_given: bool) -> tuple[League, Hypotheses]:
    """The test in `folder`: created, or reopened when it holds this same test (the stored
    seed is kept when none was given now). Refuses a folder holding anything else."""
    game = registry.get(config.game)
    game.resolve_options(config.options, config.players)
    config.timing()
    hypotheses.check()
    if len(config.bots) != config.players:
        field = config.players - 2
        raise LeagueError(f"{config.players} players need {field} field bot"
                          f"{'s' * (field != 1)} (--field BOT, repeatable) besides NEW and "
                          f"OLD, got {len(config.bots) - 2}")
    bots = _bots(config)
    # Pairs are mirrored deals (one deal, NEW and OLD in both seatings): the bots are the
    # tester's own, trusted not to pass a deal between their processes.
    config = replace(config, bots=tuple(bot.source for bot in bots), rules=game.rules(),
                     seating="mirrored")
    if (folder / DB_NAME).exists():
        store = Store.open(folder)
        try:
            stored = {"seating": "mirrored", **store.config()}   # as before seating modes
            if "sprt" not in stored:
                raise LeagueError(f"{folder} holds a league, not an A/B test: choose another "
                                  "--name")
            if not seed_given:
                config = replace(config, seed=stored["seed"])
            wanted = _stored_form(config, hypotheses)
            if stored != wanted:
                changed = sorted(k for k in wanted if stored.get(k) != wanted[k])
                raise LeagueError(f"{folder} holds another test (it differs in "
                                  f"{', '.join(changed)}): choose another --name")
            versions = {bot.name: bot.version for bot in store.bots()}
            for bot in bots:
                if versions.get(bot.name) != bot.version:
                    raise LeagueError(f"bot {bot.name} ({bot.source}) changed since the test "
                                      "started: restore it, or test the new version under "
                                      "another --name")
            key = store.league_key()
            lock = lock_folder(folder)
        except (LeagueError, StoreError):
            store.close()
            raise
    else:
        key = LeagueKey.for_league(config.seed)
        store = Store.create(folder, name=folder.name, config=_stored_form(config, hypotheses),
                             planned=2 * hypotheses.max_pairs, bots=bots, key=key)
        try:
            lock = lock_folder(folder)
        except LeagueError:
            store.close()
            raise
    names = [bot.name for bot in bots]
    specs = duplicate_pairs(names[0], names[1], names[2:], hypotheses.max_pairs, key)
    return League(folder, store, config, bots, specs, lock), hypotheses


def _stored_form(config: LeagueConfig, hypotheses: Hypotheses) -> dict:
    # Through JSON, as the store gives it back: compared key by key on reopening.
    return json.loads(json.dumps({**config.to_json(), "sprt": asdict(hypotheses)},
                                 sort_keys=True))


def play(test: League, hypotheses: Hypotheses, executor: Executor, *, fresh_bots: bool = False,
         on_pair: Callable[[Standing], None] | None = None) -> Standing:
    """Plays pairs until the SPRT decides or max_pairs are in; returns the standing."""
    standing = Standing(test.bots[0].name, test.bots[1].name, hypotheses)
    for outcome in read_outcomes(test.folder):
        standing.add(outcome)
    if standing.over():
        return standing

    def on_match(outcome: Outcome) -> None:
        before = standing.tally.pairs
        standing.add(outcome)
        if standing.tally.pairs > before:
            if on_pair is not None:
                on_pair(standing)
            if standing.over():
                raise Decided

    try:
        run(test, executor, fresh_bots=fresh_bots, on_match=on_match)
    except Decided:
        pass
    return standing


def default_folder(name: str | None, new: str, old: str) -> Path:
    if name is None:
        name = f"sprt-{Path(new).name}-vs-{Path(old).name}"
    if "/" in name or name in ("", ".", "..") or os.sep in name:
        raise LeagueError(f"test name {name!r} is not a folder name")
    return Path("results") / name
