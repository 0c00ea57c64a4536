"""CPU by thread (arena.bench.threadcpu): what `arena bench protocol` splits a decision's
CPU with. Each count is the scheduler's own, so a thread's work shows exactly where it ran."""
from __future__ import annotations

import os
import threading
import time

from arena.bench import threadcpu

WORK = 0.05   # CPU seconds the working thread spends


def spin(seconds: float) -> None:
    """Uses `seconds` of this thread's CPU, however long the machine makes that take."""
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


def test_a_threads_work_is_counted_for_it_and_its_process_and_by_its_part():
    started, release, spun, finish = (threading.Event() for _ in range(4))

    def work() -> None:
        started.set()
        release.wait()
        spin(WORK)
        spun.set()
        finish.wait()   # alive until counted: the counts are of live threads

    worker = threading.Thread(target=work, name="arena-bot_7")
    worker.start()
    try:
        started.wait()
        roles = threadcpu.arena_roles(threading.current_thread())
        assert roles[worker.native_id] == threadcpu.HANDLER
        assert roles[threading.get_native_id()] == threadcpu.ASKING
        clock = threadcpu.RoleClock()
        clock.start(roles)
        process_before = threadcpu.process_cpu(os.getpid())
        release.set()
        spun.wait()
        clock.stop()
        process_after = threadcpu.process_cpu(os.getpid())
    finally:
        release.set()
        finish.set()
        worker.join()
    assert clock.seconds[threadcpu.HANDLER] >= WORK
    assert clock.seconds[threadcpu.ASKING] < clock.seconds[threadcpu.HANDLER]
    assert process_after - process_before >= WORK


def test_a_bots_main_thread_is_told_from_its_others():
    started, release = threading.Event(), threading.Event()
    other = threading.Thread(target=lambda: (started.set(), release.wait()))
    other.start()
    started.wait()
    try:
        roles = threadcpu.bot_roles([os.getpid(), other.native_id])
        assert roles == {os.getpid(): threadcpu.BOT_MAIN, other.native_id: threadcpu.BOT_OTHER}
    finally:
        release.set()
        other.join()


def test_a_thread_that_is_gone_is_left_out():
    assert threadcpu.thread_cpu([2**22 + 12345]) == {}
    assert threadcpu.bot_roles([2**22 + 12345]) == {}
