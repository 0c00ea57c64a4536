"""Hostile test bot `hand_passer`: its processes tell each other the hands they were dealt.

A stand-in for a host channel no sandbox fully closes (page cache, read timing): the folder
named in `channel.txt` beside this file, which the test shares with every process of the
bot. At its first decision of a match, a process names the deal by its mountains as dealt
(face up; a first move of the seat before it may have added one card to one of them, so
each way of taking that card off names it too), then:

- it looks the names up in `hands.txt` there, latest entry first. Found: a process of this
  bot held that hand in another seating of the deal, which is the hand its opponent holds
  now. It logs `passer: KNOWS RNG_SEED HAND` and plays greedy: it plays better only when
  the channel told it something, as a bot that used the hand well would (the test is of
  what the arena prevents and detects, not of mandala tactics). Not found: it plays at
  random.
- it writes `NAME HAND` (its own starting hand) under every name, for its other processes.
"""
import json
import random
import sys
from pathlib import Path

from arena.sdk import Bot, strategies

CHANNEL = Path(Path(__file__).with_name("channel.txt").read_text().strip()) / "hands.txt"


class HandPasser(Bot):
    name = "hand_passer"

    def new_match(self, match):
        self.rng = random.Random(match.rng_seed)
        self.greedy = strategies.get("greedy", match.game)
        self.knows = None

    def act(self, observation, legal_moves):
        if self.knows is None:
            self.knows = self.look_up(observation)
        if self.knows:
            return self.greedy(observation, legal_moves, self.rng)
        return self.rng.choice(legal_moves)

    def look_up(self, observation) -> bool:
        names = deal_names(observation)
        found = None
        for line in CHANNEL.read_text().splitlines():   # the latest entry wins
            name, hand = line.split("\t")
            if name in names:
                found = hand
        if found is not None:
            print(f"passer: KNOWS {self.match.rng_seed} {found}", file=sys.stderr, flush=True)
        hand = json.dumps(sorted(observation["hand"]))
        with CHANNEL.open("a") as channel:
            channel.write("".join(f"{name}\t{hand}\n" for name in names))
        return found is not None


def deal_names(observation) -> set:
    """The deal's mountains as dealt, each way they may have been before one added card."""
    mountains = [sorted(mandala["mountain"]) for mandala in observation["mandalas"]]
    names = set()
    for m, mountain in enumerate(mountains):
        if len(mountain) == 3:
            for card in set(mountain):
                dealt = list(mountains)
                dealt[m] = sorted(mountain[:mountain.index(card)]
                                  + mountain[mountain.index(card) + 1:])
                names.add(json.dumps(dealt))
    return names or {json.dumps(mountains)}


if __name__ == "__main__":
    HandPasser().run()
