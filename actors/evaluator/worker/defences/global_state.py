"""global_state: state that would change the other side's calls or outlive
the call: autocast left on, the persisting-L2 limit (CUDA).

Catches: the worker resets such state before every call and compares it
after (settings.py, sandbox_worker.py; evaluate.cpp names the change);
this unit reads and resets the one piece torch does not expose, the CUDA
runtime's cudaLimitPersistingL2CacheSize. Allows: every performance flag,
which is the candidate's own (settings.py: applied to its calls only;
catalogue performance_flags, tf32_flag). Cannot catch: flags torch does not
expose.
"""

import ctypes

NAMES = ("global_state",)
CASES = ("tests/hacks/cpu/autocast_left_on.py", "tests/hacks/cuda/l2_persistence.py",
         "tests/hacks/legit/performance_flags.py")


class CudaLimits:
    """cudaLimitPersistingL2CacheSize through the CUDA runtime that torch
    already loaded (found in /proc/self/maps): a candidate that reserves L2
    for persisting accesses changes it, and the worker sets it back to 0
    before every call. value() is -1 where the runtime cannot be found."""

    _PERSISTING_L2 = 0x06

    def __init__(self):
        self._lib = None
        try:
            with open("/proc/self/maps") as maps:
                path = next(line.split()[-1] for line in maps if "libcudart" in line)
            self._lib = ctypes.CDLL(path)
        except (OSError, StopIteration):
            self._lib = None

    def value(self):
        if self._lib is None:
            return -1
        v = ctypes.c_size_t(0)
        return v.value if self._lib.cudaDeviceGetLimit(ctypes.byref(v), self._PERSISTING_L2) == 0 else -1

    def reset(self):
        if self._lib is not None:
            self._lib.cudaDeviceSetLimit(self._PERSISTING_L2, ctypes.c_size_t(0))
