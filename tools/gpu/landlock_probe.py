"""Which Landlock rules the NVIDIA driver needs (issue 17, containment.cpp).

Applies one variant of the sandbox's Landlock rules to this process, then
initialises CUDA through torch and prints whether that worked and how long
the start took. Found on the H200 hosts: any handled write access breaks
cudaGetDeviceCount (error 304) unless the process's own /proc entry stays
writable, which is why containment.cpp allows /proc/self.

Usage: python3 tools/gpu/landlock_probe.py VARIANT
  none        no restriction
  nnp         PR_SET_NO_NEW_PRIVS alone
  fs          every write access handled; /tmp writable, /dev write-file only
  fs+A,B      the same, with directories A and B writable too
  net         TCP bind and connect handled, no file rules
  scope       signal scope alone
  bitN        only file access bit N handled
"""
import time

_T0 = time.perf_counter()

import ctypes  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402

_libc = ctypes.CDLL(None, use_errno=True)
_CREATE_RULESET, _ADD_RULE, _RESTRICT_SELF = 444, 445, 446  # x86_64 syscall numbers
_PR_SET_NO_NEW_PRIVS = 38
WRITE_FILE, TRUNCATE = 1 << 1, 1 << 14
ALL_WRITES = WRITE_FILE | TRUNCATE | sum(1 << b for b in range(4, 14))  # remove, make-*, refer


class _Ruleset(ctypes.Structure):
    _fields_ = [("fs", ctypes.c_uint64), ("net", ctypes.c_uint64), ("scoped", ctypes.c_uint64)]


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("access", ctypes.c_uint64), ("fd", ctypes.c_int32)]


def restrict(fs, net=0, scoped=0, writable=()):
    """Restricts this process: `fs` handled, /tmp and `writable` allowed every
    handled access, /dev write-file and truncate (as containment.cpp)."""
    attr = _Ruleset(fs, net, scoped)
    ruleset = _libc.syscall(_CREATE_RULESET, ctypes.byref(attr), ctypes.sizeof(attr), 0)
    for path, access in [("/tmp", fs), ("/dev", WRITE_FILE | TRUNCATE)] + [(d, fs) for d in writable]:
        rule = _PathBeneath(access & fs, os.open(path, os.O_PATH))
        if rule.access:
            _libc.syscall(_ADD_RULE, ruleset, 1, ctypes.byref(rule), 0)
    _libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
    return _libc.syscall(_RESTRICT_SELF, ruleset, 0)


def main():
    variant = sys.argv[1] if len(sys.argv) == 2 else sys.exit(__doc__)
    if variant == "none":
        r = 0
    elif variant == "nnp":
        r = _libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
    elif variant == "fs":
        r = restrict(ALL_WRITES)
    elif variant.startswith("fs+"):
        r = restrict(ALL_WRITES, writable=variant[3:].split(","))
    elif variant == "net":
        r = restrict(0, net=3)
    elif variant == "scope":
        r = restrict(0, scoped=2)
    elif variant.startswith("bit"):
        r = restrict(1 << int(variant[3:]))
    else:
        sys.exit(__doc__)
    import torch
    try:
        torch.zeros(1, device="cuda")
        print("%s restrict %d cuda OK in %.2f s" % (variant, r, time.perf_counter() - _T0))
    except RuntimeError as e:
        print("%s restrict %d cuda FAIL %s" % (variant, r, str(e)[-120:]))


if __name__ == "__main__":
    main()
