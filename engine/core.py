"""The one interface every game implements: Game (static facts, options, dealing) and State.

A game is pure logic: no I/O, no processes, no clocks. Moves are plain text in the notation of
`docs/notation.md` (lower-case tokens, single spaces). The player to move is a seat number
(0-based), `CHANCE` for a chance move, or `None` once the game is over.

Life of a match, in engine terms::

    game = registry.get("mandala")
    state = game.new_state(players=2, options={}, seed=7)      # or setup={...} from a record
    while not state.is_over():
        if state.to_move() == CHANCE:
            move = state.sample_chance(rng)                       # recorded like any move
        else:
            move = choose(state.observation(state.to_move()), state.legal_moves())
        state.apply(move)                                         # IllegalMoveError if not listed
    state.scores(), state.ranks()

Observations are plain JSON-able dicts whose keys are exactly the field names of the game's
typed protobuf message (`proto/arena/v1/<game>.proto`), so the arena converts them mechanically.
"""
from __future__ import annotations

import random
from abc import ABC, abstractmethod
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Callable, ClassVar, Mapping, Sequence

CHANCE = "chance"
"""`to_move()` value (and record seat) for a chance move."""


class EngineError(Exception):
    """Base of every error the engine raises."""


class IllegalMoveError(EngineError, ValueError):
    """A move that is not in the legal-move list of the current state (or in bad notation)."""

    def __init__(self, move: str, reason: str):
        self.move = move
        self.reason = reason
        super().__init__(f"illegal move {move!r}: {reason}")


class InvalidSetupError(EngineError, ValueError):
    """A setup (explicit starting position) that is not a legal deal of the components."""


class InvalidOptionError(EngineError, ValueError):
    """An unknown rule option or a value the game does not accept."""


class PlayerCountError(EngineError, ValueError):
    """A player count outside the game's range."""


class GameNotOverError(EngineError):
    """Scores or ranks asked for before the game ended."""


@dataclass(frozen=True)
class Option:
    """One rule option. `kind` is "int" or "str"; `choices` (if any) lists the allowed values."""

    key: str
    kind: str
    default: Any
    help: str
    choices: tuple[Any, ...] = ()

    def parse(self, text: str) -> Any:
        """Converts a command-line `KEY=VALUE` value to this option's type."""
        if self.kind == "int":
            try:
                return int(text)
            except ValueError:
                raise InvalidOptionError(
                    f"option {self.key} wants an integer, got {text!r}") from None
        return text

    def check(self, value: Any) -> Any:
        if self.kind == "int" and (not isinstance(value, int) or isinstance(value, bool)):
            raise InvalidOptionError(f"option {self.key} wants an integer, got {value!r}")
        if self.kind == "str" and not isinstance(value, str):
            raise InvalidOptionError(f"option {self.key} wants a string, got {value!r}")
        if self.choices and value not in self.choices:
            allowed = ", ".join(map(str, self.choices))
            raise InvalidOptionError(f"option {self.key} must be one of {allowed}, got {value!r}")
        return value


def ranks_from_keys(keys: Sequence[Any]) -> list[int]:
    """Per seat, 1 + the number of seats with a strictly better key (higher is better).

    Keys are comparable tuples such as (score, -cards_in_cup); tied seats share a rank and
    the next rank is skipped: keys (5, 5, 3, 1) give [1, 1, 3, 4].
    """
    return [1 + sum(1 for other in keys if other > mine) for mine in keys]


