"""`Limits`: the resources one bot may use, and how each is enforced."""
from __future__ import annotations

import resource
from dataclasses import dataclass

MiB = 1 << 20
GiB = 1 << 30


@dataclass(frozen=True)
class Limits:
    """Resource limits of one bot (all its processes). Sizes in bytes, time in CPU seconds."""

    memory_bytes: int = 1 * GiB
    """Memory of all the bot's processes together, its /tmp and /dev/shm files and memfds
    included (its memory cgroup); where there is no memory cgroup, the address space of each
    process instead (RLIMIT_AS)."""
    cpu_seconds: int = 300
    """CPU time of each process over its whole life (RLIMIT_CPU): SIGXCPU, then SIGKILL."""
    processes: int = 64
    """Processes and threads of the bot together (its pids cgroup, and RLIMIT_NPROC)."""
    cpus: float = 1.0
    """Cores the bot's processes may use together at any moment (its cpu cgroup's quota)."""
    file_size_bytes: int = 16 * MiB
    """Largest file the bot may write (RLIMIT_FSIZE)."""
    open_files: int = 256
    """Open file descriptors per process (RLIMIT_NOFILE)."""
    tmp_bytes: int = 64 * MiB
    """Size of the private /tmp, and of /dev/shm (each a tmpfs, so memory of the host)."""

    def rlimits(self, *, memory_cgroup: bool) -> list[tuple[str, int, int]]:
        """(resource name, soft, hard) as the in-sandbox wrapper sets them. With a memory
        cgroup the address space is unlimited: threads' stacks and the JVM's or Go's up-front
        reservations cost address space, not memory, and the cgroup counts what is used."""
        address_space = resource.RLIM_INFINITY if memory_cgroup else self.memory_bytes
        return [
            ("RLIMIT_AS", address_space, address_space),
            # The hard CPU limit a second later turns an ignored SIGXCPU into SIGKILL.
            ("RLIMIT_CPU", self.cpu_seconds, self.cpu_seconds + 1),
            ("RLIMIT_NPROC", self.processes, self.processes),
            ("RLIMIT_FSIZE", self.file_size_bytes, self.file_size_bytes),
            ("RLIMIT_NOFILE", self.open_files, self.open_files),
            ("RLIMIT_CORE", 0, 0),  # no core files of crashing bots
        ]
