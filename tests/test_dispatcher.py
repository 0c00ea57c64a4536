"""The league Dispatcher, over a fake transport (the rules of dealing matches, without
processes): every match is played exactly once, no worker holds more than AHEAD matches, a
worker that dies replays what it held, and too many deaths stop the league in one line; a
kept dispatcher (the service's) keeps its workers across runs, with a restart budget per run;
a worker that must wait to run (a Ray actor waiting for a CPU, one of a lost node for ever) is
handed nothing until it runs.

The real transports (local processes, Ray actors) are tested end to end in test_league.py
and test_ray_league.py; this file checks the dealing they share.
"""
from __future__ import annotations

import random
from dataclasses import dataclass

import pytest

from arena.keys import LeagueKey
from arena.league.config import LeagueError, RunPlan
from arena.league.schedule import MatchSpec, expand
from arena.league.workers import Died, Dispatcher, Done, Ready, Transport

PLAN = RunPlan("mandala", 2, {}, {}, ())
SPECS = expand(["a", "b", "c", "d"], 2, 5, 3, LeagueKey.from_hex("ab" * 32))   # 60 matches


@dataclass
class FakeMatch:
    spec: MatchSpec


class FakeTransport(Transport):
    """Workers that finish their oldest held match in a random order and die at random
    moments (`deaths` of them), all from one seed."""

    def __init__(self, seed: int, deaths: int = 0):
        self.rng = random.Random(seed)
        self.deaths = deaths
        self.queues: dict[int, list[MatchSpec]] = {}
        self.starts: dict[int, int] = {}
        self.most_held = 0
        self.closed_at_once: bool | None = None
        self.plans: list[RunPlan] = []
        self.handed: dict[str, RunPlan] = {}   # match id -> the plan it was handed with
        self.first_held: list[RunPlan] | None = None   # plans of the matches held at first

    def start(self, index: int) -> None:
        self.queues[index] = []
        self.starts[index] = self.starts.get(index, 0) + 1

    def use(self, plan: RunPlan) -> None:
        self.plans.append(plan)

    def hand(self, index: int, spec: MatchSpec, plan: RunPlan) -> None:
        self.handed[spec.id] = plan
        self.queues[index].append(spec)
        self.most_held = max(self.most_held, len(self.queues[index]))

    def next_event(self) -> Done | Died:
        busy = sorted(index for index, held in self.queues.items() if held)
        if self.first_held is None:
            self.first_held = [self.handed[spec.id] for held in self.queues.values()
                               for spec in held]
        assert busy, "the dispatcher waits, but no worker holds a match"
        index = self.rng.choice(busy)
        if self.deaths and self.rng.random() < 0.1:
            self.deaths -= 1
            self.queues[index] = []
            return Died(index, "killed by the test")
        return Done(index, FakeMatch(self.queues[index].pop(0)))

    def close(self, at_once: bool) -> None:
        self.closed_at_once = at_once


class FakePool(Dispatcher):
    def __init__(self, workers: int, transport: FakeTransport, keep: bool = False):
        super().__init__(workers, keep=keep)
        self.transport = transport
        self.opened = 0

    def open(self, plan):
        self.opened += 1
        return self.transport, self.workers


def test_every_match_is_played_once_and_no_worker_holds_more_than_ahead():
    transport = FakeTransport(seed=1)
    played = [match.spec for match in FakePool(3, transport).run(PLAN, SPECS)]
    assert sorted(spec.id for spec in played) == sorted(spec.id for spec in SPECS)
    assert transport.most_held == Dispatcher.AHEAD
    assert set(transport.starts) == {0, 1, 2} and transport.closed_at_once is False


def test_workers_that_die_replay_what_they_held_and_nothing_is_lost(kill_rng):
    transport = FakeTransport(kill_rng.randrange(2**32), deaths=Dispatcher.MAX_RESTARTS)
    pool = FakePool(3, transport)
    played = [match.spec.id for match in pool.run(PLAN, SPECS)]
    assert sorted(played) == sorted(spec.id for spec in SPECS)
    assert pool.restarts == Dispatcher.MAX_RESTARTS - transport.deaths
    assert sum(transport.starts.values()) == 3 + pool.restarts


def test_too_many_deaths_stop_the_league_in_one_line():
    transport = FakeTransport(seed=2, deaths=10**6)
    transport.rng.random = lambda: 0.0   # every event a death
    with pytest.raises(LeagueError, match=r"league workers died 6 times \(the last: killed by "
                                          r"the test\).*resume the league"):
        list(FakePool(2, transport).run(PLAN, SPECS))
    assert transport.closed_at_once is True


def test_never_more_workers_than_matches_and_at_least_one():
    transport = FakeTransport(seed=3)
    assert len(list(FakePool(8, transport).run(PLAN, SPECS[:3]))) == 3
    assert set(transport.starts) == {0, 1, 2}
    with pytest.raises(LeagueError, match="--workers must be at least 1, not 0"):
        FakePool(0, transport)


def test_a_league_stopped_early_closes_its_workers_at_once():
    transport = FakeTransport(seed=4)
    matches = FakePool(2, transport).run(PLAN, SPECS)
    next(matches)
    matches.close()   # Ctrl-C in the league's loop
    assert transport.closed_at_once is True


