"""The bot authors' documentation in docs/ stays true: every observation field is named, the
example observations are what a real match gives, the rules pages' worked examples play on
the engine as written, and nothing links outside the repository.

`python3 tests/test_docs.py` rewrites the generated examples in docs/observations.md and
docs/notation.md (after a deliberate change to a game, its proto or the record format).
"""
from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))   # when run as a script to rewrite the examples

from arena import wire                          # noqa: E402
from arena.bots import host as bots             # noqa: E402
from arena.clock import MoveClock, TimeControl  # noqa: E402
from arena.match import StrategySeat, play_match  # noqa: E402
from arena.sdk.bot import observation_dict      # noqa: E402
from arena.v1 import arena_pb2                  # noqa: E402
from engine import records, registry            # noqa: E402
from engine.core import CHANCE, IllegalMoveError  # noqa: E402

DOCS = ROOT / "docs"
OBSERVATIONS = DOCS / "observations.md"


# -- example observations from real matches ---------------------------------------------------
EXAMPLES = {
    # game: (players, seed, which decision to show, its description)
    "mandala": (2, 1, lambda state, ply: state.observation(0)["phase"] == "take",
                "the first `take` decision"),
    "flowers-mandala": (3, 1, lambda state, ply: state.observation(0)["decision"] == "tile",
                        "the first `tile` decision"),
    "flowers": (2, 1, lambda state, ply: ply >= 12 and state.observation(0)["phase"] == "place",
                "the first `place` decision from ply 12 on"),
}
_REGION = re.compile(r"<!-- example observation: (?P<game>[a-z-]+) -->\n.*?<!-- end example -->\n",
                     re.S)


def example_act(game_id: str) -> tuple[int, int, arena_pb2.ActRequest]:
    """(ply, seat, the ActRequest a bot received) at the chosen decision of a real match
    between two `greedy` bots, rebuilt from the match's record."""
    players, seed, chosen, _ = EXAMPLES[game_id]
    record = records.read(play_match(game_id, players, {}, seed,
                                     [StrategySeat("greedy", game_id)] * players,
                                     TimeControl(move_time=1.0),
                                     bot_seeds=[seed + seat for seat in range(players)]))
    state = record.start()
    for ply, (seat, move) in enumerate(record.moves):
        if seat != CHANCE and chosen(state, ply):
            clock = MoveClock(remaining=None, move_limit=1.0, allowed=1.0, deadline=1.05)
            message = wire.act_message(1, "m1", ply, game_id, state.observation(seat),
                                       state.legal_moves(), clock)
            return ply, seat, message.act
        records.apply_entry(state, ply, seat, move)
    raise AssertionError(f"the {game_id} example match never reaches its chosen decision")


def _is_scalar_or_list_of_scalars(value) -> bool:
    return not isinstance(value, (dict, list)) or (
        isinstance(value, list) and not any(isinstance(item, (dict, list)) for item in value))


def _json(value, indent: int = 0) -> str:
    """JSON with one key per line and short flat values on one line: easy to read in a page."""
    pad = "  " * indent
    flat = json.dumps(value)
    if len(flat) <= 72 and (_is_scalar_or_list_of_scalars(value) or isinstance(value, dict) and all(
            _is_scalar_or_list_of_scalars(item) for item in value.values())):
        return flat
    if isinstance(value, dict):
        items = [f'{pad}  {json.dumps(key)}: {_json(item, indent + 1)}'
                 for key, item in value.items()]
        return "{\n" + ",\n".join(items) + f"\n{pad}}}"
    if isinstance(value, list):
        items = [f"{pad}  {_json(item, indent + 1)}" for item in value]
        return "[\n" + ",\n".join(items) + f"\n{pad}]"
    return flat


def render_example(game_id: str) -> str:
    ply, seat, act = example_act(game_id)
    players, seed, _, which = EXAMPLES[game_id]
    return (f"<!-- example observation: {game_id} -->\n"
            f"Seat {seat}'s observation at ply {ply} of a {players}-player match between "
            f"`greedy` bots (seed {seed}), {which}, as a bot receives it (the Python SDK's "
            f"`observation` dict; the same field names in every language). Its legal moves: "
            f"{', '.join(f'`{move}`' for move in act.legal_moves)}.\n\n"
            f"```json\n{_json(observation_dict(act))}\n```\n<!-- end example -->\n")


