"""`arena bot new NAME --lang LANG`: each starter is made into a temporary folder by the real
CLI, built as its README says (Go and C++ with no network at all, under `unshare --net`, to
prove that Debian's packages are enough), and passes the real `arena bot check` as it is.
Bad input (unknown language, existing folder, bad name) is one line and a non-zero exit.

Builds need what the README's test set-up line installs (Node.js and npm; Go's and C++'s
Debian packages); a test whose tools are missing is skipped and says which.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from arena.bots import BotSpec
from arena.starters import LANGUAGES, PLACEHOLDER
from engine import registry

ROOT = Path(__file__).resolve().parent.parent
# The CLI of this checkout, whatever is installed (the package is installed from elsewhere).
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
ARENA = [sys.executable, "-c", "from arena.cli import main; main()"]
GO_TOOLS = ["go", "protoc", "protoc-gen-go", "protoc-gen-go-grpc"]
CPP_TOOLS = ["g++", "pkg-config", "protoc", "grpc_cpp_plugin"]
JAVA_TOOLS = ["java", "javac", "jar", "protoc"]
PROTOBUF_JAR = Path("/usr/share/java/protobuf.jar")

needs_sandbox = pytest.mark.sandbox


def needs(*tools: str, packages: str):
    missing = [tool for tool in tools if shutil.which(tool) is None]
    return pytest.mark.skipif(bool(missing), reason=f"missing {', '.join(missing)} "
                                                    f"(apt-get install {packages})")


def arena(*args: str, cwd: Path | None = None, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run(ARENA + list(args), cwd=cwd, env=ENV, capture_output=True,
                          text=True, timeout=timeout)


def new(tmp_path: Path, name: str, lang: str) -> Path:
    done = arena("bot", "new", name, "--lang", lang, "--dir", str(tmp_path))
    assert done.returncode == 0, done.stderr
    folder = tmp_path / name
    assert f"made {folder} ({lang})" in done.stdout, done.stdout
    return folder


def without_network() -> list[str]:
    """A prefix that runs a build in a network namespace of its own (no network at all),
    where this machine lets us make one."""
    unshare = shutil.which("unshare")
    if unshare and subprocess.run([unshare, "--net", "true"], capture_output=True,
                                  timeout=30).returncode == 0:
        return [unshare, "--net"]
    return []


def build(folder: Path, command: list[str], offline: bool = True,
          env: dict[str, str] | None = None) -> None:
    done = subprocess.run((without_network() if offline else []) + command, cwd=folder,
                          capture_output=True, text=True, timeout=1800,
                          env={**os.environ, **(env or {})})
    assert done.returncode == 0, f"{command} failed:\n{done.stdout}\n{done.stderr}"


def check(folder: Path) -> str:
    """The real `arena bot check` of the folder, as an author runs it; generous limits, as
    other engineers' work shares this machine's cores."""
    done = arena("bot", "check", str(folder), "--move-time", "5", "--startup-time", "30")
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    # Every game and player count was played: the check's table has a row for each.
    for game_id in registry.ids():
        game = registry.get(game_id)
        for players in range(max(2, game.min_players), game.max_players + 1):
            assert re.search(rf"^{game_id} {players}p vs random", done.stdout, re.M), done.stdout
    assert f"{folder.name}: all checks passed" in done.stdout
    return done.stdout


def assert_made(folder: Path, lang: str, build_line: str, edit: str) -> None:
    """The folder as `arena bot new` makes it: the name everywhere, a README naming the build
    command and the function to edit, the protos where the bot speaks gRPC itself."""
    spec = BotSpec.load(folder)
    assert spec.name == folder.name and set(spec.games) == set(registry.ids())
    for path in folder.rglob("*"):
        if path.is_file():
            assert PLACEHOLDER not in path.read_text(), path
    readme = (folder / "README.md").read_text()
    assert folder.name in readme and build_line in readme and edit in readme, readme
    assert f"arena bot check {folder.name}" in readme
    assert (folder / "proto" / "arena" / "v1" / "arena.proto").is_file() == (lang != "python")


def readme_commands(folder: Path) -> list[list[str]]:
    """The `arena` commands of a starter's README, as written (arguments after `arena`)."""
    block = (folder / "README.md").read_text().split("## Try", 1)[1].split("```bash\n", 1)[1]
    return [line.split("  #", 1)[0].split()[1:] for line in block.split("```", 1)[0].splitlines()
            if line.startswith("arena ")]


