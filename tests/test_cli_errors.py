"""Bad command lines: one line on stderr naming the problem and the help, exit status 2, no
traceback — for click's own usage errors as for the arena's."""
from __future__ import annotations

import subprocess
import sys

import pytest

ARENA = [sys.executable, "-c", "from arena.cli import main; main(prog_name='arena')"]


@pytest.mark.parametrize("args, says", [
    (["--zzz"], "No such option '--zzz' (see `arena --help`)"),
    (["nosuch"], "No such command 'nosuch' (see `arena --help`)"),
    (["play", "mandala", "--seed", "x"], "'x' is not a valid integer (see `arena play --help`)"),
    (["verify", "--bogus"], "No such option '--bogus' (see `arena verify --help`)"),
    (["league", "run", "--workers", "abc"], "(see `arena league run --help`)"),
    (["ladder"], "Missing argument"),
    (["play", "nogame", "--bot", "random", "--bot", "random"], "unknown game 'nogame'"),
])
def test_a_bad_command_line_is_one_line_and_exit_2(args, says):
    done = subprocess.run(ARENA + args, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("arena: error: "), done.stderr
    assert says in lines[0]
