"""Bot uploads: packing a folder (`arena submit`) and unpacking an upload safely (the service).

An upload is a gzipped tar of the bot folder's files. Unpacking trusts nothing in it, and
holds little of it in memory whatever it claims: the tar is read as a stream from the
decompressor through a counting reader, so every byte unpacked, tar headers included (a GNU
long name, a pax header), counts against the unpacked cap as it is read, and the read stops
at the cap; an extended header bigger than `EXTENDED_HEADER_BYTES` is refused before
tarfile reads its body (tarfile reads a header's whole body at once). Entries and name
lengths are capped too, and only plain files and folders with relative paths that stay
inside are accepted; a link, a device, a sparse file (old GNU or pax `GNU.sparse.*`), a name
that is not UTF-8, an absolute path or `..` refuses the whole upload. Files are written by
this code (never by `tarfile.extract`), and the bytes written count against the unpacked cap
too (a hole tarfile would fill with zeros is never read from the stream); then the folder is
made read-only: a bot version never changes once stored.

The unpacked size is the tar stream's (files with their headers and padding): `pack_folder`
measures the same, so what `arena submit` sends is never refused for its size.
"""
from __future__ import annotations

import gzip
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


READ_CHUNK = 64 * 1024
"""The most the decompressor gives at once: what one read can add before it is counted."""
EXTENDED_HEADER_BYTES = 16 * 1024
"""The largest GNU long name or pax header accepted: a name is at most `name_chars`, and pax
records of a packed folder are a few short lines."""
CHAINED_HEADERS = 4
"""Extended headers in a row before one entry: tarfile reads a chain recursively."""
_EXTENDED = (tarfile.GNUTYPE_LONGNAME, tarfile.GNUTYPE_LONGLINK, tarfile.XHDTYPE,
             tarfile.XGLTYPE, tarfile.SOLARIS_XHDTYPE)


@dataclass(frozen=True)
class UploadLimits:
    packed_bytes: int = 5 * MiB
    unpacked_bytes: int = 20 * MiB   # the tar stream: files, their headers and padding
    entries: int = 500
    name_chars: int = 255            # of an entry's path in the folder


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
    over = UploadError(f"{folder} is over the upload limits ({limits.entries} files, "
                       f"{limits.unpacked_bytes // MiB} MiB): leave out what the bot does "
                       "not need")
    buffer = io.BytesIO()
    entries = total = 0
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for root, dirs, files in os.walk(folder):
            dirs[:] = sorted(d for d in dirs if d not in _SKIPPED)
            for name in sorted(files) + dirs:
                path = Path(root) / name
                relative = path.relative_to(folder).as_posix()
                if path.is_symlink():
                    raise UploadError(f"{path} is a link: a bot folder holds plain files only")
                if name.endswith(".pyc"):
                    continue
                if len(relative) > limits.name_chars:
                    raise UploadError(f"{path} has a path of {len(relative)} characters in "
                                      f"the folder, over {limits.name_chars}: rename it")
                entries += 1
                if path.is_file():
                    total += path.stat().st_size
                if entries > limits.entries or total > limits.unpacked_bytes:
                    raise over   # before reading it: the tar is at least this big
                tar.add(path, arcname=relative, recursive=False)
    if buffer.tell() > limits.unpacked_bytes:   # with the headers: what the service counts
        raise over
    data = gzip.compress(buffer.getvalue(), mtime=0)
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
    if data[:4] == b"PK\x03\x04":
        raise UploadError("the upload is a zip, not a gzipped tar: send the bot folder "
                          "packed by `arena submit` (or tar czf)")
    if data[:2] != b"\x1f\x8b":
        raise UploadError("the upload is not a gzipped tar: send the bot folder packed by "
                          "`arena submit` (or tar czf)")
    destination.mkdir(parents=True)
    try:
        try:
            _unpack_into(data, destination, limits)
        except (tarfile.TarError, EOFError, zlib.error, gzip.BadGzipFile) as error:
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


SPARSE_REFUSED = ("the upload holds a sparse file: a bot folder may hold only plain files and "
                  "folders (pack it with `arena submit`, or tar without --sparse)")


def _over_cap(cap: int) -> UploadError:
    return UploadError(f"the upload unpacks to more than {cap // MiB} MiB (its files with "
                       "their tar headers): leave out what the bot does not need")


class _CountingReader(io.RawIOBase):
    """The decompressed tar stream, read at most READ_CHUNK bytes at a time and counted: past
    `cap` bytes it raises UploadError, so nothing reading it (tarfile reading a header's
    body) ever holds more than the cap."""

    def __init__(self, source: io.BufferedIOBase, cap: int):
        self.source = source
        self.cap = cap
        self.count = 0

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        size = READ_CHUNK if size is None or size < 0 else min(size, READ_CHUNK)
        chunk = self.source.read(size)
        self.count += len(chunk)
        if self.count > self.cap:
            raise _over_cap(self.cap)
        return chunk


