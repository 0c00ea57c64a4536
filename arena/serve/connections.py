"""HTTP connections held within bounds: uvicorn (h11) closes an idle kept-alive connection,
but never one whose request is still arriving, so a client sending half a request, or a
byte of it now and then, would hold its connection (a file descriptor) for ever: enough of
them and the service runs out of descriptors. `GuardedH11` gives each request a deadline to
arrive (its headers, then its body) and refuses connections past a cap set well below the
process's descriptor limit. A public deployment still belongs behind a reverse proxy with
request timeouts (README): one client could hold every slot for HEADERS_SECONDS at a time.
"""
from __future__ import annotations

import asyncio
import logging
import resource
import time
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

log = logging.getLogger(__name__)

HEADERS_SECONDS = 10.0
"""From a connection's start, or its previous answer, to a request's complete headers."""
BODY_SECONDS = 120.0
"""From a request's headers to the end of its body: a 5 MiB upload at 50 KiB/s."""
KEEP_ALIVE_SECONDS = 5
"""An idle connection between requests is closed after this (uvicorn's own timer)."""
MOST_CONNECTIONS = 1024


def connection_cap(most: int = MOST_CONNECTIONS) -> int:
    """Open connections allowed at once: at most half the descriptors this process may open
    (the rest for the database, logs, and the pipes of bots' processes)."""
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return most
    return max(16, min(most, soft // 2))


REFUSED = (b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\n"
           b"Connection: close\r\nContent-Length: 42\r\n\r\n"
           b"too many connections: try again in a while")


def guarded_h11(headers_seconds: float = HEADERS_SECONDS, body_seconds: float = BODY_SECONDS,
                most_connections: int | None = None) -> type[H11Protocol]:
    """The h11 protocol class for uvicorn's `http=` with these bounds."""
    cap = connection_cap() if most_connections is None else most_connections
    last_warning = [0.0]

    class GuardedH11(H11Protocol):
        deadline: asyncio.TimerHandle | None = None

        def connection_made(self, transport) -> None:   # type: ignore[override]
            if len(self.connections) >= cap:
                # Answered and closed at once: never held, so never a descriptor short.
                transport.write(REFUSED)
                transport.close()
                if time.monotonic() - last_warning[0] > 60:
                    last_warning[0] = time.monotonic()
                    log.warning("%d connections open, the most allowed: new ones are "
                                "refused (503) until some close", cap)
                return
            super().connection_made(transport)
            self._arm(headers_seconds)

        def connection_lost(self, exc: Exception | None) -> None:
            if self.transport is None:   # refused in connection_made
                return
            self._disarm()
            super().connection_lost(exc)

        def data_received(self, data: bytes) -> None:
            if self.transport is None:
                return
            waiting_headers = self.conn.their_state is h11.IDLE
            super().data_received(data)
            self._follow(waiting_headers)

        def on_response_complete(self) -> None:
            super().on_response_complete()   # may parse a next request sent meanwhile
            if self.transport.is_closing():
                self._disarm()
            elif self.conn.their_state is h11.IDLE:
                self._arm(headers_seconds)   # the next request's headers, from now
            else:
                self._follow(waited_headers=True)

        def _follow(self, waited_headers: bool) -> None:
            """After the parser ran: the headers are in (the body's deadline starts), or the
            whole request is (no deadline: answering takes what it takes)."""
            state = self.conn.their_state
            if state is h11.SEND_BODY:
                if waited_headers:
                    self._arm(body_seconds)
            elif state is not h11.IDLE:
                self._disarm()

        def _arm(self, seconds: float) -> None:
            self._disarm()
            self.deadline = self.loop.call_later(seconds, self._too_slow)

        def _disarm(self) -> None:
            if self.deadline is not None:
                self.deadline.cancel()
                self.deadline = None

        def _too_slow(self) -> None:
            self.deadline = None
            if self.conn.their_state in (h11.IDLE, h11.SEND_BODY) \
                    and not self.transport.is_closing():
                self.transport.close()   # the app, if it was reading the body, sees a disconnect

    return GuardedH11


def uvicorn_settings(**bounds: Any) -> dict[str, Any]:
    """uvicorn.Config's keywords for the service's connection bounds (`bounds`: guarded_h11's)."""
    return {"http": guarded_h11(**bounds), "timeout_keep_alive": KEEP_ALIVE_SECONDS,
            "server_header": False}
