"""The Go sample bot (sample_bots/go-random), built from Debian's packages only by its
build.sh, plays a full sandboxed match through `arena play` against the random sample bot in
every game and player count its manifest declares; each record ends normally and `arena
verify` accepts it; the same seed gives the same moves; `arena bot check` passes it.

The build needs the Debian packages of the README's test set-up line (golang-go,
golang-google-grpc-dev, golang-google-protobuf-dev, golang-github-golang-protobuf-1-5-dev,
protobuf-compiler, protoc-gen-go, protoc-gen-go-grpc); without them these tests are skipped
and say which are missing.
"""
from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.bots import BotSpec
from arena.cli import main
from engine import registry

ROOT = Path(__file__).resolve().parent.parent
GO_SAMPLE = ROOT / "sample_bots" / "go-random"
RANDOM_SAMPLE = ROOT / "sample_bots" / "random"
BINARY = GO_SAMPLE / "go-random"
# Debian's Go libraries (GOPATH layout) that build.sh compiles the bot against.
GOCODE = Path("/usr/share/gocode/src")
GO_SOURCES = ["google.golang.org/grpc", "google.golang.org/protobuf", "github.com/golang/protobuf"]
TOOLS = ["go", "protoc", "protoc-gen-go", "protoc-gen-go-grpc"]
PACKAGES = ("golang-go golang-google-grpc-dev golang-google-protobuf-dev "
            "golang-github-golang-protobuf-1-5-dev protobuf-compiler protoc-gen-go "
            "protoc-gen-go-grpc")


def _missing() -> list[str]:
    return ([tool for tool in TOOLS if shutil.which(tool) is None]
            + [str(GOCODE / source) for source in GO_SOURCES if not (GOCODE / source).is_dir()])


needs_sandbox = pytest.mark.sandbox
needs_go = pytest.mark.skipif(bool(_missing()),
                              reason=f"the Go bot cannot be built here: missing "
                                     f"{', '.join(_missing())} (apt-get install {PACKAGES})")

CASES = [(game_id, players)
         for game_id in BotSpec.load(GO_SAMPLE).games
         for players in range(registry.get(game_id).min_players,
                              registry.get(game_id).max_players + 1)]


def _without_network() -> list[str]:
    """A command prefix that runs the build in a network namespace of its own (no network at
    all: it proves nothing is downloaded), where this machine lets us make one."""
    unshare = shutil.which("unshare")
    if unshare and subprocess.run([unshare, "--net", "true"], capture_output=True,
                                  timeout=30).returncode == 0:
        return [unshare, "--net"]
    return []


@pytest.fixture(scope="module")
def go_sample() -> Path:
    """The Go sample bot, built once in place by its build.sh (the binary is git-ignored)."""
    done = subprocess.run(_without_network() + [str(GO_SAMPLE / "build.sh")],
                          capture_output=True, text=True, timeout=1200)
    assert done.returncode == 0, f"build.sh failed:\n{done.stdout}\n{done.stderr}"
    assert BINARY.is_file()
    return GO_SAMPLE


def play(tmp_path: Path, game_id: str, bots: list[str], seed: int = 3) -> tuple[dict, str]:
    """One `arena play` match with a record: (the record, after checking it ended normally and
    `arena verify` accepts it; the text of the bots' logs)."""
    path = tmp_path / f"{game_id}-{len(bots)}.json"
    result = CliRunner().invoke(main, ["play", game_id, "--players", str(len(bots)),
                                       "--seed", str(seed), "--record", str(path),
                                       "--move-time", "5", "--startup-time", "30"]
                                + [arg for bot in bots for arg in ("--bot", bot)])
    assert result.exit_code == 0, result.output
    record = json.loads(path.read_text())
    assert record["result"]["end"] == "normal", record["result"]
    assert "forfeit" not in record["result"], record["result"]
    verified = CliRunner().invoke(main, ["verify", str(path)])
    assert verified.exit_code == 0, verified.output
    verdict = json.loads(verified.output.strip().splitlines()[-1])
    assert verdict["ok"] and verdict["end"] == "normal", verdict
    assert verdict["scores"] == record["result"]["scores"], verdict
    logs = "".join(log.read_text() for log in sorted(path.with_suffix(".logs").glob("*.log")))
    return record, logs


def test_the_go_bot_declares_every_game_and_git_ignores_its_binary():
    spec = BotSpec.load(GO_SAMPLE)
    assert spec.name == "go-random" and set(spec.games) == set(registry.ids())
    assert spec.command == ("./go-random",)
    # git keeps the sources only: the binary build.sh makes is ignored.
    ignored = subprocess.run(["git", "check-ignore", "-q", str(BINARY)], cwd=ROOT)
    assert ignored.returncode == 0, "sample_bots/go-random/.gitignore must ignore the binary"


@needs_go
def test_the_build_leaves_only_the_sources_and_the_binary_in_the_bot_folder(go_sample):
    # build.sh generates the protobuf code in a temporary folder: the bot's folder is what the
    # sandbox shows the bot and what its version hash covers.
    assert {path.name for path in go_sample.iterdir()} == {
        "bot.toml", "main.go", "build.sh", ".gitignore", "go-random"}


@needs_go
@needs_sandbox
@pytest.mark.parametrize("game_id, players", CASES)
def test_the_go_bot_plays_a_full_sandboxed_match(tmp_path, go_sample, game_id, players):
    bots = [str(go_sample)] + [str(RANDOM_SAMPLE)] * (players - 1)
    record, logs = play(tmp_path, game_id, bots)
    assert record["players"][0] == "go-random"
    assert len(record["players"]) == players
    # It read the MatchOver the arena sent after the last move, then the stream's end.
    ranks = " ".join(map(str, record["result"]["ranks"]))
    assert re.search(rf"go-random: match \S+ over: normal, ranks \[{ranks}\]", logs), logs


@needs_go
@needs_sandbox
def test_the_go_bot_is_reproducible_from_its_rng_seed(tmp_path, go_sample):
    runs = []
    for name in ("first", "second"):
        (tmp_path / name).mkdir()
        runs.append(play(tmp_path / name, "flowers", [str(go_sample)], seed=11)[0])
    assert runs[0]["moves"] == runs[1]["moves"]
    # Alone in flowers, only its own choices and the deal make the moves: a random player
    # who ignored rng_seed would all but surely play another game the second time.
    assert len(runs[0]["moves"]) > 50


@needs_go
@needs_sandbox
def test_the_go_bot_passes_arena_bot_check(go_sample):
    result = CliRunner().invoke(main, ["bot", "check", str(go_sample), "--move-time", "5",
                                       "--startup-time", "30"])
    assert result.exit_code == 0, result.output
