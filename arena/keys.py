"""Secret keys from which deals, chance draws and bots' seeds are derived.

A bot can import the engine inside its sandbox, so anything it is sent that is a plain
function of the deal's seed (or of a seed a person typed) lets it rebuild the deal: every
hand, the deck order, the chance stream. So every seed that fixes hidden information is an
HMAC of a secret key that never enters a sandbox:

- `installation_key()`: a random key in a 0600 file of this installation (outside every
  folder a sandbox mounts), made on first use. `arena play --seed 7` derives its match from it,
  so the same seed on the same installation replays the same match, and nowhere else.
- `LeagueKey.for_league(seed)`: a league's key, derived from the installation key and the
  league seed, and stored in the league database: the same seed on the same installation
  gives the same league, a resumed league finds its key in its own database, and a bot that
  guesses the seed a person typed learns nothing.

Records hold their explicit setup, so verifying a record needs no key.
"""
from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from dataclasses import dataclass
from pathlib import Path

from arena.errors import ArenaError

KEY_BYTES = 32
KEY_FILE_ENV = "ARENA_KEY_FILE"
"""Where the installation key lives, if set (tests point it at a temporary file)."""


class KeyFileError(ArenaError):
    """The installation key cannot be read or made."""


def random_seed() -> int:
    """A default seed where a person gave none: 64 random bits."""
    return secrets.randbits(64)


@dataclass(frozen=True)
class LeagueKey:
    """A secret key and the seeds it derives. Pure: no I/O."""

    key: bytes

    @classmethod
    def new(cls) -> "LeagueKey":
        return cls(secrets.token_bytes(KEY_BYTES))

    @classmethod
    def from_hex(cls, text: str) -> "LeagueKey":
        key = bytes.fromhex(text)
        if len(key) != KEY_BYTES:
            raise ValueError(f"a key has {KEY_BYTES} bytes, not {len(key)}")
        return cls(key)

    @classmethod
    def for_league(cls, seed: int, installation: "LeagueKey | None" = None) -> "LeagueKey":
        """The key of a league with this seed on this installation."""
        parent = installation or installation_key()
        return cls(hmac.new(parent.key, f"arena-league:{seed}".encode(), hashlib.sha256).digest())

    def hex(self) -> str:
        return self.key.hex()

    def derive(self, label: str) -> int:
        """A 63-bit number (fits a signed 64-bit field) that only this key gives for `label`."""
        digest = hmac.new(self.key, label.encode(), hashlib.sha256).digest()
        return int.from_bytes(digest[:8], "big") >> 1

    def deal_seed(self, label: str) -> int:
        """The engine seed of a deal: its cards and its chance draws."""
        return self.derive(f"deal:{label}")

    def bot_seed(self, match_label: str, seat: int) -> int:
        """The `rng_seed` a bot gets for its seat in a match: independent of the deal."""
        return self.derive(f"bot:{match_label}:{seat}")

    def match_seeds(self, match_label: str, players: int, deal_label: str | None = None
                    ) -> "MatchSeeds":
        """The deal and every seat's bot seed of one match (its deal shared if labelled)."""
        return MatchSeeds(self.deal_seed(deal_label or match_label),
                          tuple(self.bot_seed(match_label, seat) for seat in range(players)))


@dataclass(frozen=True)
class MatchSeeds:
    """What fixes a match besides the bots' replies."""

    deal: int
    """The engine seed: the deal and the chance draws. Never sent to a bot."""
    bots: tuple[int, ...]
    """Per seat, the `rng_seed` sent to that seat's bot."""

    @classmethod
    def secret(cls, deal: int, players: int) -> "MatchSeeds":
        """A deal with fresh random bot seeds: for a match nobody needs to replay."""
        return cls(deal, tuple(random_seed() >> 1 for _ in range(players)))


def key_path() -> Path:
    """The installation key's file: $ARENA_KEY_FILE, else under $XDG_DATA_HOME (or
    ~/.local/share)/arena: a place no sandbox mounts."""
    explicit = os.environ.get(KEY_FILE_ENV)
    if explicit:
        return Path(explicit)
    data = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data) / "arena" / "installation.key"


def installation_key() -> LeagueKey:
    """This installation's secret key, made (0600, in a 0700 folder) on first use."""
    path = key_path()
    try:
        return LeagueKey.from_hex(path.read_text().strip())
    except FileNotFoundError:
        pass
    except (OSError, ValueError) as error:
        raise KeyFileError(
            f"cannot read the installation key {path} ({error}): fix or remove the file "
            "(a new key gives new deals for the same seeds)") from None
    key = LeagueKey.new()
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        # Written whole under a temporary name, then linked in place: a process reading at
        # the same moment sees no file or a whole key, and two first uses agree on one key.
        temporary = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as file:
            file.write(key.hex() + "\n")
        try:
            os.link(temporary, path)
        except FileExistsError:
            return installation_key()   # another process made it first: use theirs
        finally:
            temporary.unlink()
    except OSError as error:
        raise KeyFileError(f"cannot create the installation key {path} ({error.strerror}): "
                           f"set {KEY_FILE_ENV} to a writable file path") from None
    return key