def test_a_kept_pool_starts_its_workers_once_and_ends_them_only_when_closed():
    transport = FakeTransport(seed=5)
    pool = FakePool(2, transport, keep=True)
    plans = [RunPlan("mandala", 2, {}, {}, (), log_dir=str(run)) for run in range(3)]
    for plan in plans:
        played = [match.spec.id for match in pool.run(plan, SPECS[:10])]
        assert sorted(played) == sorted(spec.id for spec in SPECS[:10])
        assert transport.closed_at_once is None   # still open between runs
    assert pool.opened == 1 and transport.starts == {0: 1, 1: 1}
    assert transport.plans == plans   # each run hands its workers its plan
    pool.close()
    assert transport.closed_at_once is False
    pool.close()   # closing twice is harmless


def test_matches_of_several_plans_are_dealt_together_each_with_its_plan():
    """The service's ladders in one run: a worker takes the next match whatever its plan,
    so no worker waits for one ladder's last match while another has matches to play."""
    transport = FakeTransport(seed=7)
    plans = [RunPlan("mandala", 2, {}, {}, (), log_dir="a"),
             RunPlan("flowers", 2, {}, {}, (), log_dir="b")]
    jobs = [(plans[index % 2], spec) for index, spec in enumerate(SPECS[:20])]
    played = [match.spec.id for match in FakePool(2, transport).run_jobs(jobs)]
    assert sorted(played) == sorted(spec.id for _, spec in jobs)
    assert transport.handed == {spec.id: plan for plan, spec in jobs}
    # Both plans' matches are in play at once, from the first deal on.
    assert len(transport.first_held) == 4 and all(plan in transport.first_held
                                                  for plan in plans)


def test_a_kept_pool_restarts_per_run_and_reopens_after_a_run_that_stopped_early():
    transport = FakeTransport(seed=6, deaths=10**6)
    pool = FakePool(2, transport, keep=True)
    for _ in range(3):   # MAX_RESTARTS deaths in every run: each run has its own budget
        transport.deaths = Dispatcher.MAX_RESTARTS
        assert len(list(pool.run(PLAN, SPECS))) == len(SPECS)
        assert pool.restarts <= Dispatcher.MAX_RESTARTS
    assert transport.closed_at_once is None
    matches = pool.run(PLAN, SPECS)
    next(matches)
    matches.close()   # its matches in flight must not finish into the next run
    assert transport.closed_at_once is True and pool.size == 0
    assert len(list(pool.run(PLAN, SPECS[:4]))) == 4
    assert pool.opened == 2


def test_in_play_names_the_match_each_worker_plays_as_a_run_goes_on(kill_rng):
    transport = FakeTransport(kill_rng.randrange(2**32), deaths=2)
    pool = FakePool(3, transport)
    assert pool.in_play() == []
    for _ in pool.run(PLAN, SPECS):   # the oldest match a worker holds is the one it plays
        playing = sorted(held[0].id for held in transport.queues.values() if held)
        assert sorted(pool.in_play()) == playing and len(playing) <= 3
    assert pool.in_play() == []


class WaitingTransport(FakeTransport):
    """Workers that run only once Ready, as Ray actors wait for a free CPU; one started again
    after a death never runs (its node was lost with its CPU) unless `comes_back`."""

    wait_to_start = True

    def __init__(self, seed: int, deaths: int = 0, comes_back: bool = False):
        super().__init__(seed, deaths)
        self.comes_back = comes_back
        self.waiting: set[int] = set()   # started, not Ready yet
        self.lost: set[int] = set()      # started again: never Ready, unless comes_back
        self.played_by: dict[int, int] = {}   # worker -> matches it finished

    def start(self, index: int) -> None:
        if index in self.starts and not self.comes_back:
            self.lost.add(index)
        super().start(index)
        self.waiting.add(index)

    def hand(self, index: int, spec: MatchSpec, plan: RunPlan) -> None:
        assert index not in self.waiting, f"worker {index} was handed a match before it ran"
        super().hand(index, spec, plan)

    def next_event(self) -> Done | Died | Ready:
        ready = sorted(self.waiting - self.lost)
        if ready and (not any(self.queues.values()) or self.rng.random() < 0.3):
            self.waiting.discard(ready[0])
            return Ready(ready[0])
        event = super().next_event()
        if isinstance(event, Done):
            self.played_by[event.worker] = self.played_by.get(event.worker, 0) + 1
        return event


def test_a_worker_that_never_runs_again_is_handed_nothing_and_the_others_play_its_matches():
    transport = WaitingTransport(seed=8, deaths=1)
    pool = FakePool(3, transport, keep=True)   # the service's: its next runs too
    for _ in range(2):
        played = [match.spec.id for match in pool.run(PLAN, SPECS)]
        assert sorted(played) == sorted(spec.id for spec in SPECS)   # each once, none waits
        assert len(transport.lost) == 1 and transport.closed_at_once is None
    (lost,) = transport.lost
    assert transport.starts[lost] == 2 and transport.queues[lost] == []
    pool.close()
    assert transport.closed_at_once is False


def test_a_worker_started_again_takes_matches_once_it_runs():
    transport = WaitingTransport(seed=9, deaths=1, comes_back=True)
    pool = FakePool(2, transport, keep=True)
    assert sorted(match.spec.id for match in pool.run(PLAN, SPECS)) == sorted(
        spec.id for spec in SPECS)
    assert pool.restarts == 1 and not transport.waiting
    before = dict(transport.played_by)
    assert len(list(pool.run(PLAN, SPECS[:20]))) == 20   # the next run: both play
    assert all(transport.played_by[worker] > before.get(worker, 0) for worker in (0, 1))
