"""What a fired defence returns: its short name and what the candidate did.
The worker turns the first one into a reply with ErrorKind Hack (or the
honest failure status the defence's unit gives)."""


class Violation:
    """One fired defence: its short name and what the candidate did."""

    __slots__ = ("defence", "reason")

    def __init__(self, defence, reason):
        self.defence = defence
        self.reason = reason

    def __repr__(self):
        return "%s: %s" % (self.defence, self.reason)
