"""`arena bench serve`: how fast the ladder service settles a new bot, and whether its memory
stays flat as matches accumulate.

Both parts run the service's own match path (a real service database in a temporary folder,
`player.store_finished` for each match, `standings.refit` after each batch, the scheduler
picking the tables), with the bots' games simulated in-process: each game is won by a bot
with the Elo expectation of known true ratings (no bot processes, so thousands of matches
take seconds and the figures measure the scheduling and the bookkeeping, not the bots).

1. Settling: 8 admitted bots of known order (true Elo -350 to +350, 100 apart) play until
   every interval is narrow; then a new version (true Elo +50) is admitted, and we count the
   ladder's matches until its interval is +/- 50 Elo: with the adaptive scheduler, and with
   plain round robin over every pair (each a table of two seatings, as the service plays).
2. Memory: the service's resident memory (this process: database handle, refits, scheduler)
   after 2,000 and 20,000 matches among 8 bots.
3. Its life (`--batches`, real bots): the service's match thread (`MatchPlayer`) with its
   kept local workers plays many short batches (one table per worker each: a batch starts
   and ends as often as it can) of real sandboxed sample bots (`random`, `first`, `greedy`
   on one ladder), an hour of the service's batches at one every `HOUR_BATCH_SECONDS`. At
   checkpoints: its live bot processes (bots and their processes, counted in their cgroups)
   and memory (this process, and its workers), which must stay flat, and the share of
   matches voided for the host's load (replayed; records carry `voided`) and of batches a
   host fault paused.
"""
from __future__ import annotations

import gc
import itertools
import os
import random
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Callable, Iterator, Sequence

from tabulate import tabulate

from arena.bots import BotSpec
from arena.keys import LeagueKey
from arena.sandbox import cgroups, proctree
from arena.serve import scheduler
from arena.serve.db import ServiceDB, Version
from arena.serve.player import MatchPlayer, store_finished, table_specs
from arena.serve.standings import Standings, refit
from arena.league.store import FinishedMatch
from engine import registry

TRUE_ELO = tuple(range(-350, 351, 100))
NEW_BOT_ELO = 50
BATCH_TABLES = 4
"""Tables per batch between refits (the service: 2 per worker)."""
LIFE_BOTS = ("random", "first", "greedy")
HOUR_BATCH_SECONDS = 15.0
"""How often the service starts a batch (a few tables per worker at a second a move): an
hour is 240 batches."""


def add_admitted(db: ServiceDB, ladder: str, author: str, name: str, version: str,
                 folder: str = "") -> Version:
    """A version admitted on `ladder` without a submission or a check (the bench's bots,
    known to play), with an author and a bot of its own."""
    with db.transaction() as conn:
        author_id = conn.execute("INSERT INTO authors (name, token_hash, created) VALUES "
                                 "(?, ?, 0)", (author, f"hash-{author}")).lastrowid
        bot = conn.execute("INSERT INTO bots (author_id, name) VALUES (?, ?)",
                           (author_id, name)).lastrowid
        version_id = conn.execute(
            "INSERT INTO versions (bot_id, ladder, version, folder, status, submitted) "
            "VALUES (?, ?, ?, ?, 'admitted', 0)", (bot, ladder, version, folder)).lastrowid
    return db.version(version_id)


class SimulatedLadder:
    """A service database with authors, bots and admitted versions of known strength."""

    def __init__(self, folder: Path, seed: int):
        self.db = ServiceDB.open(folder)
        self.ladder = self.db.ensure_ladder("mandala", 2, registry.get("mandala").rules(),
                                           {"move_time": 1.0})
        self.key = LeagueKey.new()
        self.rng = random.Random(seed)
        # True strength per version: the bench's versions are added in TRUE_ELO order.
        self.strength = {version.id: TRUE_ELO[index] for index, version
                         in enumerate(self.db.admitted(self.ladder.id))}

    @classmethod
    def new(cls, folder: Path, seed: int) -> "SimulatedLadder":
        """A fresh ladder of the bench's 8 bots."""
        ladder = cls(folder, seed)
        for elo in TRUE_ELO:
            ladder.add_version(elo)
        return ladder

    def add_version(self, elo: float) -> Version:
        index = len(self.strength)
        version = add_admitted(self.db, self.ladder.id, f"a{index}", f"b{index}",
                               f"{index:012x}")
        self.strength[version.id] = elo
        return version

    def play(self, tables: Sequence[Sequence[int]]) -> int:
        """Plays each table's deal in both seatings with simulated games; returns matches."""
        first = self.db.take_tables(self.ladder.id, len(tables))
        played = 0
        for table_no, table in enumerate(tables, start=first):
            seated = [self.db.version(version_id) for version_id in table]
            names = {f"v{version.id}": version for version in seated}
            for spec in table_specs(self.ladder, self.key, table_no, seated):
                a, b = (names[name] for name in spec.seats)
                expected = 1 / (1 + 10 ** ((self.strength[b.id] - self.strength[a.id]) / 400))
                won = self.rng.random() < expected
                record = {"result": {"scores": [1, 0] if won else [0, 1],
                                     "ranks": [1, 2] if won else [2, 1], "end": "normal"},
                          "moves": []}
                store_finished(self.db, self.ladder, FinishedMatch(spec, record, 0.0, 0.0, 0),
                               names)
                played += 1
        return played


