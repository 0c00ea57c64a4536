"""At its first act, tries to read the file argv[1] (outside its folder) and print it; then
plays on."""
import sys

from arena.sdk import Bot


class ReadPlanted(Bot):
    name = "read_planted"
    tried = False

    def act(self, observation, legal_moves):
        if not self.tried:
            self.tried = True
            try:
                with open(sys.argv[1]) as planted:
                    print(f"read_planted: read {planted.read()!r}", file=sys.stderr)
            except OSError as error:
                print(f"read_planted: cannot read: {error}", file=sys.stderr)
        return legal_moves[0]


if __name__ == "__main__":
    ReadPlanted().run()
