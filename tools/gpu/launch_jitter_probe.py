"""Does the host make a launch-bound speedup move between processes?

Issue 3's L2-18 rewrite (two small kernels against about sixteen) settled
at 2.70, 2.60 and 2.36 in three evaluations, with the reference's time
moving from 330 to 579 us between them. Each evaluation is a fresh
sandboxed worker pinned to one core. This probe times one task and one
candidate in several fresh processes under each CPU placement (one core as
the evaluator pins it, a core local to the GPU, two cores, no pinning) and,
in one process, with CUDA graphs (device time without launches), and
prints per process the medians and the ratio, so that what moves is seen.

Each round also times the call after a GPU sleep (torch.cuda._sleep) long
enough for the host to queue the whole call: the events then see the
device's work without the host's dispatch gaps.

Usage: python launch_jitter_probe.py TASK CANDIDATE|identity [--procs 4] [--seconds 3]
         [--placements last,none] [--sleep-cycles 2000000]
(child mode: --child CORES)
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time


def gpu_local_cores():
    """Cores of the NUMA node the GPU sits on (sysfs), or []."""
    try:
        bus = subprocess.run(["nvidia-smi", "--query-gpu=pci.bus_id", "--format=csv,noheader", "-i", "0"],
                             capture_output=True, text=True, check=True).stdout.strip().lower()
        bus = bus[4:] if len(bus.split(":")[0]) == 8 else bus  # 00000000:xx:yy.z -> 0000:xx:yy.z
        text = open("/sys/bus/pci/devices/%s/local_cpulist" % bus).read().strip()
    except Exception:
        return []
    cores = []
    for part in text.split(","):
        a, _, b = part.partition("-")
        cores += list(range(int(a), int(b or a) + 1))
    return cores


def load(path, name):
    import importlib.util
    spec = importlib.util.spec_from_file_location(name, path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


def child(args):
    if args.child != "none":
        os.sched_setaffinity(0, [int(c) for c in args.child.split(",")])
    import torch
    torch.set_num_threads(1)
    task = load(args.task, "task")
    new_class = task.Model if args.candidate == "identity" else load(args.candidate, "cand").ModelNew
    torch.manual_seed(0)
    init = task.get_init_inputs()
    ref = task.Model(*init).cuda().eval()
    torch.manual_seed(0)
    new = new_class(*init).cuda().eval()
    xs = [x.cuda() if hasattr(x, "cuda") else x for x in task.get_inputs()]
    out = {"cores": args.child, "pid": os.getpid()}
    with torch.no_grad():
        for _ in range(20):
            ref(*xs), new(*xs)
        torch.cuda.synchronize()
        walls = {"ref": [], "cand": []}
        events = {"ref": [], "cand": []}
        slept = {"ref": [], "cand": []}  # events after a GPU sleep that lets the host queue the call
        end_at = time.perf_counter() + args.seconds
        i = 0
        while time.perf_counter() < end_at:
            order = [("ref", ref), ("cand", new)] if i % 2 == 0 else [("cand", new), ("ref", ref)]
            for who, model in order:
                torch.cuda.synchronize()
                s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                t0 = time.perf_counter()
                s.record()
                model(*xs)
                e.record()
                torch.cuda.synchronize()
                walls[who].append(time.perf_counter() - t0)
                events[who].append(s.elapsed_time(e) / 1e3)
                s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                torch.cuda._sleep(args.sleep_cycles)
                s.record()
                model(*xs)
                e.record()
                torch.cuda.synchronize()
                slept[who].append(s.elapsed_time(e) / 1e3)
            i += 1
        out["rounds"] = i
        for name, d in (("wall", walls), ("event", events), ("slept", slept)):
            r, c = statistics.median(d["ref"]) * 1e6, statistics.median(d["cand"]) * 1e6
            out[name] = [round(r, 1), round(c, 1), round(r / c, 3)]
        if args.graphs:
            graphs = {}
            for who, model in (("ref", ref), ("cand", new)):
                stream = torch.cuda.Stream()
                stream.wait_stream(torch.cuda.current_stream())
                with torch.cuda.stream(stream):
                    for _ in range(3):
                        model(*xs)
                torch.cuda.current_stream().wait_stream(stream)
                g = torch.cuda.CUDAGraph()
                with torch.cuda.graph(g):
                    model(*xs)
                graphs[who] = g
            times = {"ref": [], "cand": []}
            for i in range(2000):
                for who in (("ref", "cand") if i % 2 == 0 else ("cand", "ref")):
                    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                    s.record()
                    graphs[who].replay()
                    e.record()
                    torch.cuda.synchronize()
                    times[who].append(s.elapsed_time(e) / 1e3)
            r, c = statistics.median(times["ref"]) * 1e6, statistics.median(times["cand"]) * 1e6
            out["graph"] = [round(r, 1), round(c, 1), round(r / c, 3)]
    print(json.dumps(out), flush=True)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("task")
    p.add_argument("candidate")
    p.add_argument("--procs", type=int, default=4)
    p.add_argument("--seconds", type=float, default=3.0)
    p.add_argument("--child")
    p.add_argument("--graphs", action="store_true")
    p.add_argument("--sleep-cycles", type=int, default=2_000_000)
    p.add_argument("--placements", default="last,none")
    args = p.parse_args()
    if args.child:
        return child(args)
    allowed = sorted(os.sched_getaffinity(0))
    local = gpu_local_cores()
    print("cores allowed:", allowed, "GPU-local:", local or "unknown", flush=True)
    last = str(allowed[-1])
    placements = [("last core (as the evaluator)", last)]
    if local:
        placements.append(("first GPU-local core", str(local[0])))
        far = [c for c in allowed if c not in local]
        if far:
            placements.append(("first core off the GPU's node", str(far[0])))
    placements += [("two cores", ",".join(map(str, allowed[-2:]))), ("no pinning", "none")]
    keep = args.placements.split(",")
    placements = [p for p in placements if p[0].split()[0] in keep or p[1] in keep]
    for label, cores in placements:
        print("==", label, cores, flush=True)
        for k in range(args.procs):
            cmd = [sys.executable, __file__, args.task, args.candidate, "--child", cores, "--seconds", str(args.seconds),
                   "--sleep-cycles", str(args.sleep_cycles)]
            if k == 0 and label.startswith("last"):
                cmd.append("--graphs")
            subprocess.run(cmd, check=False)


if __name__ == "__main__":
    main()
