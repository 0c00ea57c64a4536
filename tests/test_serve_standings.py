"""The service database and standings: matches stored one transaction each with their seats
and pairwise results, ladders refitted from them (retired versions fitted, not listed), table
numbers never reused, and a ladder of other rules refused."""
from __future__ import annotations

import json
import random

import pytest

from arena.keys import LeagueKey
from arena.serve.db import ServiceDB, ServiceDBError
from arena.serve.player import store_finished, table_specs
from arena.serve.standings import refit
from arena.league.store import FinishedMatch


def add_version(db: ServiceDB, ladder: str, author: str, name: str, version: str,
                status: str = "admitted") -> int:
    with db.transaction() as conn:
        found = conn.execute("SELECT id FROM authors WHERE name = ?", (author,)).fetchone()
        author_id = found[0] if found else conn.execute(
            "INSERT INTO authors (name, token_hash, created) VALUES (?, ?, 0)",
            (author, author)).lastrowid
        found = conn.execute("SELECT id FROM bots WHERE author_id = ? AND name = ?",
                             (author_id, name)).fetchone()
        bot_id = found[0] if found else conn.execute(
            "INSERT INTO bots (author_id, name) VALUES (?, ?)", (author_id, name)).lastrowid
        return conn.execute("INSERT INTO versions (bot_id, ladder, version, folder, status, "
                            "submitted) VALUES (?, ?, ?, '', ?, 0)",
                            (bot_id, ladder, version, status)).lastrowid


def play(db: ServiceDB, ladder, key, table: list[int], winner_first: bool = True) -> None:
    """One table of simulated games: every seating, the best-listed version of the table
    ranked first when `winner_first` (else by seat order)."""
    first = db.take_tables(ladder.id, 1)
    seated = [db.version(version_id) for version_id in table]
    names = {f"v{version.id}": version for version in seated}
    for spec in table_specs(ladder, key, first, seated):
        order = [table.index(names[name].id) for name in spec.seats] if winner_first \
            else list(range(len(spec.seats)))
        ranks = [position + 1 for position in order]
        record = {"result": {"scores": [10 - rank for rank in ranks], "ranks": ranks,
                             "end": "normal"}, "moves": []}
        store_finished(db, ladder, FinishedMatch(spec, record, 0.0, 0.0, 0), names)


def test_a_fresh_folder_makes_an_empty_database_only_its_owner_can_enter(tmp_path):
    # Refusing files that are not ours: tests/test_sqlite.py, for both kinds of database.
    db = ServiceDB.open(tmp_path / "svc")
    assert db.ladders() == [] and db.match_count() == 0
    assert oct((tmp_path / "svc").stat().st_mode & 0o777) == oct(0o700)


def test_a_ladder_of_other_rules_is_refused_and_table_numbers_never_repeat(tmp_path):
    db = ServiceDB.open(tmp_path)
    ladder = db.ensure_ladder("mandala", 2, "mandala/1", {"move_time": 1.0})
    with pytest.raises(ServiceDBError, match="rules mandala/1"):
        db.ensure_ladder("mandala", 2, "mandala/2", {"move_time": 1.0})
    assert db.take_tables(ladder.id, 3) == 0
    assert ServiceDB.open(tmp_path).take_tables(ladder.id, 1) == 3   # after a restart too


