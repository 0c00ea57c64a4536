"""Counting what an arena run left, for real: the bot cgroups named after the run's own pids
(`<pid>-<n>` under the `arena` folders of `cgroups.arena_folders()`), the pids in them, and
the process tree of the run (never a process found by its name)."""
from __future__ import annotations

import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from arena.sandbox import cgroups, proctree, reaper, scratch

GONE_WITHIN = 10.0   # seconds: "within a few seconds", with room for a loaded machine

needs_freezer = pytest.mark.skipif("freezer" not in cgroups.placement().folders,
                                   reason="no freezer cgroup here: bots are SIGSTOPped, "
                                          "and a stopped process dies of SIGKILL at once")


def tree(root: int) -> set[int]:
    """`root` and every live process below it."""
    children: dict[int, list[int]] = {}
    for pid, ppid, _, _ in proctree.processes():
        children.setdefault(ppid, []).append(pid)
    found, stack = set(), [root]
    while stack:
        pid = stack.pop()
        found.add(pid)
        stack += children.get(pid, [])
    return found


def bot_cgroups(owners: set[int]) -> dict[str, list[Path]]:
    """Bot cgroup name -> its folders, for those the given arena processes made."""
    found: dict[str, list[Path]] = {}
    for folder in cgroups.arena_folders():
        for child in folder.iterdir():
            owner = reaper.bot_cgroup_owner(child.name)
            if owner is not None and owner[0] in owners:
                found.setdefault(child.name, []).append(child)
    return found


def members(groups: dict[str, list[Path]]) -> set[int]:
    pids = set()
    for folders in groups.values():
        for folder in folders:
            try:
                pids |= {int(word) for word in (folder / "cgroup.procs").read_text().split()}
            except OSError:
                pass
    return pids


def frozen(groups: dict[str, list[Path]]) -> int:
    """How many of these bots are stopped between their turns now: frozen, or held at the
    least CPU quota (`cgroups.BotCgroups.hold`)."""
    count = 0
    for folders in groups.values():
        if any(_stopped(folder) for folder in folders):
            count += 1
    return count


def _stopped(folder: Path) -> bool:
    held = str(cgroups.HELD_QUOTA_US)
    for name, stopped in (("freezer.state", lambda text: text.startswith("FROZEN")),
                          ("cpu.cfs_quota_us", lambda text: text.strip() == held),
                          ("cpu.max", lambda text: text.split()[:1] == [held])):
        try:
            if stopped((folder / name).read_text()):
                return True
        except OSError:   # not this kind of cgroup, or gone
            pass
    return False


def alive(pids: set[int]) -> set[int]:
    return {pid for pid in pids if proctree.running(pid)}


def wait_for_frozen_bots(arena: subprocess.Popen, bots: int, timeout: float = 60.0
                         ) -> tuple[set[int], dict[str, list[Path]], set[int]]:
    """Waits until `bots` bot processes of the arena's tree are running, one of them frozen;
    returns (the arena's tree, its bot cgroups, the bot processes in them)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert arena.poll() is None, \
            f"the arena ended early: {arena.stderr.read() if arena.stderr else ''}"
        owners = tree(arena.pid)
        groups = bot_cgroups(owners)
        pids = members(groups)
        if len(groups) >= bots and pids and frozen(groups) >= 1:
            return owners, groups, pids
        time.sleep(0.05)
    raise AssertionError(f"no {bots} bots with one frozen within {timeout} s")


def assert_all_gone(owners: set[int], pids: set[int], within: float = GONE_WITHIN) -> float:
    """Every bot process and bot cgroup of these arena processes is gone within `within`
    seconds; returns how long it took."""
    started = time.monotonic()
    while time.monotonic() - started < within:
        if not alive(pids) and not bot_cgroups(owners):
            return time.monotonic() - started
        time.sleep(0.05)
    raise AssertionError(f"after {within} s, bot processes {sorted(alive(pids))} and bot "
                         f"cgroups {sorted(bot_cgroups(owners))} are left")


def folders_of(pid: int) -> list[str]:
    """The temporary folders arena process `pid` owns (arena.sandbox.scratch)."""
    return sorted(owner.parent.name for owner in Path(tempfile.gettempdir()).glob(
        f"arena-*/{scratch.OWNER_FILE}") if owner.read_text().startswith(f"{pid} "))


def ray_folders_of(pid: int) -> list[Path]:
    """The folders where arena process `pid`'s own Ray instance keeps its sockets and logs."""
    return [Path(tempfile.gettempdir()) / name for name in folders_of(pid)
            if name.startswith("arena-ray-")]
