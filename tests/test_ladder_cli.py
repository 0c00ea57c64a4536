"""`arena ladder`: formats, the matrix, the anchor, merged leagues and bad input.

The leagues here are real league stores (SQLite, written through arena.league.store) whose match
results are drawn from known strengths, so the ladder's order is known in advance.
"""
from __future__ import annotations

import csv
import io
import json
import math
import random
import sqlite3

import pytest
from click.testing import CliRunner, Result

from arena.cli import main
from arena.keys import LeagueKey
from arena.league.schedule import expand
from arena.league.store import BotEntry, FinishedMatch, Store

KEY = LeagueKey(bytes(32))   # a fixed league key: schedules are pure functions of it

STRENGTH = {"greedy": 300.0, "middle": 0.0, "random": -300.0}
VERSIONS = {name: (name[0] * 64) for name in STRENGTH}


def make_league(folder, *, seed: int = 7, deals: int = 30, game: str = "mandala",
                players: int = 2, options: dict | None = None, stop_after: int | None = None,
                seating: str = "mirrored", later_bonus: dict[str, float] | None = None):
    """A league store with matches decided by STRENGTH (Elo odds) from each deal's seed; a
    bot of `later_bonus` plays that much stronger in a deal it has played before (a cheat
    whose processes pass the deal on)."""
    bots = sorted(STRENGTH)
    specs = expand(bots, players, deals, seed, key=LeagueKey.for_league(seed, installation=KEY),
                   seating=seating)
    config = {"game": game, "players": players, "deals": deals, "seed": seed,
              "options": options or {}, "seating": seating}
    entries = [BotEntry(name, VERSIONS[name], f"builtin:{name}", (game,)) for name in bots]
    met = set()
    with Store.create(folder, name=folder.name, config=config, planned=len(specs),
                      bots=entries, key=KEY) as store:
        for spec in specs[:stop_after]:
            rng = random.Random(f"{spec.id}:{seed}")
            # A finish per seat: strength plus logistic-like noise; ties impossible.
            finish = [STRENGTH[bot] / 400 * math.log(10) + rng.gauss(0, 1.5)
                      + (later_bonus or {}).get(bot, 0.0) * ((bot, spec.seed) in met)
                      for bot in spec.seats]
            met |= {(bot, spec.seed) for bot in spec.seats}
            ranks = [1 + sum(other > mine for other in finish) for mine in finish]
            result = {"scores": [len(finish) - r for r in ranks], "ranks": ranks,
                      "end": "normal"}
            record = {"format": "arena-record/1", "game": game, "options": options or {},
                      "players": list(spec.seats), "seed": spec.seed, "moves": [],
                      "result": result}
            store.add_match(FinishedMatch(spec, record, started=0.0, seconds=0.1, worker=0))
    return folder


def run(*args) -> Result:
    return CliRunner().invoke(main, ["ladder", *map(str, args)])


@pytest.fixture(scope="module")
def league(tmp_path_factory):
    return make_league(tmp_path_factory.mktemp("results") / "main")


def json_ladder(*args) -> dict:
    result = run(*args, "--format", "json")
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


# -- formats ------------------------------------------------------------------------------------

def test_the_table_lists_bots_best_first_with_every_column(league):
    result = run(league)
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    for column in ("rank", "bot (version)", "Elo", "+/-", "games", "score %", "W/D/L",
                   "forfeits", "LOS next"):
        assert column in lines[0]
    assert "greedy (gggggggg)" in lines[2] and "random (rrrrrrrr)" in lines[4]
    # 30 rounds, each pair of bots at its own table with a deal of its own.
    assert "95% interval, deals as clusters (90 deals)" in result.output


def test_markdown_is_a_pipe_table(league):
    result = run(league, "--format", "markdown")
    assert result.exit_code == 0, result.output
    table = [line for line in result.output.splitlines() if line.startswith("|")]
    assert len(table) == 2 + len(STRENGTH)
    assert table[2].split("|")[2].strip() == "greedy (gggggggg)"


def test_csv_has_one_row_per_bot_with_numbers(league):
    result = run(league, "--format", "csv")
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(io.StringIO(result.output)))
    assert [row["bot"] for row in rows] == ["greedy", "middle", "random"]
    assert rows[0]["version"] == "gggggggg"
    # 30 deals x 2 seatings against each of 2 opponents.
    assert all(int(row["games"]) == 120 for row in rows)
    assert all(int(row["wins"]) + int(row["draws"]) + int(row["losses"]) == 120 for row in rows)
    assert sum(float(row["elo"]) for row in rows) == pytest.approx(0.0, abs=0.2)   # mean 0
    assert rows[-1]["los_next_pct"] == ""


