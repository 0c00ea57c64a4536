"""Leagues end to end: `arena league` as a real subprocess, real sandboxed bots, real SQLite.

Bots are copies of the sample `random` bot under other names (deterministic: the arena seeds
them per match) and a test bot that crashes in some matches (tests/league_bots/crashy).
"""
from __future__ import annotations

import collections
import hashlib
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from arena.bench.league import Figure, render
from arena.league.lifecycle import open_league, run
from arena.league.config import LeagueConfig, LeagueError
from arena.league.workers import Executor, ProcessPool, SeatSource, play_spec
from arena.league.schedule import expand
from arena.league.store import DB_NAME, Store, read_outcomes
from engine import records

ROOT = Path(__file__).resolve().parent.parent
CRASHY = ROOT / "tests" / "league_bots" / "crashy"
ARENA = [sys.executable, "-c", "from arena.cli import main; main()"]
# A small league: 3 bots, 3 pairs, 4 deals, both seatings = 24 matches of mandala.
LEAGUE = ["--game", "mandala", "--deals", "4", "--seed", "5", "--move-time", "2"]

pytestmark = pytest.mark.sandbox


def arena(*args, check=True, **kwargs) -> subprocess.CompletedProcess:
    # PYTHONPATH: from another working directory too, the arena of this checkout runs (not
    # whichever one is installed).
    env = kwargs.pop("env", {**os.environ, "PYTHONPATH": str(ROOT)})
    done = subprocess.run([*ARENA, *map(str, args)], capture_output=True, text=True,
                          timeout=180, cwd=kwargs.pop("cwd", ROOT), env=env, **kwargs)
    if check and done.returncode != 0:
        raise AssertionError(f"arena {' '.join(map(str, args))} failed "
                             f"({done.returncode}):\n{done.stderr}")
    return done


