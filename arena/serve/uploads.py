"""Bot uploads: packing a folder (`arena submit`) and unpacking an upload safely (the service).

An upload is a gzipped tar of the bot folder's files. Unpacking trusts nothing in it: the
packed and unpacked sizes and the number of entries are capped (counted while reading, not
taken from the headers' word), and only plain files and folders with relative paths that
stay inside are accepted; a link, a device, an absolute path or `..` refuses the whole
upload. Files are written by this code (never by `tarfile.extract`), then the folder is made
read-only: a bot version never changes once stored.
"""
from __future__ import annotations

import io
import os
import shutil
import stat
import tarfile
import zlib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from arena.errors import ArenaError

MiB = 1024 * 1024


@dataclass(frozen=True)
class UploadLimits:
    packed_bytes: int = 5 * MiB
    unpacked_bytes: int = 20 * MiB
    entries: int = 500


class UploadError(ArenaError):
    """An upload that is refused; the message says why and what to send instead."""


_SKIPPED = {"__pycache__", ".git"}


def pack_folder(folder: str | Path, limits: UploadLimits = UploadLimits()) -> bytes:
    """The bot folder as tar.gz bytes (caches and .git left out); refuses links and folders
    over the limits before anything is sent."""
    folder = Path(folder)
    if not (folder / "bot.toml").is_file():
        raise UploadError(f"{folder} is not a bot folder (no bot.toml): give the folder that "
                          "holds your bot.toml")
    buffer = io.BytesIO()
    entries = total = 0
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for root, dirs, files in os.walk(folder):
            dirs[:] = sorted(d for d in dirs if d not in _SKIPPED)
            for name in sorted(files) + dirs:
                path = Path(root) / name
                relative = path.relative_to(folder).as_posix()
                if path.is_symlink():
                    raise UploadError(f"{path} is a link: a bot folder holds plain files only")
                if name.endswith(".pyc"):
                    continue
                entries += 1
                if path.is_file():
                    total += path.stat().st_size
                if entries > limits.entries or total > limits.unpacked_bytes:
                    raise UploadError(f"{folder} is over the upload limits ({limits.entries} "
                                      f"files, {limits.unpacked_bytes // MiB} MiB): leave out "
                                      "what the bot does not need")
                tar.add(path, arcname=relative, recursive=False)
    data = buffer.getvalue()
    if len(data) > limits.packed_bytes:
        raise UploadError(f"{folder} packs to {len(data) // 1024} KiB, over the "
                          f"{limits.packed_bytes // MiB} MiB limit: leave out what the bot "
                          "does not need")
    return data


def unpack(data: bytes, destination: Path, limits: UploadLimits = UploadLimits()) -> None:
    """Unpacks an upload into `destination` (which must not exist yet), read-only; raises
    UploadError, leaving nothing behind, when anything in it is not allowed."""
    if len(data) > limits.packed_bytes:
        raise UploadError(f"the upload is {len(data) // 1024} KiB, over the "
                          f"{limits.packed_bytes // MiB} MiB limit")
    destination.mkdir(parents=True)
    try:
        try:
            _unpack_into(data, destination, limits)
        except (tarfile.TarError, EOFError, zlib.error) as error:   # cut short or corrupt
            raise UploadError(f"the upload is a damaged tar ({error}): pack the folder "
                              "again") from None
        except OSError as error:   # e.g. a file and a folder of one name
            raise UploadError(f"the upload cannot be unpacked ({error.strerror}: "
                              f"{Path(error.filename or '').name}): pack the folder again") \
                from None
        _make_read_only(destination)
    except BaseException:
        _remove(destination)
        raise


def _unpack_into(data: bytes, destination: Path, limits: UploadLimits) -> None:
    written = 0
    try:
        tar = tarfile.open(fileobj=io.BytesIO(data), mode="r:gz")
    except (tarfile.TarError, EOFError, OSError):
        raise UploadError("the upload is not a gzipped tar: send the bot folder packed by "
                          "`arena submit` (or tar czf)") from None
    with tar:
        for count, member in enumerate(_members(tar), start=1):
            if count > limits.entries:
                raise UploadError(f"the upload holds more than {limits.entries} files and "
                                  "folders: leave out what the bot does not need")
            relative = _safe_path(member)
            if relative is None:
                continue   # the archive's own root entry "."
            target = destination.joinpath(*relative.parts)
            if member.isdir():
                target.mkdir(parents=True, exist_ok=True)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            source = tar.extractfile(member)
            with open(target, "xb") as out:   # "x": a second entry of one path is refused
                while chunk := source.read(64 * 1024):
                    written += len(chunk)
                    if written > limits.unpacked_bytes:
                        raise UploadError(f"the upload unpacks to more than "
                                          f"{limits.unpacked_bytes // MiB} MiB")
                    out.write(chunk)
            if member.mode & 0o111:
                target.chmod(0o755)   # executable bits kept (a compiled bot), others not


def _members(tar: tarfile.TarFile):
    try:
        yield from tar
    except (tarfile.TarError, EOFError, OSError, FileExistsError) as error:
        raise UploadError(f"the upload is a damaged tar ({error}): pack the folder again") \
            from None


def _safe_path(member: tarfile.TarInfo) -> PurePosixPath | None:
    """The entry's path inside the folder; UploadError for anything but a plain file or
    folder at a relative path that stays inside."""
    name = member.name
    if not (member.isfile() or member.isdir()):
        kind = ("a link" if member.issym() or member.islnk() else
                "a device file" if member.ischr() or member.isblk() else "a special file")
        raise UploadError(f"the upload's entry {name!r} is {kind}: a bot folder may hold "
                          "only plain files and folders")
    path = PurePosixPath(name)
    if path.is_absolute() or name.startswith("/") or "\\" in name:
        raise UploadError(f"the upload's entry {name!r} has an absolute path: pack the folder "
                          "with paths relative to it")
    if ".." in path.parts:
        raise UploadError(f"the upload's entry {name!r} leads out of the folder ('..'): pack "
                          "the folder with paths inside it")
    parts = [part for part in path.parts if part != "."]
    if not parts:
        return None
    if any("\0" in part for part in parts):
        raise UploadError(f"the upload's entry {name!r} is not a usable file name")
    return PurePosixPath(*parts)


def _make_read_only(folder: Path) -> None:
    for root, dirs, files in os.walk(folder):
        for name in files:
            path = Path(root) / name
            path.chmod(stat.S_IMODE(path.stat().st_mode) & 0o555 | 0o444)
        Path(root).chmod(0o555)


def _remove(folder: Path) -> None:
    """Removes a (possibly read-only) folder."""
    for root, dirs, _files in os.walk(folder):
        os.chmod(root, 0o755)
    shutil.rmtree(folder, ignore_errors=True)


def remove_version_folder(folder: Path) -> None:
    _remove(folder)
