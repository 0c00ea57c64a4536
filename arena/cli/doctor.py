"""`arena doctor`: what the bot sandbox enforces on this machine, one line per protection."""
from __future__ import annotations

import json

import click
from tabulate import tabulate

from arena.cli.root import main


@main.command()
@click.option("--json", "as_json", is_flag=True, help="Print the table as one JSON object.")
def doctor(as_json: bool) -> None:
    """Checks each protection of the bot sandbox for real: namespaces, the arena's Python
    within bots' reach (not under /tmp), uid drop, each cgroup controller, seccomp, user
    namespaces blocked, the open-files limit. Exits 1 when one a league needs is missing
    (the table says why). Then names what dead arena processes left
    (every arena command ends such bots at its start) and the bot cgroups of running ones."""
    from arena.sandbox import doctor as checks
    rows = checks.protections()
    missing = checks.missing_needed(rows)
    leftovers = checks.leftovers()
    if as_json:
        click.echo(json.dumps({"protections": [
            {"name": row.name, "status": row.status, "needed": row.needed,
             "detail": row.detail} for row in rows], "ok": not missing,
            "leftovers": leftovers}))
    else:
        table = [(row.name, row.status, "yes" if row.needed else "no", row.detail)
                 for row in rows]
        click.echo(tabulate(table, headers=("protection", "status", "league needs", "detail"),
                            disable_numparse=True, maxcolwidths=[None, None, None, 80]))
        click.echo(f"leftover bots: {leftovers}")
        if missing:
            click.echo(f"missing for leagues: {', '.join(row.name for row in missing)}")
    if missing:
        raise SystemExit(1)