def start_arena(*args) -> subprocess.Popen:
    return subprocess.Popen([*ARENA, *map(str, args)], cwd=ROOT, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def copy_bot(source: Path, folder: Path, name: str) -> Path:
    shutil.copytree(source, folder, ignore=shutil.ignore_patterns("__pycache__"))
    manifest = folder / "bot.toml"
    lines = [f'name = "{name}"' if line.startswith("name =") else line
             for line in manifest.read_text().splitlines()]
    manifest.write_text("\n".join(lines) + "\n")
    return folder


@pytest.fixture(scope="module")
def bots(tmp_path_factory) -> list[Path]:
    where = tmp_path_factory.mktemp("bots")
    return [copy_bot(ROOT / "sample_bots" / "random", where / name, name)
            for name in ("ann", "ben", "cat")]


def bot_flags(folders) -> list[str]:
    return [flag for folder in folders for flag in ("--bot", folder)]


@pytest.fixture(scope="module")
def reference(tmp_path_factory, bots) -> tuple[Path, subprocess.CompletedProcess]:
    """The small league played once, uninterrupted, on 2 workers."""
    folder = tmp_path_factory.mktemp("leagues") / "reference"
    done = arena("league", "run", *LEAGUE, *bot_flags(bots), "--workers", 2, "--out", folder)
    return folder, done


def stored(folder: Path) -> list[tuple]:
    """Per match in schedule order: id, seats, moves and result (what must not vary)."""
    with Store.open(folder) as store:
        return [(record["players"], record["seed"], record["moves"], record["result"])
                for record in store.records()]


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def processes_of(parent: int, bots_folder: Path) -> dict[int, bytes]:
    """Live workers that the league with pid `parent` started, and live bots of its folder:
    pid -> command line, as read in the one look through /proc."""
    found = {}
    for entry in Path("/proc").iterdir():
        try:
            environ = (entry / "environ").read_bytes().split(b"\0")
            command = (entry / "cmdline").read_bytes()
        except (OSError, ValueError):
            continue
        if (f"ARENA_LEAGUE_PARENT={parent}".encode() in environ
                or str(bots_folder).encode() in command):
            found[int(entry.name)] = command
    return found


def workers_of(parent: int, bots_folder: Path) -> list[int]:
    """The live workers of the league with pid `parent` (by the command line read with the
    rest: a process that ends meanwhile is simply not found)."""
    return [pid for pid, command in processes_of(parent, bots_folder).items()
            if b"worker_main" in command]


def survivors_of(parent: int, bots_folder: Path, grace: float = 3.0) -> list[str]:
    """The league's processes still alive after `grace` seconds (bots die with their worker,
    which the kernel signals a moment after the worker's end), as pid and command."""
    deadline = time.monotonic() + grace
    while (alive := processes_of(parent, bots_folder)) and time.monotonic() < deadline:
        time.sleep(0.05)
    described = []
    for pid in alive:
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")
        except OSError:
            continue   # gone meanwhile
        described.append(f"{pid}: {command[:300].decode(errors='replace')}")
    return described


# -- fair schedules, stored ---------------------------------------------------------------

@pytest.mark.slow
def test_every_deal_is_played_in_every_seating_and_counts_per_bot_are_equal(reference):
    folder, _ = reference
    outcomes = read_outcomes(folder)
    assert len(outcomes) == 24
    names = sorted({bot for outcome in outcomes for bot in outcome.bots})
    assert [name.split("@")[0] for name in names] == ["ann", "ben", "cat"]
    seatings = collections.defaultdict(set)
    for outcome in outcomes:
        seatings[outcome.match_id.split(":")[0]].add(outcome.bots)
    for played in seatings.values():
        assert played == {(a, b) for a in names for b in names if a != b}
    per_bot = collections.Counter(bot for outcome in outcomes for bot in outcome.bots)
    assert set(per_bot.values()) == {16}


@pytest.mark.slow
def test_three_player_mirrored_league_plays_each_deal_in_every_rotation(tmp_path, bots):
    folder = tmp_path / "three"
    arena("league", "run", "--game", "flowers-mandala", "--players", 3, "--deals", 2,
          "--seed", 1, *bot_flags(bots), "--out", folder, "--workers", 2, "--quiet",
          "--seating", "mirrored")
    outcomes = read_outcomes(folder)
    assert len(outcomes) == 6
    for deal in ("d0000", "d0001"):
        seatings = [o.bots for o in outcomes if o.match_id.startswith(deal)]
        first = seatings[0]
        assert sorted(seatings) == sorted(first[i:] + first[:i] for i in range(3))
    assert {o.deal for o in outcomes if o.match_id.startswith("d0000")} == {outcomes[0].deal}


@pytest.mark.slow
@pytest.mark.parametrize("seating", ["mirrored", "independent"])
def test_one_player_league_plays_every_bot_each_round(tmp_path, bots, seating):
    # Mirrored, the bots of a round share its cards; independent (untrusted bots), each has
    # cards of its own, so no two bots, of one author say, meet one deal.
    folder = tmp_path / "solo"
    done = arena("league", "run", "--game", "flowers", "--players", 1, "--deals", 2, "--seed", 6,
                 *bot_flags(bots), "--out", folder, "--workers", 2, "--quiet",
                 "--seating", seating)
    assert "Elo" in done.stdout
    with Store.open(folder) as store:
        records = store.records()
    setups = collections.defaultdict(list)
    for record in records:
        setups[record["seed"]].append((record["players"][0], json.dumps(record["setup"])))
    assert len(records) == 6
    if seating == "mirrored":
        assert len(setups) == 2
        for played in setups.values():   # each bot once, all from the very same cards
            assert sorted(name for name, _ in played) == ["ann", "ben", "cat"]
            assert len({setup for _, setup in played}) == 1
    else:
        assert len(setups) == 6
        assert len({setup for played in setups.values() for _, setup in played}) == 6
    assert len({o.deal for o in read_outcomes(folder)}) == 2   # the rounds, compared within


@pytest.mark.slow
def test_the_seating_mode_is_stored_with_the_league_and_resume_keeps_it(tmp_path):
    # Default independent: every match a deal of its own. A league stopped and resumed
    # regenerates its schedule from the stored mode, not from today's default.
    config_file = tmp_path / "league.toml"
    config_file.write_text('game = "mandala"\nbots = ["random", "greedy"]\ndeals = 2\n'
                           'seed = 3\nseating = "mirrored"\n')
    for seating, flags in (("independent", []), ("mirrored", ["--config", config_file])):
        folder = tmp_path / seating
        arena("league", "run", *(flags or ["--game", "mandala", "--bot", "random", "--bot",
                                           "greedy", "--deals", 2, "--seed", 3]),
              "--out", folder, "--quiet")
        with Store.open(folder) as store:
            assert store.config()["seating"] == seating
            seeds = [record["seed"] for record in store.records()]
        assert len(seeds) == 4 and len(set(seeds)) == (4 if seating == "independent" else 2)
        with open_league(folder) as league:
            assert league.config.seating == seating and not league.missing()
            assert sorted(spec.seed for spec in league.specs) == sorted(seeds)


def test_a_league_stored_before_seating_modes_resumes_mirrored():
    old = LeagueConfig(game="mandala", bots=("random", "greedy")).to_json()
    del old["seating"]
    assert LeagueConfig.from_json(old).seating == "mirrored"
    assert LeagueConfig(game="mandala", bots=("random",)).seating == "independent"


@pytest.mark.slow
def test_an_unknown_seating_is_refused_in_one_line(tmp_path):
    config_file = tmp_path / "league.toml"
    config_file.write_text('game = "mandala"\nbots = ["random", "greedy"]\n'
                           'seating = "shuffled"\n')
    assert_refused(arena("league", "run", "--config", config_file, "--out", tmp_path / "x",
                         check=False), "unknown seating 'shuffled'")
    assert_refused(arena("league", "run", "--game", "mandala", "--bot", "random", "--bot",
                         "greedy", "--seating", "shuffled", check=False),
                   "Invalid value for '--seating'")
    assert not (tmp_path / "x").exists()


# -- determinism and the store under concurrent workers --------------------------------------

@pytest.mark.slow
def test_same_seed_gives_identical_stored_results_on_one_or_two_workers(reference, tmp_path,
                                                                        bots):
    folder, _ = reference
    again = tmp_path / "again"
    arena("league", "run", *LEAGUE, *bot_flags(bots), "--workers", 1, "--out", again,
          "--quiet")
    assert stored(again) == stored(folder)


def test_concurrent_workers_leave_a_sound_database_of_replayable_records(reference):
    folder, _ = reference
    conn = sqlite3.connect(folder / DB_NAME)
    assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    assert conn.execute("SELECT COUNT(*), COUNT(DISTINCT id) FROM matches").fetchone() == (24, 24)
    workers = {row[0] for row in conn.execute("SELECT worker FROM matches")}
    assert workers == {0, 1}
    conn.close()
    with Store.open(folder) as store:
        for record in store.records():
            verdict = records.verify(record)
            assert verdict["ok"], verdict


def test_the_ladder_and_progress_are_printed(reference):
    _, done = reference
    assert "Elo" in done.stdout and "ann" in done.stdout
    progress = [line for line in done.stderr.splitlines() if line.startswith("[")]
    assert progress and progress[-1].split()[1] == "24/24"
    assert all("matches/s" in line and "ETA" in line and "leader" in line
               for line in progress)


# -- resume -------------------------------------------------------------------------------

@pytest.mark.slow
def test_kill_9_mid_league_then_resume_loses_and_duplicates_nothing(reference, tmp_path, bots,
                                                                   kill_rng):
    folder = tmp_path / "killed"
    league = start_arena("league", "run", *LEAGUE, *bot_flags(bots), "--workers", 2,
                         "--out", folder, "--quiet")
    # A random moment mid-league: after 1 to 12 stored matches and a random few milliseconds,
    # so the kill may land in a match, between matches or while a bot's sandbox starts. The
    # league is stopped there (its workers finish the match they play), so that however long
    # a busy machine keeps this test from its kill, the league cannot end meanwhile.
    kill_after = kill_rng.randint(1, 12)
    seen_while_running = []
    while league.poll() is None and len(seen_while_running) < kill_after:
        if (folder / DB_NAME).exists():   # readers work while the league writes
            seen_while_running = read_outcomes(folder)
        time.sleep(0.02)
    time.sleep(kill_rng.uniform(0, 0.03))
    league.send_signal(signal.SIGSTOP)
    # One league, one runner: a second run of it at the same time is refused.
    with pytest.raises(LeagueError, match="being run by another process"):
        open_league(folder)
    league.send_signal(signal.SIGKILL)
    league.communicate()
    assert survivors_of(league.pid, bots[0].parent) == []   # workers and bots died with it
    survivors = read_outcomes(folder)
    assert {o.match_id for o in seen_while_running} <= {o.match_id for o in survivors}
    assert len(survivors) < 24, "the league ended before the kill: make it longer"

    resumed = arena("league", "resume", folder, "--workers", 2)
    assert f"{24 - len(survivors)} of 24 matches to play" in resumed.stderr
    assert stored(folder) == stored(reference[0])


@pytest.mark.slow
def test_a_worker_killed_mid_league_is_replaced_and_its_matches_played_again(
        reference, tmp_path, bots):
    folder = tmp_path / "worker-killed"
    league = start_arena("league", "run", *LEAGUE, *bot_flags(bots), "--workers", 2,
                         "--out", folder, "--quiet")
    # The workers are found while the league starts: the rest of it, once 2 matches are
    # stored, takes well under a second, less than a look through /proc on a busy machine.
    workers: list[int] = []
    while league.poll() is None and not ((folder / DB_NAME).exists()
                                         and len(read_outcomes(folder)) >= 2):
        if len(workers) < 2:
            workers = workers_of(league.pid, bots[0].parent)
        time.sleep(0.02)
    assert league.poll() is None and workers, \
        f"the league ended before a worker was killed:\n{league.communicate()[1][-3000:]}"
    os.kill(workers[0], signal.SIGKILL)
    _, err = league.communicate(timeout=120)
    assert league.returncode == 0, err
    assert "died (killed by signal 9); playing its" in err
    assert stored(folder) == stored(reference[0])


@pytest.mark.slow
@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_ctrl_c_or_sigterm_stops_cleanly_keeping_finished_matches(reference, tmp_path, bots,
                                                                  stop):
    folder = tmp_path / "interrupted"
    league = start_arena("league", "run", *LEAGUE, *bot_flags(bots), "--workers", 2,
                         "--out", folder)
    while league.poll() is None and not ((folder / DB_NAME).exists()
                                         and len(read_outcomes(folder)) >= 9):
        time.sleep(0.02)
    # The other 15 take some 0.4 s, less than a busy machine may keep this test waiting: the
    # league is stopped first, so that no new match starts before its signal (its workers
    # finish the match they play), and continued once the signal waits for it.
    league.send_signal(signal.SIGSTOP)
    league.send_signal(stop)
    league.send_signal(signal.SIGCONT)
    _, err = league.communicate(timeout=30)
    kept = len(read_outcomes(folder))
    assert league.returncode == 130, err
    assert kept < 24
    assert f"stopped: {kept} of 24 matches stored" in err and "Traceback" not in err
    assert survivors_of(league.pid, bots[0].parent) == []
    arena("league", "resume", folder, "--quiet")
    assert stored(folder) == stored(reference[0])


# -- bots that crash, fresh bots, gauntlet, config file ------------------------------------

@pytest.mark.slow
def test_a_bot_that_crashes_forfeits_those_matches_and_the_league_completes(
        tmp_path, bots, monkeypatch):
    # A fixed installation key: under the suite's own (new each session), about 1 league in
    # 130 gives the crashy bot no seed that makes it crash ((2/3) ** 12). Under this one, 5 do.
    key = tmp_path / "installation.key"
    key.write_text("11" * 32 + "\n")
    key.chmod(0o600)
    monkeypatch.setenv("ARENA_KEY_FILE", str(key))
    folder = tmp_path / "crashy"
    arena("league", "run", "--game", "mandala", "--deals", 6, "--seed", 3, "--bot", CRASHY,
          "--bot", bots[0], "--out", folder, "--workers", 2, "--quiet", "--skip-check")
    with Store.open(folder) as store:
        outcomes = {o.match_id: o for o in read_outcomes(folder)}
        assert len(outcomes) == 12
        forfeits = 0
        # The crashy bot crashes when its rng_seed is a multiple of 3; the seeds derive from
        # the league's own key.
        for spec in expand(["crashy", "ann"], players=2, deals=6, seed=3,
                           key=store.league_key()):
            seat = spec.seats.index("crashy")
            outcome = outcomes[spec.id]
            if spec.bot_seeds[seat] % 3 == 0:
                forfeits += 1
                assert outcome.forfeit_seat == seat and outcome.ranks[seat] == 2
            else:
                assert outcome.forfeit_seat is None
        assert forfeits == 5
        reasons = {record["result"].get("forfeit", {}).get("reason")
                   for record in store.records()}
        assert reasons == {None, "crash"}


@pytest.mark.slow
def test_gauntlet_from_a_config_file_with_fresh_bots_matches_the_pooled_results(
        reference, tmp_path, bots):
    config = tmp_path / "league.toml"
    config.write_text(
        'game = "mandala"\n'
        f'bots = {json.dumps([os.path.relpath(bot, tmp_path) for bot in bots])}\n'
        'deals = 1\nseed = 5\nmove_time = 2.0\ngauntlet = "ann"\n')
    folder = tmp_path / "gauntlet"
    done = arena("league", "run", "--config", config, "--out", folder, "--fresh-bots",
                 "--quiet", cwd=tmp_path)
    assert done.stderr == "" and "Elo" in done.stdout   # quiet: the ladder, no progress
    with Store.open(folder) as store:   # absolute folders: resumable from anywhere
        assert store.config()["bots"] == [str(bot) for bot in bots]
    outcomes = read_outcomes(folder)
    assert len(outcomes) == 4 and all(o.bots[0].startswith("ann@") or o.bots[1].startswith(
        "ann@") for o in outcomes)
    pooled = {o.match_id: o for o in read_outcomes(reference[0])}
    for outcome in outcomes:   # same ids, same deals: the same games as in the full league
        assert (outcome.ranks, outcome.scores) == (pooled[outcome.match_id].ranks,
                                                   pooled[outcome.match_id].scores)


def test_built_in_bots_play_leagues_in_process(tmp_path):
    folder = tmp_path / "builtin"
    arena("league", "run", "--game", "flowers-mandala", "--bot", "random", "--bot", "greedy",
          "--deals", 1, "--seed", 2, "--out", folder, "--quiet")
    outcomes = read_outcomes(folder)
    assert sorted(o.bots for o in outcomes) == [("greedy@builtin", "random@builtin"),
                                                ("random@builtin", "greedy@builtin")]


class InProcess(Executor):
    """Another executor, as a Ray one would be: plays specs wherever it likes with play_spec."""

    def run(self, plan, specs):
        source = SeatSource(plan)
        try:
            for spec in reversed(specs):   # any order is fine
                yield play_spec(source, plan, spec, worker=7)
        finally:
            source.close()


def test_any_executor_can_play_the_matches_of_a_league(tmp_path):
    config = LeagueConfig(game="flowers-mandala", bots=("random", "greedy"), deals=2, seed=4)
    with open_league(tmp_path / "a", config) as league:
        assert run(league, InProcess()) == 4
    with open_league(tmp_path / "b", config) as league:
        assert run(league, ProcessPool(2)) == 4
    assert stored(tmp_path / "a") == stored(tmp_path / "b")


def test_bench_league_compares_the_best_runs_with_the_targets():
    # The figures of real runs are the benchmark's business; here only how they are judged:
    # the target against the default lone worker, beside the speed-up over a pinned one.
    runs = [[Figure(1, False, 240, 24.0, 1.0, 0), Figure(1, False, 240, 20.0, 1.0, 0)],
            [Figure(1, True, 240, 16.0, 1.0, 0), Figure(1, True, 240, 15.0, 1.0, 0)],
            [Figure(2, True, 240, 13.0, 1.2, 0), Figure(2, True, 240, 11.0, 1.2, 0)]]
    text = render((runs, "2 x random + 2 x greedy"))
    rows = [line.split() for line in text.splitlines() if line.split()[:1] in (["1"], ["2"])]
    assert [(row[0], row[1], float(row[5])) for row in rows] == [
        ("1", "no", 10.0), ("1", "no", 12.0), ("1", "yes", 15.0), ("1", "yes", 16.0),
        ("2", "yes", 18.5), ("2", "yes", 21.8)]
    assert "best runs: 12.0 matches/s with 1 worker, 21.8 with 2 (target >= 10: met)" in text
    assert "1.82x best to best" in text and "(target >= 1.8x: met)" in text
    assert "over 1 worker pinned to a core (16.0 matches/s), as each of the 2 is: 1.36x" in text
    slow = render(([[Figure(1, False, 240, 24.0, 1.0, 0)], [Figure(1, False, 240, 24.0, 1.0, 0)],
                    [Figure(2, False, 240, 20.0, 1.0, 0)]], "x"))
    assert "(target >= 10: met)" in slow and "(target >= 1.8x: NOT met)" in slow
    assert "pinned to a core" not in slow   # one core: nothing was pinned
    assert "cores busy" in slow and "kept" not in slow   # no CPU counted: no bound drawn
    refused = arena("bench", "league", "--repeats", 0, check=False)
    assert refused.returncode == 2 and "--repeats must be at least 1" in refused.stderr


def test_bench_league_shows_the_bound_the_lone_workers_cores_set():
    # A lone worker that keeps 1.2 cores busy leaves room for n / 1.2 times its rate at its
    # CPU per match; 2 workers that spend 10% more CPU a match are shown doing so.
    runs = [[Figure(1, False, 240, 20.0, 1.0, 0, 24.0)], [Figure(1, True, 240, 24.0, 1.0, 0, 24.0)],
            [Figure(2, True, 240, 12.0, 1.0, 0, 26.4)]]
    text = render((runs, "x"))
    cores = os.cpu_count()
    assert f"the lone worker kept 1.20 of the {cores} cores busy" in text
    assert f"more workers can make at most {cores / 1.2:.2f}x" in text
    assert "with 2, each match cost +10% CPU" in text
    two = [line.split() for line in text.splitlines() if line.split()[:2] == ["2", "yes"]]
    assert [float(x) for x in two[0][-2:]] == [2.2, 110.0]   # cores busy, CPU ms a match


# -- bad input: one line, non-zero exit, nothing overwritten ----------------------------------

def assert_refused(done: subprocess.CompletedProcess, message: str) -> None:
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], done.stderr


