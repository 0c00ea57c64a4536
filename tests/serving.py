"""A real `arena serve` process for the service's tests: started on a free port with a data
folder of the test's, talked to over HTTP, stopped by its own pid (never by name)."""
from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
import urllib.error
import urllib.request
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Sequence

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_bots"


PACED = ("--matches-per-minute", "60")
"""For services whose tests need a few matches, not thousands: unpaced, a service plays
some 20 matches a second on a core for as long as it runs, which the suite's other tests,
sharing two cores, would wait on (arena.serve.pace)."""


def arena(*args: str, check: bool = True, env: dict | None = None,
          timeout: float = 300) -> subprocess.CompletedProcess:
    """Runs the `arena` command of this checkout as a subprocess."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    done = subprocess.run([sys.executable, "-c", "from arena.cli import main; main()", *args],
                          capture_output=True, text=True, env=env, timeout=timeout)
    if check:
        assert done.returncode == 0, done.stderr
    return done


def free_port() -> int:
    import socket
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def app_server(app, **config) -> Iterator[str]:
    """The web app `app` on a real uvicorn server on a free port, in a thread of this process
    (no admission thread, no matches): its URL, while the block runs. `config`: more of
    uvicorn.Config's keywords (quiet by default)."""
    import threading
    import uvicorn
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=free_port(),
                                           **{"log_level": "critical", **config}))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert time.monotonic() < deadline and thread.is_alive(), "the server did not start"
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{server.config.port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def make_bot(folder: Path, name: str, code: str) -> Path:
    """A Python bot folder: its bot.toml (plays mandala) and `code` as bot.py."""
    folder.mkdir(parents=True)
    (folder / "bot.toml").write_text(f'name = "{name}"\ncommand = ["python3", "bot.py"]\n'
                                     'games = ["mandala"]\n')
    (folder / "bot.py").write_text(code)
    return folder


def random_player(prelude: str) -> str:
    """The code of a Python bot that runs `prelude` at start, then plays random legal moves
    (seeded per match, as the sample bot `random` does)."""
    return f"""import random, sys, time
from arena.sdk import Bot, strategies
{prelude.strip()}

class Player(Bot):
    def new_match(self, match):
        self.rng = random.Random(match.rng_seed)

    def act(self, observation, legal_moves):
        return strategies.get("random", self.match.game)(observation, legal_moves, self.rng)

Player().run()
"""


class Service:
    """One `arena serve` process, and how to talk to it."""

    def __init__(self, data: Path, port: int, log: Path, options: Sequence[str] = (),
                 env: dict | None = None):
        """`env`: more environment for the service (a Ray cluster's auth token)."""
        self.data, self.port, self.log = data, port, log
        self.options = list(options)
        self.env = dict(env or {})
        self.url = f"http://127.0.0.1:{port}"
        self.process: subprocess.Popen | None = None
        self.tokens: dict[str, str] = {}

    def add_author(self, name: str) -> str:
        self.tokens[name] = arena("author", "add", name, "--data", str(self.data)
                                  ).stdout.strip()
        return self.tokens[name]

    def start(self) -> None:
        env = {**os.environ, "PYTHONPATH": str(ROOT), **self.env}
        self.started = time.monotonic()   # before the process: its matches come after
        self.process = subprocess.Popen(
            [sys.executable, "-c", "from arena.cli import main; main()", "serve",
             "--data", str(self.data), "--port", str(self.port), *self.options],
            stdout=subprocess.DEVNULL, stderr=open(self.log, "ab"), env=env)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            assert self.process.poll() is None, self.log.read_text()
            try:
                self.get("/api/ladders")
                return
            except OSError:
                time.sleep(0.2)
        raise AssertionError(f"the service did not answer in 120 s:\n{self.log.read_text()}")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def peak_memory_kib(self) -> int:
        """The service process's peak resident memory (VmHWM), in KiB."""
        status = Path(f"/proc/{self.process.pid}/status").read_text()
        return int(next(line.split()[1] for line in status.splitlines()
                        if line.startswith("VmHWM:")))

    def request(self, path: str, *, token: str | None = None, data: bytes | None = None,
                method: str | None = None,
                headers: dict | None = None) -> tuple[int, bytes]:
        headers = {**({"Authorization": f"Bearer {token}"} if token else {}),
                   **(headers or {})}
        request = urllib.request.Request(self.url + path, data=data, headers=headers,
                                         method=method)
        try:
            with urllib.request.urlopen(request, timeout=120) as response:
                return response.status, response.read()
        except urllib.error.HTTPError as error:
            return error.code, error.read()

    def get(self, path: str, token: str | None = None) -> dict:
        status, body = self.request(path, token=token)
        assert status == 200, (status, body)
        return json.loads(body)

    def upload(self, data: bytes, token: str, ladder: str = "mandala:2") -> tuple[int, dict]:
        status, body = self.request(f"/api/submissions?ladder={ladder}", token=token,
                                    data=data, method="POST")
        assert body.count(b"\n") <= 1, body   # one line of JSON, never a traceback page
        return status, json.loads(body)

    def verdict(self, submission: int, token: str, timeout: float = 120) -> dict:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            answer = self.get(f"/api/submissions/{submission}", token)
            if answer["status"] != "checking":
                return answer
            time.sleep(0.5)
        raise AssertionError(f"submission {submission} still checking after {timeout} s")

    def ladder(self) -> list[dict]:
        return self.get("/api/ladders/mandala-2p")["ladder"]

    def stored_match_ids(self) -> set[str]:
        conn = sqlite3.connect(f"file:{self.data / 'service.sqlite'}?mode=ro", uri=True)
        try:
            return {row[0] for row in conn.execute("SELECT id FROM matches")}
        finally:
            conn.close()
