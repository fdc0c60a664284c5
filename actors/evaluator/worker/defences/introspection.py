"""introspection: stealing through the garbage collector or frames, and
telling timing from checking by looking at the caller.

Catches: audit events gc.get_objects, gc.get_referrers, gc.get_referents,
sys._current_frames in candidate code; sys._getframe called by candidate
code during a call; sys.setprofile or settrace during a call.
Allows: TorchScript's and warnings' own frame reads (the frame asked for
is not the candidate's own code: catalogue jit_and_warnings). Cannot
catch: frames reached through an exception's __traceback__ (no audited
call); what it finds is harmless, no reference output exists then
(catalogue steal_frames_traceback, incorrect).
"""

import sys

NAMES = ("introspection",)
CASES = ("tests/hacks/cpu/steal_gc.py", "tests/hacks/cpu/steal_frames.py", "tests/hacks/cpu/warmup_frame_peek.py",
         "tests/hacks/cpu/steal_frames_traceback.py", "tests/hacks/legit/jit_and_warnings.py")

_GC_EVENTS = {"gc.get_objects", "gc.get_referrers", "gc.get_referents", "sys._current_frames"}
_TRACE_EVENTS = {"sys.setprofile", "sys.settrace"}
EVENTS = _GC_EVENTS | _TRACE_EVENTS | {"sys._getframe"}


def check(guard, event, args):
    if event in _GC_EVENTS:
        guard.refuse(NAMES[0], "%s during a candidate %s" % (event, guard.phase))
    elif event == "sys._getframe" and guard.phase == "call":
        # Frames 0 and 1 are this function and the guard's hook; 2 is the
        # code that asked for a frame (3: its caller, for
        # inspect.currentframe()).
        caller = sys._getframe(2)
        names = {caller.f_code.co_filename, caller.f_back.f_code.co_filename if caller.f_back else ""}
        if guard.candidate_file in names:
            guard.refuse(NAMES[0], "the candidate took a frame object (sys._getframe) during its call")
    elif event in _TRACE_EVENTS and guard.phase == "call":
        guard.refuse(NAMES[0], "%s during a candidate call" % event)
