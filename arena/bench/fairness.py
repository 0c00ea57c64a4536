"""`arena bench fairness`: what CPU fairness holds, and what it costs.

- **CPU theft.** A fixed-work bot (the same hashing before every move) plays mandala against a
  quiet bot (random moves at once) and against a CPU thief (random moves at once, but 30
  children, each in a session of its own, spinning forever). Bots are frozen between their
  turns, so the thief's children get no CPU while the fixed-work bot thinks: its median move
  time should stay within `TARGET_RATIO` of its time against the quiet bot, and the thief's
  processes should use next to no CPU during its moves (read from the thief's cgroup: until
  the arena catches it computing while held, at its third gap, its spinners take a few ms of
  the next turn; once caught, it is frozen and waited for before the next turn). The
  ratio is paired: in each round a match against the thief follows one against the quiet
  bot, and the median of the rounds' ratios is the figure, so a change in the machine's
  speed (from one second to the next on a shared host) weighs on both sides of a ratio,
  not on one side of a pooled median. Bots
  have their default limits (one core each): the thief's children spin at full speed during
  its own turns, which on a loaded machine costs every bot under the arena's cgroup some
  priority against the host's other processes; the quota bounds that.
- **Throughput.** The same schedule of matches (three quiet bots, deals of their own per
  table) played by one in-process worker, the default way (a pooled process per bot and
  seat, frozen between turns) and the way before fair play (one pooled process per bot,
  never frozen): matches per second of each, alternated, best of each compared.

The bots are written here (`write_bots`), so the benchmark needs nothing but the arena; the
tests play the same bots.
"""
from __future__ import annotations

import os
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from tabulate import tabulate

from arena.clock import TimeControl
from arena.keys import LeagueKey
from arena.match import Seat, play_match
from arena.league.config import lanes
from arena.league.schedule import expand

TARGET_RATIO = 1.2        # fixed-work median move time, against the thief / against quiet
TARGET_THROUGHPUT = 0.8   # matches/s, fair-play default / before fair play

_MANIFEST = """name = "{name}"
command = ["python3", "bot.py"]
games = ["mandala", "flowers-mandala", "flowers"]
"""
_RANDOM_MOVES = """
import random
from arena.sdk import Bot


class Quiet(Bot):
    def new_match(self, match):
        self.rng = random.Random(match.rng_seed)

    def act(self, observation, legal_moves):
        return self.rng.choice(legal_moves)
"""
BOTS = {
    "quiet": _RANDOM_MOVES + "\nQuiet().run()\n",
    "fixed_work": _RANDOM_MOVES + '''

class FixedWork(Quiet):
    """The same CPU work before every move: its move times measure the CPU it gets."""

    def act(self, observation, legal_moves):
        import hashlib
        digest = b"arena"
        for _ in range(40_000):
            digest = hashlib.sha256(digest).digest()
        return super().act(observation, legal_moves)


FixedWork().run()
''',
    "cpu_thief": _RANDOM_MOVES + '''
import subprocess
import sys

SPIN = "import os; os.nice(19); exec('while True: pass')"


class CpuThief(Quiet):
    """At its first match, 30 children, each in a session of its own (setsid), spin forever
    (started as fresh interpreters: a fork of a gRPC process would drag its threads along).
    At the lowest priority: they take all the CPU the thief may use while it waits for its
    next turn (the opponent's move), but yield to its own moves, which stay fast."""

    spinners: list = []

    def new_match(self, match):
        super().new_match(match)
        while len(self.spinners) < 30:
            self.spinners.append(subprocess.Popen([sys.executable, "-c", SPIN],
                                                  start_new_session=True))
        print(f"cpu_thief: {len(self.spinners)} spinners", file=sys.stderr, flush=True)


CpuThief().run()
''',
}


def write_bots(folder: Path, names: tuple[str, ...] = tuple(BOTS)) -> dict[str, Path]:
    """Writes bot folders (each `name` of BOTS, or `name:kind` for a copy under another
    name) into `folder`; returns name -> folder."""
    made = {}
    for entry in names:
        name, _, kind = entry.partition(":")
        bot = folder / name
        bot.mkdir(parents=True, exist_ok=True)
        (bot / "bot.toml").write_text(_MANIFEST.format(name=name))
        (bot / "bot.py").write_text(BOTS[kind or name])
        made[name] = bot
    return made


class Watched:
    """Plays a victim's seat and, around each of its acts, reads the CPU time the opponent's
    processes used meanwhile (what a thief stole while the victim thought)."""

    def __init__(self, victim: Seat, opponent: Seat):
        self.victim, self.opponent = victim, opponent
        self.walls: list[float] = []
        self.stolen: list[float] = []

    def __getattr__(self, name):   # the seat's other methods and attributes, as they are
        return getattr(self.victim, name)

    def act(self, *args, **kwargs) -> str:
        before, started = self.opponent.cpu_seconds(), time.monotonic()
        move = self.victim.act(*args, **kwargs)
        self.walls.append(time.monotonic() - started)
        after = self.opponent.cpu_seconds()
        if None not in (before, after):
            self.stolen.append(after - before)
        return move


