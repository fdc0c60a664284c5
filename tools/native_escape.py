"""Native code in a candidate, on a GPU node (or on CPU): does the sandbox
hold without namespaces? (issue 17, "a GPU worker is contained without
root").

Writes a candidate whose inline C++ extension, on every call, tries to
write a file outside the worker's scratch directory, connect to a TCP
listener this script opens on the loopback, kill a process this script
starts and attach to it with ptrace; evaluates it with `crucible-eval eval`
(--no-namespaces on CPU, where the user namespace would otherwise contain
it; GPU workers never have namespaces without root) and reports, from the
outside, what happened: one line per attempt, `contained` or `ESCAPED`,
and the isolation the evaluation reports. Exit 0 when all were contained
and the candidate ran (its output was correct), 1 otherwise.

Usage: python3 tools/native_escape.py CRUCIBLE_EVAL TASK DEVICE
  TASK: an elementwise task taking one tensor (x -> relu(x) * 2 + 1),
  e.g. tests/hacks/tasks/cuda_elementwise.py; its ModelNew computes that.
"""

import json
import os
import socket
import subprocess
import sys
import tempfile
import time

CANDIDATE = r'''import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SOURCE = r"""
#include <torch/extension.h>
#include <arpa/inet.h>
#include <csignal>
#include <cstdio>
#include <netinet/in.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <unistd.h>

int64_t escape() {
  int64_t done = 0;
  if (FILE* f = std::fopen("@PATH@", "w")) { std::fputs("escaped", f); std::fclose(f); done |= 1; }
  int s = socket(AF_INET, SOCK_STREAM, 0);
  if (s >= 0) {
    sockaddr_in a{}; a.sin_family = AF_INET; a.sin_port = htons(@PORT@); a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(s, (sockaddr*)&a, sizeof a) == 0) done |= 2;
    close(s);
  }
  if (kill(@PID@, SIGKILL) == 0) done |= 4;
  if (ptrace(PTRACE_ATTACH, @PID@, nullptr, nullptr) == 0) done |= 8;
  return done;
}
"""

ext = load_inline(name="crucible_native_escape", cpp_sources=SOURCE, functions=["escape"])


class ModelNew(nn.Module):
    def forward(self, x):
        ext.escape()
        return torch.relu(x) * 2.0 + 1.0
'''


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    binary, task, device = sys.argv[1:]
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    listener.setblocking(False)
    victim = subprocess.Popen(["sleep", "600"])
    outside = os.path.join("/tmp", "crucible-native-escape-%d" % os.getpid())
    if os.path.exists(outside):
        os.remove(outside)
    source = (CANDIDATE.replace("@PATH@", outside).replace("@PORT@", str(listener.getsockname()[1]))
              .replace("@PID@", str(victim.pid)))
    with tempfile.TemporaryDirectory() as work:
        candidate = os.path.join(work, "escape.py")
        with open(candidate, "w") as f:
            f.write(source)
        cmd = [binary, "eval", "--task", task, "--candidate", candidate, "--device", device, "--protocol", "quick",
               "--json", "--cache-dir", os.path.join(work, "cache")]
        if device == "cpu":
            cmd.append("--no-namespaces")
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    try:
        result = json.loads(out.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        print("no evaluation: %s" % out.stderr[-2000:])
        return 1
    time.sleep(0.2)
    try:
        listener.accept()
        connected = True
    except BlockingIOError:
        connected = False
    alive = victim.poll() is None
    with open("/proc/%d/status" % victim.pid) as f:
        traced = alive and any(line.startswith("TracerPid:") and line.split()[1] != "0" for line in f)
    victim.kill()
    escapes = {"file outside scratch": os.path.exists(outside), "TCP connect": connected,
               "signal to another process": not alive, "ptrace attach": traced}
    print("evaluation: %s reward %.2f on %s; sandbox: %s" % (result["status"], result["reward"], device,
                                                            " ".join(result["sandbox"])))
    for what, escaped in escapes.items():
        print("  %-28s %s" % (what, "ESCAPED" if escaped else "contained"))
    if os.path.exists(outside):
        os.remove(outside)
    ok = result["status"] == "ok" and not any(escapes.values())
    print("native escape: %s" % ("all contained" if ok else "NOT contained"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
