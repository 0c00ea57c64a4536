"""Bot uploads: what `arena submit` packs and what the service unpacks, and everything a
hostile upload could try (paths out of the folder, links, devices, bombs) refused whole."""
from __future__ import annotations

import gzip
import io
import os
import stat
import tarfile
from pathlib import Path

import pytest

from arena.serve.uploads import UploadError, UploadLimits, pack_folder, unpack

SAMPLES = Path(__file__).resolve().parent.parent / "sample_bots"


def tar_gz(*entries: tuple[tarfile.TarInfo, bytes | None]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for info, data in entries:
            if data is not None:
                info.size = len(data)
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    return buffer.getvalue()


def entry(name: str, kind: bytes = tarfile.REGTYPE, mode: int = 0o644,
          link: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.mode, info.linkname = kind, mode, link
    return info


def test_a_packed_folder_unpacks_to_the_same_files_read_only(tmp_path):
    bot = tmp_path / "bot"
    (bot / "lib").mkdir(parents=True)
    (bot / "bot.toml").write_text('name = "x"\ncommand = ["./run"]\ngames = ["mandala"]\n')
    (bot / "run").write_text("#!/bin/sh\n")
    (bot / "run").chmod(0o755)
    (bot / "lib" / "data.bin").write_bytes(bytes(range(256)))
    (bot / "__pycache__").mkdir()
    (bot / "__pycache__" / "x.pyc").write_bytes(b"cache")
    unpack(pack_folder(bot), tmp_path / "out")
    out = tmp_path / "out"
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*")) == [
        "bot.toml", "lib", "lib/data.bin", "run"]
    assert (out / "lib" / "data.bin").read_bytes() == bytes(range(256))
    assert stat.S_IMODE((out / "run").stat().st_mode) == 0o555   # still executable
    assert stat.S_IMODE((out / "bot.toml").stat().st_mode) == 0o444
    assert stat.S_IMODE((out / "lib").stat().st_mode) == 0o555


@pytest.mark.parametrize("bad, words", [
    ((entry("../outside.txt"), b"x"), "'..'"),
    ((entry("lib/../../outside.txt"), b"x"), "'..'"),
    ((entry("/etc/cron.d/evil"), b"x"), "absolute path"),
    ((entry("bot.py", tarfile.SYMTYPE, link="/etc/shadow"), None), "a link"),
    ((entry("bot.py", tarfile.LNKTYPE, link="bot.toml"), None), "a link"),
    ((entry("zero", tarfile.CHRTYPE), None), "a device file"),
    ((entry("disk", tarfile.BLKTYPE), None), "a device file"),
    ((entry("pipe", tarfile.FIFOTYPE), None), "a special file"),
])
def test_entries_that_are_not_plain_files_inside_the_folder_refuse_the_upload(tmp_path, bad,
                                                                              words):
    data = tar_gz((entry("bot.toml"), b'name = "x"\n'), bad)
    with pytest.raises(UploadError, match=words.replace("(", r"\(").replace(".", r"\.")):
        unpack(data, tmp_path / "out")
    assert not (tmp_path / "out").exists()
    assert not (tmp_path / "outside.txt").exists()


def test_caps_on_packed_size_unpacked_size_and_entries(tmp_path):
    limits = UploadLimits(packed_bytes=64 * 1024, unpacked_bytes=1024 * 1024, entries=10)
    bomb = tar_gz((entry("zeros"), bytes(4 * 1024 * 1024)))   # 4 MiB of zeros packs small
    assert len(bomb) < limits.packed_bytes
    with pytest.raises(UploadError, match="unpacks to more than 1 MiB"):
        unpack(bomb, tmp_path / "a", limits)
    many = tar_gz(*[(entry(f"f{i}"), b"x") for i in range(11)])
    with pytest.raises(UploadError, match="more than 10 files"):
        unpack(many, tmp_path / "b", limits)
    with pytest.raises(UploadError, match="over the 0 MiB limit"):
        unpack(os.urandom(70 * 1024), tmp_path / "c", limits)
    assert not any((tmp_path / name).exists() for name in "abc")


def test_a_path_given_twice_or_damaged_archives_are_refused(tmp_path):
    twice = tar_gz((entry("bot.py"), b"one"), (entry("bot.py"), b"two"))
    with pytest.raises(UploadError, match="cannot be unpacked"):
        unpack(twice, tmp_path / "a")
    with pytest.raises(UploadError, match="not a gzipped tar"):
        unpack(b"PK\x03\x04 a zip", tmp_path / "b")
    cut = tar_gz((entry("bot.py"), os.urandom(50_000)))[:20_000]
    with pytest.raises(UploadError, match="damaged"):
        unpack(cut, tmp_path / "c")
    assert not any((tmp_path / name).exists() for name in "abc")


def test_packing_refuses_links_and_folders_without_a_manifest(tmp_path):
    with pytest.raises(UploadError, match="no bot.toml"):
        pack_folder(tmp_path)
    bot = tmp_path / "bot"
    bot.mkdir()
    (bot / "bot.toml").write_text("")
    (bot / "secrets").symlink_to("/etc/passwd")
    with pytest.raises(UploadError, match="is a link"):
        pack_folder(bot)
    assert pack_folder(SAMPLES / "greedy")[:2] == b"\x1f\x8b"   # gzip


def header_only(name: str, kind: bytes, size: int) -> bytes:
    """A gzipped tar whose one header claims `size` bytes of body it does not hold."""
    info = tarfile.TarInfo(name)
    info.type, info.size = kind, size
    return gzip.compress(info.tobuf(tarfile.GNU_FORMAT) + bytes(4096))


@pytest.mark.parametrize("kind", [tarfile.GNUTYPE_LONGNAME, tarfile.GNUTYPE_LONGLINK,
                                  tarfile.XHDTYPE, tarfile.XGLTYPE])
def test_a_tar_header_claiming_gigabytes_is_refused_before_its_body_is_read(tmp_path, kind):
    with pytest.raises(UploadError, match=r"tar header \(long name or pax\) of 3221225472 "
                                          r"bytes, over the 16384 allowed"):
        unpack(header_only("././@LongLink", kind, 3 * 1024 ** 3), tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_tar_headers_count_against_the_unpacked_cap(tmp_path):
    """Empty files, each behind a 4 KiB pax header: no file data, yet over a 64 KiB cap."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz", format=tarfile.PAX_FORMAT) as tar:
        for index in range(40):
            info = entry(f"f{index}")
            info.pax_headers = {"comment": "x" * 4000}
            tar.addfile(info, io.BytesIO(b""))
    limits = UploadLimits(unpacked_bytes=64 * 1024)
    with pytest.raises(UploadError, match="unpacks to more than 0 MiB"):
        unpack(buffer.getvalue(), tmp_path / "out", limits)
    unpack(buffer.getvalue(), tmp_path / "fine")   # the default 20 MiB: 40 empty files
    assert len(list((tmp_path / "fine").iterdir())) == 40


def test_chained_headers_long_names_and_sparse_files_are_refused(tmp_path):
    link = tarfile.TarInfo("././@LongLink")
    link.type, link.size = tarfile.GNUTYPE_LONGNAME, 512
    chained = (link.tobuf(tarfile.GNU_FORMAT) + b"a" * 511 + b"\0") * 6
    with pytest.raises(UploadError, match="more than 4 tar headers in a row"):
        unpack(gzip.compress(chained + bytes(2048)), tmp_path / "a")
    long_name = tar_gz((entry("d/" * 100 + "bot.py"), b"x"))
    with pytest.raises(UploadError, match="has a name of 206 characters, over 200"):
        unpack(long_name, tmp_path / "b", UploadLimits(name_chars=200))
    unpack(long_name, tmp_path / "c")   # within the default 255
    sparse = tar_gz((entry("holes", tarfile.GNUTYPE_SPARSE), b""))
    with pytest.raises(UploadError, match="sparse file"):
        unpack(sparse, tmp_path / "d")
    assert not any((tmp_path / name).exists() for name in "abd")


def test_what_pack_folder_accepts_the_service_unpacks_and_the_same_size_is_measured(tmp_path):
    limits = UploadLimits(unpacked_bytes=64 * 1024)
    bot = tmp_path / "bot"
    bot.mkdir()
    (bot / "bot.toml").write_text('name = "x"\n')
    (bot / "data.bin").write_bytes(os.urandom(50 * 1024))
    unpack(pack_folder(bot, limits), tmp_path / "out", limits)
    # Files of 63.5 KiB fit a 64 KiB cap, but not with their tar headers: refused at home.
    (bot / "data.bin").write_bytes(os.urandom(63 * 1024 + 500))
    with pytest.raises(UploadError, match="over the upload limits"):
        pack_folder(bot, limits)


# -- GNU sparse files: holes tarfile would fill with zeros, never read from the upload -----------

GiB = 1024 ** 3


def pax_gz(*entries: tuple[tarfile.TarInfo, io.BytesIO]) -> bytes:
    """A gzipped pax tar of `entries` as given (their size and pax headers kept)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz", format=tarfile.PAX_FORMAT) as tar:
        for info, data in entries:
            data.seek(0)
            tar.addfile(info, data)
    return buffer.getvalue()


def _sized(info: tarfile.TarInfo, data: bytes) -> tuple[tarfile.TarInfo, io.BytesIO]:
    """`info` sized for `data`, and `data` to read: what TarFile.addfile takes."""
    info.size = len(data)
    return info, io.BytesIO(data)


def sparse_entry(pax: dict[str, str], data: bytes) -> tuple[tarfile.TarInfo, io.BytesIO]:
    info, stream = _sized(entry("holes.bin"), data)
    info.pax_headers = pax
    return info, stream


SPARSE_1_0_MAP = b"1\n0\n1\n".ljust(512, b"\0")   # one 1-byte region at 0, then the byte
SPARSE_BOMBS = {   # each claims a 1 GiB file in a few hundred bytes
    "0.0": sparse_entry({"GNU.sparse.size": str(GiB), "GNU.sparse.numblocks": "1",
                         "GNU.sparse.offset": "0", "GNU.sparse.numbytes": "1"}, b"A"),
    "0.1": sparse_entry({"GNU.sparse.map": "0,1", "GNU.sparse.realsize": str(GiB)}, b"A"),
    "1.0": sparse_entry({"GNU.sparse.major": "1", "GNU.sparse.minor": "0",
                         "GNU.sparse.name": "holes.bin", "GNU.sparse.realsize": str(GiB)},
                        SPARSE_1_0_MAP + b"A".ljust(512, b"\0")),
    "realsize alone": sparse_entry({"GNU.sparse.realsize": str(GiB)}, b"A"),
}


@pytest.mark.parametrize("variant", SPARSE_BOMBS)
def test_pax_sparse_files_are_refused_in_one_line_and_nothing_is_written(tmp_path, variant):
    data = pax_gz(_sized(entry("bot.toml"), b'name = "x"\n'), SPARSE_BOMBS[variant])
    assert len(data) < 1024
    with pytest.raises(UploadError) as refused:
        unpack(data, tmp_path / "out")
    assert str(refused.value).startswith("the upload holds a sparse file: a bot folder may "
                                         "hold only plain files and folders")
    assert "\n" not in str(refused.value)
    assert not (tmp_path / "out").exists()


def test_sparse_keys_in_a_global_pax_header_are_refused(tmp_path):
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz", format=tarfile.PAX_FORMAT,
                      pax_headers={"GNU.sparse.realsize": str(GiB)}) as tar:
        tar.addfile(*_sized(entry("bot.py"), b"A"))
    with pytest.raises(UploadError, match="sparse file"):
        unpack(buffer.getvalue(), tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_bytes_written_count_against_the_cap_even_past_the_sparse_checks(tmp_path,
                                                                         monkeypatch):
    """Defence in depth: were a sparse file let through, its zeros (never read from the
    upload, so never counted there) stop at the cap as they are written."""
    from arena.serve import uploads
    monkeypatch.setattr(uploads, "_checked_tarinfo", lambda: tarfile.TarInfo)
    monkeypatch.setattr(uploads, "_is_sparse", lambda tar, member: False)
    limits = UploadLimits(unpacked_bytes=1024 * 1024)
    with pytest.raises(UploadError, match="unpacks to more than 1 MiB"):
        unpack(pax_gz(SPARSE_BOMBS["0.1"]), tmp_path / "out", limits)
    assert not (tmp_path / "out").exists()


def test_a_name_that_is_not_utf8_is_refused_as_the_uploads_fault(tmp_path):
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz", format=tarfile.GNU_FORMAT,
                      encoding="utf-8", errors="surrogateescape") as tar:
        tar.addfile(*_sized(entry("bot.toml"), b'name = "x"\n'))
        tar.addfile(*_sized(entry(b"\xff\xfe.txt".decode("utf-8", "surrogateescape")), b"x"))
    with pytest.raises(UploadError, match=r"has a name that is not UTF-8: rename it$"):
        unpack(buffer.getvalue(), tmp_path / "out")
    assert not (tmp_path / "out").exists()