def test_an_unknown_bot_folder_is_refused(tmp_path, bots):
    done = arena("league", "run", "--game", "mandala", "--bot", bots[0], "--bot",
                 tmp_path / "nowhere", "--out", tmp_path / "x", check=False)
    assert_refused(done, "unknown bot")
    assert not (tmp_path / "x").exists()


def test_a_bot_that_does_not_play_the_game_is_refused(tmp_path, bots):
    other = copy_bot(bots[1], tmp_path / "solo", "solo")
    manifest = other / "bot.toml"
    manifest.write_text(manifest.read_text().replace(
        'games = ["mandala", "flowers-mandala", "flowers"]', 'games = ["flowers"]'))
    done = arena("league", "run", "--game", "mandala", "--bot", bots[0], "--bot", other,
                 "--out", tmp_path / "x", check=False)
    assert_refused(done, "does not play mandala")
    assert not (tmp_path / "x").exists()


def test_two_bots_with_one_name_are_refused(tmp_path, bots):
    twin = copy_bot(bots[1], tmp_path / "twin", "ann")
    done = arena("league", "run", "--game", "mandala", "--bot", bots[0], "--bot", twin,
                 "--out", tmp_path / "x", check=False)
    assert_refused(done, "are both named 'ann'")
    assert not (tmp_path / "x").exists()


