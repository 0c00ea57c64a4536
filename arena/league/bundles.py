"""Bot versions by content hash, for machines that share nothing with the server but Ray.

The server packs a version's folder into a tar (`pack_version`: the files its content hash
covers, nothing else) and puts it in Ray's object store once; an actor on any node unpacks it
into that node's cache (`NodeCache`), under the node's data folder (`node_data`: the
ARENA_NODE_DATA of the node's Ray, else ~/.cache/arena/node), and plays the bot from there.

The cache trusts nothing it holds: every time a version is asked for, its folder is hashed
again and compared with the version's content hash; a folder that does not match (a damaged
disk, a hand edit, an unpack cut short) is removed and unpacked afresh from the server's
bytes, and bytes that do not unpack to the hash are a fault of the host (HostError), never
played. Unpacking is the service's own safe unpacker (arena.serve.uploads: plain files and
folders only, nothing outside, read-only), so even a damaged tar cannot write elsewhere.
"""
from __future__ import annotations

import gzip
import io
import os
import secrets
import tarfile
import time
from pathlib import Path
from typing import Callable

from arena.bots.manifest import folder_hash
from arena.errors import ArenaError, HostError
from arena.serve.uploads import UploadLimits, remove_version_folder, unpack

NODE_DATA_ENV = "ARENA_NODE_DATA"
"""The node's data folder, read where the actor runs (set it in the environment of the
node's `ray start`); never the server's data folder."""

STALE_STAGING_SECONDS = 3600.0
"""Age after which an unfinished unpacking in a node's cache is removed."""
BUNDLE_LIMITS = UploadLimits(packed_bytes=256 << 20, unpacked_bytes=1 << 30, entries=100_000,
                             name_chars=4096)
"""Limits of a bundle's unpacking: far above any upload's (a bundle is a stored version,
packed by the server), there only so that no bytes can fill a node's disk."""


def node_data() -> Path:
    """This node's data folder (made, 0700, if new): ARENA_NODE_DATA, else the cache folder
    of the user running Ray here."""
    folder = os.environ.get(NODE_DATA_ENV) or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache", "arena", "node")
    path = Path(folder)
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as error:
        raise HostError(f"cannot make this node's data folder {path} ({error.strerror}): set "
                        f"{NODE_DATA_ENV} to a writable folder in the environment of the "
                        "node's `ray start`") from None
    return path


def pack_version(folder: str | Path) -> bytes:
    """A version folder as gzipped tar bytes: every file its content hash covers (caches
    left out, as `folder_hash` leaves them), folders for empty ones, no links (a stored
    version has none: uploads refuse them)."""
    folder = Path(folder)
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for path in sorted(folder.rglob("*")):
            if "__pycache__" in path.parts or path.suffix == ".pyc":
                continue
            if path.is_symlink():
                raise ArenaError(f"{path} is a link: a version shipped to Ray nodes holds "
                                 "plain files only")
            tar.add(path, arcname=path.relative_to(folder).as_posix(), recursive=False)
    return gzip.compress(buffer.getvalue(), mtime=0)


class NodeCache:
    """The bot versions this node holds, each in `versions/<content hash>/`, read-only."""

    def __init__(self, root: Path):
        self.root = root / "versions"
        self.root.mkdir(mode=0o700, parents=True, exist_ok=True)
        # An actor killed while unpacking leaves its staging folder; one this old is no
        # other actor's work in progress.
        for staging in self.root.glob(".staging-*"):
            if time.time() - staging.stat().st_mtime > STALE_STAGING_SECONDS:
                remove_version_folder(staging)

    def folder(self, version: str, fetch: Callable[[], bytes]) -> Path:
        """The folder of `version`, checked against its hash; unpacked from `fetch()` (the
        server's bytes) when missing or not matching. HostError when the bytes do not make
        the version either."""
        if not all(char in "0123456789abcdef" for char in version) or not version:
            raise HostError(f"{version!r} is not a content hash")   # never a path
        path = self.root / version
        if path.is_dir() and folder_hash(path) == version:
            return path
        if path.exists():   # damaged or half made: not trusted, made again
            remove_version_folder(path)
        staging = self.root / f".staging-{secrets.token_hex(6)}"
        try:
            unpack(fetch(), staging, BUNDLE_LIMITS)
        except ArenaError as error:
            raise HostError(f"bot version {version} could not be unpacked on this node: "
                            f"{error}") from None
        made = folder_hash(staging)
        if made != version:
            remove_version_folder(staging)
            raise HostError(f"bot version {version} arrived as {made} on this node (its bytes "
                            "were damaged on the way): not played")
        try:
            os.rename(staging, path)
        except OSError:   # another actor of this node unpacked it meanwhile: keep theirs
            remove_version_folder(staging)
            if not (path.is_dir() and folder_hash(path) == version):
                raise HostError(f"bot version {version}: this node's cache folder {path} "
                                "cannot be made") from None
        return path

    def versions(self) -> list[str]:
        """The versions held (for tests and the bench)."""
        return sorted(path.name for path in self.root.iterdir()
                      if not path.name.startswith("."))
