"""engine/ passes `mypy --strict`: the rules every other part trusts keep their types checked.

mypy is in the `test` extra (pyproject.toml), so a missing mypy fails this test rather than
skipping it.
"""
from __future__ import annotations

import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent


def test_the_engine_passes_mypy_strict():
    result = subprocess.run([sys.executable, "-m", "mypy", "--strict", "engine"], cwd=ROOT,
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Success: no issues found" in result.stdout