def test_a_wrong_player_count_is_refused(tmp_path, bots):
    done = arena("league", "run", "--game", "mandala", "--players", 3, *bot_flags(bots),
                 "--out", tmp_path / "x", check=False)
    assert_refused(done, "mandala is for 2 players, not 3")
    done = arena("league", "run", "--game", "flowers-mandala", "--players", 4,
                 *bot_flags(bots), "--out", tmp_path / "x", check=False)
    assert_refused(done, "need at least 4 bots")
    assert not (tmp_path / "x").exists()


def test_an_output_folder_holding_another_league_is_refused_untouched(reference, bots):
    folder, _ = reference
    before = digest(folder / DB_NAME)
    done = arena("league", "run", "--game", "flowers", *bot_flags(bots), "--out", folder,
                 check=False)
    assert_refused(done, "already holds league 'reference' (24 of 24 matches done)")
    assert digest(folder / DB_NAME) == before


def test_a_database_that_is_not_ours_is_refused_untouched(tmp_path, bots):
    folder = tmp_path / "theirs"
    folder.mkdir()
    conn = sqlite3.connect(folder / DB_NAME)
    conn.execute("CREATE TABLE photos (path TEXT)")
    conn.commit()
    conn.close()
    before = digest(folder / DB_NAME)
    for command in (["league", "run", *LEAGUE, *bot_flags(bots), "--out", folder],
                    ["league", "resume", folder]):
        assert_refused(arena(*command, check=False), "is not an arena league database")
    assert digest(folder / DB_NAME) == before
    assert sorted(path.name for path in folder.iterdir()) == [DB_NAME]


