"""Bot manifests: what a bot is (`BotSpec`), its version (`folder_hash`), and `resolve_bot`,
the one rule that turns a `--bot` argument into a built-in bot or a bot folder.

`BotSpec.load(folder)` reads a bot folder's `bot.toml`:

    name = "greedy"
    command = ["python3", "bot.py"]          # run inside the folder
    games = ["mandala", "flowers-mandala", "flowers"]

This module does not import gRPC: checking a league's bots costs no server.
"""
from __future__ import annotations

import difflib
import hashlib
import logging
import os
import re
import stat
import tomllib
from dataclasses import dataclass
from pathlib import Path

from arena.errors import ArenaError, visible
from arena import strategies
from engine import registry

log = logging.getLogger(__name__)

BUILTIN = "builtin:"
"""Prefix that names a built-in bot even where a folder of that name exists (`builtin:random`)."""


def is_builtin(source: str) -> bool:
    """Whether a bot's source (as stored with a league: a folder or `builtin:NAME`) is a
    built-in bot, played in process, rather than a bot folder run in the sandbox."""
    return source.startswith(BUILTIN)

RESOLUTION_RULE = ("BOT is a bot folder when that folder exists and holds a bot.toml, else a "
                   "built-in bot ({builtins}); `builtin:NAME` always means the built-in.")


BOT_NAME = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9_.-]{0,63}")
"""A bot's name: data that becomes part of file names (its log), never a path."""
BOT_NAME_RULE = ("letters, digits, '-', '_' and '.', at most 64 characters, not starting "
                 "with a dot")


@dataclass(frozen=True)
class BotSpec:
    """A bot folder and its manifest. Equal specs share pooled processes."""

    folder: Path
    name: str
    command: tuple[str, ...]
    games: tuple[str, ...]
    version: str   # content hash of the folder: a changed bot is a different version

    def __post_init__(self):
        if not BOT_NAME.fullmatch(self.name):
            raise ArenaError(f"bot name {self.name!r} is not allowed: use {BOT_NAME_RULE}")

    @classmethod
    def load(cls, folder: str | Path, game_id: str | None = None) -> "BotSpec":
        """The bot in `folder`; with `game_id`, also refuses a bot that does not play it."""
        spec = cls._read(folder)
        if game_id is not None and game_id not in spec.games:
            raise ArenaError(f"bot {spec.name} ({folder}) does not play {game_id} (it plays: "
                             f"{', '.join(spec.games)}): choose another bot or game")
        return spec

    @classmethod
    def _read(cls, folder: str | Path) -> "BotSpec":
        folder = Path(folder).resolve()
        manifest = folder / "bot.toml"
        if not folder.is_dir():
            raise ArenaError(f"bot folder {folder} does not exist")
        try:
            data = tomllib.loads(_manifest_text(manifest))
        except FileNotFoundError:
            raise ArenaError(f"bot folder {folder} has no bot.toml manifest") from None
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
            raise ArenaError(f"cannot read {manifest}: {visible(str(error))}") from None
        except RecursionError:
            raise ArenaError(f"cannot read {manifest}: nested too deeply") from None
        _warn_unknown_keys(manifest, data)
        name, command, games = data.get("name"), data.get("command"), data.get("games")
        problems = []   # every one at once: an author fixes them in one go, not one per run
        if not (isinstance(name, str) and name.strip()):
            problems.append("`name` must be a non-empty string")
        elif not BOT_NAME.fullmatch(name.strip()):
            problems.append(f"`name` {name.strip()!r} is not allowed: use {BOT_NAME_RULE}")
        if not (isinstance(command, list) and command
                and all(isinstance(part, str) and part for part in command)):
            problems.append('`command` must be a list of strings, e.g. ["python3", "bot.py"]')
        if not (isinstance(games, list) and games and all(isinstance(g, str) for g in games)):
            problems.append('`games` must list game ids, e.g. ["mandala"]')
        else:
            unknown = [game for game in games if game not in registry.ids()]
            if unknown:
                problems.append(f"unknown game{'s' if len(unknown) > 1 else ''} "
                                f"{', '.join(map(repr, unknown))} (known games: "
                                f"{', '.join(registry.ids())})")
        if problems:
            count = f"{len(problems)} problems: " if len(problems) > 1 else ""
            raise ArenaError(f"{manifest}: {count}{'; '.join(problems)}")
        return cls(folder, name.strip(), tuple(command), tuple(games), folder_hash(folder))


