"""How a CLI command must refuse bad input: a non-zero exit, no traceback, and one line
`arena: error: ...` saying what is wrong."""
from __future__ import annotations

import subprocess


def arena_in_process(*args) -> subprocess.CompletedProcess:
    """Runs `arena ARGS` in this process (click's test runner), as a finished process would
    report it: its exit status and what it wrote to standard output and error. Saves the
    interpreter's start and the imports (about a quarter of a CPU-second a command) where a
    test runs many commands; the process boundary itself is tested by tests that start one.
    An exception the command let escape is raised here, as a traceback would show."""
    from click.testing import CliRunner

    from arena.cli import main
    result = CliRunner().invoke(main, [str(arg) for arg in args])
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return subprocess.CompletedProcess(["arena", *map(str, args)], result.exit_code,
                                       result.stdout, result.stderr)


def refused_in_one_line(done: subprocess.CompletedProcess, *words: str,
                        after_output: bool = False) -> str:
    """Checks `done` refused in one line holding every one of `words`, and returns it; with
    `after_output`, that line is the last of standard error, after what the command printed
    as it began (a league's header), and the only error line."""
    assert done.returncode != 0, done.stdout[-500:]
    assert "Traceback" not in done.stderr, done.stderr
    lines = done.stderr.splitlines()
    if after_output:
        assert lines and done.stderr.count("arena: error") == 1, done.stderr
        lines = lines[-1:]
    assert len(lines) == 1 and lines[0].startswith("arena: error: "), done.stderr
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]
