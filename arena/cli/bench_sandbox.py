"""`arena bench startup` and `arena bench freeze`: what the sandbox costs a league."""
from __future__ import annotations

import os
import statistics
from pathlib import Path

import click
from tabulate import tabulate

from arena.bench import sandbox as sandbox_bench
from arena.cli.root import bench


@bench.command("startup")
@click.option("--starts", type=click.IntRange(min=3), default=20, show_default=True,
              help="Fresh starts timed (after one untimed warm-up start).")
@click.option("--against", "checkout", type=click.Path(exists=True, file_okay=False,
                                                        path_type=Path),
              help="Another checkout of the arena (a folder holding its `arena` package) "
                   "to time in the same run, e.g. the main branch.")
def bench_startup(starts: int, checkout: Path | None):
    """Seconds from a fresh bot process to its handshake and open stream (the random sample
    bot, sandboxed)."""
    rows = [("this arena", sandbox_bench.startup_seconds(starts))]
    if checkout is not None:
        rows.append((str(checkout), sandbox_bench.startup_elsewhere(checkout, starts)))
    table = [(name, len(times), f"{1000 * statistics.median(times):.1f}",
              f"{1000 * max(times):.1f}") for name, times in rows]
    click.echo(tabulate(table, headers=("arena", "starts", "median ms", "max ms"),
                        colalign=("left", "right", "right", "right"), disable_numparse=True))
    if checkout is not None:
        ratio = statistics.median(rows[0][1]) / statistics.median(rows[1][1])
        met = "met" if ratio <= sandbox_bench.TARGET_STARTUP_RATIO else "NOT met"
        click.echo(f"this arena / {checkout} = {ratio:.2f}x "
                   f"(target <= {sandbox_bench.TARGET_STARTUP_RATIO:g}x: {met})")


@bench.command("freeze")
@click.option("--matches", type=click.IntRange(min=1), default=20, show_default=True,
              help="Mandala matches of the random sample bot whose moves are timed.")
@click.option("--pairs", type=click.IntRange(min=10), default=500, show_default=True,
              help="freeze() + thaw() pairs timed on the busy bot.")
def bench_freeze(matches: int, pairs: int):
    """Cost of stopping a bot between its moves (the random sample bot, sandboxed, in real
    matches): thaw + hold (the arena's way) and thaw + freeze (the freezer's, for comparison),
    each with the CPU a move costs the arena and the bot; of freezing and thawing a busy bot
    (every process of it), and of reading its CPU time."""
    ways = sandbox_bench.per_move_us(matches)
    rows = [(f"thaw + {way.how} per move, random sample bot", way.moves,
             f"{way.median_us:,.1f}", f"{way.p99_us:,.1f}", f"{way.arena_cpu_us:,.0f}",
             f"{way.bot_cpu_us:,.0f}") for way in ways]
    rows += [(f"{name}, busy bot", pairs, f"{median:,.1f}", f"{p99:,.1f}", "", "")
             for name, (median, p99) in sandbox_bench.freeze_thaw_us(pairs).items()]
    click.echo(tabulate(rows, headers=("call", "times", "median µs", "p99 µs",
                                       "CPU µs a move, arena", "CPU µs a move, bot"),
                        colalign=("left", "right", "right", "right", "right", "right"),
                        disable_numparse=True))
    target, median = sandbox_bench.TARGET_MOVE_US, ways[0].median_us
    click.echo(f"thaw + hold per move: median {median:.1f} µs (target <= {target:g} µs: "
               f"{'met' if median <= target else 'NOT met'}); load average "
               f"{os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
