"""The ladder service on Ray nodes that share nothing with it but Ray: bot versions travel by
content hash into each node's own cache (checked against the hash every time, a damaged entry
made again), bot logs come back with the matches to the server, which alone writes them.

The cluster test starts two real Ray nodes on this machine (each a `ray start` with its own
temporary folder, CPU and data folder: arena.bench.raycluster), a real `arena serve` joined to
them, and bots submitted through its API; it ends only the processes it started, by pid.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from arena.bots import BotSpec
from arena.bots.manifest import folder_hash
from arena.errors import HostError
from arena.league.bundles import NodeCache, pack_version
from arena.league.nodelogs import TRUNCATED, LogShipper, append_logs
from arena.serve.uploads import pack_folder
from orphans import assert_all_gone
from serving import PACED, SAMPLES, Service, arena, free_port, make_bot, random_player


# -- the node's cache --------------------------------------------------------------------------

def fetcher(data: bytes, calls: list):
    def fetch() -> bytes:
        calls.append(1)
        return data
    return fetch


def test_a_version_is_unpacked_read_only_once_and_a_damaged_entry_is_made_again(tmp_path):
    source = make_bot(tmp_path / "bot", "nodebot", random_player(""))
    (source / "data").mkdir()
    (source / "data" / "book.txt").write_text("opening book\n")
    (source / "__pycache__").mkdir()   # left out of the hash, and of the bundle
    (source / "__pycache__" / "bot.cpython-311.pyc").write_bytes(b"\0junk")
    version = BotSpec.load(source).version
    cache, calls = NodeCache(tmp_path / "node"), []
    folder = cache.folder(version, fetcher(pack_version(source), calls))
    assert folder == tmp_path / "node" / "versions" / version
    assert folder_hash(folder) == version and not (folder / "__pycache__").exists()
    assert (folder / "data" / "book.txt").read_text() == "opening book\n"
    assert not os.stat(folder / "bot.py").st_mode & 0o222   # read-only, as on the server
    assert cache.folder(version, fetcher(b"never read", calls)) == folder and len(calls) == 1

    # Damaged on the node's disk (root writes through read-only bits): not trusted.
    (folder / "data" / "book.txt").write_text("a book that was changed\n")
    assert cache.folder(version, fetcher(pack_version(source), calls)) == folder
    assert len(calls) == 2 and folder_hash(folder) == version
    assert (folder / "data" / "book.txt").read_text() == "opening book\n"
    assert cache.versions() == [version]


def test_bytes_that_do_not_make_the_version_are_a_host_fault_and_leave_nothing(tmp_path):
    source = make_bot(tmp_path / "bot", "nodebot", random_player(""))
    other = make_bot(tmp_path / "other", "otherbot", random_player("x = 1"))
    cache = NodeCache(tmp_path / "node")
    version = BotSpec.load(source).version
    with pytest.raises(HostError, match=f"bot version {version} arrived as"):
        cache.folder(version, lambda: pack_version(other))
    with pytest.raises(HostError, match="could not be unpacked"):
        cache.folder(version, lambda: b"\x1f\x8b not a tar")
    with pytest.raises(HostError, match="not a content hash"):
        cache.folder("../../etc", lambda: pack_version(source))
    assert cache.versions() == [] and not any((tmp_path / "node" / "versions").iterdir())


def test_an_unpacking_cut_short_long_ago_is_removed_and_a_recent_one_kept(tmp_path):
    from arena.league.bundles import STALE_STAGING_SECONDS
    versions = tmp_path / "node" / "versions"
    old, recent = versions / ".staging-old", versions / ".staging-recent"
    for folder in (old, recent):
        (folder / "part").mkdir(parents=True)
    past = time.time() - STALE_STAGING_SECONDS - 60
    os.utime(old, (past, past))
    NodeCache(tmp_path / "node")
    assert not old.exists() and recent.exists()


# -- logs back to the server -------------------------------------------------------------------

def test_a_node_ships_what_each_log_gained_and_the_server_keeps_it_under_its_cap(tmp_path):
    shipper = LogShipper(tmp_path / "node")
    log = shipper.folder / "ann" / "bot-abc.log"
    log.parent.mkdir()
    log.write_bytes(b"== arena: match m1 ==\nA| one\n")
    assert shipper.collect() == {"ann/bot-abc.log": b"== arena: match m1 ==\nA| one\n"}
    assert shipper.collect() == {}
    with open(log, "ab") as out:
        out.write(b"A| two\n")
    gained = shipper.collect()
    assert gained == {"ann/bot-abc.log": b"A| two\n"}

    server = tmp_path / "server-logs"
    append_logs(server, {"ann/bot-abc.log": b"== arena: match m1 ==\nA| one\n"}, cap=40)
    append_logs(server, {"ann/bot-abc.log": b"A| two\nA| three\n"}, cap=40)
    append_logs(server, {"ann/bot-abc.log": b"A| four\n"}, cap=40)   # full: dropped
    text = (server / "ann" / "bot-abc.log").read_text()
    assert text == "== arena: match m1 ==\nA| one\nA| two\n" + TRUNCATED.format(cap=40)
    append_logs(server, {"../escape.log": b"x\n", "/tmp/abs.log": b"x\n", "ann/x.txt": b"x\n"})
    assert not (tmp_path / "escape.log").exists() and not (server / "ann" / "x.txt").exists()
    shipper.close()
    assert not shipper.folder.exists()

    # An actor killed before it could remove its folder: the next one on the node does.
    stale = tmp_path / "node" / "logs" / "actor-999999999-gone"
    stale.mkdir()
    LogShipper(tmp_path / "node").close()
    assert not stale.exists()


# -- a service on two Ray nodes ----------------------------------------------------------------

@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two cores to pin to")
def test_a_pinned_node_starts_everything_on_a_core_of_its_own(tmp_path):
    from arena.bench.raycluster import LocalCluster
    show = [sys.executable, "-c", "import os; print(sorted(os.sched_getaffinity(0)))"]
    pinned, free = LocalCluster(tmp_path, pin=True), LocalCluster(tmp_path)
    try:
        for index in (0, 1):
            done = subprocess.run(show, preexec_fn=pinned._pin(index), capture_output=True,
                                  text=True, check=True)
            assert done.stdout.strip() == str([pinned.cores[index]])
        assert free._pin(1) is None
    finally:
        pinned.stop()
        free.stop()
    assert not pinned.temp.exists()


def query(data: Path, sql: str) -> list[tuple]:
    conn = sqlite3.connect(f"file:{data / 'service.sqlite'}?mode=ro", uri=True)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def bot_folders(pids: set[int]) -> set[Path]:
    """The bot folders bubblewrap mounts for the bots among `pids` (`--ro-bind FOLDER
    BOT_DIR --chdir BOT_DIR`)."""
    found = set()
    for pid in pids:
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")
        except (OSError, UnicodeDecodeError):
            continue
        if Path(argv[0]).name != "bwrap":
            continue
        found |= {Path(argv[index - 2]) for index, word in enumerate(argv)
                  if word == "--chdir" and index >= 2 and argv[index - 3] == "--ro-bind"}
    return found


def wait_until(what, timeout: float, service: Service, note: str):
    deadline = time.monotonic() + timeout
    while not (found := what()):
        assert time.monotonic() < deadline, f"{note}:\n{service.log.read_text()[-3000:]}"
        assert service.process.poll() is None, service.log.read_text()[-3000:]
        time.sleep(0.5)
    return found


@pytest.mark.slow
@pytest.mark.ray
@pytest.mark.sandbox
def test_a_service_plays_on_two_nodes_that_share_nothing_with_it_but_ray(tmp_path):
    from arena.bench.raycluster import LocalCluster
    cluster = LocalCluster(tmp_path / "cluster", nodes=2, cpus=1).start()
    data = tmp_path / "data"
    service = Service(data, free_port(), tmp_path / "serve.log",
                      ["--executor", "ray", "--ray-address", cluster.address,
                       "--move-time", "2", *PACED], env=cluster.auth)
    try:
        for author in ("ann", "ben", "cy"):
            service.add_author(author)
        service.start()
        for author, bot in (("ann", "random"), ("ben", "greedy"), ("cy", "first")):
            status, answer = service.upload(pack_folder(SAMPLES / bot), service.tokens[author])
            assert status == 202, answer
            assert service.verdict(answer["id"], service.tokens[author])["status"] == "admitted"
        versions = {version for version, in query(data, "SELECT version FROM versions")}
        wait_until(lambda: len({row[0] for row in query(
            data, "SELECT DISTINCT value FROM matches, json_each(matches.versions)")}) == 3,
            60, service, "not every version played")

        # From now on no node could play a bot from the server's folder: it is gone.
        (data / "bots").rename(tmp_path / "server-bots-away")
        since = time.time()
        nodes = wait_until(lambda: {node for node, in query(
            data, f"SELECT DISTINCT node FROM matches WHERE stored > {since}")} - {None}
            if len(query(data, f"SELECT id FROM matches WHERE stored > {since}")) >= 16
            else None, 60, service, "too few matches on the nodes after the move")
        assert len(nodes) == 2, nodes   # both nodes played
        # The folders the sandbox gives the bots playing now: each node's cache, never ours.
        folders = wait_until(lambda: bot_folders(cluster.members()) if {
            folder.parents[1] for folder in bot_folders(cluster.members())} == {
            cluster.node_data(0), cluster.node_data(1)} else None, 30, service,
            "no bot sandboxed from each node's cache")
        assert {folder.name for folder in folders} <= versions, folders

        # A version submitted now is checked on an actor, between its matches, from its
        # node's cache; the check's logs come back to the server.
        dee = make_bot(tmp_path / "dee-bot", "late", random_player("import json"))
        service.add_author("dee")
        status, answer = service.upload(pack_folder(dee), service.tokens["dee"])
        assert status == 202, answer
        assert service.verdict(answer["id"], service.tokens["dee"])["status"] == "admitted"
        late = BotSpec.load(dee).version
        assert re.search(rf"dee/late@{late[:8]}: checked on Ray node [0-9a-f]{{12}}",
                         service.log.read_text()), service.log.read_text()[-3000:]
        assert any(late in NodeCache(cluster.node_data(index)).versions() for index in (0, 1))
        assert "== arena: match" in "".join(
            path.read_text() for path in (data / "checks" / str(answer["id"])).glob("*.log"))
        versions.add(late)
        assert query(data, "SELECT COUNT(*) FROM matches WHERE node IS NULL") == [(0,)]

        # The author reads their bot's log through the server; nobody else does.
        logs = service.get("/api/bots/ann/random/logs", service.tokens["ann"])["logs"]
        assert "== arena: match mandala-2p-t" in logs[0]["log"], logs
        assert service.request("/api/bots/ann/random/logs",
                               token=service.tokens["ben"])[0] == 403
        # The records as `arena verify` reads them.
        status, body = service.request("/api/ladders/mandala-2p/export.jsonl")
        assert status == 200
        export = tmp_path / "ladder.jsonl"
        export.write_bytes(body)
        checked = arena("verify", str(export))
        verdicts = [json.loads(line) for line in checked.stdout.splitlines()]
        assert len(verdicts) >= 16 and all(verdict["ok"] for verdict in verdicts)
        assert "paused" not in service.log.read_text()

        service.process.send_signal(signal.SIGTERM)
        service.process.wait(timeout=60)
    finally:
        service.stop()
        cluster.stop()
    for index in (0, 1):   # each node played from its own cache, filled through Ray
        node = cluster.node_data(index)
        assert set(NodeCache(node).versions()) <= versions, index
        assert len(NodeCache(node).versions()) >= 3, index
        assert not node.is_relative_to(data) and not data.is_relative_to(node)


RAY_GIVES_UP = 30
"""Seconds after which Ray's core ends a driver that lost its head, in the lost-head test
(RAY_gcs_rpc_server_reconnect_timeout_s; Ray's default is 60): a service must leave sooner,
and the test need not outlast a minute to show it did."""


@pytest.mark.slow
@pytest.mark.ray
@pytest.mark.sandbox
def test_a_service_whose_ray_head_is_lost_serves_on_and_plays_again_once_it_is_back(tmp_path):
    # The head's GCS lost (killed, as by the OOM killer), its node's raylet alive: Ray's core
    # ends a driver some time after losing its head. The service leaves Ray within seconds
    # instead, pauses its ladder (no match charged to a bot), keeps serving its pages and
    # admitting versions, and joins the cluster again once a head answers at the same
    # address: at once, not at the end of its ladder's pause.
    from arena.bench.raycluster import LocalCluster
    cluster = LocalCluster(tmp_path / "cluster", nodes=1, cpus=2).start()
    back = None
    data = tmp_path / "data"
    service = Service(data, free_port(), tmp_path / "serve.log",
                      ["--executor", "ray", "--ray-address", cluster.address,
                       "--move-time", "2", *PACED],
                      env={**cluster.auth,
                           "RAY_gcs_rpc_server_reconnect_timeout_s": str(RAY_GIVES_UP)})
    stored = lambda: query(data, "SELECT COUNT(*) FROM matches")[0][0]   # noqa: E731
    try:
        for author in ("ann", "ben"):
            service.add_author(author)
        service.start()
        for author, bot in (("ann", "random"), ("ben", "greedy")):
            status, answer = service.upload(pack_folder(SAMPLES / bot), service.tokens[author])
            assert status == 202, answer
            assert service.verdict(answer["id"], service.tokens[author])["status"] == "admitted"
        wait_until(lambda: stored() >= 2, 60, service, "too few matches before the loss")
        # A version whose check is on an actor when the head is lost is not judged by what the
        # host lost: its check fails for the host, and is tried again on the server's machine.
        # (It thinks 0.25 s a move: some 30 s of check, where the service leaves Ray some 10 s
        # after the loss.)
        slow = shutil.copytree(Path(__file__).parent / "lifecycle_bots" / "slow",
                               tmp_path / "slow-bot")
        manifest = slow / "bot.toml"   # the slow bot, thinking 0.25 s a move
        manifest.write_text(manifest.read_text().replace('"bot.py"]', '"bot.py", "0.25"]'))
        service.add_author("dee")
        status, answer = service.upload(pack_folder(slow), service.tokens["dee"])
        assert status == 202, answer
        checking = re.compile(rf"submission {answer['id']} \(dee/slow@\w+ on \S+\): checking")
        wait_until(lambda: checking.search(service.log.read_text()), 30, service,
                   "the check did not start")
        time.sleep(2)   # on its way to an actor

        cluster.lose_head()
        lost = time.monotonic()
        wait_until(lambda: "Ray: left the cluster whose head" in service.log.read_text(), 40,
                   service, "the service did not leave the lost cluster")
        left = time.monotonic() - lost
        lost_cluster = cluster.members()
        cluster.stop()   # what was left of it, its raylet among them
        verdict = service.verdict(answer["id"], service.tokens["dee"], timeout=180)
        assert verdict["status"] == "admitted", verdict
        # What is lost first, the head or the actor's connection, depends on the moment.
        assert re.search(r"\(attempt 2 of 3; attempt 1: the check could not run: (lost the "
                         r"Ray cluster|the Ray actor checking it failed)", verdict["reason"]
                         ), verdict["reason"]
        assert "checked on Ray node" not in service.log.read_text()
        # Its ladder pauses when a round finds the cluster still away. Once a head answers
        # (with one CPU of its two for now), the service joins it and the ladder plays at
        # once, on one worker (the other waits for a CPU).
        wait_until(lambda: "still does not answer" in service.log.read_text(), 60, service,
                   "no try to join the cluster again")
        up, before = time.monotonic(), stored()
        back = LocalCluster(tmp_path / "back", nodes=1, cpus=1, port=cluster.port,
                            token=cluster.auth["RAY_AUTH_TOKEN"]).start()
        wait_until(lambda: stored() >= before + 2, 60, service, "no match after the return")
        again = time.monotonic() - up
        log = service.log.read_text()
        assert f"Ray: joined the cluster at {cluster.address} again" in log, log[-3000:]
        assert "the fault of the host is over (the Ray cluster is back): play again now" \
            in log, log[-3000:]   # not at the end of the pause it was in (30 s at least)
        assert re.search(r"ladder mandala-2p paused for \d+ s by a fault of the host, not of "
                         r"any bot: lost the Ray cluster: its head \(GCS at [^)]+\) does not "
                         "answer", log), log[-3000:]
        assert "Traceback" not in log

        wait_until(lambda: time.monotonic() - lost > RAY_GIVES_UP + 5, 60, service,
                   "the service ended")   # Ray's time is up: the service lives on
        status, ladders = service.request("/api/ladders")
        assert status == 200, ladders
        assert query(data, "SELECT COUNT(*) FROM matches WHERE forfeit_seat IS NOT NULL"
                     ) == [(0,)]
        print(f"lost head: Ray left {left:.1f} s after the loss; 2 matches {again:.1f} s "
              "after a head started again")
        service.process.send_signal(signal.SIGTERM)
        service.process.wait(timeout=60)
    finally:
        service.stop()
        cluster.stop()
        if back is not None:
            back.stop()
    assert_all_gone(lost_cluster, lost_cluster)   # its actors' bots, and their cgroups
