"""Bot uploads: what `arena submit` packs and what the service unpacks, and everything a
hostile upload could try (paths out of the folder, links, devices, bombs) refused whole."""
from __future__ import annotations

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
