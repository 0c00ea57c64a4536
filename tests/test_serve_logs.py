"""Logs in `arena serve`: two authors who submit byte-identical bots each read, through the
real HTTP API, only what their own bot's processes wrote; and no bot's line passes for the
arena's there.

A real service process (tests/test_serve.py's `Service`) with a fresh data folder, two
authors, and one bot folder submitted by both: same manifest name, same content hash.
Its own service, not test_serve.py's: the test counts every log file in the data folder.
"""
from __future__ import annotations

import re
import time

import pytest

from arena.serve.uploads import pack_folder
from test_bot_logs import FORGED_HEADER, forged_lines, shows_each_forgery_on_one_line
from test_serve import Service, make_bot, started_service

pytestmark = pytest.mark.sandbox

TWIN = """
import random, sys
from arena.sdk import Bot, strategies

class Twin(Bot):
    def new_match(self, match):
        self.rng = random.Random(match.rng_seed)
        print(f"twin: private notes of seat {match.seat}", file=sys.stderr, flush=True)

    def act(self, observation, legal_moves):
        return strategies.get("random", self.match.game)(observation, legal_moves, self.rng)

Twin().run()
"""
HEADER = re.compile(r"^== arena: match (\S+): mandala, seat (\d) of 2, .*==$", re.MULTILINE)


@pytest.fixture(scope="module")
def service(tmp_path_factory):
    running = started_service(tmp_path_factory.mktemp("serve-logs"))
    yield running
    running.stop()


def games_of(service: Service, bot: str) -> int:
    return sum(version["games"] for version in service.get(f"/api/bots/{bot}")["versions"])


@pytest.mark.slow
def test_two_authors_with_byte_identical_bots_read_only_their_own_logs(service, tmp_path):
    twin = make_bot(tmp_path / "twin", "twin", TWIN)
    versions = set()
    for author in ("alice", "bob"):
        token = service.tokens[author]
        status, answer = service.upload(pack_folder(twin), token)
        assert status == 202, answer
        verdict = service.verdict(answer["id"], token)
        assert verdict["status"] == "admitted", verdict
        versions.add(verdict["version"])
    assert len(versions) == 1   # byte-identical: one content hash
    deadline = time.monotonic() + 240
    while min(games_of(service, "alice/twin"), games_of(service, "bob/twin")) < 2:
        assert time.monotonic() < deadline, "the twins did not play 2 matches each in 240 s"
        time.sleep(1)

    for author in ("alice", "bob"):
        logs = service.get(f"/api/bots/{author}/twin/logs", service.tokens[author])["logs"]
        text = "".join(log["log"] for log in logs)
        assert "twin: private notes of seat" in text
        stored = {match["id"]: match["bots"] for match in service.get(
            "/api/matches?ladder=mandala-2p&limit=500")["matches"]}
        headers = [(match_id, int(seat)) for match_id, seat in HEADER.findall(text)
                   if match_id in stored]   # not the match being played now
        assert len(headers) >= 2, text
        for match_id, seat in headers:
            # Every match header in the author's log is for a seat the author's own version
            # played: with a log per name and version (as it was: the control) half of them
            # were the other author's.
            assert stored[match_id][seat].startswith(f"{author}/twin@"), (author, match_id)
    on_disk = sorted(path.relative_to(service.data / "logs").as_posix()
                     for path in (service.data / "logs").rglob("*.log"))
    version = versions.pop()
    assert on_disk == [f"alice/twin-{version}.log", f"bob/twin-{version}.log"]


def test_a_header_forged_behind_u2028_is_one_escaped_line_in_the_services_excerpt(service):
    """The forged_header bot (tests/misbehaving_bots/) submitted for real: the end of its log
    that its author reads through the API shows each forgery on one line."""
    token = service.tokens["alice"]
    status, answer = service.upload(pack_folder(FORGED_HEADER), token)
    assert status == 202, answer
    verdict = service.verdict(answer["id"], token)
    assert verdict["status"] == "rejected", verdict
    assert forged_lines(verdict["log"]) == [], verdict["log"]
    assert shows_each_forgery_on_one_line(verdict["log"]), verdict["log"]
