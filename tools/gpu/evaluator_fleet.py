"""An evaluator fleet on one GPU machine: one evaluator per GPU, each taking
the next evaluation from one shared queue as soon as it is free (what the
hub's credit-based dispatch does), until the queue is empty or the deadline.

Issue 9's fleet rows and issue 3's repeats come from runs of this script
over the same jobs with 1, 2 and 4 GPUs (tools/gpu/evaluator_fleet.sh).
Every evaluation is one `crucible-eval eval --json` (a fresh sandboxed
worker, as every evaluation gets anyway) on `--device cuda:G` with its
worker pinned to its own core; the compile cache is shared, so an inline
candidate compiles once for the whole fleet.

A job listed several times is repeated: its k-th line (from 0) is recorded
as repeat `--repeat-index` + k, so one run can hold every repeat of a job in
a row (evaluator_fleet.sh REPEATS=3) instead of one pass per repeat. Each
line's seed is 1000 * repeat + its line index.

Output: one JSON line per evaluation (crucible eval's fields plus job,
repeat, gpu, start_s and end_s from the fleet's start), then one line with
"summary": evaluations, wall seconds, evaluations per hour, the busy
fraction of each GPU (seconds with an evaluation running / wall), the
second each GPU joined (--start-after) and its mean nvidia-smi utilization
(the share of time a kernel ran) over the run.

Usage: python evaluator_fleet.py --bin CRUCIBLE_EVAL --jobs FILE --gpus 0,1
         --out FILE [--repeat-index 1] [--protocol default] [--window-s 0]
         [--deadline-s 600] [--first-core 8] [--cache-dir DIR]
         [--start-after GPU:FILE] [--dry-run]
"""

import argparse
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time


def read_jobs(path):
    """`NAME TASK CANDIDATE` lines, as crucible-bench-eval --jobs reads them."""
    jobs = []
    for line in open(path):
        fields = line.split("#", 1)[0].split()
        if fields:
            jobs.append(tuple(fields))
    return jobs


class Utilization:
    """nvidia-smi's utilization.gpu of the fleet's GPUs, sampled every 200 ms
    while the fleet runs."""

    def __init__(self, gpus):
        self.samples = {g: [] for g in gpus}
        self._proc = subprocess.Popen(
            ["nvidia-smi", "--query-gpu=index,utilization.gpu", "--format=csv,noheader,nounits", "-lms", "200",
             "-i", ",".join(map(str, gpus))], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self):
        for line in self._proc.stdout:
            try:
                g, u = (int(x) for x in line.split(","))
            except ValueError:
                continue
            if g in self.samples:
                self.samples[g].append(u)

    def stop(self):
        self._proc.terminate()
        self._proc.wait()
        return {g: (sum(s) / len(s) / 100 if s else None) for g, s in self.samples.items()}


def kill_session(sid):
    """SIGKILL every process of session sid: the evaluator and its sandbox
    worker, which runs in a process group of its own (killing the
    evaluator's group alone left the worker holding the GPU, and the next
    evaluations there were refused as "busy")."""
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open("/proc/%s/stat" % pid) as f:
                    session = int(f.read().rsplit(")", 1)[1].split()[3])
                if session == sid:
                    os.kill(int(pid), signal.SIGKILL)
            except (OSError, IndexError, ValueError):
                pass  # gone meanwhile


