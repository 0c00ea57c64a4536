"""An installed Arena (not editable, not a checkout) finds what it ships: the sample bots the
benchmarks play, and the starters of `arena bot new` with the .proto files they copy, as
package data."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_a_non_editable_install_finds_the_sample_bots(tmp_path):
    source = tmp_path / "source"   # a copy, so that the build leaves nothing in the checkout
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(
        ".git", "results", "build", "*.egg-info", "__pycache__", ".pytest_cache", "tests"))
    target = tmp_path / "installed"
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
                    "--no-build-isolation", "--target", str(target), str(source)],
                   check=True, capture_output=True, timeout=300)
    code = ("from arena.bench import league, protocol; from sample_bots import sample_bot; "
            "import arena; print(arena.__file__); "
            "print(*(sample_bot(name) for name in ('random', 'greedy', 'first')), sep='\\n')")
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                          text=True, env={"PYTHONPATH": str(target), "PATH": "/usr/bin:/bin"},
                          timeout=60)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith(str(target))
    for line in lines[1:]:
        assert line.startswith(str(target / "sample_bots")) and (Path(line) / "bot.toml").is_file()
    # The sample bots that need a step of their own first (node-random's `npm install`,
    # go-random's build.sh) are left out rather than shipped half made.
    for name in ("node-random", "go-random"):
        assert not (target / "sample_bots" / name).exists(), f"an install ships {name}"
    # `arena bot new` from the install: the template and a copy of the protos (package data
    # there, a symbolic link to proto/ in a checkout), the build script still executable.
    made = subprocess.run([sys.executable, "-c", "from arena.cli import main; main()", "bot",
                           "new", "mine", "--lang", "go", "--dir", str(tmp_path)],
                          cwd=tmp_path, capture_output=True, text=True, timeout=60,
                          env={"PYTHONPATH": str(target), "PATH": "/usr/bin:/bin"})
    assert made.returncode == 0, made.stderr
    bot = tmp_path / "mine"
    assert sorted(path.name for path in (bot / "proto" / "arena" / "v1").iterdir()) == sorted(
        path.name for path in (ROOT / "proto" / "arena" / "v1").glob("*.proto"))
    assert (bot / "build.sh").stat().st_mode & 0o100 and (bot / "main.go").is_file()
