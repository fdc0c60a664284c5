"""Which Landlock rules the NVIDIA driver needs: applies one variant of the
sandbox's rules (containment.cpp) to this process, then initialises CUDA
through torch and prints whether it worked and how long the start took.
Found on the H200 hosts: any handled write access breaks cudaGetDeviceCount
(error 304) unless the process's own /proc entry stays writable.

Usage: python3 tools/gpu/landlock_probe.py none|nnp|fs|net|scope|fs+DIR,DIR|bitN
"""
import time
_t0 = time.perf_counter()
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
class A(ctypes.Structure): _fields_=[('fs',ctypes.c_uint64),('net',ctypes.c_uint64),('scoped',ctypes.c_uint64)]
class P(ctypes.Structure): _pack_=1; _fields_=[('acc',ctypes.c_uint64),('fd',ctypes.c_int32)]
FS=(1<<1)|(1<<4)|(1<<5)|(1<<6)|(1<<7)|(1<<8)|(1<<9)|(1<<10)|(1<<11)|(1<<12)|(1<<13)|(1<<14)
def restrict(fs, net, scoped, extra=()):
    a=A(fs,net,scoped); fd=libc.syscall(444, ctypes.byref(a), 24, 0)
    for path, acc in [("/tmp", FS), ("/dev", (1<<1)|(1<<14))] + list(extra):
        p=P(acc & fs, os.open(path, os.O_PATH)); libc.syscall(445, fd, 1, ctypes.byref(p), 0)
    libc.prctl(38,1,0,0,0); return libc.syscall(446, fd, 0)
variant = sys.argv[1]
if variant == "fs": r = restrict(FS, 0, 0)
elif variant == "fs_devshm": r = restrict(FS, 0, 0, [("/dev/shm", FS)])
elif variant == "fs_dev_all": r = restrict(FS, 0, 0, [("/dev", FS)])
elif variant == "net": r = restrict(0, 3, 0)
elif variant == "scope": r = restrict(0, 0, 2)
elif variant.startswith("fs+"): r = restrict(FS, 0, 0, [(d, FS) for d in variant[3:].split(",")])
elif variant.startswith("bit"): r = restrict(1 << int(variant[3:]), 0, 0, [])
elif variant == "nnp": r = libc.prctl(38,1,0,0,0)
else: r = 0
import torch
try:
    torch.zeros(1, device="cuda"); print(variant, "restrict", r, "cuda OK in %.2f s" % (time.perf_counter() - _t0))
except Exception as e:
    print(variant, "restrict", r, "cuda FAIL", str(e)[-120:])