def evaluate(args, gpu, job, seed, deadline):
    """One evaluation of job on cuda:gpu; None when the deadline cut it."""
    name, task, cand = job
    cmd = [args.bin, "eval", "--task", task, "--candidate", cand, "--device", "cuda:%d" % gpu,
           "--protocol", args.protocol, "--seed", str(seed), "--json", "--cores", str(args.first_core + gpu)]
    if args.window_s > 0:
        cmd += ["--window-s", str(args.window_s)]
    if args.cache_dir:
        cmd += ["--cache-dir", args.cache_dir]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=max(1.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        kill_session(proc.pid)
        proc.communicate()
        return None
    lines = out.strip().splitlines()
    if proc.returncode != 0 or not lines:
        return {"status": "evaluator_failed", "reward": 0, "reason": err[-400:], "duration_s": 0}
    return json.loads(lines[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--jobs", required=True)
    ap.add_argument("--gpus", required=True, help="comma-separated CUDA indices, one evaluator each")
    ap.add_argument("--out", required=True)
    ap.add_argument("--repeat-index", type=int, default=1, help="recorded as `repeat`; part of each seed")
    ap.add_argument("--protocol", default="default")
    ap.add_argument("--window-s", type=float, default=0, help="override the protocol's window (0: keep)")
    ap.add_argument("--deadline-s", type=float, default=600)
    ap.add_argument("--first-core", type=int, default=8, help="the worker of GPU g runs on core first+g")
    ap.add_argument("--cache-dir", default="")
    ap.add_argument("--start-after", action="append", default=[], metavar="GPU:FILE",
                    help="the evaluator of GPU takes jobs only once FILE exists (the GPU is busy until then)")
    ap.add_argument("--dry-run", action="store_true", help="print the queue (line, repeat, seed, job) and exit")
    args = ap.parse_args()

    gpus = [int(g) for g in args.gpus.split(",")]
    start_after = {int(g): f for g, f in (a.split(":", 1) for a in args.start_after)}
    todo = queue.Queue()
    seen = {}
    for i, job in enumerate(read_jobs(args.jobs)):
        repeat = args.repeat_index + seen.get(job[0], 0)
        seen[job[0]] = seen.get(job[0], 0) + 1
        todo.put((i, repeat, job))
        if args.dry_run:
            print("%3d repeat %d seed %6d %s" % (i, repeat, 1000 * repeat + i, job[0]))
    if args.dry_run:
        print("%d evaluations of %d jobs" % (todo.qsize(), len(seen)))
        return
    out = open(args.out, "a")
    lock = threading.Lock()
    busy = {g: 0.0 for g in gpus}
    joined = {g: 0.0 for g in gpus}
    t0 = time.monotonic()
    deadline = t0 + args.deadline_s
    cut, finished = [], []

    def evaluator(gpu):
        while gpu in start_after and not os.path.exists(start_after[gpu]) and time.monotonic() < deadline:
            time.sleep(0.2)
        joined[gpu] = round(time.monotonic() - t0, 2)
        while time.monotonic() < deadline:
            try:
                i, repeat, job = todo.get_nowait()
            except queue.Empty:
                return
            start = time.monotonic()
            row = evaluate(args, gpu, job, 1000 * repeat + i, deadline)
            end = time.monotonic()
            with lock:
                busy[gpu] += end - start
                if row is None:
                    cut.append(job[0])
                    continue
                if row["status"] != "evaluator_failed":
                    finished.append(job[0])
                row.update(job=job[0], repeat=repeat, gpu=gpu, start_s=round(start - t0, 2),
                           end_s=round(end - t0, 2))
                print(json.dumps(row), file=out, flush=True)
                print("cuda:%d %-44s %-10s %6.3f %5.1f s" % (gpu, job[0], row["status"], row.get("speedup_raw", 0),
                                                            row["duration_s"]), file=sys.stderr, flush=True)

    util = Utilization(gpus)
    threads = [threading.Thread(target=evaluator, args=(g,)) for g in gpus]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.monotonic() - t0
    utilization = util.stop()
    summary = {"summary": True, "gpus": gpus, "repeat": args.repeat_index, "evaluations": len(finished),
               "wall_s": round(wall, 1), "evaluations_per_hour": round(3600 * len(finished) / wall, 1),
               "cut_by_deadline": cut, "left_in_queue": todo.qsize(),
               "busy_fraction": {g: round(busy[g] / wall, 3) for g in gpus}, "joined_s": joined,
               "utilization": {g: (round(u, 3) if u is not None else None) for g, u in utilization.items()}}
    print(json.dumps(summary), file=out, flush=True)
    print(json.dumps(summary), file=sys.stderr)


if __name__ == "__main__":
    main()
