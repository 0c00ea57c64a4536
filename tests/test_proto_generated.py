"""The checked-in protocol code is exactly what `python -m arena.protogen` makes now."""
from __future__ import annotations

from arena import protogen


def test_checked_in_code_matches_the_protos(tmp_path):
    fresh = {path.name: path.read_bytes() for path in protogen.generate(tmp_path)}
    checked_in = {path.name: path.read_bytes() for path in protogen.generated_files(protogen.ROOT)}
    assert sorted(checked_in) == sorted(fresh), "run `python -m arena.protogen`"
    stale = [name for name in fresh if fresh[name] != checked_in[name]]
    assert not stale, f"stale generated code {stale}: run `python -m arena.protogen`"
