"""Where a timed round's seconds go (issue 18): the sandbox worker's own
code, run in this process outside any sandbox, loads a task and its
identity candidate (the task's Model as ModelNew) and runs ROUNDS paired
rounds as one timing request would (device clock, a tenth of rounds spot
checked and a tenth audited, orders alternating), once plain and once
under cProfile. Prints the seconds per round of each (with the stream
fence's kind: CRUCIBLE_STREAM_FENCE names its native library) and the
identity's ratio, the time the two models' calls account for, and the
functions that took longest (own time).

Usage: python3 tools/gpu/round_probe.py TASK.py GENERATED_PYTHON_DIR [ROUNDS (300)]
Environment: PLACEMENT=N and SWAP=1 (below).
On the GPU when CUDA_VISIBLE_DEVICES is set, else on the CPU.
"""
import cProfile
import io
import os
import pstats
import sys
import tempfile
import time

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "..", "actors", "evaluator", "worker"))
sys.argv[1:3] = [os.path.abspath(a) for a in sys.argv[1:3]]
sys.path.insert(0, sys.argv[2])
# The worker's working directory is its scratch (it writes .imported and
# tmp/ there, and its guard allows writes there alone): a fresh one.
os.chdir(tempfile.mkdtemp(prefix="round-probe-"))
for fd in (3, 4):
    r, w = os.pipe()
    os.dup2(r if fd == 3 else w, fd)
W = __import__("sandbox_worker")
W.warm_up()
ROUNDS = int(sys.argv[3]) if len(sys.argv) > 3 else 300
DEVICE = "cuda:0" if os.environ.get("CUDA_VISIBLE_DEVICES") else "cpu"
source = open(sys.argv[1]).read()


class Request:
    """What the worker reads of a request, as plain values (the probe's stand-in for the FlatBuffers table)."""

    def __init__(self, **fields):
        self.f = fields

    def __getattr__(self, name):
        if name.endswith("Length"):
            return lambda: len(self.f.get(name[:-6], []))
        v = self.f.get(name)
        if isinstance(v, list):
            return lambda i: v[i]
        return lambda: v


W.on_load_task(Request(Device=DEVICE.encode(), Threads=1, InitSeed=7, ModuleName=b"crucible_task",
                       Source=source.encode(), ProbeSeeds=[1, 2, 3]))
W.on_load_candidate(Request(ExtensionsDir=None, ModuleName=b"crucible_candidate",
                            Source=(source + "\nModelNew = Model\n").encode()))
tol = dict(Atol=1e-2, Rtol=1e-2, ByDtype=[])
W.on_correctness(Request(Seeds=list(range(100, 108)), **tol))
W.on_timed(Request(Seeds=list(range(200, 220)), Check=[True] * 2, CandidateFirst=[i % 2 == 0 for i in range(20)],
                   Audit=[False] * 20, DeviceClock=True, ProcessCpu=False, **tol))  # warm-up
req = Request(Seeds=list(range(1000, 1000 + ROUNDS)), Check=[i % 10 == 3 for i in range(ROUNDS)],
              CandidateFirst=[i % 2 == 0 for i in range(ROUNDS)], Audit=[i % 10 == 7 for i in range(ROUNDS)],
              DeviceClock=True, ProcessCpu=False, **tol)


def ratio(out):
    """Median over the slept rounds of reference over candidate device time
    (the identity's speedup, round by round)."""
    r = sorted(a / b for i, (a, b) in enumerate(zip(out.get("ref_e", []), out.get("cand_e", [])))
               if i % 10 != 7 and b > 0)
    return r[len(r) // 2] if r else float("nan")


fence = W.S.fence.kind if W.S.fence is not None else "none"
t0 = time.time()
out = W.on_timed(req)
print("round_probe: fence=%s unprofiled per_round=%.3f ms identity ratio=%.4f"
      % (fence, (time.time() - t0) / ROUNDS * 1e3, ratio(out)))
# PLACEMENT=N: the candidate's parameters and buffers moved to fresh memory N
# times (after a spacer of i MB each time), the identity's ratio after each:
# a ratio that moves with the move is a placement effect, one that stays is
# the harness's.
for i in range(int(os.environ.get("PLACEMENT", "0"))):
    spacer = W.torch.empty(int((i + 1) * 2**20), dtype=W.torch.uint8, device=DEVICE)
    W.reference_placement.refresh(W.S.cand_model)
    out = W.on_timed(req)
    print("round_probe: placement %d identity ratio=%.4f" % (i + 1, ratio(out)))
    del spacer
# SWAP=1: the two model objects change roles (the reference's becomes the
# candidate's and back), fingerprints retaken: a ratio that inverts follows
# the objects (their memory, their history), one that stays follows the role
# the harness gives them.
if os.environ.get("SWAP") == "1":
    S = W.S

    def retake():
        """The worker's fingerprints of the models as they now are."""
        S.model_fingerprint = W.D.ModelFingerprint(S.model)
        S.protected = W.D.protected_storages([S.model, S.cand_model], [S.task, S.candidate])
        S.fingerprint = W.D.Fingerprint(vars(W), W.protected_state)
        S.fingerprint.seal()

    S.model, S.cand_model = S.cand_model, S.model
    retake()
    out = W.on_timed(req)
    print("round_probe: swapped roles identity ratio=%.4f" % ratio(out))
    # Where each model's tensors lie (address modulo 4 KiB, storage offset,
    # contiguity), then both models' moved to fresh memory: a ratio that
    # only this moves was the reference's placement.
    for who, m in (("reference role", S.model), ("candidate role", S.cand_model)):
        print("round_probe: %s tensors %s" % (who, " ".join(
            "%s@%d+%d%s" % (n, t.data_ptr() % 4096, t.storage_offset(), "" if t.is_contiguous() else "(strided)")
            for n, t in list(m.named_parameters()) + list(m.named_buffers()))))
    for m in (S.model, S.cand_model):
        W.reference_placement.refresh(m)
    retake()
    out = W.on_timed(req)
    print("round_probe: both moved identity ratio=%.4f" % ratio(out))
prof = cProfile.Profile()
t0 = time.time()
out = prof.runcall(W.on_timed, req)
wall = time.time() - t0
calls = sum(out["ref_s"]) + sum(out["cand_s"])
print("round_probe: device=%s rounds=%d wall=%.3f s per_round=%.3f ms calls(wall)=%.3f ms/round events=%.3f ms/round"
      % (DEVICE, ROUNDS, wall, wall / ROUNDS * 1e3, calls / ROUNDS * 1e3,
         (sum(out.get("ref_e", [0])) + sum(out.get("cand_e", [0]))) / ROUNDS * 1e3))
s = io.StringIO()
pstats.Stats(prof, stream=s).sort_stats("tottime").print_stats(22)
print("\n".join(line for line in s.getvalue().splitlines() if line.strip())[:4000])
