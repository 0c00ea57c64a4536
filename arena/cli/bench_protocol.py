"""`arena bench protocol`: one decision in-process, through the arena over gRPC, over a pipe."""
from __future__ import annotations

import json

import click
from tabulate import tabulate

from arena.bench import protocol as protocol_bench
from arena.cli import bench


@bench.command("protocol")
@click.option("--game", "game_id", default="mandala", show_default=True,
              help="Game whose decisions are sent.")
@click.option("--decisions", type=click.IntRange(min=100), default=2000, show_default=True,
              help="Decisions timed on each path.")
@click.option("--unsafe-no-sandbox", is_flag=True,
              help="Run the bot without bubblewrap (to see what the sandbox costs).")
@click.option("--json", "as_json", is_flag=True, help="Print the figures as one JSON object.")
def bench_protocol(game_id: str, decisions: int, unsafe_no_sandbox: bool, as_json: bool):
    """Median and p99 cost of one decision: in-process, arena (gRPC to a sandboxed bot),
    and a raw pipe round trip between two Python processes (the floor)."""
    figures = protocol_bench.run(game_id, decisions, unsafe=unsafe_no_sandbox)
    by_path = {figure.path.split(" ")[0]: figure for figure in figures}
    ratio = by_path["arena"].median_us / by_path["pipe-json"].median_us
    ratio_ping = by_path["arena"].median_us / by_path["pipe-ping"].median_us
    if as_json:
        click.echo(json.dumps({
            "benchmark": "protocol", "game": game_id,
            "results": [figure.to_json() for figure in figures],
            "arena_over_pipe_json": round(ratio, 2), "arena_over_pipe_ping": round(ratio_ping, 2),
            "target_ratio": protocol_bench.TARGET_RATIO,
            "meets_target": ratio <= protocol_bench.TARGET_RATIO}))
        return
    rows = [(f.path, f.decisions, f"{f.median_us:,.1f}", f"{f.p99_us:,.1f}") for f in figures]
    click.echo(tabulate(rows, headers=("path", "decisions", "median µs", "p99 µs"),
                        colalign=("left", "right", "right", "right"), disable_numparse=True))
    met = "met" if ratio <= protocol_bench.TARGET_RATIO else "NOT met"
    click.echo(f"arena median / pipe-json median = {ratio:.2f}x "
               f"(target <= {protocol_bench.TARGET_RATIO:g}x: {met}); "
               f"arena / pipe-ping = {ratio_ping:.2f}x")