@pytest.mark.slow
@needs_sandbox
def test_the_python_starter_passes_bot_check_as_made(tmp_path):
    folder = new(tmp_path, "py-bot", "python")
    assert_made(folder, "python", "Nothing to build", "act(observation, legal_moves)")
    check(folder)
    # Its README's commands work as written, from the folder beside the bot's (the league
    # with 1 deal, not 20), and leave the bot's folder as it was made.
    before = sorted(path.name for path in folder.iterdir())
    commands = readme_commands(folder)
    assert [args[:2] for args in commands] == [["bot", "check"], ["play", "mandala"],
                                               ["league", "run"]]
    for args in commands[1:]:
        if args[:2] == ["league", "run"]:
            args[args.index("--deals") + 1] = "1"
        done = arena(*args, cwd=tmp_path)
        assert done.returncode == 0, f"{args}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
    assert (tmp_path / "results" / "try").is_dir()
    assert sorted(path.name for path in folder.iterdir()) == before


@pytest.mark.slow
@needs_sandbox
@needs("node", "npm", packages="nodejs npm")
def test_the_node_starter_passes_bot_check_after_npm_install(tmp_path):
    folder = new(tmp_path, "node-bot", "node")
    assert_made(folder, "node", "npm install", "choose(match, act)")
    done = subprocess.run(["npm", "install", "--no-audit", "--no-fund"], cwd=folder,
                          capture_output=True, text=True, timeout=600)
    if done.returncode != 0 and subprocess.run(["npm", "ping"], capture_output=True,
                                               timeout=120).returncode != 0:
        pytest.skip(f"the npm registry is unreachable: {done.stderr.strip()[-200:]}")
    assert done.returncode == 0, done.stderr
    check(folder)


def build_compiled(tmp_path: Path, lang: str, sources: set[str], edit: str,
                   built: str = "bot", env: dict[str, str] | None = None) -> Path:
    """A compiled starter, made and built by its build.sh with no network; the build leaves
    only the sources, the protos and the binary in the folder (all the sandbox shows)."""
    folder = new(tmp_path, f"{lang}-bot", lang)
    assert_made(folder, lang, "./build.sh", edit)
    build(folder, ["./build.sh"], env=env)
    assert {path.name for path in folder.iterdir()} == {
        ".gitignore", "README.md", "bot.toml", "build.sh", "proto", built, *sources}
    return folder


@pytest.mark.slow   # a static gRPC binary linked (test_go_bot.py builds Go in the quick selection)
@needs_sandbox
@needs(*GO_TOOLS, packages="golang-go golang-google-grpc-dev golang-google-protobuf-dev "
                           "golang-github-golang-protobuf-1-5-dev protobuf-compiler "
                           "protoc-gen-go protoc-gen-go-grpc")
def test_the_go_starter_builds_offline_and_passes_bot_check(tmp_path):
    folder = build_compiled(tmp_path, "go", {"main.go"}, "choose(match, act, rng)")
    linked = subprocess.run(["ldd", str(folder / "bot")], capture_output=True, text=True)
    assert "not a dynamic executable" in linked.stdout + linked.stderr, "Go: one static binary"
    check(folder)


@pytest.mark.slow   # about a minute of g++ on 2 busy cores
@needs_sandbox
@needs(*CPP_TOOLS, packages="g++ pkg-config libgrpc++-dev libprotobuf-dev protobuf-compiler "
                            "protobuf-compiler-grpc")
def test_the_cpp_starter_builds_offline_and_passes_bot_check(tmp_path):
    # -O0 (build.sh adds CXXFLAGS last): the same sources compiled, at 29 CPU-seconds
    # instead of 41 (-O2); the bot it makes plays the check as well, only slower.
    folder = build_compiled(tmp_path, "cpp", {"main.cc"}, "Choose(match, act, rng)",
                            env={"CXXFLAGS": "-O0"})
    # Dynamically linked against the system's gRPC: the sandbox shows /usr, so it loads there.
    linked = subprocess.run(["ldd", str(folder / "bot")], capture_output=True, text=True)
    assert "libgrpc++" in linked.stdout and "not found" not in linked.stdout, linked.stdout
    check(folder)
    # CXXFLAGS reaches the compiler; a failed build says so and keeps the bot it had.
    built = (folder / "bot").read_bytes()
    failed = subprocess.run(["./build.sh"], cwd=folder, capture_output=True, text=True,
                            timeout=600, env={**os.environ, "CXXFLAGS": "--no-such-flag"})
    assert failed.returncode != 0 and "--no-such-flag" in failed.stderr, failed.stderr
    assert "build.sh: compiling failed" in failed.stderr
    assert (folder / "bot").read_bytes() == built