def _checked_tarinfo() -> type[tarfile.TarInfo]:
    """A TarInfo class for one upload that refuses, before tarfile reads their bodies, an
    extended header over EXTENDED_HEADER_BYTES, more than CHAINED_HEADERS of them in a row,
    and sparse files (before tarfile reads a sparse map: a 1.0 map may claim any length)."""
    in_a_row = [0]

    class Checked(tarfile.TarInfo):
        def _proc_member(self, tar):
            if self.type in _EXTENDED:
                in_a_row[0] += 1
                if self.size > EXTENDED_HEADER_BYTES:
                    raise UploadError(f"the upload has a tar header (long name or pax) of "
                                      f"{self.size} bytes, over the {EXTENDED_HEADER_BYTES} "
                                      "allowed: pack the folder with `arena submit`")
                if in_a_row[0] > CHAINED_HEADERS:
                    raise UploadError(f"the upload has more than {CHAINED_HEADERS} tar "
                                      "headers in a row before an entry: pack the folder "
                                      "with `arena submit`")
            else:
                in_a_row[0] = 0
                if self.type == tarfile.GNUTYPE_SPARSE:
                    raise UploadError(SPARSE_REFUSED)
            return super()._proc_member(tar)

        # pax sparse formats 0.0, 0.1 and 1.0: a regular file whose holes read as zeros
        def _proc_gnusparse_00(self, *args):
            raise UploadError(SPARSE_REFUSED)

        _proc_gnusparse_01 = _proc_gnusparse_10 = _proc_gnusparse_00

    return Checked


def _unpack_into(data: bytes, destination: Path, limits: UploadLimits) -> None:
    stream = _CountingReader(gzip.GzipFile(fileobj=io.BytesIO(data), mode="rb"),
                             limits.unpacked_bytes)
    try:   # "r|": read in order, never seeking back, so nothing is read twice or buffered
        tar = tarfile.open(fileobj=stream, mode="r|", tarinfo=_checked_tarinfo())
    except (tarfile.TarError, EOFError, OSError, zlib.error):
        raise UploadError("the upload is not a gzipped tar: send the bot folder packed by "
                          "`arena submit` (or tar czf)") from None
    written = 0
    with tar:
        for count, member in enumerate(_members(tar), start=1):
            if count > limits.entries:
                raise UploadError(f"the upload holds more than {limits.entries} files and "
                                  "folders: leave out what the bot does not need")
            if len(member.name) > limits.name_chars:
                raise UploadError(f"the upload's entry {member.name[:40]!r}... has a name of "
                                  f"{len(member.name)} characters, over {limits.name_chars}")
            if _is_sparse(tar, member):
                raise UploadError(SPARSE_REFUSED)
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
                while chunk := source.read(READ_CHUNK):   # counted by the stream's reader
                    written += len(chunk)   # and on disk: what a hole would add unread
                    if written > limits.unpacked_bytes:
                        raise _over_cap(limits.unpacked_bytes)
                    out.write(chunk)
            if member.mode & 0o111:
                target.chmod(0o755)   # executable bits kept (a compiled bot), others not


def _is_sparse(tar: tarfile.TarFile, member: tarfile.TarInfo) -> bool:
    """Any sparse sign the TarInfo check did not stop (a `GNU.sparse.*` key tarfile acts on
    without a map: `realsize` sets the size, a global header's keys apply to every entry)."""
    return member.sparse is not None or any(
        key.startswith("GNU.sparse") for key in (*tar.pax_headers, *member.pax_headers))


def _members(tar: tarfile.TarFile):
    try:
        yield from tar
    except (tarfile.TarError, EOFError, OSError, zlib.error) as error:
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
    try:   # tarfile keeps undecodable bytes as surrogates; bot versions are hashed by name
        name.encode("utf-8")
    except UnicodeEncodeError:
        raise UploadError(f"the upload's entry {name!r} has a name that is not UTF-8: rename "
                          "it") from None
    return PurePosixPath(*parts)


def _make_read_only(folder: Path) -> None:
    for root, _dirs, files in os.walk(folder):
        for name in files:
            path = Path(root) / name
            path.chmod(stat.S_IMODE(path.stat().st_mode) & 0o555 | 0o444)
        Path(root).chmod(0o555)


def _remove(folder: Path) -> None:
    """Removes a (possibly read-only) folder."""
    for root, _dirs, _files in os.walk(folder):
        os.chmod(root, 0o755)
    shutil.rmtree(folder, ignore_errors=True)


def remove_version_folder(folder: Path) -> None:
    _remove(folder)
