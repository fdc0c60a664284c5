"""Hack defences of the sandbox worker (issue 4), always on: one rule, one
module.

Imported by sandbox_worker.py before any task or candidate code exists, so
that everything here (the audit hook, the copies of timer and comparison
functions, the fingerprints) is taken from an untouched interpreter. Each
rule returns Violation values naming the defence that fired; the worker
turns the first one into a reply with ErrorKind Hack (or the honest failure
status the rule gives) and the evaluator settles the candidate with that
name in defences_fired.

Each unit is a module of its own: its docstring says what it catches, what
it deliberately allows and what it cannot catch; NAMES are the defence
names it reports; CASES are the hack catalogue files (tests/hacks,
manifest.txt) that show it catching and allowing. UNITS lists them.
Defences decided outside the worker, from the raw facts it returns, are in
ELSEWHERE with the file that decides them. `python3 -m defences` (from
actors/evaluator/worker) prints both as JSON: hacks.test.cpp holds the
manifest to them, so that every named defence has its place and its
cases. docs/defences.md is the table of all of them.

Who calls what: sandbox_worker.py only (extensions.py uses the guard's
toolchain()), from its one thread. Nothing here is thread-safe; the audit
hook runs on whichever thread raises an event.
"""

from . import (background_threads, global_state, input_mutation, introspection, namespace_integrity, output_retained,
               output_type, poisoned_memory, reference_integrity, sandbox_filesystem, sandbox_network,
               sandbox_process, task_fingerprint)
from .audit_guard import Guard
from .background_threads import native_threads, new_threads, thread_census, watch_origins
from .global_state import CudaLimits
from .input_mutation import same_values
from .module_state import restore as state_restore
from .module_state import snapshot as state_snapshot
from .module_state import state_storages, tensor_attributes
from .namespace_integrity import Fingerprint
from .output_retained import Retention, replayed, storage_refs
from .output_type import output_violations
from .poisoned_memory import holds_poison, poison, protected_storages
from .reference_integrity import ModelFingerprint
from .task_fingerprint import TaskFingerprint
from .tensors import digest, storage, tensors_of
from .violation import Violation

UNITS = (sandbox_filesystem, sandbox_network, sandbox_process, introspection, namespace_integrity, task_fingerprint,
         reference_integrity, output_type, poisoned_memory, output_retained, input_mutation, background_threads,
         global_state)

# Defences decided outside this package: name -> where (paths from the
# repository root). Each is a row of docs/defences.md.
ELSEWHERE = {
    "process_exit": "actors/evaluator/evaluate.cpp (an exit without a signal mid-request)",
    "sandbox_isolation": "actors/evaluator/evaluate.cpp (a worker killed by a signal)",
    "verified_reply": "actors/evaluator/worker_session.cpp, evaluate.cpp (replies verified and in order)",
    "rlimit_memory": "actors/evaluator/sandbox.cpp (RLIMIT_AS), worker/sandbox_worker.py (names the MemoryError)",
    "wall_clock_deadline": "actors/evaluator/evaluate.cpp (deadline per request)",
    "rlimit_cpu": "actors/evaluator/sandbox.cpp (RLIMIT_CPU)",
    "executability_bound": "actors/evaluator/evaluate.cpp (a call over 1000x the reference's, after two warm-up calls)",
    "thread_count": "worker/sandbox_worker.py (reset before every call, checked after)",
    "reference_call": "worker/sandbox_worker.py (a profiler on the untimed correctness calls)",
    "output_aliasing": "worker/sandbox_worker.py (each trial's output kept until the next call)",
    "spot_check": "actors/evaluator/evaluate.cpp (a drawn tenth of timed rounds checked after the round)",
    "constant_output": "actors/evaluator/evaluate.cpp (constant digests where the reference's vary)",
    "cpu_wall_consistency": "actors/evaluator/evaluate.cpp (wall against thread CPU time on CPU)",
    "stream_sync": "actors/evaluator/evaluate.cpp (the device clock's audit rounds)",
    "tolerance": "actors/evaluator/evaluate.cpp (per-element tolerance, incorrect)",
    "nonfinite_output": "actors/evaluator/evaluate.cpp (NaN or Inf where the reference has none, incorrect)",
    "exact_output_structure": "actors/evaluator/evaluate.cpp (shapes, dtypes, count, incorrect)",
}


def catalogue():
    """{defence name: {"unit": file or None, "where": ELSEWHERE text or None,
    "cases": [catalogue files]}} for every defence named here."""
    out = {}
    for unit in UNITS:
        for name in unit.NAMES:
            out[name] = {"unit": "actors/evaluator/worker/defences/%s.py" % unit.__name__.rsplit(".", 1)[-1],
                         "where": None, "cases": list(unit.CASES)}
    for name, where in ELSEWHERE.items():
        out.setdefault(name, {"unit": None, "where": where, "cases": []})
    return out
