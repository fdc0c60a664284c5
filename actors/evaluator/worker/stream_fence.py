"""The device clock counts the candidate's work on every stream (CUDA).

Under the device clock (sandbox_worker.timed_call) the GPU sleeps before
each measured call while the host queues it, and events on the calling
stream time the device's work. Work on another stream does not wait for
that sleep: a candidate that tells a measured round from an audit round
(its stream is still busy with the sleep when it is called, an event it
records does not complete, its own call takes longer) could put its work on
a side stream only then, and have it run hidden under the sleep (issue 17:
8.22x on an elementwise task, 2.52x on KernelBench L1-19).

The fence closes that for every stream torch hands out: all of PyTorch's
pool streams (torch.cuda.Stream(), every priority; 32 each) are taken once,
before any candidate exists. Around each timed call, in every round of both
models:
- open(start): every pool stream waits for the start event, so that no
  work queued on it during the call starts before the sleep has ended;
- close(): the calling stream waits for every pool stream, so that the end
  event comes after all of their work.
The calling stream is the legacy default stream, which already orders
itself with every blocking stream (cudaStreamCreate without flags, as native
code makes them). What is left: a non-blocking stream made by native code
(cudaStreamNonBlocking), which the audit rounds' wall clock still sees
(stream_sync). The fence's host work happens while the GPU sleeps (the
sleep is sized from the reference's dispatch, fence included), so it adds
no device time to either side.

The loops run in native code (stream_fence.cpp, its path in
CRUCIBLE_STREAM_FENCE, which the evaluator sets): 384 driver calls a timed
call on an H200 cost 1.25 ms a round through torch's Python wrappers, and
that much again in the sleep sized from it. Without the library (a worker
started by hand) the same loops run in Python; `kind` says which.

Who calls it: sandbox_worker.py (take at warm-up; open/close in timed_call).
"""

import ctypes
import os

import torch


class StreamFence:
    def __init__(self):
        seen, self.streams = set(), []
        for priority in range(0, -8, -1):
            fresh = 0
            for _ in range(64):
                try:
                    s = torch.cuda.Stream(priority=priority)
                except (RuntimeError, TypeError, ValueError):
                    break
                if s.cuda_stream not in seen:
                    seen.add(s.cuda_stream)
                    self.streams.append(s)
                    fresh += 1
            if not fresh:  # priorities past the device's range clamp to one already seen
                break
        self.streams = tuple(self.streams)
        self._native = self._load(os.environ.get("CRUCIBLE_STREAM_FENCE", ""))
        self.kind = "native" if self._native else "python"
        if not self._native:
            self._events = tuple(torch.cuda.Event() for _ in self.streams)

    def _load(self, path):
        """(open, close, fence) from the native library, or None without it.
        A library that loads but fails to make the fence is an error: the
        driver refused, and the Python loops would fail the same way."""
        if not path or not os.path.exists(path):
            return None
        lib = ctypes.CDLL(path)
        fence = ctypes.c_void_p()
        handles = (ctypes.c_size_t * len(self.streams))(*(s.cuda_stream for s in self.streams))
        rc = lib.crucible_fence_make(handles, len(self.streams), ctypes.byref(fence))
        if rc:
            raise RuntimeError("stream fence: crucible_fence_make failed with %d (%s)" % (rc, path))
        for f in (lib.crucible_fence_open, lib.crucible_fence_close):
            f.argtypes = (ctypes.c_void_p, ctypes.c_size_t)
        return lib.crucible_fence_open, lib.crucible_fence_close, fence

    def open(self, start):
        """After start.record() on the calling stream, before the call."""
        if self._native:
            _check(self._native[0](self._native[2], start.cuda_event), "open")
            return
        for s in self.streams:
            s.wait_event(start)

    def close(self, calling):
        """After the call, before end.record() on `calling`."""
        if self._native:
            _check(self._native[1](self._native[2], calling.cuda_stream), "close")
            return
        for s, e in zip(self.streams, self._events):
            e.record(s)
            calling.wait_event(e)


def _check(rc, what):
    if rc:
        raise RuntimeError("stream fence: %s failed with CUDA error %d" % (what, rc))
