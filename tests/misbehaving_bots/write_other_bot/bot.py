"""At its first act, tries to overwrite bot.py in the folder argv[1] (another bot's); then
plays on."""
import os
import sys

from arena.sdk import Bot


class WriteOtherBot(Bot):
    name = "write_other_bot"
    tried = False

    def act(self, observation, legal_moves):
        if not self.tried:
            self.tried = True
            try:
                with open(os.path.join(sys.argv[1], "bot.py"), "w") as victim:
                    victim.write("raise SystemExit('hijacked')\n")
                print("write_other_bot: wrote", file=sys.stderr)
            except OSError as error:
                print(f"write_other_bot: cannot write: {error}", file=sys.stderr)
        return legal_moves[0]


if __name__ == "__main__":
    WriteOtherBot().run()
