"""Where a GPU worker's start and its task's load go (issue 18).

Runs the sandbox worker's own code in this process, outside any sandbox:
imports actors/evaluator/worker/sandbox_worker.py (fds 3 and 4 are pipes
made here), runs its warm_up(), then the steps of on_load_task on a task
file (module, model, three reference probes), each timed, and prints the
functions that took longest in the slowest step (cProfile, cumulative).

Usage: python3 tools/gpu/worker_start_probe.py TASK.py [GENERATED_PYTHON_DIR]
(GENERATED_PYTHON_DIR: the build's generated/python, for the FlatBuffers
schema the worker imports). On the GPU when CUDA_VISIBLE_DEVICES is set, else on the CPU.
"""
import cProfile
import io
import os
import pstats
import sys
import tempfile
import time

T0 = time.time()
here = os.path.dirname(os.path.abspath(__file__))
worker_dir = os.path.join(here, "..", "..", "actors", "evaluator", "worker")
sys.path.insert(0, worker_dir)
sys.argv[1:3] = [os.path.abspath(a) for a in sys.argv[1:3]]
if len(sys.argv) > 2:
    sys.path.insert(0, sys.argv[2])
# The worker's working directory is its scratch (it writes .imported and
# tmp/ there, and its guard allows writes there alone): a fresh one.
os.chdir(tempfile.mkdtemp(prefix="worker-start-probe-"))
for fd in (3, 4):
    r, w = os.pipe()
    os.dup2(r if fd == 3 else w, fd)

steps, profiles = [], {}


def timed(name, fn):
    prof = cProfile.Profile()
    t = time.time()
    out = prof.runcall(fn)
    steps.append((name, time.time() - t))
    profiles[name] = prof
    return out


W = timed("import", lambda: __import__("sandbox_worker"))
timed("warm_up", W.warm_up)
source = open(sys.argv[1]).read()
W.S.device = "cuda:0" if os.environ.get("CUDA_VISIBLE_DEVICES") else "cpu"
W.S.threads, W.S.init_seed = 1, 1
W.S.task = timed("module", lambda: W.make_module("crucible_task", source, "task"))
W.S.model = timed("model", lambda: W.build(W.S.task.Model, "task Model", True))
timed("probes", lambda: [W.call(W.S.model, W.make_inputs(s), "reference") for s in (1, 2, 3)])
print("probe: " + " ".join("%s=%.3f" % kv for kv in steps) + " total=%.3f" % (time.time() - T0))
for name, _ in sorted(steps, key=lambda kv: -kv[1])[:2]:
    s = io.StringIO()
    pstats.Stats(profiles[name], stream=s).sort_stats("cumulative").print_stats(18)
    print("--- %s, by cumulative time" % name)
    print("\n".join(line for line in s.getvalue().splitlines() if line.strip())[:3500])