def test_a_league_stores_its_rules_version_and_resumes_only_under_it(tmp_path):
    folder = tmp_path / "versioned"
    arena("league", "run", "--game", "mandala", "--bot", "random", "--bot", "greedy",
          "--deals", 1, "--seed", 1, "--out", folder, "--quiet")
    with Store.open(folder) as store:
        assert store.config()["rules"] == "mandala/1"
    db = sqlite3.connect(folder / DB_NAME)
    config = json.loads(db.execute("SELECT config FROM league").fetchone()[0])
    db.execute("UPDATE league SET config = ?", (json.dumps({**config, "rules": "mandala/0"}),))
    db.commit()
    db.close()
    before = digest(folder / DB_NAME)
    assert_refused(arena("league", "resume", folder, check=False),
                   "played under rules mandala/0, this Arena plays mandala/1")
    assert digest(folder / DB_NAME) == before


@pytest.mark.slow
def test_resume_refuses_a_folder_without_a_league_and_a_changed_bot(tmp_path, bots):
    assert_refused(arena("league", "resume", tmp_path, check=False), "holds no league")
    bot = copy_bot(bots[0], tmp_path / "dan", "dan")
    folder = tmp_path / "changing"
    arena("league", "run", "--game", "mandala", "--deals", 1, "--seed", 1, "--bot", bot,
          "--bot", bots[1], "--out", folder, "--quiet")
    (bot / "bot.py").write_text((bot / "bot.py").read_text() + "\n# changed\n")
    before = digest(folder / DB_NAME)
    assert_refused(arena("league", "resume", folder, check=False),
                   "changed since the league started")
    assert digest(folder / DB_NAME) == before


