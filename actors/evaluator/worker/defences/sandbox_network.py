"""sandbox_network: sockets.

Catches: any `socket.*` audit event during candidate code; behind it
seccomp (no AF_INET, AF_INET6 or AF_PACKET sockets, no io_uring) and
Landlock's TCP rules (Linux 6.7) on every worker, and the network namespace
on CPU (containment.cpp).
Allows: AF_UNIX sockets that the worker and the NVIDIA driver open outside
candidate code (the protocol pipe); nothing during candidate code.
"""

NAMES = ("sandbox_network",)
CASES = ("tests/hacks/cpu/escape_network.py",)
EVENTS = set()
EVENT_PREFIXES = ("socket.",)


def check(guard, event, args):
    guard.refuse(NAMES[0], "%s%r" % (event, tuple(args)[:2]))