def adaptive_tables(ladder: SimulatedLadder, standings: Standings) -> list[tuple[int, ...]]:
    rated = [scheduler.Rated(standings.versions[row.bot].id, row.elo, row.interval, row.games)
             for row in standings.table.rows]
    by_id = {version.id: version for version in standings.versions.values()}
    return scheduler.pick_tables(
        rated, 2, BATCH_TABLES, ladder.rng,
        lambda better, worse: standings.los(by_id[better.key], by_id[worse.key]))


def round_robin_tables(ladder: SimulatedLadder) -> Callable[[Standings], list[tuple[int, ...]]]:
    pairs = itertools.cycle(list(itertools.combinations(sorted(ladder.strength), 2)))
    return lambda standings: [next(pairs) for _ in range(BATCH_TABLES)]


def _rated(standings: Standings, version_id: int) -> scheduler.Rated:
    row = next(row for row in standings.table.rows
               if standings.versions[row.bot].id == version_id)
    return scheduler.Rated(version_id, row.elo, row.interval, row.games)


def matches_to_settle(folder: Path, settled: Path, seed: int, adaptive: bool,
                      limit: int = 20_000) -> int:
    """Matches the ladder plays from the new version's admission until it is narrow."""
    shutil.copytree(settled, folder)
    ladder = SimulatedLadder(folder, seed)
    new = ladder.add_version(NEW_BOT_ELO)
    pick = (lambda standings: adaptive_tables(ladder, standings)) if adaptive \
        else round_robin_tables(ladder)
    played = 0
    standings = refit(ladder.db, ladder.ladder.id)
    while not scheduler.is_narrow(_rated(standings, new.id)):
        if played >= limit:
            break
        played += ladder.play(pick(standings))
        standings = refit(ladder.db, ladder.ladder.id)
    return played


def settle_field(folder: Path, seed: int) -> Path:
    """A ladder of the 8 known bots, played (adaptively) until all are narrow."""
    ladder = SimulatedLadder.new(folder, seed)
    standings = refit(ladder.db, ladder.ladder.id)
    while not all(scheduler.is_narrow(scheduler.Rated(0, row.elo, row.interval, row.games))
                  for row in standings.table.rows):
        ladder.play(adaptive_tables(ladder, standings))
        standings = refit(ladder.db, ladder.ladder.id)
    ladder.db.connection().close()
    return folder


def resident_kib() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def memory_after(folder: Path, checkpoints: Sequence[int], seed: int) -> Iterator[tuple]:
    """(matches, resident KiB, seconds of the last refit) at each checkpoint."""
    ladder = SimulatedLadder.new(folder, seed)
    played = 0
    standings = refit(ladder.db, ladder.ladder.id)
    for checkpoint in checkpoints:
        while played < checkpoint:
            played += ladder.play(adaptive_tables(ladder, standings))
            standings = refit(ladder.db, ladder.ladder.id)
        gc.collect()
        started = time.perf_counter()
        refit(ladder.db, ladder.ladder.id)
        yield played, resident_kib(), time.perf_counter() - started


def descendants(roots: set[int]) -> set[int]:
    """The processes under `roots` (their workers and theirs), not the roots themselves."""
    children: dict[int, list[int]] = {}
    for pid, ppid, _, _ in proctree.processes():
        children.setdefault(ppid, []).append(pid)
    found, stack = set(), [child for root in roots for child in children.get(root, [])]
    while stack:
        pid = stack.pop()
        found.add(pid)
        stack += children.get(pid, [])
    return found


def _resident_kib_of(pid: int) -> int:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0
    return next((int(line.split()[1]) for line in status.splitlines()
                 if line.startswith("VmRSS:")), 0)


