"""Takes CPU while frozen: the freezer stops a process only when it leaves the kernel, and a
read() from the page cache goes on until it is done (only a fatal signal stops it early), so
reads started just before an answer go on into the opponent's move.

`ballast.bin` in its folder (the test writes it there: 256 MiB) is read once at start-up,
into the page cache. At each act, as it answers, THREADS threads each read the whole file
into a buffer of their own in one call: copying 256 MiB is tens of milliseconds of kernel
work. It logs `frozen_thief: reading` at each move."""
import os
import random
import sys
import threading

from arena.sdk import Bot

THREADS = 2
BALLAST = "ballast.bin"


class FrozenThief(Bot):
    name = "frozen_thief"

    def __init__(self):
        super().__init__()
        self.size = os.path.getsize(BALLAST)
        self.buffers = [bytearray(self.size) for _ in range(THREADS)]
        for buffer in self.buffers:
            self.read_into(buffer)   # the file in the page cache, the buffers resident

    def read_into(self, buffer: bytearray) -> None:
        fd = os.open(BALLAST, os.O_RDONLY)
        try:
            os.readv(fd, [buffer])   # one system call for the whole file
        finally:
            os.close(fd)

    def act(self, observation, legal_moves):
        go = threading.Barrier(THREADS + 1)

        def read(buffer: bytearray) -> None:
            go.wait()
            self.read_into(buffer)

        for buffer in self.buffers:
            threading.Thread(target=read, args=(buffer,), daemon=True).start()
        print("frozen_thief: reading", file=sys.stderr, flush=True)
        go.wait()   # they start reading as the answer goes out
        return random.choice(legal_moves)


if __name__ == "__main__":
    FrozenThief().run()
