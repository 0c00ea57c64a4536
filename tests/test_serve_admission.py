"""Admission that is fair to authors, end to end with a real `arena serve`: a bot that times
out in its first check (as on a loaded host) and then starts is admitted on a later attempt;
a rejected version gets one re-check, asked for with `arena author recheck` or the page's
button (a second is refused in one line); and a service that cannot pass its own check with
the sample bot (a start-up budget no bot meets) refuses to start in one line, so it rejects
nobody, as does one on a Python under /tmp (which each sandbox's own /tmp hides), at once.

Bots that fail first and pass later read the clock: before READY_AT they fail, after it they
play (a check's deals and seeds are fixed, so only time can change its outcome).
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time

import pytest

from arena.errors import ArenaError
from arena.serve.db import Ladder
from arena.serve.service import self_check
from arena.serve.uploads import pack_folder
from browser import chromium
from engine import registry
from serving import PACED, ROOT, Service, arena, free_port, make_bot, random_player

STARTUP = 6.0   # the ladder's start-up budget, seconds

pytestmark = pytest.mark.sandbox

UNTIL_READY = """
READY_AT = {ready_at!r}
if time.time() < READY_AT:
    print("not ready yet: {before}", file=sys.stderr, flush=True)
    {failure}
"""


def ready_later(folder, name: str, ready_at: float, failure: str) -> bytes:
    before = "sleeping past the start-up budget" if "sleep" in failure else "exiting"
    return pack_folder(make_bot(folder, name, random_player(UNTIL_READY.format(
        ready_at=ready_at, before=before, failure=failure))))


@pytest.fixture(scope="module")
def service(tmp_path_factory):
    where = tmp_path_factory.mktemp("admission")
    running = Service(where / "data", free_port(), where / "serve.log",
                      ["--workers", "1", "--move-time", "0.5", "--startup-time", str(STARTUP),
                       *PACED])
    for name in ("alice", "bob"):
        running.add_author(name)
    running.start()
    yield running
    running.stop()


@pytest.mark.slow
def test_the_service_checks_itself_at_start(service):
    log = service.log.read_text()
    assert "self-check: the sample bot random passes the admission check on mandala-2p" in log


@pytest.mark.slow
def test_a_bot_that_times_out_at_first_is_admitted_on_a_later_attempt(service, tmp_path):
    alice = service.tokens["alice"]
    # Its first attempt starts before READY_AT (unless it waits a whole start-up budget),
    # and ends a budget later: the retry, at least 5 s after that, finds it ready.
    data = ready_later(tmp_path / "flaky", "flaky", time.time() + STARTUP,
                       "time.sleep(60)")
    status, answer = service.upload(data, alice)
    assert status == 202, answer
    verdict = service.verdict(answer["id"], alice, timeout=180)
    assert verdict["status"] == "admitted", verdict
    assert "attempt 2 of 3" in verdict["reason"], verdict
    assert "attempt 1: start-up: timeout: no handshake within the start-up budget" \
        in verdict["reason"], verdict
    assert "submission 1: attempt 1 of 3 failed (timeout: " in service.log.read_text()


@pytest.mark.slow
def test_a_rejected_version_gets_one_recheck_from_the_cli(service, tmp_path):
    bob = service.tokens["bob"]
    ready_at = time.time() + 8
    status, answer = service.upload(ready_later(tmp_path / "late", "late", ready_at,
                                                "sys.exit(1)"), bob)
    assert status == 202, answer
    first = service.verdict(answer["id"], bob)
    assert first["status"] == "rejected" and "crash" in first["reason"], first
    assert first["recheck"] == f"/api/submissions/{answer['id']}/recheck"
    time.sleep(max(0.0, ready_at - time.time()))

    done = arena("author", "recheck", str(answer["id"]), "--server", service.url, "--token",
                 bob, "--wait")
    assert "admitted" in done.stdout, done.stdout
    second = int(done.stdout.split()[1])
    assert service.get(f"/api/submissions/{second}", bob)["version"] == first["version"]
    versions = service.get("/api/bots/bob/late")["versions"]
    assert [v["status"] for v in versions] == ["admitted"]

    # One re-check per version: asked again, of either submission, it is one line, exit 2.
    for submission, words in ((answer["id"], "was re-checked already"),
                              (second, "is admitted: only a rejected version")):
        again = arena("author", "recheck", str(submission), "--server", service.url,
                      "--token", bob, check=False)
        assert again.returncode == 2, again
        lines = again.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("arena: error: the service refused: ")
        assert words in lines[0], lines


@pytest.mark.slow
@pytest.mark.browser
def test_a_rejected_version_gets_one_recheck_from_its_page_and_the_api(service, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    alice, bob = service.tokens["alice"], service.tokens["bob"]
    status, answer = service.upload(ready_later(tmp_path / "never", "never", time.time() + 3600,
                                                "sys.exit(1)"), alice)
    assert status == 202, answer
    assert service.verdict(answer["id"], alice)["status"] == "rejected"
    recheck = f"/api/submissions/{answer['id']}/recheck"
    status, body = service.request(recheck, method="POST", data=b"")
    assert status == 401 and json.loads(body)["error"]
    status, body = service.request(recheck, token=bob, method="POST", data=b"")
    assert status == 403 and "another author" in json.loads(body)["error"]

    with chromium() as browser:
        browser.get(service.url + "/login")
        browser.find_element(By.ID, "token").send_keys(alice)
        browser.find_element(By.ID, "sign-in").click()
        WebDriverWait(browser, 30).until(lambda driver: driver.current_url.rstrip("/")
                                         == service.url)
        browser.get(f"{service.url}/submissions/{answer['id']}")
        browser.find_element(By.ID, "recheck").click()
        WebDriverWait(browser, 30).until(
            lambda driver: not driver.current_url.endswith(f"/submissions/{answer['id']}"))
        second = int(browser.current_url.rstrip("/").rsplit("/", 1)[1])
        assert second != answer["id"]
        assert service.verdict(second, alice)["status"] == "rejected"   # still never ready
        browser.get(f"{service.url}/submissions/{second}")
        assert not browser.find_elements(By.ID, "recheck")   # no second re-check offered
        browser.get(f"{service.url}/submissions/{answer['id']}")
        assert not browser.find_elements(By.ID, "recheck")

    status, body = service.request(recheck, token=alice, method="POST", data=b"")
    assert status == 409 and body.count(b"\n") <= 1, body
    assert "re-checked already" in json.loads(body)["error"]
    assert "recheck" not in service.get(f"/api/submissions/{second}", alice)


def test_a_service_on_a_python_no_sandbox_can_see_refuses_at_once(tmp_path):
    # An operator's mistake: the arena runs on a Python (a venv) under /tmp, which every
    # sandbox covers with its own /tmp, so no bot's `python3` is the arena's. Said before
    # anything starts, not after three failed self-checks 15 s apart.
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip",
                    str(venv)], check=True, timeout=120)
    port = free_port()
    done = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "from arena.cli import main; main()", "serve",
         "--data", str(tmp_path / "data"), "--port", str(port)],
        capture_output=True, text=True, timeout=300,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)})
    assert done.returncode == 2, done
    assert "Traceback" not in done.stderr, done.stderr
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("arena: error: "), done.stderr
    assert f"the arena runs on a Python in {venv}" in done.stderr, done.stderr
    assert "run Arena on a Python (or a venv) outside /tmp and /dev/shm" in done.stderr
    assert not (tmp_path / "data" / "checks").exists()   # no check was tried


def test_a_service_whose_sample_bot_fails_its_check_refuses_to_start(tmp_path):
    # A start-up budget no bot meets: the self-check fails (tried again, as any check whose
    # failure may be the host's) and the service says so in one line rather than reject
    # every author's bot.
    ladder = Ladder("mandala-2p", "mandala", 2, registry.get("mandala").rules(),
                    {"move_time": 0.5, "startup": 0.001})
    with pytest.raises(ArenaError) as refused:
        self_check({ladder.id: ladder}, tmp_path, pause=0)
    message = str(refused.value)
    assert "\n" not in message
    assert message.startswith("arena serve cannot check bots here, so it does not start: the "
                              "sample bot random fails the admission check on mandala-2p ")
    # Each attempt a timeout, or, on a machine whose other processes held the CPU through
    # that millisecond, the host's fault (the arena's measure of its load: arena.hostload).
    assert re.search(r"\(attempt 3 of 3; attempt 1: (start-up: timeout: |the check could not "
                     r"run: bot random did not start within 0\.001 s while other processes "
                     r"held the machine's CPU)", message), message
    assert message.endswith("fix the host (see `arena doctor`) or the time control, then "
                            "start again")


@pytest.mark.slow
def test_only_a_bots_latest_version_can_be_rechecked(service, tmp_path):
    alice = service.tokens["alice"]
    ids = []
    for index in range(2):   # two versions of one bot, both rejected (never ready)
        status, answer = service.upload(ready_later(tmp_path / f"v{index}", "twice",
                                                    time.time() + 3600 + index,
                                                    "sys.exit(1)"), alice)
        assert status == 202, answer
        assert service.verdict(answer["id"], alice)["status"] == "rejected"
        ids.append(answer["id"])
    status, body = service.request(f"/api/submissions/{ids[0]}/recheck", token=alice,
                                   method="POST", data=b"")
    assert status == 409 and f"has a newer version on mandala-2p (submission {ids[1]})" \
        in json.loads(body)["error"], body
    status, body = service.request(f"/api/submissions/{ids[1]}/recheck", token=alice,
                                   method="POST", data=b"")
    assert status == 202 and json.loads(body)["recheck_of"] == ids[1], body


HOST_FAULT = """
import functools, sys
from pathlib import Path
from arena.clock import TimeControl
from arena.serve.admission import checked
from arena.serve.compliance import sample_check
from arena.serve.db import Ladder
ladder = Ladder("mandala-2p", "mandala", 2, "mandala/1", TimeControl().to_record())
verdict = checked(functools.partial(sample_check, ladder, Path(sys.argv[1])), pause=0.1,
                  note=lambda line: print("note:", line))
print("verdict:", verdict.passed, verdict.fault, verdict.reason)
"""


def test_a_socket_that_cannot_be_made_is_the_hosts_fault_and_is_tried_again(tmp_path):
    # A TMPDIR so deep that no bot's Unix socket path fits in 107 bytes: gRPC cannot bind.
    deep = tmp_path / ("d" * 100) / ("e" * 100)
    deep.mkdir(parents=True)
    done = subprocess.run([sys.executable, "-c", HOST_FAULT, str(tmp_path / "logs")],
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(ROOT), "TMPDIR": str(deep)})
    notes = [line for line in done.stdout.splitlines() if line.startswith("note:")]
    assert [note.split(" failed ")[0] for note in notes] == [
        "note: attempt 1 of 3", "note: attempt 2 of 3"], done
    assert all("(host: the check could not run: the host could not serve bot random: "
               "Failed to bind" in note for note in notes), notes
    verdict = done.stdout.splitlines()[-1]
    assert verdict.startswith("verdict: False host the check could not run") and \
        "(attempt 3 of 3; attempt 1: " in verdict, done