def rewrite_examples() -> None:
    text = OBSERVATIONS.read_text()
    OBSERVATIONS.write_text(_REGION.sub(lambda match: render_example(match["game"]), text))
    text = NOTATION.read_text()
    NOTATION.write_text(_ENDING.sub(lambda match: render_ending(), text))


@pytest.mark.parametrize("game_id", sorted(EXAMPLES))
def test_the_example_observation_is_what_a_real_match_gives(game_id):
    regions = {match["game"]: match[0] for match in _REGION.finditer(OBSERVATIONS.read_text())}
    assert game_id in regions, f"docs/observations.md has no example for {game_id}"
    assert regions[game_id] == render_example(game_id), (
        "the example is stale: run `python3 tests/test_docs.py` to regenerate it")


def _message_types(descriptor, seen=None) -> dict:
    """The message and every message type inside it, by name."""
    seen = {} if seen is None else seen
    seen[descriptor.name] = descriptor
    for field in descriptor.fields:
        if field.message_type is not None and field.message_type.name not in seen:
            _message_types(field.message_type, seen)
    return seen


def _section(text: str, game_id: str) -> str:
    """The part of a page under the heading that names `game_id` in backquotes."""
    parts = re.split(r"^## ", text, flags=re.M)
    found = [part for part in parts if part.splitlines()[0].endswith(f"(`{game_id}`)")]
    assert len(found) == 1, f"docs/observations.md needs one '## ... (`{game_id}`)' section"
    return found[0]


@pytest.mark.parametrize("game_id", registry.ids())
def test_every_field_of_every_observation_message_is_named(game_id):
    oneof = arena_pb2.ActRequest.DESCRIPTOR.fields_by_name[wire.observation_field(game_id)]
    section = _section(OBSERVATIONS.read_text(), game_id)
    missing = [f"{name}.{field.name}"
               for name, message in _message_types(oneof.message_type).items()
               for field in message.fields
               if not re.search(rf"^\| `{field.name}` \|", section, re.M)]
    assert not missing, f"docs/observations.md does not describe {', '.join(missing)}"
    for name in _message_types(oneof.message_type):
        assert f"`{name}`" in section, f"docs/observations.md does not name {name}"


def test_every_act_request_field_is_named_in_the_protocol_page():
    protocol = (DOCS / "protocol.md").read_text()
    for message in (arena_pb2.HandshakeRequest, arena_pb2.HandshakeReply, arena_pb2.NewMatch,
                    arena_pb2.ActRequest, arena_pb2.Clock, arena_pb2.TimeControl,
                    arena_pb2.MoveReply, arena_pb2.MatchOver):
        for field in message.DESCRIPTOR.fields:
            assert field.name in protocol, f"docs/protocol.md does not name {field.full_name}"


def test_the_protocol_page_states_the_arenas_limits():
    protocol = (DOCS / "protocol.md").read_text()
    assert f"{bots.MAX_BOT_MESSAGE_BYTES // 1024} KiB" in protocol
    assert f"{bots.MAX_MOVE_CHARS} characters" in protocol
    assert bots.SESSION_METADATA in protocol
    assert f"{round(TimeControl().margin * 1000)} ms" in protocol
    assert f"gives the bots {bots.CLOSE_GRACE:g} s together" in protocol
    assert f"{bots.DEFAULT_LOG_CAP // 2**20} MiB" in protocol


def _forfeit_reasons() -> set[str]:
    from arena import bot_errors
    reasons = {"illegal"}   # the engine refuses the move; every other reason is a BotError
    stack = [bot_errors.BotError]
    while stack:
        cls = stack.pop()
        reasons.add(cls.reason)
        stack += cls.__subclasses__()
    return reasons


@pytest.mark.parametrize("page", ["protocol.md", "notation.md"])
def test_every_forfeit_reason_is_explained(page):
    text = (DOCS / page).read_text()
    missing = [reason for reason in sorted(_forfeit_reasons())
               if not re.search(rf"^\| `{reason}` \||`{reason}` \(", text, re.M)]
    assert not missing, f"docs/{page} does not explain the forfeit reasons {missing}"


