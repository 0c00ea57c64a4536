"""A stored match, step by step: the positions of a record replayed through the engine, and
one self-contained HTML page that steps through them.

`steps(record)` yields the start and the position after every move (the engine's own render,
each seat's observation, who moved what, how long it took). `render_replay_html(record)` is
one page with everything inline (no files, no network): buttons and the arrow keys step
through the plies, showing the full table, each seat's own view, the clock and the result.

Every text comes from the record, which bots partly wrote (names, moves): the page carries it
as JSON inside a script element with `<`, `>` and `&` escaped, and the script only ever sets
`textContent`, so nothing in a record can become markup.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from html import escape
from typing import Any, Iterator, Mapping

from engine import records
from engine.core import CHANCE, State


@dataclass(frozen=True)
class Step:
    """The position after move `ply` (ply None: the start)."""

    ply: int | None
    seat: int | str | None     # who moved: a seat, "chance", or None at the start
    move: str | None
    seconds: float | None      # the mover's time (None: chance, the start, not recorded)
    cpu_seconds: float | None
    state: State


def steps(record: Mapping[str, Any]) -> Iterator[Step]:
    """The start, then the position after each move; RecordError/ReplayError (EngineError)
    for a record that cannot be read or replayed."""
    read = records.read(dict(record))
    times = list(record.get("times") or [])
    cpu_times = list(record.get("cpu_times") or [])
    state = read.start()
    yield Step(None, None, None, None, None, state.clone())
    for ply, (seat, move) in enumerate(read.moves):
        records.apply_entry(state, ply, seat, move)
        yield Step(ply, seat, move, _at(times, ply), _at(cpu_times, ply), state.clone())


def _at(values: list, index: int) -> float | None:
    value = values[index] if index < len(values) else None
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def seat_names(record: Mapping[str, Any]) -> list[str]:
    """"name (version8)" per seat when the record names versions, else the player names."""
    bots = record.get("bots") or []
    names = []
    for index, player in enumerate(record["players"]):
        bot = bots[index] if index < len(bots) and isinstance(bots[index], dict) else {}
        version = str(bot.get("version", ""))[:8]
        names.append(f"{player} ({version})" if version else str(player))
    return names


def describe_result(record: Mapping[str, Any]) -> str:
    result = record.get("result")
    if not result:
        return "no result stored"
    text = f"scores {result['scores']}, ranks {result['ranks']}, end {result['end']}"
    forfeit = result.get("forfeit")
    if forfeit:
        text += (f"; forfeit by seat {forfeit['seat']} ({forfeit['reason']})"
                 + (f": {forfeit['detail']}" if forfeit.get("detail") else ""))
    return text


def _view_text(observation: Mapping[str, Any]) -> str:
    """An observation as one `key: JSON value` line per field: short enough to read at a glance."""
    return "\n".join(f"{key}: {json.dumps(value)}" for key, value in observation.items())


def _page_data(record: Mapping[str, Any]) -> dict:
    names = seat_names(record)
    players = len(names)
    used = [0.0] * players   # seconds each seat has used so far
    moved = [0] * players
    control = record.get("time_control") or {}
    bank, increment = control.get("bank"), control.get("increment") or 0.0
    frames = []
    last = None
    for step in steps(record):
        if isinstance(step.seat, int) and step.seconds is not None:
            used[step.seat] += step.seconds
            moved[step.seat] += 1
        if step.ply is None:
            what = "start of the match"
        else:
            who = "chance" if step.seat == CHANCE else f"seat {step.seat} ({names[step.seat]})"
            took = "" if step.seconds is None else f" in {step.seconds * 1000:.1f} ms"
            cpu = "" if step.cpu_seconds is None else f" (CPU {step.cpu_seconds * 1000:.1f} ms)"
            what = f"ply {step.ply}: {who} played {step.move}{took}{cpu}"
        frames.append({
            "what": what,
            "table": step.state.render(),
            "views": [_view_text(step.state.observation(seat)) for seat in range(players)],
            "clock": [f"seat {seat}: {used[seat]:.3f} s used in {moved[seat]} moves"
                      + ("" if bank is None else
                         f", {bank + increment * moved[seat] - used[seat]:.3f} s left in its bank")
                      for seat in range(players)],
        })
        last = step.state
    final = last.render_result() if last is not None and last.is_over() else ""
    return {"frames": frames, "names": names, "result": describe_result(record),
            "final": final}


SCRIPT = """
const data = JSON.parse(document.getElementById("replay-data").textContent);
let at = 0;
function show(index) {
  at = Math.max(0, Math.min(data.frames.length - 1, index));
  const frame = data.frames[at];
  document.getElementById("counter").textContent =
    "step " + at + " of " + (data.frames.length - 1);
  document.getElementById("what").textContent = frame.what;
  document.getElementById("table").textContent = frame.table;
  document.getElementById("clock").textContent = frame.clock.join("\\n");
  frame.views.forEach((view, seat) => {
    document.getElementById("view-" + seat).textContent = view;
  });
  const over = at === data.frames.length - 1;
  document.getElementById("final").textContent = over ? data.final : "";
}
document.getElementById("first").onclick = () => show(0);
document.getElementById("prev").onclick = () => show(at - 1);
document.getElementById("next").onclick = () => show(at + 1);
document.getElementById("last").onclick = () => show(data.frames.length - 1);
document.addEventListener("keydown", (event) => {
  const moves = {ArrowLeft: at - 1, ArrowRight: at + 1, Home: 0,
                 End: data.frames.length - 1};
  if (event.key in moves) { show(moves[event.key]); event.preventDefault(); }
});
show(0);
"""

STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5em auto; max-width: 72em; color: #222; }
pre { background: #f6f6f6; padding: 0.6em; overflow-x: auto; font-size: 0.85em; }
pre:empty { display: none; }
.views { display: flex; flex-wrap: wrap; gap: 1em; }
.views section { flex: 1 1 20em; min-width: 0; }
nav button { font-size: 1em; margin-right: 0.3em; }
#what { font-weight: bold; }
"""


