"""One module per game; each defines a Game subclass and its State."""