@pytest.mark.slow
def test_a_league_started_from_a_folder_holding_a_folder_named_arena_plays_normally(
        tmp_path, bots):
    """As from the folder that holds a clone of this repository: the workers and the sandbox
    use the arena the command imported, never the `arena` folder of the current directory."""
    decoy = tmp_path / "here"
    (decoy / "arena").mkdir(parents=True)
    (decoy / "arena" / "__init__.py").write_text(
        'raise ImportError("the decoy arena of the current folder was imported")\n')
    (decoy / "engine").mkdir()
    (decoy / "engine" / "__init__.py").write_text('raise ImportError("decoy engine")\n')
    # The installed `arena` script does not put the current folder on sys.path: -P neither.
    command = [sys.executable, "-P", "-c", "from arena.cli import main; main()"]
    done = subprocess.run(
        [*command, "league", "run", "--game", "mandala", "--deals", "2", "--seed", "3",
         "--move-time", "2", *bot_flags(bots[:2]), "--workers", "2",
         "--out", tmp_path / "league"], capture_output=True, text=True, timeout=300,
        cwd=decoy, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    assert "decoy" not in done.stderr
    with Store.open(tmp_path / "league") as store:
        records = store.records()
    assert len(records) == 4
    assert all(record["result"]["end"] == "normal" for record in records)


@pytest.mark.slow
def test_a_league_stores_what_the_sandbox_enforced_and_the_ladder_names_what_was_missing(
        reference, tmp_path, bots):
    folder, _ = reference
    with Store.open(folder) as store:
        rows = store.conn.execute("SELECT name, status FROM protections").fetchall()
    assert {name for name, _ in rows} >= {"namespaces", "seccomp", "cgroup memory",
                                           "user namespaces blocked", "open-files limit"}
    unsafe = tmp_path / "unsafe"
    ran = arena("league", "run", "--game", "mandala", "--deals", "1", "--seed", "3",
                "--move-time", "2", *bot_flags(bots[:2]), "--unsafe-no-sandbox", "--out", unsafe)
    assert "ran without these sandbox protections: sandbox" in ran.stdout
    ladder = arena("ladder", unsafe).stdout
    assert "ran without these sandbox protections: sandbox (bots ran unsandboxed" in ladder
    missing_here = [name for name, status in rows if status == "missing"]
    reference_ladder = arena("ladder", folder).stdout
    assert ("ran without these sandbox protections" in reference_ladder) == bool(missing_here)