def test_json_holds_the_ladder_and_how_it_was_made(league):
    data = json_ladder(league)
    assert data["confidence"] == 0.95 and data["anchor"] is None and data["deals"] == 90
    best, middle, worst = data["ladder"]
    assert (best["bot"], middle["bot"], worst["bot"]) == ("greedy", "middle", "random")
    assert best["elo"] > middle["elo"] > worst["elo"]
    assert 50 <= best["los_next_pct"] <= 100 and worst["los_next_pct"] is None


def test_the_matrix_gives_each_pair_complementary_scores(league):
    data = json.loads(run(league, "--matrix", "--format", "json").output)
    assert data["bots"] == ["greedy@gggggggg", "middle@mmmmmmmm", "random@rrrrrrrr"]
    for i in range(3):
        for j in range(3):
            if i != j:
                assert data["score_pct"][i][j] + data["score_pct"][j][i] == pytest.approx(100)
                assert data["results"][i][j] == 60
    table = run(league, "--matrix")
    assert table.exit_code == 0, table.output
    assert "1. greedy (gggggggg)" in table.output and "(60)" in table.output


def test_an_anchor_pins_the_named_bot(league):
    free = json_ladder(league)["ladder"]
    pinned = json_ladder(league, "--anchor", "random=1000")["ladder"]
    assert pinned[-1]["elo"] == 1000.0 and pinned[-1]["interval"] == 0.0
    assert pinned[0]["elo"] - 1000.0 == pytest.approx(free[0]["elo"] - free[-1]["elo"], abs=0.2)
    exact = json_ladder(league, "--anchor", "random@rrrrrrrr=1000")["ladder"]
    assert exact == pinned


# -- merged and unfinished leagues --------------------------------------------------------------

def test_leagues_of_one_game_merge_into_one_ladder(tmp_path, league):
    other = make_league(tmp_path / "other", seed=8, deals=10)
    merged = json_ladder(league, other)
    assert merged["deals"] == 3 * (30 + 10)
    assert all(row["games"] == 120 + 40 for row in merged["ladder"])


def test_leagues_with_the_same_seed_share_their_deals(tmp_path, league):
    again = make_league(tmp_path / "again", seed=7, deals=30)
    assert json_ladder(league, again)["deals"] == 3 * 30


def test_merged_running_leagues_replay_one_after_the_other(tmp_path, league):
    # A running league's stored matches need not be the first of its schedule (workers finish
    # out of order): its last stored position, not its count, is where the next one starts.
    running = make_league(tmp_path / "running", seed=9, deals=4, stop_after=10)
    conn = sqlite3.connect(running / "league.sqlite")
    with conn:
        conn.execute("DELETE FROM matches WHERE ord < 3")
    conn.close()
    data = json.loads(run(running, league, "--history", "--format", "json").output)
    orders = {}
    for series in data["history"].values():
        for point in series:
            orders.setdefault(point["match"].split("|")[0], set()).add(point["order"])
    assert max(orders[str(running)]) < min(orders[str(league)])
    assert len(orders[str(running)]) == 7 and len(orders[str(league)]) == 180


def test_the_table_warns_when_deals_are_too_few_for_the_intervals(tmp_path, league):
    assert "deals" in run(league).output and "too narrow" not in run(league).output
    # Three bots at one 3-player table: 2 rounds are 2 deals.
    few = make_league(tmp_path / "few", seed=2, deals=2, players=3, game="flowers-mandala")
    assert "Only 2 deals for 3 bots: the intervals are likely too narrow" in run(few).output
    one = run(make_league(tmp_path / "one", deals=1, stop_after=2))   # one table's deal
    assert "need results from at least 2 deals" in one.output
    assert " - " in one.output.splitlines()[2]   # no interval


def test_a_league_still_running_is_rated_on_what_is_stored(tmp_path):
    partial = make_league(tmp_path / "partial", stop_after=40)
    with Store.open(partial) as store:   # the league's writer still has it open
        assert store.progress() == (40, 180)
        data = json_ladder(partial)
    assert sum(row["games"] for row in data["ladder"]) == 2 * 40


# -- bad input ----------------------------------------------------------------------------------

def assert_one_line_error(result, *fragments: str) -> None:
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("arena: error: "), result.output
    assert "Traceback" not in result.output
    for fragment in fragments:
        assert fragment in lines[0]


def test_leagues_of_different_games_are_refused(tmp_path, league):
    flowers = make_league(tmp_path / "flowers", game="flowers", deals=4)
    assert_one_line_error(run(league, flowers), "is flowers but", "is mandala",
                          "merge only leagues of the same game")


def test_leagues_under_other_rule_options_are_refused(tmp_path, league):
    variant = make_league(tmp_path / "variant", deals=4, options={"rounds": 3})
    assert_one_line_error(run(league, variant), "mandala with rounds=3")


