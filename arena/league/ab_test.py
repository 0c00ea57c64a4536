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
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from arena.bots.manifest import is_builtin
from arena.keys import LeagueKey
from arena.league.config import LeagueConfig, LeagueError
from arena.league.lifecycle import League, named_folder, run
from arena.league.plan import LeagueKind, Planned, load_bots, require_sandbox, settled
from arena.league.schedule import MatchSpec, duplicate_pairs
from arena.league.store import BotEntry, read_outcomes
from arena.league.workers import Executor
from arena.stats import sprt
from arena.stats.ratings import Outcome


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

    def add(self, outcome: Outcome) -> bool:
        """One finished match; a pair counts once both its games are in (then True)."""
        pair = outcome.match_id.split(":")[0][:-1]
        score = self._new_score(outcome)
        first = self.halves.pop(pair, None)
        if first is None:
            self.halves[pair] = score
            return False
        self.tally.add_pair(first, score)
        return True

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


class ABTest(LeagueKind):
    """An A/B test as a kind of league: NEW, OLD and the field on duplicate pairs (mirrored
    deals: the bots are the tester's own, trusted not to pass a deal between their
    processes). Running the same test again continues it; the stored seed is kept when none
    is given now."""

    noun = "test"
    continues = True
    new_version = "test the new version under another --name"

    def __init__(self, hypotheses: Hypotheses, seed_given: bool):
        self.hypotheses, self.seed_given = hypotheses, seed_given

    def plan(self, config: LeagueConfig, key: LeagueKey) -> Planned:
        self.hypotheses.check()
        if len(config.bots) != config.players:
            field = config.players - 2
            raise LeagueError(f"{config.players} players need {field} field bot"
                              f"{'s' * (field != 1)} (--field BOT, repeatable) besides NEW "
                              f"and OLD, got {len(config.bots) - 2}")
        bots = _named_by_role(load_bots(config))
        require_sandbox(config, bots)
        names = [bot.name for bot in bots]
        specs = duplicate_pairs(names[0], names[1], names[2:], self.hypotheses.max_pairs, key)
        return Planned(settled(config, bots, seating="mirrored"), bots, specs)

    def stored(self, config: LeagueConfig) -> dict:
        # Through JSON, as the store gives it back: compared key by key on reopening.
        return json.loads(json.dumps({**config.to_json(), "sprt": asdict(self.hypotheses)},
                                     sort_keys=True))

    def planned(self, specs: Sequence[MatchSpec]) -> int:
        return 2 * self.hypotheses.max_pairs

    def holds(self, stored: Mapping[str, Any]) -> bool:
        return "sprt" in stored

    def refuse_other(self, folder: Path) -> LeagueError:
        return LeagueError(f"{folder} holds a league, not an A/B test: choose another --name")

    def reopened(self, config: LeagueConfig | None, stored: Mapping[str, Any]) -> LeagueConfig:
        return config if self.seed_given else replace(config, seed=stored["seed"])

    def check_same(self, folder: Path, config: LeagueConfig, stored: Mapping[str, Any]) -> None:
        stored = {"seating": "mirrored", **stored}   # as stored before seating modes
        wanted = self.stored(config)
        if stored != wanted:
            changed = sorted(key for key in wanted if stored.get(key) != wanted[key])
            raise LeagueError(f"{folder} holds another test (it differs in "
                              f"{', '.join(changed)}): choose another --name")


def _named_by_role(bots: list[BotEntry]) -> list[BotEntry]:
    """NEW and OLD given as folders renamed `new-NAME` and `old-NAME`; the names checked."""
    for index, role in ((0, "new"), (1, "old")):
        if not is_builtin(bots[index].source):
            bots[index] = replace(bots[index], name=f"{role}-{bots[index].name}")
    names = [bot.name for bot in bots]
    if names[0] == names[1]:
        raise LeagueError(f"NEW and OLD are both the built-in bot {names[0]}: give a bot "
                          "folder for at least one of them")
    if len(set(names)) != len(names):
        raise LeagueError(f"the field repeats a bot or NEW/OLD ({', '.join(names)}): give "
                          "each field bot once, and none of NEW and OLD")
    return bots


def standing_of(test: League, hypotheses: Hypotheses) -> Standing:
    """The test's standing from the pairs it has stored."""
    standing = Standing(test.bots[0].name, test.bots[1].name, hypotheses)
    for outcome in read_outcomes(test.folder):
        standing.add(outcome)
    return standing


def play(test: League, standing: Standing, executor: Executor, *, fresh_bots: bool = False,
         on_pair: Callable[[], None] | None = None) -> Standing:
    """Plays pairs until the SPRT decides or max_pairs are in, adding them to `standing`
    (`on_pair()` after each); returns it."""
    def on_match(outcome: Outcome) -> None:
        if standing.add(outcome) and on_pair is not None:
            on_pair()

    run(test, executor, fresh_bots=fresh_bots, on_match=on_match, stop=standing.over)
    return standing


def default_folder(name: str | None, new: str, old: str) -> Path:
    """results/NAME, by default named after NEW and OLD."""
    if name is None:
        name = f"sprt-{Path(new).name}-vs-{Path(old).name}"
    return named_folder(name, "test")
