"""Fixtures shared by the test files."""
from __future__ import annotations

import functools
import importlib.util
import logging
import os
import random
import shutil
import signal
import sys
import tempfile
import time

import pytest

from arena import sandbox
from arena.bots import BotHost
from arena.sandbox.cgroups import Sweep

# Keep bytecode even where PYTHONDONTWRITEBYTECODE is set (some CI images set it): pytest then
# keeps each test module's rewritten bytecode, so the 3 workers and the serial pass do not
# each rewrite and compile all the test modules again (5.0 -> 1.6 s of CPU a collection).
sys.dont_write_bytecode = False


# The tests' own installation key (arena.keys), in a folder of theirs: they never make or
# read the key of the machine's user, and subprocesses they start inherit it.
_KEY_DIR = tempfile.TemporaryDirectory(prefix="arena-test-key-")
os.environ["ARENA_KEY_FILE"] = os.path.join(_KEY_DIR.name, "installation.key")


# -- what a test needs of the machine, declared once as a marker (pyproject.toml) -------------

def _browser_available() -> bool:
    return (importlib.util.find_spec("selenium") is not None
            and all(shutil.which(path) for path in ("/usr/bin/chromium", "/usr/bin/chromedriver")))


REQUIREMENTS = {
    "sandbox": (sandbox.available, "bubblewrap cannot run here (apt-get install bubblewrap)"),
    "browser": (_browser_available, "needs Debian's chromium and chromium-driver (apt-get "
                                    "install chromium chromium-driver) and selenium"),
    "ray": (lambda: importlib.util.find_spec("ray") is not None,
            "needs Ray (pip install -e '.[ray]')"),
}


@functools.cache
def _present(requirement: str) -> bool:
    return REQUIREMENTS[requirement][0]()


# The modules that take longest (their tests' total time, pytest --durations=0, 2026-12-04,
# less what that evening's changes saved) go first: spread over the parallel pass's workers
# from its start, none of them is left running alone at its end. (`--dist loadfile` hands
# out whole modules in this order: see pytest_configure.)
LONGEST_FIRST = ("test_serve_life.py", "test_league.py", "test_starters.py",
                 "test_no_orphans.py", "test_ray_league.py", "test_conformance.py",
                 "test_fair_play.py", "test_serve_pages.py", "test_serve_admission.py",
                 "test_serve_accounts.py", "test_ismcts.py", "test_replay_viewer.py",
                 "test_sprt_cli.py", "test_serve.py", "test_ray_nodes.py",
                 "test_flowers_properties.py", "test_botcheck.py", "test_mandala_properties.py",
                 "test_misbehaving_bots.py", "test_serve_cli.py", "test_serve_lists.py",
                 "test_flowers_mandala_properties.py", "test_ladder_site.py")


def pytest_collection_modifyitems(items) -> None:
    rank = {name: place for place, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))   # stable: modules whole
    # A test of a shared bot host, or of a module's browser, needs what they need.
    for item in items:
        fixtures = getattr(item, "fixturenames", ())
        if "host" in fixtures:
            item.add_marker(pytest.mark.sandbox)
        if "browser" in fixtures:
            item.add_marker(pytest.mark.browser)


def pytest_runtest_setup(item) -> None:
    for requirement, (_, reason) in REQUIREMENTS.items():
        if item.get_closest_marker(requirement) and not _present(requirement):
            pytest.skip(reason)


@pytest.fixture(scope="module")
def host():
    """A bot host (gRPC server and sandboxed bot pool) shared by one test module."""
    with BotHost() as bot_host:
        yield bot_host


@pytest.fixture(scope="module")
def browser():
    """A headless Chromium (tests/browser.py) shared by one test module's page tests."""
    from browser import chromium
    with chromium() as driver:
        driver.set_page_load_timeout(60)
        yield driver


@pytest.fixture(autouse=True)
def arena_logs_reach_caplog(monkeypatch):
    """Arena's log records reach pytest's caplog in every test: a CLI command run in this
    process (click's test runner) gives the `arena` logger a handler of its own and stops it
    propagating, which would hide them from the tests that run after it."""
    monkeypatch.setattr(logging.getLogger("arena"), "propagate", True)


