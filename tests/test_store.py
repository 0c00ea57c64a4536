"""The league store keeps every match once, refuses what is not its own, reads while written."""
from __future__ import annotations

import hashlib

import pytest

from arena.keys import LeagueKey
from arena.league.schedule import expand
from arena.league.store import (DB_NAME, BotEntry, FinishedMatch, Store, StoreError, read_league,
                         read_outcomes)

KEY = LeagueKey(bytes(32))   # a fixed league key: schedules are pure functions of it

BOTS = [BotEntry("ada", "a" * 64, "/bots/ada", ("mandala",)),
        BotEntry("bob", "b" * 64, "/bots/bob", ("mandala",))]
CONFIG = {"game": "mandala", "players": 2, "deals": 2, "seed": 7}


def new_store(folder) -> Store:
    return Store.create(folder, name="test", config=CONFIG, planned=4, bots=BOTS, key=KEY)


def finished(spec, ranks=(1, 2), forfeit=None) -> FinishedMatch:
    result = {"scores": [3, 1] if ranks == (1, 2) else [1, 3], "ranks": list(ranks),
              "end": "normal"}
    if forfeit is not None:
        result.update(end="forfeit", forfeit={"seat": forfeit, "reason": "crash"})
    record = {"format": "arena-record/1", "game": "mandala", "players": list(spec.seats),
              "seed": spec.seed, "moves": [], "result": result}
    return FinishedMatch(spec, record, started=1000.0, seconds=0.5, worker=0)


def file_digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_new_store_keeps_config_bots_and_plan(tmp_path):
    with new_store(tmp_path / "league"):
        pass
    with Store.open(tmp_path / "league") as store:
        assert store.config() == CONFIG
        assert store.bots() == BOTS
        assert store.progress() == (0, 4)
        assert store.league_name() == "test"


def test_each_finished_match_is_stored_with_its_record_and_outcome(tmp_path):
    # Mirrored: the two seatings of the first deal share it, as their outcomes must say.
    specs = expand(["ada", "bob"], players=2, deals=2, seed=7, key=KEY, seating="mirrored")
    with new_store(tmp_path) as store:
        store.add_match(finished(specs[1], ranks=(2, 1)))
        store.add_match(finished(specs[0], forfeit=1))
        assert store.finished_ids() == {specs[0].id, specs[1].id}
        assert [record["players"] for record in store.records()] == [["ada", "bob"],
                                                                    ["bob", "ada"]]
    outcomes = read_outcomes(tmp_path)
    assert read_league(tmp_path) == (CONFIG, outcomes)
    assert [o.match_id for o in outcomes] == [specs[0].id, specs[1].id]   # schedule order
    first, second = outcomes
    assert first.bots == ("ada@aaaaaaaa", "bob@bbbbbbbb") and first.forfeit_seat == 1
    assert second.ranks == (2, 1) and second.scores == (1.0, 3.0)
    assert first.deal == second.deal == specs[0].deal


def test_a_match_cannot_be_stored_twice(tmp_path):
    spec = expand(["ada", "bob"], players=2, deals=1, seed=7, key=KEY)[0]
    with new_store(tmp_path) as store:
        store.add_match(finished(spec))
        with pytest.raises(StoreError, match="already stored"):
            store.add_match(finished(spec))
        assert store.progress() == (1, 4)


class InterruptedAtCommit:
    """A connection on which Ctrl-C lands just before the commit of a match."""

    def __init__(self, conn):
        self.conn = conn

    def execute(self, sql, *args):
        if sql == "COMMIT":
            raise KeyboardInterrupt
        return self.conn.execute(sql, *args)

    def __getattr__(self, name):
        return getattr(self.conn, name)


def test_ctrl_c_before_the_commit_leaves_the_match_out_everywhere(tmp_path):
    # The league counts what is stored on its own handle when it stops: that count must
    # agree with what a reader (and a resume) will find.
    spec = expand(["ada", "bob"], players=2, deals=1, seed=7, key=KEY)[0]
    with new_store(tmp_path) as store:
        real, store.conn = store.conn, InterruptedAtCommit(store.conn)
        with pytest.raises(KeyboardInterrupt):
            store.add_match(finished(spec))
        store.conn = real
        assert not real.in_transaction and store.progress() == (0, 4)
        store.add_match(finished(spec))   # resumed: played again, stored once
    assert [o.match_id for o in read_outcomes(tmp_path)] == [spec.id]


def test_a_folder_holding_a_league_is_refused_and_left_alone(tmp_path):
    with new_store(tmp_path) as store:
        store.add_match(finished(expand(["ada", "bob"], 2, 1, seed=7, key=KEY)[0]))
    before = file_digest(tmp_path / DB_NAME)
    with pytest.raises(StoreError, match=r"already holds league 'test' \(1 of 4 matches done\)"):
        Store.create(tmp_path, name="other", config={}, planned=1, bots=[], key=KEY)
    assert file_digest(tmp_path / DB_NAME) == before


def test_a_file_that_is_not_a_database_is_refused_and_left_alone(tmp_path):
    (tmp_path / DB_NAME).write_bytes(b"my notes, not a database\n" * 100)
    before = file_digest(tmp_path / DB_NAME)
    for attempt in (lambda: Store.open(tmp_path), lambda: read_outcomes(tmp_path),
                    lambda: Store.create(tmp_path, name="x", config={}, planned=1, bots=[],
                                         key=KEY)):
        with pytest.raises(StoreError, match="not an arena league database"):
            attempt()
    assert file_digest(tmp_path / DB_NAME) == before


def test_a_league_database_of_another_schema_version_is_refused(tmp_path):
    with new_store(tmp_path) as store:
        store.conn.execute("UPDATE arena_marker SET schema_version = 99")
    with pytest.raises(StoreError, match="schema 99"):
        Store.open(tmp_path)


def test_a_folder_without_a_league_is_refused(tmp_path):
    with pytest.raises(StoreError, match="holds no league"):
        Store.open(tmp_path)
    with pytest.raises(StoreError, match="holds no league"):
        read_outcomes(tmp_path)


def test_outcomes_can_be_read_while_the_writer_holds_a_transaction(tmp_path):
    specs = expand(["ada", "bob"], players=2, deals=2, seed=7, key=KEY)
    with new_store(tmp_path) as store:
        store.add_match(finished(specs[0]))
        store.conn.execute("BEGIN IMMEDIATE")   # a write in progress, not yet committed
        store.conn.execute("DELETE FROM matches")
        assert [o.match_id for o in read_outcomes(tmp_path)] == [specs[0].id]
        store.conn.execute("ROLLBACK")
