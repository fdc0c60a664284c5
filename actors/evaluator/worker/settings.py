"""Process-wide settings, and the rule that makes them fair to both sides.

Reference and candidate share one process (sandbox_worker.py), so a setting
one of them makes would otherwise apply to the other's calls too. The rule
(docs/defences.md, "own settings"):

- Settings that change only how a call computes are the candidate's own:
  the cuDNN flags (benchmark, deterministic, TF32), matmul TF32 and
  float32 precision, mkldnn, deterministic algorithms, the default dtype and
  grad mode. What a candidate sets (at import, in its constructor or during
  a call) applies to its calls alone: before every reference call and every
  draw of inputs the worker puts back the defaults below, before every
  candidate call it puts back the candidate's. Such a setting is never
  `hack`; its numerics are checked like any output's (TF32 that breaks the
  tolerance is `incorrect`). CUDA-L1's kernels set cudnn.benchmark and TF32
  this way.
- The rest of snapshot() stays a defence, because it deceives the clock or
  outlives the call: the thread count (`thread_count`: on CPU the clock is
  the calling thread's), autocast left switched on and the persisting-L2
  limit (`global_state`: lines kept resident across calls), threads left
  running (`background_threads`).

Who calls it: sandbox_worker.py, from its one thread.
"""

import threading

import torch

# name -> (default, setter). The setters run before every model call.
_OWN = {
    "grad_enabled": (False, torch.set_grad_enabled),
    "cudnn.benchmark": (False, lambda v: setattr(torch.backends.cudnn, "benchmark", v)),
    "cudnn.deterministic": (False, lambda v: setattr(torch.backends.cudnn, "deterministic", v)),
    "cudnn.allow_tf32": (True, lambda v: setattr(torch.backends.cudnn, "allow_tf32", v)),
    "cuda.matmul.allow_tf32": (False, lambda v: setattr(torch.backends.cuda.matmul, "allow_tf32", v)),
    "mkldnn.enabled": (True, lambda v: setattr(torch.backends.mkldnn, "enabled", v)),
    "default_dtype": (torch.float32, torch.set_default_dtype),
    "deterministic_algorithms": (False, torch.use_deterministic_algorithms),
    "float32_matmul_precision": ("highest", torch.set_float32_matmul_precision),
}
DEFAULTS = {k: d for k, (d, _) in _OWN.items()}


def snapshot(threads_now, cuda_limits):
    """Every process-wide setting a call could change. threads_now: the
    native thread count (defences.native_threads)."""
    return {
        "num_threads": torch.get_num_threads(),
        "grad_enabled": torch.is_grad_enabled(),
        "cudnn.benchmark": torch.backends.cudnn.benchmark,
        "cudnn.deterministic": torch.backends.cudnn.deterministic,
        "cudnn.allow_tf32": torch.backends.cudnn.allow_tf32,
        "cuda.matmul.allow_tf32": torch.backends.cuda.matmul.allow_tf32,
        "mkldnn.enabled": torch.backends.mkldnn.enabled,
        "default_dtype": torch.get_default_dtype(),
        "deterministic_algorithms": torch.are_deterministic_algorithms_enabled(),
        "float32_matmul_precision": torch.get_float32_matmul_precision(),
        "autocast": torch.is_autocast_enabled(),
        "autocast_cpu": torch.is_autocast_cpu_enabled(),
        "l2_persisting_bytes": cuda_limits.value() if cuda_limits is not None else 0,
        "python_threads": threading.active_count(),
        "native_threads": threads_now,
    }


def reset(threads, cuda_limits, own=None):
    """The defaults (and then `own`, a candidate's settings) before a call."""
    torch.set_num_threads(threads)
    torch.set_flush_denormal(False)
    for name, (default, setter) in _OWN.items():
        setter(default if own is None else own.get(name, default))
    if cuda_limits is not None:
        cuda_limits.reset()


def own_of(state):
    """The candidate's own settings out of a snapshot()."""
    return {k: state[k] for k in _OWN}


def changes(before, after):
    """What a call changed that the rule does not make its own:
    "name old->new" strings, each one a defence (evaluate.cpp names it)."""
    return ["%s %s->%s" % (k, before[k], after[k]) for k in before if k not in _OWN and before[k] != after[k]]


def describe(own):
    """The candidate's settings that differ from the defaults, for the
    evaluation's worker_info ("candidate_settings cudnn.benchmark=True")."""
    diff = ["%s=%s" % (k, v) for k, v in own.items() if v != DEFAULTS[k]]
    return "candidate_settings " + " ".join(diff) if diff else ""
