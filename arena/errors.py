"""Base of the platform's errors. Every message says what is wrong and what to do about it.

Text that came from a bot, an upload or a file (`visible`) reaches a message with its
control characters written as escapes: a terminal escape or a line break in it would
rewrite what the reader's terminal shows."""


def visible(text: str, multiline: bool = False) -> str:
    """`text` as visible characters: each that is not printable as its escape (\\x1b, \\r,
    \\u2028, ...), line breaks and tabs too unless `multiline` (a log's lines)."""
    return "".join(c if c.isprintable() or (multiline and c in "\n\t") else repr(c)[1:-1]
                   for c in text)


class ArenaError(Exception):
    """An error of the platform (not of a game's rules) that a user can act on."""


class HostError(ArenaError):
    """The host, not a bot, kept a match from being played: a bot's cgroup, socket or sandbox
    could not be made, the arena ran out of descriptors or memory, or the machine was so busy
    that a bot timed out without getting the CPU. Never a bot's forfeit, and never a result:
    a league stops (resuming plays the match again); the service plays it again later."""


class HostOverloaded(HostError):
    """A bot timed out while other processes held the CPU it should have had (`measure`
    says what was measured): the match is voided and played again."""

    def __init__(self, message: str, measure: dict):
        super().__init__(message)
        self.measure = measure