def test_three_player_tables_store_every_rotation_and_rank_the_ladder(tmp_path):
    db = ServiceDB.open(tmp_path)
    ladder = db.ensure_ladder("flowers-mandala", 3, "flowers-mandala/1", {"move_time": 1.0})
    key = LeagueKey.new()
    strong, middle, weak = (add_version(db, ladder.id, author, "bot", f"{n:012x}")
                            for n, author in enumerate(("s", "m", "w")))
    for _ in range(30):
        play(db, ladder, key, [strong, middle, weak])
    assert db.match_count(ladder.id) == 90
    rotations = {json.loads(row[0])[0] for row in
                 db.query("SELECT versions FROM matches WHERE table_no = 0")}
    assert rotations == {strong, middle, weak}   # each bot in seat 0 once per deal
    assert db.one("SELECT COUNT(*) FROM pairs")[0] == 90 * 3
    # The running head-to-head totals are the sums of the pairs, kept as matches land.
    assert sorted(db.query("SELECT ladder, first, second, games, points FROM head_to_head")) \
        == sorted(db.query("SELECT ladder, first, second, COUNT(*), SUM(score) FROM pairs "
                           "GROUP BY ladder, first, second"))
    standings = refit(db, ladder.id)
    assert [row.bot.split("/")[0] for row in standings.table.rows] == ["s", "m", "w"]
    assert standings.table.deals == 30
    history = db.query("SELECT version_id, games FROM rating_history")
    assert sorted(history) == sorted([(strong, 90), (middle, 90), (weak, 90)])


def test_retired_versions_are_fitted_but_not_listed_and_new_ones_are_listed_at_once(tmp_path):
    db = ServiceDB.open(tmp_path)
    ladder = db.ensure_ladder("mandala", 2, "mandala/1", {"move_time": 1.0})
    key = LeagueKey.new()
    old = add_version(db, ladder.id, "a", "bot", "0" * 12)
    other = add_version(db, ladder.id, "b", "bot", "1" * 12)
    rng = random.Random(4)
    for _ in range(20):
        play(db, ladder, key, [old, other] if rng.random() < 0.7 else [other, old])
    with db.transaction() as conn:
        conn.execute("UPDATE versions SET status = 'retired' WHERE id = ?", (old,))
    new = add_version(db, ladder.id, "a", "bot", "2" * 12)
    standings = refit(db, ladder.id)
    listed = {standings.versions[row.bot].id: row for row in standings.table.rows}
    assert set(listed) == {other, new}
    assert listed[new].games == 0 and listed[other].games == 40
    assert "a/bot@00000000" in standings.table.fit.bots   # still informs the fit
    stored = json.loads(db.one("SELECT standings FROM ladders")[0])
    assert [row["version_id"] for row in stored["ladder"]] == [
        standings.versions[row.bot].id for row in standings.table.rows]


@pytest.mark.parametrize("bot, kept, hidden", [
    ("protocol_bots/raises", "its code failed (what it said is in the bot's log",
     "a bug in the bot"),
    ("misbehaving_bots/crash_mid_match", "exited with status", "its stderr")])
def test_a_stored_forfeit_tells_neither_a_bots_error_text_nor_the_services_paths(
        tmp_path, host, bot, kept, hidden):
    # Played for real, then stored as the service stores it: everyone reads the match.
    from pathlib import Path
    from arena.bots import BotSpec
    from arena.clock import TimeControl
    from arena.match import StrategySeat, play_match
    db = ServiceDB.open(tmp_path)
    ladder = db.ensure_ladder("mandala", 2, "mandala/1", {"move_time": 1.0})
    seated = [db.version(add_version(db, ladder.id, author, "bot", f"{n:012x}"))
              for n, author in enumerate(("a", "b"))]
    names = {f"v{version.id}": version for version in seated}
    spec = table_specs(ladder, LeagueKey.new(), db.take_tables(ladder.id, 1), seated)[0]
    with host.seat(BotSpec.load(Path(__file__).parent / bot)) as seat:
        record = play_match("mandala", 2, {}, 2, [seat, StrategySeat("random", "mandala")],
                            TimeControl(move_time=5.0))
    assert hidden in record["result"]["forfeit"]["detail"]   # what the arena itself reports
    store_finished(db, ladder, FinishedMatch(spec, record, 0.0, 0.0, 0), names)
    stored = json.loads(db.one("SELECT record FROM matches")[0])
    detail = stored["result"]["forfeit"]["detail"]
    assert kept in detail and hidden not in detail and str(host.log_dir) not in detail, detail
    assert stored["moves"] == record["moves"]   # the rest as played