class Game(ABC):
    """Static facts of one game and the way to start a match of it."""

    id: ClassVar[str]
    title: ClassVar[str]
    min_players: ClassVar[int]
    max_players: ClassVar[int]
    options: ClassVar[tuple[Option, ...]] = ()
    has_chance: ClassVar[bool] = False
    rules_version: ClassVar[int] = 1
    """Bumped whenever a rule changes: records and ratings compare only within one version."""

    def rules(self) -> str:
        """The rules this engine plays, e.g. `mandala/1`: stored in records and leagues."""
        return f"{self.id}/{self.rules_version}"

    @abstractmethod
    def max_plies(self, players: int, options: Mapping[str, Any]) -> int:
        """An upper bound on the plies (moves and chance outcomes) of any match with these
        (resolved) options, however it is played: derived from the rules, so a game that
        runs past it is an engine bug. The conformance suite checks random games against it."""

    # -- options ----------------------------------------------------------------------------
    def option(self, key: str) -> Option:
        """The option named `key`; InvalidOptionError naming the game's options if none."""
        for opt in self.options:
            if opt.key == key:
                return opt
        names = ", ".join(opt.key for opt in self.options) or "none"
        raise InvalidOptionError(f"game {self.id} has no option {key!r} (its options: {names})")

    def resolve_options(self, options: Mapping[str, Any] | None, players: int) -> dict[str, Any]:
        """All options with defaults filled in; raises InvalidOptionError or PlayerCountError."""
        self.check_players(players)
        if not options:
            # Most matches play the defaults (every random playout does): they are checked
            # once per player count, then copied.
            checked = self._checked_defaults.get(players)
            if checked is None:
                checked = {opt.key: opt.default for opt in self.options}
                self.check_options(checked, players)
                self._checked_defaults[players] = checked
            return dict(checked)
        resolved = {opt.key: opt.default for opt in self.options}
        for key, value in (options or {}).items():
            resolved[key] = self.option(key).check(value)
        self.check_options(resolved, players)
        return resolved

    @cached_property
    def _checked_defaults(self) -> dict[int, dict[str, Any]]:
        """Player count -> the default options, checked for that count (resolve_options)."""
        return {}

    def non_default_options(self, options: Mapping[str, Any]) -> dict[str, Any]:
        """The options that differ from their defaults: what a record stores."""
        return {opt.key: options[opt.key] for opt in self.options
                if opt.key in options and options[opt.key] != opt.default}

    def parse_options(self, pairs: Sequence[str]) -> dict[str, Any]:
        """`["KEY=VALUE", ...]` from the command line to typed values (not yet checked)."""
        parsed: dict[str, Any] = {}
        for pair in pairs:
            key, sep, text = pair.partition("=")
            if not sep:
                raise InvalidOptionError(f"option {pair!r} is not KEY=VALUE")
            parsed[key] = self.option(key).parse(text)
        return parsed

    def check_players(self, players: int) -> None:
        if not (self.min_players <= players <= self.max_players):
            span = (str(self.min_players) if self.min_players == self.max_players
                    else f"{self.min_players} to {self.max_players}")
            raise PlayerCountError(
                f"game {self.id} is for {span} players, not {players}")

    def check_options(self, options: dict[str, Any], players: int) -> None:
        """Game-specific checks across options (override when needed)."""

    # -- starting a match --------------------------------------------------------------------
    def new_state(self, players: int, options: Mapping[str, Any] | None = None, *,
                  seed: int | None = None, setup: Mapping[str, Any] | None = None) -> "State":
        """A fresh match from a seed (a deal is drawn) or from an explicit setup (checked)."""
        if (seed is None) == (setup is None):
            raise ValueError("give exactly one of seed and setup")
        resolved = self.resolve_options(options, players)
        if setup is None:
            return self.start_dealt(players, resolved, random.Random(seed))
        return self.start(players, resolved, setup)

    @abstractmethod
    def deal(self, players: int, options: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        """A random setup in the JSON form of `docs/notation.md` for this game."""

    def start_dealt(self, players: int, options: dict[str, Any], rng: random.Random) -> "State":
        """`start(deal(...))` with the same rng: a match from a random deal. A game may
        override it to skip checking a deal it has just made; the state must be the same."""
        return self.start(players, options, self.deal(players, options, rng))

    @abstractmethod
    def start(self, players: int, options: dict[str, Any], setup: Mapping[str, Any]) -> "State":
        """The starting state for a setup; raises InvalidSetupError if it is not a legal deal."""

    # -- what a seat may believe -------------------------------------------------------------
    def determinize(self, observation: Mapping[str, Any], seat: int, rng: random.Random, *,
                    options: Mapping[str, Any] | None = None,
                    history: Sequence[Mapping[str, Any]] | None = None) -> "State":
        """A full state that shows `seat` exactly `observation`, drawn at random with rng.

        The unseen cards (other hands, deck and pile orders, face-down stacks) are dealt as a
        fair shuffle would deal them given what the seat has seen: every way of placing the
        unseen cards, each card told apart, is equally likely. What the other seats' choices
        might reveal is not taken into account. `options` are the match's rule options (the
        observation does not carry all of them); `history` is the seat's earlier
        observations of this match, oldest first, for games whose observation alone does not
        hold all the seat knows (see each game). The state has no starting deal: its `setup`
        is empty. Raises InvalidSetupError when the observation cannot come from a match.
        """
        raise EngineError(f"game {self.id} cannot determinise observations")

    def determinizer(self, observation: Mapping[str, Any], seat: int, *,
                     options: Mapping[str, Any] | None = None,
                     history: Sequence[Mapping[str, Any]] | None = None
                     ) -> Callable[[random.Random], "State"]:
        """`determinize` of one observation as a function of the rng, for a search that
        draws many states from it: the same states from the same rng calls. A game may read
        the observation once for all of them (mandala does)."""
        return lambda rng: self.determinize(observation, seat, rng, options=options,
                                            history=history)


class State(ABC):
    """A position of a match. Mutable: `apply` changes it in place; `clone` copies it."""

    __slots__ = ()

    game: Game
    players: int
    options: dict[str, Any]
    setup: dict[str, Any]

    @abstractmethod
    def to_move(self) -> int | str | None:
        """The seat to move, CHANCE, or None when the game is over."""

    def is_over(self) -> bool:
        return self.to_move() is None

    @abstractmethod
    def legal_moves(self) -> list[str]:
        """Each legal move once, in notation, sorted by code-point order; [] when over."""

    @abstractmethod
    def apply(self, move: str) -> None:
        """Plays a move; IllegalMoveError (naming the move and why) if it is not legal."""

    def sample_chance(self, rng: random.Random) -> str:
        """The outcome of the pending chance move, drawn with rng, in notation."""
        raise EngineError(f"game {self.game.id} has no chance moves")

    @abstractmethod
    def scores(self) -> list[int]:
        """Final score per seat; GameNotOverError before the end."""

    @abstractmethod
    def ranks(self) -> list[int]:
        """Per seat rank after the game's tie-breaks (see ranks_from_keys)."""

    @abstractmethod
    def observation(self, seat: int) -> dict[str, Any]:
        """Exactly what `seat` may see now, as a JSON-able dict matching the game's proto."""

    @abstractmethod
    def clone(self) -> "State":
        """An independent copy."""

    @abstractmethod
    def render(self) -> str:
        """A few lines of text showing the public position, for logs and replays."""

    def render_result(self) -> str:
        """Text for the end of a log (the scoring breakdown where the game has one)."""
        return f"scores {self.scores()} ranks {self.ranks()}"
