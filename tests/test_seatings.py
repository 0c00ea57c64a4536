"""Seatings that stay fair when a bot's processes can talk (issue 20).

- A real sandboxed bot whose processes pass their hands through a channel (a folder shared
  with every process of it, standing in for the host's caches) in a real league, pooled or
  with a fresh process per match: with independent deals (the default) no process ever
  learns its opponent's hand; with mirrored deals every later seating does (the control),
  and the order-effect statistic of `arena ladder --stats` flags the bot.
- The ladder service: over many batches of its real scheduler and match thread, no version
  and no author ever plays a deal twice; its bot page shows the order effect of older,
  mirrored matches and flags a cheat there.
"""
from __future__ import annotations

import collections
import functools
import json
import random
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from starlette.requests import Request

from arena import sandbox
from arena.cli import main
from arena.keys import LeagueKey
from arena.league.lifecycle import open_league, run
from arena.league.config import LeagueConfig
from arena.league.schedule import MatchSpec
from arena.serve import views
from arena.serve.app import Service, create_app
from arena.serve.db import ServiceDB
from arena.serve.player import MatchPlayer, store_finished
from arena.serve.uploads import UploadLimits
from arena.league.store import FinishedMatch, Store
from arena.league.workers import Executor, SeatSource, play_spec
from test_fair_play import log_lines
from test_serve_standings import add_version

ROOT = Path(__file__).resolve().parent.parent
PASSER = ROOT / "tests" / "hostile_bots" / "hand_passer"


# -- a real bot with a real channel, in a real league ---------------------------------------------

class SharedFolder(Executor):
    """Plays a league's matches in this process, in schedule order, as one worker does, but
    every bot process it starts also sees `channel` (writable): the channel between a bot's
    processes that the seating must make useless."""

    def __init__(self, channel: Path):
        self.channel = channel

    def run(self, plan, specs):
        source = SeatSource(plan)
        source.host.spawn = functools.partial(sandbox.spawn, bind_rw=[self.channel])
        try:
            for spec in specs:
                yield play_spec(source, plan, spec, worker=0)
        finally:
            source.close()


@pytest.fixture
def fixed_key(tmp_path, monkeypatch):
    """A fixed installation key: the deals (and so the games) are the same in every run,
    where the suite's own key is new each session."""
    key = tmp_path / "installation.key"
    key.write_text(LeagueKey(bytes(range(32))).hex() + "\n")
    key.chmod(0o600)
    monkeypatch.setenv("ARENA_KEY_FILE", str(key))


def passer_league(tmp_path: Path, seating: str, deals: int, *, fresh_bots: bool = False
                  ) -> tuple[Path, list[str]]:
    """A mandala league of hand_passer against the built-in random bot; returns the folder
    and the passer's right claims: each `KNOWS` line whose hand is really the opponent's."""
    channel = tmp_path / f"channel-{seating}"
    channel.mkdir()
    (channel / "hands.txt").touch()
    (channel / "hands.txt").chmod(0o666)   # every process of the bot runs as a uid of its own
    bot = shutil.copytree(PASSER, tmp_path / f"passer-{seating}",
                          ignore=shutil.ignore_patterns("__pycache__"))
    (bot / "channel.txt").write_text(f"{channel}\n")
    folder = tmp_path / f"league-{seating}"
    config = LeagueConfig(game="mandala", bots=(str(bot), "random"), deals=deals, seed=3,
                          seating=seating,
                          time_control={"move_time": 10.0, "startup": 30.0})   # loaded hosts
    with open_league(folder, config) as league:
        assert run(league, SharedFolder(channel), fresh_bots=fresh_bots) == 2 * deals
        specs = league.specs
    with Store.open(folder) as store:
        hands = {record["seed"]: record["setup"]["hands"] for record in store.records()}
    opponent_hand = {spec.bot_seeds[seat]: sorted(hands[spec.seed][1 - seat])
                     for spec in specs for seat, name in enumerate(spec.seats)
                     if name == "hand_passer"}
    claims = [line.split(" ", 3)[2:] for line in log_lines(folder / "logs", "passer: KNOWS")]
    return folder, [seed for seed, hand in claims
                    if json.loads(hand) == opponent_hand[int(seed)]]