def victim_moves(victim: Seat, opponent: Seat, matches: int, seed: int = 0,
                 game: str = "mandala") -> Watched:
    """`matches` matches of `game` of the victim against `opponent`, seats alternating;
    raises if the victim ever forfeits."""
    watched = Watched(victim, opponent)
    key = LeagueKey(seed.to_bytes(32, "big"))
    for index in range(matches):
        seeds = key.match_seeds(f"victim:{index}", 2)
        seats = [watched, opponent] if index % 2 == 0 else [opponent, watched]
        record = play_match(game, 2, {}, seeds.deal, seats, TimeControl(move_time=5.0),
                            bot_seeds=seeds.bots)
        forfeit = record["result"].get("forfeit")
        if forfeit is not None and seats[forfeit["seat"]] is watched:
            raise RuntimeError(f"the fixed-work bot forfeited: {forfeit}")
    return watched


@dataclass(frozen=True)
class Theft:
    quiet_ms: float
    """The fixed-work bot's median move time against the quiet bot."""
    thief_ms: float
    """... and against the thief."""
    stolen_ms: float
    """The most CPU the thief's processes used during one of the fixed-work bot's moves."""
    round_ratios: tuple[float, ...]
    """Each round's median move time against the thief over that against the quiet bot."""

    @property
    def ratio(self) -> float:
        """The median of the rounds' ratios: the figure the target is set on."""
        return statistics.median(self.round_ratios)


def cpu_theft(folder: Path, matches: int = 4, *, freeze: bool = True) -> Theft:
    """The fixed-work bot against the quiet bot and against the thief, alternated (so a
    change in the machine's load hits both), `matches` matches each."""
    from arena.bots import BotHost, BotSpec
    bots = {name: BotSpec.load(path) for name, path in write_bots(folder).items()}
    quiet: list[float] = []
    thief: list[float] = []
    stolen: list[float] = []
    ratios: list[float] = []
    with BotHost(log_dir=folder / "logs", freeze_between_turns=freeze) as host:
        with host.seat(bots["fixed_work"]) as victim, host.seat(bots["quiet"]) as calm, \
                host.seat(bots["cpu_thief"]) as greedy:
            for round_ in range(matches):
                against_quiet = victim_moves(victim, calm, 1, round_).walls
                against_thief = victim_moves(victim, greedy, 1, round_)
                quiet += against_quiet
                thief += against_thief.walls
                stolen += against_thief.stolen
                ratios.append(statistics.median(against_thief.walls)
                              / statistics.median(against_quiet))
    return Theft(1000 * statistics.median(quiet), 1000 * statistics.median(thief),
                 1000 * max(stolen), tuple(ratios))


def throughput(folder: Path, deals: int, *, fair: bool) -> float:
    """Matches per second of one in-process worker playing a 3-bot mandala schedule of the
    default seating (a deal per match): the fair-play default (a process per bot, as a
    league worker keeps, frozen between turns) or the way before (never frozen)."""
    from arena.bots import BotHost, BotSpec
    bots = {name: BotSpec.load(path) for name, path in
            write_bots(folder, ("ann:quiet", "ben:quiet", "cat:quiet")).items()}
    specs = expand(sorted(bots), 2, deals, 1, LeagueKey(bytes(32)))
    with BotHost(log_dir=folder / "logs", freeze_between_turns=fair) as host:
        started = time.perf_counter()
        for spec in specs:
            seats = [host.seat(bots[name], lane=lane)
                     for name, lane in zip(spec.seats, lanes(spec.seats, by_seat=False))]
            play_match("mandala", 2, {}, spec.seed, seats, TimeControl(move_time=5.0),
                       bot_seeds=spec.bot_seeds)
            for seat in seats:
                seat.close()
        return len(specs) / (time.perf_counter() - started)


def run(matches: int = 8, deals: int = 20, repeats: int = 2) -> list[str]:
    """Both measures; the report lines."""
    with tempfile.TemporaryDirectory(prefix="arena-bench-fairness-") as temporary:
        folder = Path(temporary)
        theft = cpu_theft(folder / "theft", matches)
        rates: dict[bool, list[float]] = {True: [], False: []}
        for repeat in range(repeats):
            for fair in (False, True):
                rates[fair].append(throughput(folder / f"league-{repeat}-{fair}", deals,
                                              fair=fair))
    best_fair, best_before = max(rates[True]), max(rates[False])
    rows = [
        ("fixed-work median move, against a quiet bot", f"{theft.quiet_ms:.1f} ms", ""),
        ("fixed-work median move, against the CPU thief", f"{theft.thief_ms:.1f} ms",
         f"{theft.ratio:.2f}x (target <= {TARGET_RATIO}x: "
         f"{'met' if theft.ratio <= TARGET_RATIO else 'NOT met'})"),
        ("CPU the thief used during one fixed-work move, at most", f"{theft.stolen_ms:.2f} ms",
         ""),
        ("league, before fair play (not frozen)",
         f"{best_before:.1f} matches/s", ""),
        ("league, fair play (frozen between turns)", f"{best_fair:.1f} matches/s",
         f"{best_fair / best_before:.2f}x (target >= {TARGET_THROUGHPUT}x: "
         f"{'met' if best_fair / best_before >= TARGET_THROUGHPUT else 'NOT met'})"),
    ]
    load = os.getloadavg()[0]
    spread = ", ".join(f"{ratio:.2f}" for ratio in theft.round_ratios)
    return [tabulate(rows, headers=("measure", "figure", "ratio"), disable_numparse=True),
            f"against the thief: the median of {matches} rounds' ratios ({spread}), each "
            "round a match against the thief right after one against the quiet bot",
            f"load average at the end: {load:.2f} on {os.cpu_count()} cores; "
            f"{matches} matches per opponent, {deals} deals x 3 tables x 2 seatings per "
            f"league run, best of {repeats}"]
