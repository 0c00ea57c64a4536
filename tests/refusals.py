"""The rule properties' refusal check, for their hot loops: the moves a state took that it
should have refused. `pytest.raises` costs ~20 µs a call, more than the engine's refusal
itself; over the million near-miss strings one property tries, it was over half its time."""
from __future__ import annotations

from engine.core import IllegalMoveError


def accepted(state, moves) -> list[str]:
    """The moves of `moves` that `state.apply` took instead of refusing them with
    IllegalMoveError, in order (a property fails on any: each one changed the state)."""
    taken = []
    for move in moves:
        try:
            state.apply(move)
        except IllegalMoveError:
            continue
        taken.append(move)
    return taken