def ladder_stats(folder: Path) -> dict[str, dict]:
    result = CliRunner().invoke(main, ["ladder", str(folder), "--stats", "--format", "json"])
    assert result.exit_code == 0, result.output
    return {row["bot"].split("@")[0]: row for row in json.loads(result.output)["stats"]}


@pytest.mark.slow
@pytest.mark.sandbox
def test_a_bot_passing_hands_learns_nothing_from_independent_deals_and_is_flagged_mirrored(
        tmp_path, fixed_key):
    # Playing at random in its first seating of a deal, the passer loses about half of those;
    # each deal it loses first and wins later counts (10 of 24 under this key: p = 2^-10).
    deals = 24
    # The control: mirrored, the process in a deal's later seating finds the hand its other
    # process held in the first, which its opponent holds now: every time.
    mirrored, right = passer_league(tmp_path, "mirrored", deals)
    assert len(right) == deals
    stats = ladder_stats(mirrored)
    passer = stats["hand_passer"]
    assert passer["order_deals"] == deals and passer["order_flagged"], passer
    assert passer["order_p_value"] < 0.01 and passer["order_later_worse"] <= 1
    assert not stats["random"]["order_flagged"]
    # Independent (the default): no deal is met twice, so the channel carries nothing true.
    independent, right = passer_league(tmp_path, "independent", deals)
    assert right == []
    stats = ladder_stats(independent)
    assert stats["hand_passer"]["order_deals"] == 0
    assert stats["hand_passer"]["matches"] == 2 * deals
    # It did write every hand it was dealt: the channel worked, there was just nothing in it.
    written = (tmp_path / "channel-independent" / "hands.txt").read_text().splitlines()
    assert len({line.split("\t")[1] for line in written}) > deals


@pytest.mark.slow
@pytest.mark.sandbox
def test_fresh_processes_per_match_pass_hands_just_the_same(tmp_path, fixed_key):
    # --fresh-bots starts a process per match: no process outlives its match, yet the
    # channel outlives them all. Only independent deals leave it nothing to carry.
    _, right = passer_league(tmp_path, "mirrored", 6, fresh_bots=True)
    assert len(right) == 6
    _, right = passer_league(tmp_path, "independent", 6, fresh_bots=True)
    assert right == []


# -- the service ----------------------------------------------------------------------------------

class Simulated(Executor):
    """Plays no game: ranks the seats at random (the scheduler only needs results)."""

    def __init__(self, seed: int):
        self.rng = random.Random(seed)

    def run(self, plan, specs):
        for spec in specs:
            ranks = list(range(1, len(spec.seats) + 1))
            self.rng.shuffle(ranks)
            record = {"result": {"scores": [10 - rank for rank in ranks], "ranks": ranks,
                                 "end": "normal"}, "moves": []}
            yield FinishedMatch(spec, record, started=float(spec.order), seconds=0.0, worker=0)


@pytest.mark.parametrize("game, players", [("mandala", 2), ("flowers-mandala", 3)])
def test_the_service_never_gives_a_version_or_an_author_a_deal_twice(tmp_path, game, players):
    db = ServiceDB.open(tmp_path / "svc")
    ladder = db.ensure_ladder(game, players, f"{game}/1", {"move_time": 1.0})
    authors = {}
    for n, (author, name) in enumerate([("ann", "a"), ("ann", "b"), ("bob", "c"),
                                        ("cyd", "d"), ("dee", "e")]):
        authors[add_version(db, ladder.id, author, name, f"{n:012x}")] = author
    player = MatchPlayer(db, [ladder], Simulated(1), LeagueKey(bytes(32)), workers=2,
                         log_dir=tmp_path / "logs", seed=4)
    for _ in range(60):
        player.play_batch(ladder)
    rows = db.query("SELECT table_no, seed, versions FROM matches")
    assert len(rows) > 200
    versions = collections.Counter((v, seed) for _, seed, seated in rows
                                   for v in json.loads(seated))
    # Counted once per match: two bots of one author at one table share its deal by design
    # (what they could do together within one match is collusion, not seating).
    by_author = collections.Counter((author, seed) for _, seed, seated in rows
                                    for author in {authors[v] for v in json.loads(seated)})
    assert set(versions.values()) == {1} and set(by_author.values()) == {1}
    # Seats still balance: every table plays each of its seatings once.
    tables = collections.defaultdict(list)
    for table, _, seated in rows:
        tables[table].append(tuple(json.loads(seated)))
    assert all(len(seatings) == players == len(set(seatings)) for seatings in tables.values())


