"""Starter bots: `arena bot new NAME --lang LANG [--dir DIR]` makes a bot folder that builds
and passes `arena bot check` as it is (a random legal move in every game, seeded by the
arena), with a README saying how to build it and what to edit.

The templates are package data under arena/starters/<lang>/. Every file is copied as it is,
except that `__BOT_NAME__` becomes the bot's name (in bot.toml, the handshake and the README).
The languages other than Python speak the protocol themselves, so their folders also get a
copy of Arena's .proto files (proto/arena/v1/): the sandbox shows a bot only its folder, and
a copy lets the bot build and run away from this repository. arena/starters/proto is a
symbolic link to the repository's proto/ (the one source of the protocol), which an install
turns into package data, so an installed arena makes starters too.
"""
from __future__ import annotations

import shutil
import tempfile
from importlib import resources
from pathlib import Path

from arena.bots.manifest import BOT_NAME
from arena.errors import ArenaError

PLACEHOLDER = "__BOT_NAME__"
# The order `arena bot new --help` lists them in.
LANGUAGES = ("python", "node", "go", "cpp", "java")
# Languages that carry the .proto files (Python imports the generated arena.v1 instead).
NEEDS_PROTOS = frozenset({"node", "go", "cpp", "java"})
# Files copied with their mode bits set executable (the build scripts).
EXECUTABLE = frozenset({"build.sh"})


class StarterError(ArenaError):
    """A starter cannot be made: bad name, unknown language, folder exists, no protos."""


def template_root(lang: str):
    """The package-data folder of one language's template (or of the protos: "proto")."""
    return resources.files("arena.starters") / lang


def new_bot(name: str, lang: str, parent: Path) -> Path:
    """Makes parent/name from the `lang` template; returns the folder. Raises StarterError
    (one line) and leaves nothing behind when it cannot."""
    if lang not in LANGUAGES:
        raise StarterError(f"unknown language {lang!r}: choose one of {', '.join(LANGUAGES)}")
    if not BOT_NAME.fullmatch(name):
        raise StarterError(f"bad bot name {name!r}: letters, digits, '-', '_' and '.', at most "
                           "64 characters, not starting with a dot")
    target = parent / name
    if target.exists() or target.is_symlink():
        raise StarterError(f"{target} already exists: choose another name or --dir")
    if not parent.is_dir():
        raise StarterError(f"{parent} is not a folder")
    protos = _protos() if lang in NEEDS_PROTOS else []
    if lang in NEEDS_PROTOS and not protos:
        raise StarterError("this installation of Arena has no .proto files under "
                           f"{template_root('proto')}: reinstall it")
    # Build in a new sibling temporary folder and rename at the end: an error half-way (a
    # full disk) leaves no half-made bot that a second try would refuse as "already exists".
    partial = None
    try:
        partial = Path(tempfile.mkdtemp(prefix=f".{name}.", suffix=".partial", dir=parent))
        partial.chmod(0o755)   # mkdtemp's 0700 would keep the folder from its other users
        _copy_template(template_root(lang), partial, name)
        if lang in NEEDS_PROTOS:
            copies = partial / "proto" / "arena" / "v1"
            copies.mkdir(parents=True)
            for source in protos:
                (copies / source.name).write_bytes(source.read_bytes())
        partial.rename(target)
    except OSError as error:   # a folder it may not write to, a full disk: one line, no trace
        _remove(partial)
        raise StarterError(f"cannot make {target}: {error.strerror or error}") from None
    except BaseException:
        _remove(partial)
        raise
    return target


def _remove(partial: Path | None) -> None:
    if partial is not None:
        shutil.rmtree(partial, ignore_errors=True)


def _protos() -> list:
    """The protocol's .proto files this installation ships, by name."""
    folder = template_root("proto") / "arena" / "v1"
    if not folder.is_dir():
        return []
    return sorted((entry for entry in folder.iterdir() if entry.name.endswith(".proto")),
                  key=lambda entry: entry.name)


def _copy_template(source, target: Path, name: str) -> None:
    """Copies the template folder `source` into the existing folder `target`."""
    for entry in source.iterdir():
        if entry.name in ("__pycache__", "__init__.py"):
            continue
        # Templates store dot-files without their dot ("gitignore"): setuptools' package
        # data and some packaging tools drop hidden files.
        destination = target / (f".{entry.name}" if entry.name == "gitignore" else entry.name)
        if entry.is_dir():
            destination.mkdir()
            _copy_template(entry, destination, name)
            continue
        data = entry.read_bytes()
        destination.write_bytes(data.replace(PLACEHOLDER.encode(), name.encode()))
        if entry.name in EXECUTABLE:
            destination.chmod(0o755)
