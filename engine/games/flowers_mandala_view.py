"""What is shown of a `flowers-mandala` position: a seat's observation (State.observation) and
the text of the position and of its result (State.render, render_result)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from engine.games.flowers_mandala_rules import (COLOURS, DECK, MANDALAS, NO_SEAT, ORDER, PLAY,
                                                TILE, card_list, card_text, flower_points,
                                                single_points)

if TYPE_CHECKING:
    from engine.games.flowers_mandala_state import FlowersMandalaState


def seat_view(state: FlowersMandalaState, seat: int) -> dict[str, Any]:
    """State.observation: everything the seat may see (see the module docstring of the game)."""
    if seat not in range(state.players):
        raise ValueError(f"flowers-mandala: no seat {seat!r} in a {state.players}-player match")
    mandala, holder, second = state.pending
    return {
        "seat": seat,
        "players": state.players,
        "draw_rule": state.options["draw_rule"],
        "turn": state.turn,
        "decision": state.phase,
        "to_move": state.mover if isinstance(state.mover, int) else NO_SEAT,
        "destroying": mandala,
        "second": second,
        "hand": card_list(state.hands[seat]),
        "hand_sizes": list(state.hand_totals),
        "known_hands": [{"cards": card_list(known)} for known in state.known],
        "deck_size": len(state.deck),
        "discard": card_list(state.discard),
        "dark_stack_size": len(state.dark),
        "light_stack_size": len(state.light),
        "mandalas": [_mandala_view(state, m) for m in range(MANDALAS)],
        "tableaus": [{"singles": sorted(state.singles[s]),
                      "flowers": [{"tiles": list(f)} for f in state.flowers[s]],
                      "points": state.points(s)} for s in range(state.players)],
        "left_game": sorted(state.left_game),
        "passes": state.passes,
        "end_order": list(state.end_queue),
    }


def _mandala_view(state: FlowersMandalaState, mandala: int) -> dict[str, Any]:
    centre = state.centres[mandala] or ["", ""]
    return {
        "number": mandala,
        "dark_tile": centre[0],
        "light_tile": centre[1],
        "claim": state.claims[mandala],
        "present": [COLOURS[c] for c in range(len(COLOURS))
                    if state.present[mandala] >> c & 1],
        "sides": [{"face_up": card_list(state.up[mandala][s]),
                   "face_down": card_list(state.down[mandala][s])}
                  for s in range(state.players)],
    }


def render_position(state: FlowersMandalaState) -> str:
    if state.phase == PLAY:
        head = f"turn: seat {state.turn} to play"
    elif state.phase == TILE:
        head = (f"turn: seat {state.turn}; seat {state.pending[1]} chooses a tile of "
                f"mandala {state.pending[0]} (other tile to seat {state.pending[2]})")
    elif state.phase in (DECK, ORDER):
        head = f"turn: seat {state.turn}; chance: {state.phase}"
    else:
        head = "game over"
    lines = [f"{head} | deck {len(state.deck)}, discard {state.discard_total} | "
             f"stacks dark {len(state.dark)} light {len(state.light)}"]
    for m in range(MANDALAS):
        centre = state.centres[m]
        if centre is None:
            lines.append(f"  mandala {m}: empty")
            continue
        claim = state.claims[m]
        sides = []
        for s in range(state.players):
            if state.cards_on[m][s]:
                down = card_text(state.down[m][s])
                sides.append(f"s{s} up {card_text(state.up[m][s]) or '-'}"
                             + (f" down {down}" if down else ""))
        lines.append(f"  mandala {m} [{' '.join(centre)}] claim "
                     f"{'-' if claim == NO_SEAT else f's{claim}'}: "
                     + ("; ".join(sides) or "no cards"))
    for s in range(state.players):
        flowers = " ".join("(" + "+".join(f) + ")" for f in state.flowers[s])
        lines.append(f"  seat {s}: hand {state.hand_totals[s]} | tiles "
                     f"{' '.join(sorted(state.singles[s])) or '-'} | flowers "
                     f"{flowers or '-'} | points {state.points(s)}")
    return "\n".join(lines)

def render_result(state: FlowersMandalaState) -> str:
    scores, ranks = state.scores(), state.ranks()
    lines = []
    for s in range(state.players):
        parts = [f"{tile}={single_points(tile)}" for tile in sorted(state.singles[s])]
        parts += [f"({a}+{b})={flower_points(a, b)}" for a, b in state.flowers[s]]
        lines.append(f"seat {s}: {scores[s]} points ({' '.join(parts) or 'no tiles'}), "
                     f"{state.hand_totals[s]} cards in hand, rank {ranks[s]}")
    return "\n".join(lines)