def page(db: ServiceDB, ladder, path: str) -> str:
    """A page of the real app, its route called directly (no server needed)."""
    app = create_app(Service(db, {ladder.id: ladder}, UploadLimits(), 20, lambda: None))
    for route in app.routes:
        matched = route.path_regex.fullmatch(path)
        if matched:
            request = Request({"type": "http", "method": "GET", "path": path, "headers": [],
                               "query_string": b"", "path_params": matched.groupdict(),
                               "app": app})
            return route.endpoint(request).body.decode()
    raise AssertionError(f"no route for {path}")


def test_the_bot_page_shows_the_order_effect_of_mirrored_matches_and_flags_a_cheat(tmp_path):
    # A database from before independent deals: each table's two seatings shared a deal.
    # `cheat` wins every seating it plays second; `fair` wins half, whatever the order.
    db = ServiceDB.open(tmp_path / "svc")
    ladder = db.ensure_ladder("mandala", 2, "mandala/1", {"move_time": 1.0})
    cheat, fair, new = (add_version(db, ladder.id, author, "bot", f"{n:012x}")
                        for n, author in enumerate(("eve", "ray", "new")))
    versions = {f"v{v}": db.version(v) for v in (cheat, fair, new)}
    rng = random.Random(6)
    for table in range(20):
        first = rng.random() < 0.5   # did cheat win its first seating?
        for seating, seats in enumerate(((f"v{cheat}", f"v{fair}"), (f"v{fair}", f"v{cheat}"))):
            order = seats if table % 2 == 0 else seats[::-1]   # who plays the deal first
            seats = order if seating == 0 else order[::-1]
            cheat_wins = first if seating == 0 else True
            ranks = [1, 2] if (seats[0] == f"v{cheat}") == cheat_wins else [2, 1]
            spec = MatchSpec(f"old-t{table}-s{seating}", table, table, 1000 + table, seats,
                             f"t{table}", (1, 2))
            record = {"result": {"scores": [2 - r for r in ranks], "ranks": ranks,
                                 "end": "normal"}, "moves": []}
            store_finished(db, ladder, FinishedMatch(spec, record, 10.0 * table + seating,
                                                     0.0, 0), versions)
    # ... and one table of today's service: a deal per seating.
    spec = MatchSpec("new-t0-s0", 99, 99, 5000, (f"v{new}", f"v{fair}"), "t99", (1, 2))
    store_finished(db, ladder, FinishedMatch(spec, {"result": {"scores": [1, 0], "ranks": [1, 2],
                                                               "end": "normal"}, "moves": []},
                                             1.0, 0.0, 0), versions)
    effect = views.bot(db, "eve", "bot").versions[0].order
    assert effect.deals == 20 and effect.worse == 0 and effect.flagged
    assert not views.bot(db, "ray", "bot").versions[0].order.flagged
    assert views.bot(db, "new", "bot").versions[0].order is None
    html = page(db, ladder, "/bots/eve/bot")
    assert "<h2>Order effect</h2>" in html and "FLAGGED" in html
    assert "FLAGGED" not in page(db, ladder, "/bots/ray/bot")
    assert "No deal played twice" in page(db, ladder, "/bots/new/bot")
    api = json.loads(page(db, ladder, "/api/bots/eve/bot"))
    assert api["versions"][0]["order_effect"]["flagged"] is True
    assert api["versions"][0]["order_effect"]["later_worse"] == 0
