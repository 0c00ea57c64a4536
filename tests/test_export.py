"""`arena league export` writes a league's records as JSON Lines, and `arena verify` reads
JSON Lines (a file or standard input) with one verdict line per record."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from arena.league.store import Store

ROOT = Path(__file__).resolve().parent.parent
ARENA = [sys.executable, "-c", "from arena.cli import main; main()"]


def arena(*args, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([*ARENA, *map(str, args)], capture_output=True, text=True,
                          timeout=300, cwd=ROOT, input=stdin)


@pytest.fixture(scope="module")
def league(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("export") / "lg"
    done = arena("league", "run", "--game", "flowers", "--bot", "random", "--bot", "greedy",
                 "--deals", 3, "--seed", 9, "--out", folder, "--quiet")
    assert done.returncode == 0, done.stderr
    return folder


def stored(folder: Path) -> list[dict]:
    with Store.open(folder) as store:
        return store.records()


def test_export_writes_every_stored_record_in_order_with_its_match_id(league, tmp_path):
    out = tmp_path / "records.jsonl"
    done = arena("league", "export", league, "--output", out)
    assert done.returncode == 0 and done.stderr == f"6 records of {league} written to {out}\n"
    lines = out.read_text().splitlines()
    exported = [json.loads(line) for line in lines]
    assert [{k: v for k, v in r.items() if k != "match"} for r in exported] == stored(league)
    assert [r["match"] for r in exported][:2] == ["d0000:random,greedy", "d0000:greedy,random"]
    assert arena("league", "export", league).stdout.splitlines() == lines
    assert not list(tmp_path.glob("*.part"))


def test_verify_gives_one_verdict_per_line_of_json_lines(league, tmp_path):
    lines = arena("league", "export", league).stdout.splitlines()
    done = arena("verify", "-", stdin="\n".join(lines) + "\n")
    verdicts = [json.loads(line) for line in done.stdout.splitlines()]
    assert done.returncode == 0 and len(verdicts) == 6 and all(v["ok"] for v in verdicts)
    assert [v["scores"] for v in verdicts] == [r["result"]["scores"] for r in stored(league)]

    broken = json.loads(lines[1])
    broken["moves"][2][1] = "play 9 grey"
    lines[1] = json.dumps(broken)
    path = tmp_path / "broken.jsonl"
    path.write_text("\n".join(lines) + "\n")
    done = arena("verify", path)
    verdicts = [json.loads(line) for line in done.stdout.splitlines()]
    assert done.returncode == 1 and len(verdicts) == 6
    assert verdicts[1]["ok"] is False and verdicts[1]["ply"] == 2
    assert all(v["ok"] for i, v in enumerate(verdicts) if i != 1)

    path.write_text("\n".join(lines[:3] + ['{"format": "arena-record/1"'] + lines[3:]))
    done = arena("verify", path)
    verdicts = [json.loads(line) for line in done.stdout.splitlines()]
    assert done.returncode == 2 and len(verdicts) == 7 and verdicts[3]["ply"] is None


def test_a_replay_picks_a_match_of_an_export(league, tmp_path):
    out = tmp_path / "records.jsonl"
    arena("league", "export", league, "--output", out)
    done = arena("replay", out, "--match", "d0002:greedy,random")
    assert done.returncode == 0 and "seat 0: greedy (builtin)" in done.stdout
    assert arena("replay", out).stderr.startswith("arena: error: ")


def test_export_refuses_a_folder_without_a_league_and_a_missing_output_folder(league, tmp_path):
    done = arena("league", "export", tmp_path)
    assert done.returncode == 2 and "holds no league" in done.stderr
    done = arena("league", "export", league, "--output", tmp_path / "no" / "x.jsonl")
    assert done.returncode == 2 and "does not exist" in done.stderr