@pytest.mark.slow   # javac and a jar with protobuf-java inside
@pytest.mark.skipif(not PROTOBUF_JAR.is_file(), reason=f"no {PROTOBUF_JAR} (apt-get install "
                                                    "libprotobuf-java)")
@needs_sandbox
@needs(*JAVA_TOOLS, packages="default-jdk-headless protobuf-compiler libprotobuf-java")
def test_the_java_starter_builds_offline_and_passes_bot_check(tmp_path):
    folder = build_compiled(tmp_path, "java", {"Bot.java", "GrpcUnixClient.java"},
                            "choose(match, act, rng)", built="bot.jar")
    # One jar with protobuf-java inside: the sandbox needs only the system's java.
    with zipfile.ZipFile(folder / "bot.jar") as jar:
        names = set(jar.namelist())
    assert {"Bot.class", "GrpcUnixClient.class", "arena/v1/ArenaOuterClass.class",
            "com/google/protobuf/GeneratedMessageV3.class"} <= names
    assert BotSpec.load(folder).command[0] == "java"
    check(folder)


@pytest.mark.parametrize("args, message", [
    (["bot", "new", "x", "--lang", "rust"], "unknown language 'rust': choose one of "
                                            + ", ".join(LANGUAGES)),
    (["bot", "new", ".hidden", "--lang", "python"], "bad bot name '.hidden'"),
    (["bot", "new", "a/b", "--lang", "python"], "bad bot name 'a/b'"),
    (["bot", "new", "x", "--lang", "python", "--dir", "missing"], "is not a folder"),
    (["bot", "new", "taken", "--lang", "go"], "taken already exists"),
    (["bot", "new", "x"], "Missing option '--lang'"),
    (["bot", "new", "x", "--lang", "python", "--dir", "/proc"], "cannot make /proc/x: "),
])
def test_bad_input_is_one_line_and_a_non_zero_exit(tmp_path, args, message):
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "mine.txt").write_text("kept")
    done = arena(*args, cwd=tmp_path)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert done.stderr.startswith("arena: error: ") and message in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
    # Nothing made, nothing overwritten, no half-made folder left.
    assert sorted(path.name for path in tmp_path.iterdir()) == ["taken"]
    assert (tmp_path / "taken" / "mine.txt").read_text() == "kept"


def test_the_default_dir_is_the_working_directory(tmp_path):
    done = arena("bot", "new", "here", "--lang", "python", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert BotSpec.load(tmp_path / "here").command == ("python3", "bot.py")
    # Made in a temporary folder (0700) and renamed: the bot's folder is opened up again.
    assert (tmp_path / "here").stat().st_mode & 0o777 == 0o755


def quick_start_lines() -> list[str]:
    """The `arena` commands of the README's quick start, as written."""
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Your first bot in five minutes", 1)[1].split("\n## ", 1)[0]
    block = section.split("```bash\n", 1)[1].split("```", 1)[0]
    return [line.split("  #", 1)[0].strip() for line in block.splitlines()
            if line.startswith("arena ")]


@pytest.mark.slow
@needs_sandbox
def test_the_readme_quick_start_runs_as_written(tmp_path):
    lines = quick_start_lines()
    assert [line.split()[:3] for line in lines] == [
        ["arena", "bot", "new"], ["arena", "bot", "check"], ["arena", "play", "mandala"],
        ["arena", "league", "run"]]
    # From "this folder" (the repository) as the README says: the sample bots are beside.
    (tmp_path / "sample_bots").symlink_to(ROOT / "sample_bots")
    for line in lines:
        args = line.split()[1:]
        if args[:2] == ["league", "run"]:   # 1 deal, not 20: the same command, shorter
            args[args.index("--deals") + 1] = "1"
        done = arena(*args, cwd=tmp_path)
        assert done.returncode == 0, f"{line}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
    assert (tmp_path / "results" / "first").is_dir()