# -- records ----------------------------------------------------------------------------------
NOTATION = DOCS / "notation.md"
_ENDING = re.compile(r"<!-- example ending: flowers-mandala -->\n.*?<!-- end example -->\n", re.S)


def _real_record(game_id: str, players: int, seed: int) -> dict:
    return play_match(game_id, players, {}, seed, [StrategySeat("greedy", game_id)] * players,
                      TimeControl(move_time=1.0),
                      bot_seeds=[seed + seat for seat in range(players)])


def render_ending() -> str:
    """The last moves of a real flowers-mandala match: the end-of-game chance move and the
    destructions it orders."""
    record = _real_record("flowers-mandala", 2, 1)
    moves = record["moves"]
    start = max(ply for ply, (seat, _) in enumerate(moves) if seat == CHANCE) - 3
    lines = ",\n".join(f"  {json.dumps(entry)}" for entry in moves[start:])
    return ("<!-- example ending: flowers-mandala -->\n"
            f"The last moves of a real 2-player `flowers-mandala` match (`greedy` bots, seed 1), "
            f"entries {start} to {len(moves) - 1} of its `moves`, and its `result`: the turn "
            f"that ends the game, the `order` chance move, and the `tile` decisions of the "
            f"end-of-game destructions (a destruction whose holder takes both tiles, or that "
            f"has no holder, asks nobody).\n\n"
            f"```json\n[\n{lines}\n]\n{json.dumps(record['result'])}\n```\n"
            "<!-- end example -->\n")


def test_the_example_ending_is_what_a_real_match_gives():
    found = _ENDING.search(NOTATION.read_text())
    assert found, "docs/notation.md has no example ending"
    assert found[0] == render_ending(), (
        "the example is stale: run `python3 tests/test_docs.py` to regenerate it")


def test_the_example_record_has_the_keys_of_a_real_record_and_each_is_explained():
    text = NOTATION.read_text()
    block = re.search(r"^```json\n(\{\n  \"format\".*?)^```$", text, re.M | re.S)
    assert block, "docs/notation.md has no example record"
    example = json.loads(block[1])
    real = _real_record("mandala", 2, 1)
    assert list(example) == list(real)
    for key in real:
        assert re.search(rf"^- `{key}`:", text, re.M), f"docs/notation.md does not explain {key}"


# -- the rules pages --------------------------------------------------------------------------
@pytest.mark.parametrize("game_id", registry.ids())
def test_a_rules_page_names_its_rules_version_and_every_option(game_id):
    game = registry.get(game_id)
    page = (DOCS / "rules" / f"{game_id}.md").read_text()
    assert f"`{game.rules()}`" in page
    for option in game.options:
        assert f"`{option.key}`" in page and f"`{option.default}`" in page, option.key


def _cards(colours_and_counts: dict) -> list[str]:
    return [colour for colour, count in colours_and_counts.items() for _ in range(count)]


def _mandala_example():
    """The starting position the worked example of docs/rules/mandala.md describes."""
    from engine.games.mandala import COLOURS
    cups = [["black", "red"], ["green", "green"]]
    hands = [["green", "green", "orange", "purple", "red", "yellow"],
             ["black", "black", "green", "orange", "purple", "purple"]]
    mountains = [["red", "yellow"], ["black", "orange"]]
    deck_top = ["purple", "black", "yellow", "red", "green"]
    used = Counter(sum(cups + hands + mountains, []) + deck_top)
    rest = _cards({colour: 18 - used[colour] for colour in COLOURS})
    return registry.get("mandala").start(2, {}, {"cups": cups, "hands": hands,
                                                 "mountains": mountains,
                                                 "deck": deck_top + rest})


def _flowers_mandala_example():
    from engine.games.flowers_mandala import COLOURS, DARK_COLOURS, LIGHT_COLOURS
    game = registry.get("flowers-mandala")
    hands = [["green", "orange", "red", "red", "red", "yellow"],
             ["green", "grey", "orange", "orange", "purple", "yellow"]]
    used = Counter(sum(hands, []))
    centres = [["grey:2", "green:x3"], ["purple:1", "orange:3"], ["red:3", "yellow:1"]]
    values = "1 1 2 2 3 x3".split()
    dark = [f"{c}:{v}" for c in DARK_COLOURS for v in values]
    light = [f"{c}:{v}" for c in LIGHT_COLOURS for v in values]
    for dark_tile, light_tile in centres:   # one copy each: the stacks hold the rest
        dark.remove(dark_tile)
        light.remove(light_tile)
    return game.start(2, game.resolve_options({}, 2), {
        "hands": hands, "deck": _cards({c: 18 - used[c] for c in COLOURS}),
        "centres": centres, "dark": dark, "light": light})