def _describe_control(control: Mapping[str, Any]) -> str:
    parts = []
    if control.get("move_time") is not None:
        parts.append(f"{control['move_time']:g} s per move")
    if control.get("bank") is not None:
        parts.append(f"bank {control['bank']:g} s + {control.get('increment') or 0:g} s per move")
    return ", ".join(parts) or "no time control recorded"


def _json_for_script(value: Any) -> str:
    """JSON that cannot end its <script> element or open a comment, whatever it holds."""
    return (json.dumps(value).replace("&", "\\u0026").replace("<", "\\u003c")
            .replace(">", "\\u003e"))


def render_replay_html(record: Mapping[str, Any]) -> str:
    """One self-contained page replaying `record` (an arena-record/1 dict)."""
    data = _page_data(record)
    title = (f"{record['game']}: " + " vs ".join(data["names"])
             + (f", seed {record['seed']}" if record.get("seed") is not None else ""))
    views = "\n".join(
        f'<section><h3>seat {seat}: {escape(name)}</h3><pre id="view-{seat}"></pre></section>'
        for seat, name in enumerate(data["names"]))
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{escape(title)}</title>
<style>{STYLE}</style></head>
<body>
<h1>{escape(title)}</h1>
<p>Result: <span id="result">{escape(data["result"])}</span></p>
<nav><button id="first">&laquo; first</button><button id="prev">&#x25C0; previous</button>
<button id="next">next &#x25B6;</button><button id="last">last &raquo;</button>
<span id="counter"></span> (arrow keys step, Home and End jump)</nav>
<p id="what"></p>
<h2>Table</h2>
<pre id="table"></pre>
<pre id="final"></pre>
<h2>Clock ({escape(_describe_control(record.get("time_control") or {}))})</h2>
<pre id="clock"></pre>
<h2>Each seat's own view</h2>
<div class="views">
{views}
</div>
<script type="application/json" id="replay-data">{_json_for_script(data)}</script>
<script>{SCRIPT}</script>
</body></html>
"""
