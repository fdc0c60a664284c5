"""The audit hook the sandbox rules share (not a rule itself).

A sys.addaudithook hook (it cannot be removed once added) that is armed only
while candidate code runs: its import and construction (phase "load") and
each call of ModelNew (phase "call"). Each audit event goes to the one rule
that owns it (sandbox_filesystem, sandbox_network, sandbox_process,
introspection: each a module of this package with its EVENTS and its
check). A rule refuses by raising PermissionError and records the
violation; a candidate that catches the PermissionError is still reported:
the record is kept outside its reach, in this object, and read after the
phase ends. A guard found switched off when candidate code returns is
worker_integrity (catalogue: disarm_guard).

Who calls it: sandbox_worker.py (arm, disarm, take, add_root,
candidate_file), extensions.py (toolchain)."""

import contextlib
import os
import sys

from . import introspection, sandbox_filesystem, sandbox_network, sandbox_process
from .violation import Violation

_RULES = (sandbox_filesystem, sandbox_network, sandbox_process, introspection)
_BY_EVENT = {event: rule for rule in _RULES for event in rule.EVENTS}
_BY_PREFIX = tuple((prefix, rule) for rule in _RULES for prefix in getattr(rule, "EVENT_PREFIXES", ()))


class Guard:
    def __init__(self, writable_roots):
        self.phase = None
        self.toolchain_depth = 0
        self._armed = None
        self.violations = []
        self.candidate_file = None
        self.roots = [os.path.realpath(r) for r in writable_roots if r]
        self._busy = False
        sys.addaudithook(self._hook)

    def arm(self, phase):
        self.phase = phase
        self._armed = phase

    def disarm(self):
        """Ends a phase; a phase found switched off or changed was tampered
        with by candidate code (worker_integrity)."""
        if self._armed is not None and self.phase != self._armed:
            self.violations.append(Violation("worker_integrity", "the sandbox guard was switched off during "
                                                                 "candidate code"))
        self.phase = None
        self._armed = None

    def take(self):
        v, self.violations = self.violations, []
        return v

    def add_root(self, path):
        """One more writable directory (the candidate's compile-cache entry)."""
        if path and os.path.realpath(path) not in self.roots:
            self.roots.append(os.path.realpath(path))

    @contextlib.contextmanager
    def toolchain(self):
        """While an extension builds (extensions.py): the build tools it
        runs (ninja, compilers, `which`) may start; its files go to a
        writable root as any others."""
        self.toolchain_depth += 1
        try:
            yield
        finally:
            self.toolchain_depth -= 1

    def refuse(self, defence, reason):
        """Called by a rule: records the violation and refuses the event."""
        self.violations.append(Violation(defence, reason))
        raise PermissionError("crucible sandbox: %s refused (%s)" % (reason, defence))

    def _hook(self, event, args):
        if self.phase is None or self._busy:
            return
        rule = _BY_EVENT.get(event)
        if rule is None:
            rule = next((r for prefix, r in _BY_PREFIX if event.startswith(prefix)), None)
            if rule is None:
                return
        self._busy = True
        try:
            rule.check(self, event, args)
        finally:
            self._busy = False
