"""Joining a Ray cluster and watching its head: the checks that turn Ray's minutes of silent
retries into one line (a bad address, a missing auth token) and a lost head into a HostError
within seconds, for `arena.league.ray_pool`.

A driver whose cluster head (its GCS) is gone waits in vain on every Ray call, and Ray's core
ends the driver's process a minute after losing the head ("Failed to connect to GCS within
60 seconds", exit 1). `Head` asks the head every HEAD_CHECK_SECONDS whether it still takes a
connection; the pool then leaves Ray (`ray.shutdown()`, which returns within seconds even
with the head gone), and the process lives on: a league stops with one line, a service
keeps serving and joins the cluster again once its head answers.
"""
from __future__ import annotations

import os
import socket
import time
from pathlib import Path

from arena.errors import HostError
from arena.league.config import LeagueError

HEAD_CHECK_SECONDS = 10.0
"""How often a joined cluster's head is asked whether it still takes a connection, whatever
the driver is doing (matches may still finish on nodes that live on without it): once lost,
Ray ends the driver a minute later with a line of its own."""


def ray_module():
    try:
        import ray
    except ImportError:
        raise LeagueError("the Ray executor needs Ray: pip install 'arena[ray]' "
                          "(or leave out --executor ray)") from None
    return ray


def connect_error(address: str) -> OSError | ValueError | None:
    """Why HOST:PORT (an IPv6 host in brackets) takes no connection within 5 s; None if it
    takes one."""
    host, _, port = address.rpartition(":")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=5).close()
    except (OSError, ValueError) as error:
        return error
    return None


def why(error: BaseException) -> str:
    return getattr(error, "strerror", None) or str(error)


def plain(address: str) -> bool:
    """True for a HOST:PORT, which these checks can ask; not for `auto` or a URL (`ray://`),
    which Ray resolves."""
    return "://" not in address and address != "auto"


def check_reachable(address: str) -> None:
    """Ray waits minutes for an address that does not answer: fail fast on a plain
    HOST:PORT that refuses or times out."""
    if not plain(address):
        return
    error = connect_error(address)
    if error is not None:
        raise LeagueError(f"cannot reach the Ray cluster at {address} ({why(error)}): check "
                          "--ray-address (HOST:PORT of the cluster's head node)")


def local_token() -> str | None:
    """The Ray auth token this process would send, where Ray looks for one."""
    if os.environ.get("RAY_AUTH_TOKEN"):
        return os.environ["RAY_AUTH_TOKEN"].strip()
    path = Path(os.environ.get("RAY_AUTH_TOKEN_PATH") or Path.home() / ".ray" / "auth_token")
    try:
        return path.read_text().strip() or None
    except OSError:
        return None


def check_token(address: str) -> bool:
    """A cluster with token authentication refuses a driver without its token, but Ray says
    only "cannot connect" after 20 s of retries: ask the cluster's GCS once without a token
    and, if refused, once with the token Ray would send, and name the token if that is
    refused too. True when the cluster needs the token and takes this one."""
    if not plain(address):
        return False
    import grpc   # an Arena dependency anyway (the bot protocol)

    def refused(metadata: list[tuple[str, str]]) -> bool:
        with grpc.insecure_channel(address) as channel:
            ask = channel.unary_unary("/ray.rpc.NodeInfoGcsService/GetClusterId",
                                      request_serializer=None, response_deserializer=None)
            try:
                ask(b"", timeout=5, metadata=metadata)
            except grpc.RpcError as error:
                return error.code() == grpc.StatusCode.UNAUTHENTICATED
            return False
    if not refused([]):
        return False
    token = local_token()
    if token and not refused([("authorization", f"Bearer {token}")]):
        return True
    raise LeagueError(
        f"the Ray cluster at {address} needs its auth token"
        f"{' (the one found here is refused)' if token else ''}: set "
        "RAY_AUTH_TOKEN to the cluster's token (or put it in ~/.ray/auth_token) and "
        "RAY_AUTH_MODE=token, and run again")


class Head:
    """The joined cluster's head, HOST:PORT of its GCS, and when it is next asked."""

    def __init__(self, address: str, then: str):
        """`then`: what the user does about a lost head (resume the league; wait)."""
        self.address = address
        self.then = then
        self.due = time.monotonic() + HEAD_CHECK_SECONDS

    def answers(self) -> bool:
        return connect_error(self.address) is None

    def lost(self) -> bool:
        """True when a check is due (one every HEAD_CHECK_SECONDS at most) and the head
        takes no connection."""
        if time.monotonic() < self.due:
            return False
        answers = self.answers()
        self.due = time.monotonic() + HEAD_CHECK_SECONDS
        return not answers

    def error(self) -> HostError:
        return HostError(f"lost the Ray cluster: its head (GCS at {self.address}) does not "
                         f"answer; finished matches are stored: {self.then}")