def test_leagues_under_other_rules_versions_are_refused(tmp_path):
    older, newer = (make_league(tmp_path / name, deals=4) for name in ("older", "newer"))
    for folder, rules in ((older, "mandala/1"), (newer, "mandala/2")):
        db = sqlite3.connect(folder / "league.sqlite")
        config = json.loads(db.execute("SELECT config FROM league").fetchone()[0])
        db.execute("UPDATE league SET config = ?", (json.dumps({**config, "rules": rules}),))
        db.commit()
        db.close()
    assert_one_line_error(run(older, newer), "is mandala/2 but")


def test_a_folder_without_a_league_is_refused(tmp_path):
    assert_one_line_error(run(tmp_path / "nothing"), "holds no league")


def test_the_same_league_twice_is_refused(league):
    assert_one_line_error(run(league, league), "given twice")


def test_a_league_with_no_finished_match_says_so(tmp_path):
    assert_one_line_error(run(make_league(tmp_path / "empty", stop_after=0)),
                          "no finished matches yet")


@pytest.mark.parametrize("anchor,fragment", [
    ("greedy", "--anchor wants BOT=RATING"),
    ("greedy=high", "--anchor wants BOT=RATING"),
    ("nobody=1500", "no bot 'nobody'"),
])
def test_a_bad_anchor_is_refused(league, anchor, fragment):
    assert_one_line_error(run(league, "--anchor", anchor), fragment)


def test_an_unknown_format_is_a_usage_error(league):
    result = run(league, "--format", "xml")
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "'xml' is not one of" in result.output


def test_history_prints_running_elo_after_every_match(league):
    result = run(league, "--history", "--format", "csv", "--k-factor", "32")
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(io.StringIO(result.output)))
    assert len(rows) == 2 * 180                       # both bots of every match
    assert [int(row["order"]) for row in rows] == sorted(int(row["order"]) for row in rows)
    first_two = rows[:2]
    assert {float(row["elo"]) for row in first_two} == {16.0, -16.0}   # K/2 from equal
    data = json.loads(run(league, "--history", "--format", "json").output)
    assert data["k"] == 16.0 and len(data["history"]["greedy@gggggggg"]) == 120
    final = {bot: series[-1]["elo"] for bot, series in data["history"].items()}
    assert final["greedy@gggggggg"] > final["middle@mmmmmmmm"] > final["random@rrrrrrrr"]


def test_history_with_matrix_or_anchor_is_refused(league):
    assert_one_line_error(run(league, "--history", "--matrix"), "give one of them")
    assert_one_line_error(run(league, "--history", "--anchor", "greedy=1500"),
                          "give one of them")
    assert_one_line_error(run(league, "--k-factor", "32"), "use it with --history")


# -- forensics: the order effect of mirrored deals --------------------------------------------

def test_stats_flag_a_bot_that_plays_better_in_the_later_seating_of_a_deal(tmp_path):
    # `middle` cheats: in the second seating of a deal it plays far stronger (its processes
    # passed the deal on). Over 30 mirrored deals per opponent it stands out; the others,
    # whose later seatings it steals, show the opposite and are not flagged.
    folder = make_league(tmp_path / "cheat", later_bonus={"middle": 4.0})
    result = run(folder, "--stats", "--format", "json")
    stats = {row["bot"].split("@")[0]: row for row in json.loads(result.output)["stats"]}
    assert stats["middle"]["order_flagged"] and stats["middle"]["order_p_value"] < 1e-4
    assert stats["middle"]["order_deals"] == 60 and stats["middle"]["order_later_worse"] < 5
    assert not stats["greedy"]["order_flagged"] and not stats["random"]["order_flagged"]
    table = run(folder, "--stats").output
    row = next(line for line in table.splitlines() if line.startswith("middle"))
    assert row.endswith("FLAG") and "later seating better/worse (p)" in table
    # The plain ladder says so under the table (seatings in schedule order).
    footer = [line for line in run(folder).output.splitlines() if line.startswith("Note:")]
    assert len(footer) == 1 and footer[0].startswith("Note: middle@mmmmmmmm did better in its "
                                                     "later seating of 29 of the 60 deals")
    assert "Note:" not in run(make_league(tmp_path / "fair2")).output
    # The same league played fair: nobody flagged.
    fair = json.loads(run(make_league(tmp_path / "fair"), "--stats", "--format",
                          "json").output)["stats"]
    assert [row["order_flagged"] for row in fair] == [False] * 3
    assert all(row["order_deals"] == 60 for row in fair)


def test_stats_of_an_independent_league_have_no_deal_met_twice(tmp_path):
    folder = make_league(tmp_path / "independent", seating="independent",
                         later_bonus={"middle": 4.0})
    rows = json.loads(run(folder, "--stats", "--format", "json").output)["stats"]
    assert [(row["order_deals"], row["order_p_value"]) for row in rows] == [(0, None)] * 3
    table = run(folder, "--stats").output
    assert all(line.endswith("-") for line in table.splitlines()[2:5])
