"""Hostile uploads against a real `arena serve` over HTTP: tar headers (a GNU long name, a
pax header) claiming gigabytes, a gzip bomb and a zip bomb are each refused in one line
while the service's peak memory (VmHWM of its process) stays under 300 MiB; refused uploads
count against the hourly limit; and 8 uploads at once against a limit of 3 admit exactly 3.

The bombs are real: 1.5 GiB of zeros, deflated once per 16 MiB and repeated (a full flush
makes each 16 MiB block's deflate bytes the same), so each upload is about 1.5 MiB.
"""
from __future__ import annotations

import gzip
import json
import struct
import tarfile
import threading
import zlib

import pytest

from arena.serve.uploads import pack_folder
from serving import PACED, Service, free_port, make_bot

MiB, GiB = 1024 * 1024, 1024 * 1024 * 1024
PER_HOUR = 3
PEAK_LIMIT_KIB = 300 * 1024
ZEROS = 1536 * MiB   # what each bomb holds
CLAIMED = 3 * GiB    # what the hostile headers say they hold

pytestmark = pytest.mark.sandbox


def deflated_zeros(size: int) -> tuple[bytes, int]:
    """A raw deflate stream of `size` zero bytes (a multiple of 16 MiB), and its CRC-32."""
    block = bytes(16 * MiB)
    packer = zlib.compressobj(9, zlib.DEFLATED, -15)
    first = packer.compress(block) + packer.flush(zlib.Z_FULL_FLUSH)
    again = packer.compress(block) + packer.flush(zlib.Z_FULL_FLUSH)   # the steady block
    crc = 0
    for _ in range(size // len(block)):
        crc = zlib.crc32(block, crc)
    return first + again * (size // len(block) - 1) + packer.flush(), crc


def gzip_member(raw: bytes, crc: int, size: int) -> bytes:
    return (b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff" + raw
            + struct.pack("<II", crc, size & 0xFFFFFFFF))


def header(name: str, kind: bytes, size: int) -> bytes:
    info = tarfile.TarInfo(name)
    info.type, info.size = kind, size
    return info.tobuf(tarfile.GNU_FORMAT)


def tar_bomb(first_header: bytes, zeros: tuple[bytes, int]) -> bytes:
    """A gzip of `first_header` then ZEROS zero bytes (two gzip members: one stream)."""
    return gzip.compress(first_header) + gzip_member(*zeros, ZEROS)


def zip_bomb(zeros: tuple[bytes, int]) -> bytes:
    """A zip holding one file of ZEROS zero bytes, deflated."""
    raw, crc = zeros
    name = b"bot.py"
    local = struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, 8, 0, 0, crc, len(raw), ZEROS,
                        len(name), 0) + name
    central = struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, 0, 8, 0, 0, crc, len(raw),
                          ZEROS, len(name), 0, 0, 0, 0, 0, 0) + name
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 1, 1, len(central),
                      len(local) + len(raw), 0)
    return local + raw + central + end


@pytest.fixture(scope="module")
def service(tmp_path_factory):
    where = tmp_path_factory.mktemp("hostile")
    running = Service(where / "data", free_port(), where / "serve.log",
                      ["--workers", "1", "--submissions-per-hour", str(PER_HOUR), *PACED])
    for name in ("mallory", "zed", "racer"):
        running.add_author(name)
    running.start()
    yield running
    running.stop()


@pytest.mark.slow
def test_headers_and_bombs_claiming_gigabytes_are_refused_in_one_line_in_little_memory(
        service):
    zeros = deflated_zeros(ZEROS)
    uploads = {
        "GNU long name": tar_bomb(header("././@LongLink", tarfile.GNUTYPE_LONGNAME, CLAIMED),
                                  zeros),
        "pax header": tar_bomb(header("././@PaxHeader", tarfile.XHDTYPE, CLAIMED), zeros),
        "gzip bomb": tar_bomb(header("bot.py", tarfile.REGTYPE, CLAIMED), zeros),
    }
    bomb = zip_bomb(zeros)
    assert all(len(data) < 2 * MiB for data in [*uploads.values(), bomb])
    mallory = service.tokens["mallory"]
    for what, data in uploads.items():
        status, answer = service.upload(data, mallory)
        assert status == 400, (what, answer)
        assert "\n" not in answer["error"] and answer["error"], (what, answer)
        print(f"{what}: {answer['error']}")
    peak = service.peak_memory_kib()
    print(f"service peak memory (VmHWM) after the hostile uploads: {peak // 1024} MiB")
    assert peak < PEAK_LIMIT_KIB, f"VmHWM {peak} KiB"

    # Refused uploads count against the hourly limit: a fourth is refused before unpacking.
    status, answer = service.upload(bomb, mallory)
    assert status == 429 and "try again" in answer["error"], answer
    # Another author's zip bomb: refused at its first bytes (uploads are gzipped tars).
    status, answer = service.upload(bomb, service.tokens["zed"])
    assert status == 400 and "not a gzipped tar" in answer["error"], answer
    assert service.peak_memory_kib() < PEAK_LIMIT_KIB
    # The author sees each refusal, with its one line, in their submissions.
    mine = service.get("/api/submissions", mallory)["submissions"]
    assert [s["status"] for s in mine] == ["refused"] * 3, mine
    assert not list((service.data / "staging").iterdir())
    assert service.process.poll() is None


def test_eight_uploads_at_once_against_a_limit_of_three_admit_exactly_three(service,
                                                                           tmp_path):
    racer = service.tokens["racer"]
    uploads = []
    for index in range(8):
        bot = make_bot(tmp_path / f"bot{index}", f"racer{index}", "import sys\nsys.exit(1)\n")
        (bot / "padding.bin").write_bytes(bytes(range(256)) * 4096)   # slower to unpack
        uploads.append(pack_folder(bot))
    start = threading.Barrier(len(uploads))
    answers: list[tuple[int, dict]] = [None] * len(uploads)

    def send(index: int) -> None:
        start.wait()
        answers[index] = service.upload(uploads[index], racer)

    threads = [threading.Thread(target=send, args=(index,)) for index in range(len(uploads))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    statuses = sorted(status for status, _ in answers)
    assert statuses == [202] * PER_HOUR + [429] * (len(uploads) - PER_HOUR), answers
    for status, answer in answers:
        if status == 429:
            assert "\n" not in answer["error"] and "racer" in answer["error"]
    listed = service.get("/api/submissions", racer)["submissions"]
    assert len(listed) == PER_HOUR, json.dumps(listed)
