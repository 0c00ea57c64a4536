"""How a CLI command must refuse bad input: a non-zero exit, no traceback, and one line
`arena: error: ...` saying what is wrong."""
from __future__ import annotations

import subprocess


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
