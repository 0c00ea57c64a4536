"""docs/writing-a-bot.md's bots, built from its code blocks exactly as written, and the
Node.js sample bot play real matches through `arena play` against the random sample bot.

The Node.js bots need `npm install` (the npm registry) once; the sample bot's is cached in
its folder (`cd sample_bots/node-random && npm install`, as the README says).
"""
from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena import sandbox
from arena.bots import BotSpec
from arena.clock import TimeControl
from arena.cli import main
from engine import records, registry

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "writing-a-bot.md"
NODE_SAMPLE = ROOT / "sample_bots" / "node-random"
RANDOM_SAMPLE = ROOT / "sample_bots" / "random"

needs_sandbox = pytest.mark.sandbox
needs_node = pytest.mark.skipif(shutil.which("node") is None or shutil.which("npm") is None,
                                reason="Node.js and npm are not installed (apt-get install "
                                       "nodejs npm)")


def page_files() -> dict[str, str]:
    """Every code block of the page that names a file (```lang file=PATH), by path."""
    blocks = re.findall(r"^```\w+ file=(\S+)\n(.*?)^```$", PAGE.read_text(), re.M | re.S)
    return {path: text for path, text in blocks}


def build(folder: str, into: Path) -> Path:
    """Writes the page's files of `folder` into `into`/`folder`, as written."""
    files = {path: text for path, text in page_files().items()
             if path.startswith(folder + "/")}
    assert files, f"docs/writing-a-bot.md has no files of {folder}"
    for path, text in files.items():
        (into / path).parent.mkdir(parents=True, exist_ok=True)
        (into / path).write_text(text)
    return into / folder