MANIFEST_BYTES = 64 * 1024   # far above any manifest's three keys


def _manifest_text(manifest: Path) -> str:
    """The manifest's text: a plain file of the folder, never a link (to /dev/zero, another
    user's file), a pipe that never ends, nor more than MANIFEST_BYTES."""
    fd = os.open(manifest, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(f"it is not a plain file ({stat.filemode(info.st_mode)})")
        data = os.read(fd, MANIFEST_BYTES + 1)
    finally:
        os.close(fd)
    if len(data) > MANIFEST_BYTES:
        raise OSError(f"it is over {MANIFEST_BYTES // 1024} KiB")
    return data.decode()


MANIFEST_KEYS = ("name", "command", "games")
_warned: set[tuple[Path, str]] = set()


def _warn_unknown_keys(manifest: Path, data: dict) -> None:
    """One warning line per key the arena does not read (a typo such as `game` would
    otherwise be ignored in silence), once per manifest and key in this process."""
    for key in data:
        if key in MANIFEST_KEYS or (manifest, key) in _warned:
            continue
        _warned.add((manifest, key))
        close = difflib.get_close_matches(key, MANIFEST_KEYS, n=1)
        hint = f"did you mean `{close[0]}`? " if close else ""
        log.warning(f"{manifest}: unknown key `{visible(key)}` is ignored ({hint}the keys are "
                    f"{', '.join(MANIFEST_KEYS)})")


def folder_hash(folder: Path) -> str:
    """A short hash of every file's path and bytes, and of every symbolic link's path and
    text (caches excluded).

    Links are never followed: one pointing out of the folder would make the arena read what it
    points to into the hash (another author's bot, a device that never ends), and in the
    sandbox, where the folder is all a bot has of its own, it can only lead to what every bot
    sees. So a link is versioned by its text: changing the link changes the version, changing
    what it points to does not. A folder without links hashes as it always has."""
    digest = hashlib.sha256()
    for path in sorted(folder.rglob("*")):   # rglob does not descend into linked folders
        if "__pycache__" in path.parts or path.suffix == ".pyc":
            continue
        name = os.fsencode(path.relative_to(folder))   # its bytes, even if not UTF-8
        if path.is_symlink():
            digest.update(name + b"\0-> ")
            digest.update(os.fsencode(os.readlink(path)) + b"\0")
        elif path.is_file():
            digest.update(name + b"\0")
            with open(path, "rb") as file:   # in chunks: a big file never sits in memory
                while chunk := file.read(HASH_CHUNK):
                    digest.update(chunk)
            digest.update(b"\0")
    return digest.hexdigest()[:12]


HASH_CHUNK = 1 << 20


@dataclass(frozen=True)
class BuiltinBot:
    """A built-in strategy played in process (`random`, `greedy`)."""

    name: str

    @property
    def source(self) -> str:
        return BUILTIN + self.name


def resolve_bot(source: str, game_id: str) -> BotSpec | BuiltinBot:
    """The bot a `--bot` argument names, for `game_id` (see RESOLUTION_RULE).

    A folder with a bot.toml wins over a built-in of the same name, so a bot folder called
    `random` in the working directory is the bot its author means; `builtin:random` reaches
    the built-in from there.
    """
    if is_builtin(source):
        name = source.removeprefix(BUILTIN)
        if name not in strategies.NAMES:
            raise ArenaError(f"unknown built-in bot {name!r}: the built-in bots are "
                             f"{', '.join(strategies.NAMES)}")
        return BuiltinBot(name)
    folder = Path(source)
    if (folder / "bot.toml").is_file():
        return BotSpec.load(folder, game_id)
    if source in strategies.NAMES:
        return BuiltinBot(source)
    if folder.is_dir():
        return BotSpec.load(folder, game_id)   # says the manifest is missing
    raise ArenaError(f"unknown bot {source!r}: give a bot folder with a bot.toml or a "
                     f"built-in bot ({', '.join(strategies.NAMES)})")


def resolution_help() -> str:
    """RESOLUTION_RULE with the built-in names filled in, for --help texts."""
    return RESOLUTION_RULE.format(builtins=", ".join(strategies.NAMES))