def _flowers_example():
    from engine.games.flowers import DECK
    game = registry.get("flowers")
    gardens = ["b3", "r4"]
    rest = Counter(DECK) - Counter(gardens + ["g3", "y2", "r1", "y4+g"])
    others = sorted(rest.elements())
    piles = [["g3", "y2"] + others[0:24], ["r1"] + others[24:49], ["y4+g"] + others[49:74]]
    return game.start(2, game.resolve_options({}, 2), {"gardens": gardens, "piles": piles})


WORKED_EXAMPLES = {"mandala": _mandala_example, "flowers-mandala": _flowers_mandala_example,
                   "flowers": _flowers_example}
_EXAMPLE_LINE = re.compile(r"^seat (\d): (.+?)\s*(?:#\s*(.*))?$")


@pytest.mark.parametrize("game_id", registry.ids())
def test_a_rules_pages_worked_example_plays_on_the_engine_as_written(game_id):
    page = (DOCS / "rules" / f"{game_id}.md").read_text()
    block = page.split("## Worked example", 1)[1].split("```text\n", 1)[1].split("```", 1)[0]
    state = WORKED_EXAMPLES[game_id]()
    lines = [_EXAMPLE_LINE.match(line) for line in block.splitlines()]
    assert lines and all(lines), "every worked-example line reads 'seat N: move  # why'"
    for line in lines:
        seat, move, why = int(line[1]), line[2], line[3] or ""
        if why.startswith("(illegal)"):   # not this seat's decision, or not a legal move
            if state.to_move() == seat:
                assert move not in state.legal_moves()
                with pytest.raises(IllegalMoveError):
                    state.clone().apply(move)
        else:
            assert state.to_move() == seat, f"{move!r}: seat {state.to_move()} is to move"
            state.apply(move)


def test_the_flowers_scoring_example_scores_as_the_page_says():
    from engine.games.flowers_scoring import score
    garden = {(0, 1): ["r1"], (0, 0): ["g3", "b1"], (1, 0): ["b2"], (2, 0): ["b2"],
              (3, 0): ["b4"], (4, 0): ["b4"], (3, 1): ["b4+y"], (4, 1): ["b4"], (3, 2): ["y1"]}
    result = score(garden)
    page = (DOCS / "rules" / "flowers.md").read_text()
    assert f"Score: −3 + 6 + 1 = **{result.points}**" in page
    assert f"with {result.removed_count} removed cards" in page


# -- links ------------------------------------------------------------------------------------
def _tracked_files() -> list[Path]:
    names = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"],
                           cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return [ROOT / name for name in names.splitlines() if (ROOT / name).is_file()]


def test_nothing_in_the_repository_points_outside_it():
    # The team's source notes live outside the repository; users never see them.
    outside = re.compile(r"(\.\./)+shared\b|\bshared/(rules|records|style|design|seeds)")
    offenders = []
    for path in _tracked_files():
        try:
            text = path.read_text()
        except (UnicodeDecodeError, OSError):
            continue
        for number, line in enumerate(text.splitlines(), 1):
            if outside.search(line):
                offenders.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not offenders, "\n".join(offenders)


def test_every_relative_link_in_the_docs_leads_to_a_file():
    pages = [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]
    broken = []
    for page in pages:
        for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", page.read_text()):
            if "://" in target:
                continue
            if not (page.parent / target).resolve().exists():
                broken.append(f"{page.relative_to(ROOT)} -> {target}")
    assert not broken, broken


def test_the_readme_links_every_docs_page():
    readme = (ROOT / "README.md").read_text()
    for page in sorted(DOCS.rglob("*.md")):
        assert f"]({page.relative_to(ROOT)})" in readme, f"README.md does not link {page}"


if __name__ == "__main__":
    rewrite_examples()
    print("rewrote the examples in docs/observations.md and docs/notation.md")