def npm_install(folder: Path) -> None:
    done = subprocess.run(["npm", "install", "--no-audit", "--no-fund"], cwd=folder,
                          capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        reachable = subprocess.run(["npm", "ping"], cwd=folder, capture_output=True,
                                   timeout=120).returncode == 0
        if not reachable:
            pytest.skip("the npm registry is unreachable, so the Node.js bot cannot be "
                        f"installed: {done.stderr.strip().splitlines()[-1:]}")
        raise AssertionError(f"npm install failed in {folder}:\n{done.stderr}")


def play(tmp_path: Path, game_id: str, bots: list[str]) -> tuple[dict, str]:
    """One `arena play` match: (its record, after checking it ended normally and verifies;
    the text of the bots' logs)."""
    path = tmp_path / f"{game_id}-{len(bots)}.json"
    result = CliRunner().invoke(main, ["play", game_id, "--seed", "3", "--record", str(path),
                                       "--move-time", "5", "--startup-time", "30"]
                                + [arg for bot in bots for arg in ("--bot", bot)])
    assert result.exit_code == 0, result.output
    record = json.loads(path.read_text())
    assert record["result"]["end"] == "normal", record["result"]
    verdict = records.verify(record)
    assert verdict["ok"] and verdict["scores"] == record["result"]["scores"], verdict
    return record, _take_logs(result.output)


def _take_logs(output: str) -> str:
    """The logs of the folder `arena play` named, which is then removed (it made it)."""
    folders = re.findall(r"^  bot logs in (\S+)$", output, re.M)
    text = ""
    for folder in map(Path, folders):
        text += "".join(log.read_text() for log in sorted(folder.glob("*.log")))
        shutil.rmtree(folder)
    return text


@needs_sandbox
def test_the_pages_python_bot_plays_every_game_it_declares_sandboxed(tmp_path):
    bot = build("python-bot", tmp_path)
    spec = BotSpec.load(bot)
    assert set(spec.games) == set(registry.ids())
    for game_id in spec.games:
        record, logs = play(tmp_path, game_id, [str(bot), str(RANDOM_SAMPLE)])
        assert record["players"] == ["mine", "random"]
        # What the page's hooks print to stderr lands in the bot's log.
        assert f"m1: {game_id}, seat 0 of 2" in logs, logs
        assert f"ranks {record['result']['ranks']} (normal)" in logs, logs


def test_the_pages_code_blocks_name_every_file_of_both_bots():
    assert set(page_files()) == {"python-bot/bot.toml", "python-bot/bot.py",
                                 "node-bot/bot.toml", "node-bot/package.json",
                                 "node-bot/bot.js"}
    package = json.loads(page_files()["node-bot/package.json"])
    sample = json.loads((NODE_SAMPLE / "package.json").read_text())
    assert package["dependencies"] == sample["dependencies"], (
        "the page and the sample bot pin the same gRPC packages")


@pytest.mark.slow
@needs_node
@needs_sandbox
def test_the_pages_node_bot_plays_every_game_it_declares(tmp_path):
    bot = build("node-bot", tmp_path)
    shutil.copytree(ROOT / "proto", bot / "proto")   # as the page says: cp -r .../proto
    npm_install(bot)
    for game_id in BotSpec.load(bot).games:
        record, logs = play(tmp_path, game_id, [str(bot), str(RANDOM_SAMPLE)])
        assert record["players"] == ["mine-node", "random"]
        assert f"m1: {game_id}, seat 0" in logs, logs
        ranks = ",".join(map(str, record["result"]["ranks"]))
        assert f"ranks {ranks} (normal)" in logs, logs


@pytest.fixture(scope="module")
def node_sample() -> Path:
    if not (NODE_SAMPLE / "node_modules").is_dir():
        npm_install(NODE_SAMPLE)
    # Its copy of the protos, fresh: the one `npm install` made may predate a change.
    subprocess.run(["node", "copy-protos.js"], cwd=NODE_SAMPLE, check=True,
                   capture_output=True, timeout=60)
    return NODE_SAMPLE


@pytest.mark.slow
@needs_node
@needs_sandbox
def test_the_node_sample_bot_plays_every_game_and_player_count_it_declares(tmp_path,
                                                                            node_sample):
    # `arena bot check` of every game: a match at each player count against random (and one
    # against itself), each record replayed. One Node.js process plays them all (pooled).
    from arena.botcheck import check_bot
    report = check_bot(node_sample, log_dir=tmp_path,
                       time_control=TimeControl(move_time=5.0, startup=30.0))
    assert report.passed, [(row.check, row.result, row.detail) for row in report.rows]
    played = {(match.group(1), int(match.group(2))) for row in report.rows
              if (match := re.match(r"(\S+) (\d)p ", row.check))}
    assert played == {(game_id, players) for game_id in BotSpec.load(node_sample).games
                      for players in range(registry.get(game_id).min_players,
                                           registry.get(game_id).max_players + 1)}


@needs_node
@needs_sandbox
def test_the_node_sample_bot_is_reproducible_from_its_rng_seed(tmp_path, node_sample):
    runs = []
    for name in ("first", "second"):
        (tmp_path / name).mkdir()
        runs.append(play(tmp_path / name, "flowers", [str(node_sample)])[0])
    assert runs[0]["moves"] == runs[1]["moves"]


# -- the sandbox as the page describes it ----------------------------------------------------
def _page_section(start: str) -> str:
    """The page's text from the line that begins with `start` to the next blank line."""
    text = PAGE.read_text()
    index = text.index(start)
    return text[index:text.index("\n\n", index)]


_SEE_FOR_ITSELF = r'''
import json, os, socket
facts = {"env": {name: os.environ[name] for name in os.environ
                 if name not in ("ARENA_SOCKET", "ARENA_TOKEN")},
         "env_names": sorted(os.environ), "cwd": os.getcwd(), "hostname": socket.gethostname()}
for folder in ("/bot", "/tmp"):
    try:
        open(folder + "/note", "w").close()
        facts[folder] = "writable"
    except OSError:
        facts[folder] = "read-only"
import arena.sdk, engine
facts["imports"] = "arena.sdk and engine"
print(json.dumps(facts), flush=True)
'''


@needs_sandbox
def test_the_sandbox_looks_to_a_bot_as_the_page_says(tmp_path):
    bot = tmp_path / "bot"
    bot.mkdir()
    (bot / "look.py").write_text(_SEE_FOR_ITSELF)
    log = tmp_path / "look.log"
    process = sandbox.spawn(["python3", "look.py"], bot, log_path=log,
                            env={"ARENA_SOCKET": "/nowhere", "ARENA_TOKEN": "secret"})
    try:
        assert process.wait(timeout=60) == 0, log.read_text()
    finally:
        process.kill()
    facts = json.loads(log.read_text().splitlines()[-1])

    environment = _page_section("- **Environment**")
    named = {item.split("=")[0] for item in re.findall(r"`([A-Z_]+(?:=[^`]*)?)`", environment)}
    assert set(facts["env_names"]) == named
    for item in re.findall(r"`([A-Z_]+=[^`]*)`", environment):
        name, value = item.split("=", 1)
        assert facts["env"][name] == value, name
    assert facts["env"]["PYTHONPATH"].split(":")[0] == sandbox.LIB_DIR
    assert f"`{sandbox.LIB_DIR}`" in environment
    assert facts["env"]["PATH"].endswith(":/usr/local/bin:/usr/bin:/bin")
    assert "`/usr/local/bin:/usr/bin:/bin`" in _page_section("- **`PATH`**")
    assert facts["cwd"] == "/bot" and facts["/bot"] == "read-only" and facts["/tmp"] == "writable"
    assert f"`{facts['hostname']}`" in _page_section("- **Own process namespace**")


def _bytes(size: int) -> str:
    for unit, name in ((sandbox.GiB, "GiB"), (sandbox.MiB, "MiB")):
        if size % unit == 0:
            return f"{size // unit} {name}"
    return f"{size} bytes"


# Each limit of the sandbox: the row of the page's table that states it, and its value there.
LIMIT_ROWS = {
    "memory_bytes": ("memory", lambda value: f"{_bytes(value)} for all its processes"),
    "cpu_seconds": ("CPU time", lambda value: f"{value} s"),
    "processes": ("processes and threads", str),
    "cpus": ("cores", lambda value: f"{value:g} at any moment"),
    "file_size_bytes": ("size of a file it writes", _bytes),
    "open_files": ("open files", str),
    "tmp_bytes": ("`/tmp` and `/dev/shm`", _bytes),
}


def test_the_page_states_every_limit_of_the_sandbox():
    from dataclasses import fields
    limits = sandbox.Limits()
    table = _page_section("| limit | value |")
    for field in fields(limits):
        assert field.name in LIMIT_ROWS, f"the page's limits table lacks {field.name}"
        label, shown = LIMIT_ROWS[field.name]
        row = re.search(rf"^\| {re.escape(label)} \| (.*) \|$", table, re.M)
        assert row, f"the page's limits table has no row '{label}'"
        assert row[1].startswith(shown(getattr(limits, field.name))), (label, row[1])


@needs_sandbox
def test_a_package_vendored_into_the_bot_folder_is_importable_as_the_page_says(tmp_path):
    bot = build("python-bot", tmp_path)
    # What `pip install --target vendor PACKAGE` leaves: a package folder inside vendor/.
    (bot / "vendor" / "chooser").mkdir(parents=True)
    (bot / "vendor" / "chooser" / "__init__.py").write_text(
        "def last(moves):\n    return moves[-1]\n")
    assert 'sys.path.insert(0, "vendor")' in _page_section("- **Python:**")
    (bot / "bot.py").write_text('import sys\nsys.path.insert(0, "vendor")\n'
                                "from chooser import last\nfrom arena.sdk import Bot\n\n"
                                "class Last(Bot):\n    def act(self, observation, moves):\n"
                                "        return last(moves)\n\nLast().run()\n")
    record, _ = play(tmp_path, "mandala", [str(bot), str(RANDOM_SAMPLE)])
    state = records.read(record).start()
    for ply, (seat, move) in enumerate(record["moves"]):
        if seat == 0:   # the vendored chooser picked every move of seat 0
            assert move == state.legal_moves()[-1], ply
        records.apply_entry(state, ply, seat, move)


@needs_node
@needs_sandbox
def test_the_node_sample_bot_passes_arena_bot_check(tmp_path, node_sample):
    from arena.botcheck import check_bot
    report = check_bot(node_sample, ["mandala"], log_dir=tmp_path,
                       time_control=TimeControl(move_time=5.0, startup=30.0))
    assert report.passed, [(row.check, row.result, row.detail) for row in report.rows]