@pytest.fixture
def kill_rng(request) -> random.Random:
    """Random moments (kill points) for one test, from a seed printed with the test's output
    (pytest shows it when the test fails); rerun one with ARENA_TEST_SEED=<seed>."""
    seed = int(os.environ.get("ARENA_TEST_SEED") or random.SystemRandom().randrange(2**32))
    print(f"{request.node.name}: random kill points from ARENA_TEST_SEED={seed}")
    return random.Random(seed)


def pytest_addoption(parser) -> None:
    parser.addoption("--scale", default=None, metavar="X",
                     help="Play X times the property tests' game counts (tests/sizes.py; "
                          "same as ARENA_TEST_SCALE=X).")


def _python_speed_ms() -> float:
    """How fast this machine runs Python now: CPU ms for 40,000 chained sha256 (the fairness
    bench's fixed work), the median of 5. The suite's times scale with it, and shared
    machines of one kind differ: 20 ms idle on 2026-12-04's evening machine, 14 ms that
    afternoon (a single run varied from 18 to 32 ms within seconds)."""
    import hashlib
    times = []
    for _ in range(5):
        started, digest = time.thread_time(), b"arena"
        for _ in range(40_000):
            digest = hashlib.sha256(digest).digest()
        times.append(1000 * (time.thread_time() - started))
    return sorted(times)[2]


_SPEED_AT_START = pytest.StashKey[float]()


def pytest_sessionstart(session) -> None:
    if not hasattr(session.config, "workerinput"):   # the run's own process, not a worker
        session.config.stash[_SPEED_AT_START] = _python_speed_ms()


def pytest_terminal_summary(terminalreporter, config) -> None:
    if _SPEED_AT_START in config.stash:
        terminalreporter.write_line(
            f"machine speed (40,000 chained sha256, CPU): {config.stash[_SPEED_AT_START]:.1f} "
            f"ms at the start, {_python_speed_ms():.1f} ms at the end")


def pytest_configure(config) -> None:
    # A shell without job control starts background commands with Ctrl-C ignored, and an
    # ignored signal stays ignored through exec: the arena processes the ctrl-c tests start
    # would never hear their SIGINT. A handler of ours is reset by exec, so they hear it.
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    # pytest-xdist (3.6 and later) hands out `--dist loadfile` modules by their number of
    # tests, most first, unless told not to: that would leave the long modules of few tests
    # (service lives, kill -9 leagues, Ray) for the end, each alone on a worker.
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False
    if config.getoption("--scale") is not None:
        os.environ["ARENA_TEST_SCALE"] = config.getoption("--scale")
    logging.getLogger("arena.sandbox").addFilter(_no_sweep_report)


def _no_sweep_report(record: logging.LogRecord) -> bool:
    """Keeps the sweep's report off the commands a test runs in this process (click's
    runner): a test beside it may have just killed an arena whose reaper is still at work,
    and the line "ended 2 bot process(es) ... left by arena process(es) N" would then show in
    a command's output that has nothing to do with it. Commands run as processes of their
    own still say it (tests/test_no_orphans.py checks that they do)."""
    return not (isinstance(record.args, tuple) and record.args
                and isinstance(record.args[0], Sweep))


_STARTED = time.monotonic()


def pytest_runtest_logreport(report) -> None:
    """ARENA_TEST_TIMELINE=FILE appends a line per test phase as it ends: seconds since the
    run began, worker, phase, its duration, test. With -n it shows how the parallel pass's
    modules spread over its workers, and which one ran last, alone."""
    path = os.environ.get("ARENA_TEST_TIMELINE")
    if not path or os.environ.get("PYTEST_XDIST_WORKER"):   # the controller writes, once
        return
    node = getattr(report, "node", None)
    worker = node.gateway.id if node is not None else "main"
    with open(path, "a") as timeline:
        timeline.write(f"{time.monotonic() - _STARTED:8.1f} {worker} {report.when:8s} "
                       f"{report.duration:7.2f} {report.nodeid}\n")