def service_life(folder: Path, batches: int, checkpoints: Sequence[int], seed: int,
                 workers: int = 1, progress: Callable[[str], None] = lambda line: None
                 ) -> Iterator[tuple]:
    """(batches, matches, bots, bot processes, service KiB, workers' KiB, voided matches,
    paused batches) at each checkpoint of `batches` short batches of real bots."""
    from arena.league.workers import ProcessPool   # the bench's other parts need no workers
    from sample_bots import sample_bot
    db = ServiceDB.open(folder / "data")
    ladder = db.ensure_ladder("mandala", 2, registry.get("mandala").rules(),
                              {"move_time": 1.0})
    for name in LIFE_BOTS:
        source = sample_bot(name)
        add_admitted(db, ladder.id, f"author-{name}", name, BotSpec.load(source).version,
                     str(source))
    pool = ProcessPool(workers, keep=True)
    player = MatchPlayer(db, [ladder], pool, LeagueKey.new(), workers, folder / "logs",
                         seed=seed, tables=workers)
    played = paused = 0
    try:
        while played < batches:
            if player.turn(ladder):
                played += 1
            else:   # a host fault paused the ladder: its matches are played after the pause
                paused += 1
                time.sleep(1.0)
                continue
            if played in checkpoints:
                gc.collect()
                bots, processes = cgroups.bots_of(descendants({os.getpid()}))
                voided = db.one("SELECT COUNT(*) FROM matches WHERE record LIKE ?",
                                ('%"voided":%',))[0]
                yield (played, db.match_count(ladder.id), bots, processes, resident_kib(),
                       sum(map(_resident_kib_of, pool.pids())), voided, paused)
                progress(f"service life: {played} of {batches} batches ...")
    finally:
        pool.close()


def life_table(rows: Sequence[tuple]) -> str:
    return tabulate(
        [[batches, f"{batches * HOUR_BATCH_SECONDS / 60:.0f}", matches, bots, processes,
          f"{service / 1024:.1f}", f"{workers / 1024:.1f}",
          f"{voided} ({voided / max(1, matches):.1%})", paused]
         for batches, matches, bots, processes, service, workers, voided, paused in rows],
        headers=["batches", "service minutes", "matches", "live bots", "bot processes",
                 "service MiB", "workers MiB", "voided (host load)", "paused batches"],
        tablefmt="simple")


def run(repeats: int = 3, checkpoints: Sequence[int] = (2_000, 20_000), seed: int = 1,
        progress: Callable[[str], None] = lambda line: None, batches: int = 0,
        workers: int = 1) -> str:
    """The bench's tables; `batches` > 0 adds the service's life on real bots."""
    with tempfile.TemporaryDirectory(prefix="arena-bench-serve-") as scratch:
        root = Path(scratch)
        progress("settling the 8 known bots ...")
        settled = settle_field(root / "settled", seed)
        counts: dict[str, list[int]] = {"adaptive": [], "round robin": []}
        for repeat in range(repeats):
            for name in counts:
                progress(f"new bot, {name}, run {repeat + 1} of {repeats} ...")
                counts[name].append(matches_to_settle(root / f"{name}-{repeat}", settled,
                                                      seed + 100 + repeat,
                                                      adaptive=name == "adaptive"))
        adaptive, plain = (statistics.mean(counts[name]) for name in counts)
        settle = tabulate(
            [[name, " ".join(map(str, runs)), f"{statistics.mean(runs):.0f}"]
             for name, runs in counts.items()]
            + [["adaptive / round robin", "", f"{adaptive / plain:.2f} (target <= 0.5)"]],
            headers=["scheduling", "matches per run", "mean"], tablefmt="simple")
        progress("memory: playing simulated matches ...")
        rows = list(memory_after(root / "memory", checkpoints, seed))
        first_matches, first_kib = rows[0][0], rows[0][1]
        memory = tabulate(
            [[matches, f"{kib / 1024:.1f}",
              "" if matches == first_matches else
              f"{(kib - first_kib) / (matches - first_matches):.3f}", f"{seconds * 1000:.0f}"]
             for matches, kib, seconds in rows],
            headers=["matches stored", "resident MiB", "KiB per match since first",
                     "refit ms"], tablefmt="simple")
        life = ""
        if batches:
            marks = sorted({max(1, batches // 8), batches // 4, batches // 2, batches} - {0})
            rows = list(service_life(root / "life", batches, marks, seed, workers, progress))
            life = (f"\n\nThe service's life: {batches} short batches (of the service: "
                    f"{batches * HOUR_BATCH_SECONDS / 3600:.2g} h at one every "
                    f"{HOUR_BATCH_SECONDS:.0f} s) of real sandboxed bots "
                    f"({', '.join(LIFE_BOTS)}) on {workers} kept worker(s)\n"
                    f"{life_table(rows)}")
    return (f"New bot (true Elo +{NEW_BOT_ELO}) among 8 settled bots (true Elo "
            f"{TRUE_ELO[0]}..+{TRUE_ELO[-1]}): ladder matches until its interval is "
            f"+/- {scheduler.NARROW:.0f} Elo\n{settle}\n\n"
            f"Service memory as matches accumulate (8 bots; store, refit, schedule)\n{memory}"
            f"{life}")
