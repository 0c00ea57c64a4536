"""`arena bench protocol`: one decision in-process, through the arena over gRPC, over a pipe,
and over a bare gRPC stream (the floors), with the CPU each side spends on it."""
from __future__ import annotations

import json

import click
from tabulate import tabulate

from arena.bench import grpc_floor
from arena.bench import protocol as protocol_bench
from arena.bench import threadcpu
from arena.cli.options import sandbox_option
from arena.cli.root import bench


@bench.command("protocol")
@click.option("--game", "game_id", default="mandala", show_default=True,
              help="Game whose decisions are sent.")
@click.option("--decisions", type=click.IntRange(min=100), default=2000, show_default=True,
              help="Decisions timed on each path.")
@sandbox_option("the bot", "to see what the sandbox costs")
@click.option("--json", "as_json", is_flag=True, help="Print the figures as one JSON object.")
def bench_protocol(game_id: str, decisions: int, unsafe_no_sandbox: bool, as_json: bool):
    """Median and p99 cost of one decision: in-process, arena (gRPC to a sandboxed bot), a
    raw pipe round trip, and a bare gRPC stream between two processes three ways (sync, aio,
    aio without the event engine: the floors), the same with a decision's work (the bound);
    CPU per decision on the arena's side and the bot's. The target: the arena's median at
    most 1.5x the fastest floor's."""
    results = protocol_bench.run(game_id, decisions, unsafe=unsafe_no_sandbox)
    figures = results.figures
    by_path = {figure.path.split(" ")[0]: figure for figure in figures}
    arena = by_path["arena"]
    fastest = min((f for f in figures if f.path.endswith("(floor)")),
                  key=lambda f: f.median_us)
    ratio = arena.median_us / fastest.median_us
    # The floor's design with a decision's work: how near any way of serving could come.
    bound = next(f for f in figures if f.path.endswith("(bound)"))
    bound_ratio = bound.median_us / fastest.median_us
    ratio_pipe = arena.median_us / by_path["pipe-json"].median_us
    met = ratio <= protocol_bench.TARGET_RATIO
    if as_json:
        click.echo(json.dumps({
            "benchmark": "protocol", "game": game_id,
            "results": [figure.to_json() for figure in figures],
            "arena_cpu_by_thread_us": {role: round(micros, 1)
                                       for role, micros in results.cpu_by_thread_us.items()},
            "fastest_floor": fastest.path, "arena_over_floor": round(ratio, 2),
            "bound": bound.path, "bound_over_floor": round(bound_ratio, 2),
            "arena_over_pipe_json": round(ratio_pipe, 2), "cpus": results.placement,
            "target_ratio": protocol_bench.TARGET_RATIO, "meets_target": met}))
        return
    cpu = lambda value: "" if value is None else f"{value:,.1f}"   # noqa: E731
    rows = [(f.path, f.decisions, f"{f.median_us:,.1f}", f"{f.p99_us:,.1f}",
             cpu(f.arena_cpu_us), cpu(f.bot_cpu_us)) for f in figures]
    click.echo(tabulate(rows, headers=("path", "decisions", "median µs", "p99 µs",
                                       "CPU µs arena side", "CPU µs bot side"),
                        colalign=("left",) + ("right",) * 5, disable_numparse=True))
    click.echo()
    by_thread = results.cpu_by_thread_us
    click.echo(tabulate([(role, f"{by_thread[role]:,.1f}") for role in threadcpu.ROLES
                         if role in by_thread],
                        headers=(f"{arena.path}: CPU by thread", "µs a decision"),
                        colalign=("left", "right"), disable_numparse=True))
    cpus = lambda numbers: ", ".join(map(str, numbers))   # noqa: E731
    click.echo(f"{arena.path}: the arena's threads on CPU {cpus(results.placement['arena'])}, "
               f"the bot's on CPU {cpus(results.placement['bot'])}")
    click.echo(f"arena median / fastest floor ({fastest.path}) = {ratio:.2f}x "
               f"(target <= {protocol_bench.TARGET_RATIO:g}x: {'met' if met else 'NOT met'}); "
               f"arena / pipe-json = {ratio_pipe:.2f}x")
    click.echo(f"with a decision's Python work ({sum(grpc_floor.WORK_US.values())} µs, spun on "
               f"both ends), the fastest floor's own design ({bound.path}) is "
               f"{bound_ratio:.2f}x that floor: the least any way of serving reaches with it")
