#!/usr/bin/env python3
"""The soak's sampler and report (tools/soak.sh; issue 20 item 6).

sample: every INTERVAL s for DURATION s, each role process named in
DIR/pids ("PID NAME" lines) and each of its descendants (the evaluator's
sandbox workers): VmRSS and RssAnon from /proc/PID/status and the entries
of /proc/PID/fd, one CSV row each in DIR/samples.csv (t_s, role, pid, comm,
rss_kib, rss_anon_kib, fds; a descendant's role is "NAME/children"); each
RocksDB store's write-ahead log in DIR/stores.csv; every 12 samples the
hub's unacknowledged jobs by kind (--hub-metrics) in DIR/hub-jobs.csv.
Every 300 s a line of progress. Stops early, exit 1, when a role process
is gone (DIR/exits.txt).

report: per role, and per role's descendants taken together, the RSS and
descriptors at the end of the warm-up (the first sample at or after it) and
at the end, and the least-squares slope of the samples after the warm-up,
in KiB/min and fds/min; the level counts of every DIR/*.log and its error
lines; what the loop did (groups, settlements, evaluations, learner
versions); the hub's unacknowledged jobs by kind. Exit 1 when a slope
passes its bound (--max-rss-slope, --max-fd-slope, or SOAK_MAX_RSS_SLOPE /
SOAK_MAX_FD_SLOPE; the second also bounds the number of sandbox workers and
of the hub's unacknowledged jobs of a kind), a log holds an error or
critical line, or a role exited before the end.
"""
import argparse
import collections
import csv
import json
import os
import re
import sys
import time
import urllib.request

WARMUP_MAX_S = 600  # the warm-up: the first sixth of the run, at most 10 minutes


def warmup_of(duration):
    return min(WARMUP_MAX_S, duration / 6)


def read_roles(path):
    roles = []
    with open(path) as f:
        for line in f:
            if line.strip():
                pid, name = line.split(None, 1)
                roles.append((int(pid), name.strip()))
    return roles


def parent_map():
    """pid -> (ppid, comm) of every process this user can see."""
    out = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        # comm may hold spaces and parentheses: the state follows the last ')'.
        comm = stat[stat.index("(") + 1 : stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2 :].split()
        out[int(entry)] = (int(fields[1]), comm, fields[0])
    return out


def rss_and_fds(pid):
    """(VmRSS KiB, RssAnon KiB, open descriptors) or None when the process is
    gone or a zombie. RssAnon leaves out the mapped files (the binary, its
    libraries), which the kernel drops and reads again under memory pressure."""
    try:
        kib = {}
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(("VmRSS:", "RssAnon:")):
                    kib[line.split(":")[0]] = int(line.split()[1])
        if "VmRSS" not in kib:
            return None
        return kib["VmRSS"], kib.get("RssAnon", 0), len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return None


# The RocksDB stores of the roles (tools/soak.sh's folders): until a flush,
# a store's memtable holds what its write-ahead log (*.log) holds, so the
# log's size is the memory its writes have taken in that role.
STORES = {"hub-ledger": "hub", "referee-ledger": "referee", "exemplars": "exemplar"}


def store_sizes(d):
    """store -> (write-ahead log KiB, SST files)."""
    out = {}
    for store in STORES:
        try:
            names = os.listdir(os.path.join(d, store))
        except OSError:
            continue
        wal = sum(os.path.getsize(os.path.join(d, store, n)) for n in names if n.endswith(".log"))
        out[store] = (wal // 1024, sum(n.endswith(".sst") for n in names))
    return out


def hub_jobs_held(url):
    """kind -> the hub's jobs whose result its submitter has not acknowledged
    (crucible_hub_jobs_awaiting_ack on the hub's metrics page), or None."""
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            text = r.read().decode()
    except (OSError, ValueError):
        return None
    held = {}
    for m in re.finditer(r'^crucible_hub_jobs_awaiting_ack\{kind="([^"]*)"\} (\S+)$', text, re.M):
        held[m.group(1)] = int(float(m.group(2)))
    return held


def descendants(root, procs):
    children = collections.defaultdict(list)
    for pid, (ppid, _, _) in procs.items():
        children[ppid].append(pid)
    out, todo = [], list(children[root])
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo.extend(children[pid])
    return out


def first_groups(path, pattern):
    """How often each value of the pattern's first group occurs in a log."""
    counts = collections.Counter()
    try:
        with open(path, errors="replace") as f:
            for line in f:
                m = re.search(pattern, line)
                if m:
                    counts[m.group(1)] += 1
    except OSError:
        pass
    return counts


def loop_figures(d):
    """What the loop did, from the state files, the logs and the learner's metrics."""
    groups = 0
    for name in ("rollout-0", "rollout-1"):
        try:
            with open(os.path.join(d, name + ".state")) as f:
                groups += int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            pass
    versions, last_version = 0, None
    try:
        with open(os.path.join(d, "metrics.jsonl")) as f:
            for line in f:
                try:
                    last_version = json.loads(line).get("version", last_version)
                    versions += 1
                except ValueError:
                    pass
    except OSError:
        pass
    outcomes = first_groups(os.path.join(d, "referee.log"), r"referee settled \S+: (\w+) reward")
    evaluations = first_groups(os.path.join(d, "evaluator.log"), r"@\S+: (\w+) reward=")
    return {
        "groups": groups,
        "settled": sum(outcomes.values()),
        "outcomes": dict(outcomes),
        "evaluations": dict(evaluations),
        "learner_steps": versions,
        "last_version": last_version,
    }


def sample(args):
    d = args.dir
    roles = read_roles(os.path.join(d, "pids"))
    out_path = os.path.join(d, "samples.csv")
    start = time.monotonic()
    next_progress = 300
    gone = []
    with open(out_path, "w", newline="") as out, open(os.path.join(d, "stores.csv"), "w", newline="") as stores:
        w = csv.writer(out)
        w.writerow(["t_s", "role", "pid", "comm", "rss_kib", "rss_anon_kib", "fds"])
        ws = csv.writer(stores)
        ws.writerow(["t_s", "store", "wal_kib", "sst_files"])
        tick = 0
        while True:
            t = time.monotonic() - start
            procs = parent_map()
            for pid, name in roles:
                got = rss_and_fds(pid)
                if got is None:
                    gone.append(f"{name} (pid {pid}) gone at {t:.0f} s")
                    continue
                w.writerow([f"{t:.1f}", name, pid, procs.get(pid, (0, "?", "?"))[1], *got])
                for child in descendants(pid, procs):
                    got = rss_and_fds(child)
                    if got is not None:
                        w.writerow([f"{t:.1f}", name + "/children", child, procs[child][1], *got])
            for store, (wal, ssts) in store_sizes(d).items():
                ws.writerow([f"{t:.1f}", store, wal, ssts])
            if args.hub_metrics and tick % 12 == 0:
                held = hub_jobs_held(args.hub_metrics)
                if held is not None:
                    with open(os.path.join(d, "hub-jobs.csv"), "a") as f:
                        f.writelines(f"{t:.1f},{kind},{n}\n" for kind, n in sorted(held.items()))
            out.flush()
            stores.flush()
            if gone:
                with open(os.path.join(d, "exits.txt"), "a") as f:
                    f.write("\n".join(gone) + "\n")
                print("soak: " + "; ".join(gone), flush=True)
                return 1
            if t >= next_progress:
                next_progress += 300
                fig = loop_figures(d)
                print(f"soak: {t / 60:.0f} min: {fig['groups']} groups, {fig['settled']} settled, "
                      f"{sum(fig['evaluations'].values())} evaluations, learner version {fig['last_version']}",
                      flush=True)
            if t >= args.duration:
                return 0
            # The next tick still ahead: after a stall (a starved machine),
            # no burst of samples to catch up.
            tick = max(tick + 1, int((time.monotonic() - start) / args.interval) + 1)
            time.sleep(max(0.0, start + tick * args.interval - time.monotonic()))


def slope_per_min(points):
    """Least-squares slope of (t_s, value) points, per minute."""
    n = len(points)
    if n < 2:
        return 0.0
    mt = sum(t for t, _ in points) / n
    mv = sum(v for _, v in points) / n
    var = sum((t - mt) ** 2 for t, _ in points)
    if var == 0:
        return 0.0
    return 60 * sum((t - mt) * (v - mv) for t, v in points) / var


LEVEL = re.compile(r"^(?:\S+ (trace|debug|info|warning|error|critical) |\[[^]]*\] \[(trace|debug|info|warning|error|critical)\])")


CRASH = re.compile(r"^(terminate called|Aborted|Segmentation fault|.*Assertion .* failed|.*AddressSanitizer)")


def read_logs(d):
    """Per log file: level counts, error lines, and the distinct warnings."""
    logs = {}
    for name in sorted(os.listdir(d)):
        if not name.endswith(".log"):
            continue
        levels, errors, warnings = collections.Counter(), [], collections.Counter()
        with open(os.path.join(d, name), errors="replace") as f:
            for line in f:
                m = LEVEL.match(line)
                if not m:
                    # A record's next lines (a settled candidate's traceback),
                    # unless the C++ runtime or the kernel wrote it.
                    if CRASH.search(line):
                        levels["crash"] += 1
                        errors.append(line.rstrip())
                    continue
                level = m.group(1) or m.group(2)
                levels[level] += 1
                if level in ("error", "critical"):
                    errors.append(line.rstrip())
                if level == "warning":
                    # The same warning with other numbers and ids counts once.
                    text = line.split(": ", 1)[-1].rstrip()
                    warnings[re.sub(r"[0-9a-f]{6,}|\d+(\.\d+)?", "N", text)] += 1
        logs[name] = (levels, errors, warnings)
    return logs


def read_series(d, until):
    """role -> {t_s: [RSS KiB, fds, processes, RssAnon KiB or None]}, a role's
    descendants summed as ROLE/children, samples up to `until` s; and role ->
    the process ids seen. A sample less than a second after the one before
    (a sampler that caught up after a stall, before it stopped doing so) is
    left out."""
    series = collections.defaultdict(lambda: collections.defaultdict(lambda: [0, 0, 0, None]))
    pids = collections.defaultdict(set)
    first_role, tick_t, keep = None, None, True
    with open(os.path.join(d, "samples.csv")) as f:
        for row in csv.DictReader(f):
            t = float(row["t_s"])
            if first_role is None:
                first_role = row["role"]
            if row["role"] == first_role:  # each sample starts with the first role
                keep = (tick_t is None or t - tick_t >= 1.0) and t <= until
                tick_t = t if keep else tick_t
            if not keep:
                continue
            cell = series[row["role"]][t]
            cell[0] += int(row["rss_kib"])
            cell[1] += int(row["fds"])
            cell[2] += 1
            if row.get("rss_anon_kib"):
                cell[3] = (cell[3] or 0) + int(row["rss_anon_kib"])
            pids[row["role"]].add(row["pid"])
    return series, pids


def store_slopes(d, warmup):
    """Prints the stores' write-ahead logs; returns role -> their KiB/min after the warm-up."""
    stores = collections.defaultdict(list)
    try:
        with open(os.path.join(d, "stores.csv")) as f:
            for row in csv.DictReader(f):
                stores[row["store"]].append((float(row["t_s"]), int(row["wal_kib"]), int(row["sst_files"])))
    except OSError:
        return {}
    print("stores (RocksDB; until a flush the memtable holds what the write-ahead log holds):")
    print(f"{'store':<16} {'role':<10} {'WAL warm (KiB)':>14} {'WAL end (KiB)':>13} {'KiB/min':>8} {'SST files':>9}")
    slopes = {}
    for store, pts in sorted(stores.items()):
        after = [p for p in pts if p[0] >= warmup]
        if not after:
            continue
        slopes[STORES[store]] = slope_per_min([(t, w) for t, w, _ in after])
        print(f"{store:<16} {STORES[store]:<10} {after[0][1]:>14} {pts[-1][1]:>13} "
              f"{slopes[STORES[store]]:>+8.1f} {pts[-1][2]:>9}")
    print()
    return slopes


def process_table(series, pids, warmup, wal_slopes, args, failures):
    """Prints one row per role and per role's descendants; returns the rows.
    The RSS bound applies to the anonymous RSS where it was sampled (else to
    VmRSS), less what the role's store's write-ahead log grew: the memtable
    that holds it is bounded by RocksDB's write buffer
    (storage::rocksdb_options::write_buffer_mib)."""
    print(f"{'process':<18} {'n':>3} {'seen':>5} {'RSS warm (MiB)':>14} {'RSS end (MiB)':>13} {'RSS max':>8} "
          f"{'KiB/min':>9} {'anon/min':>9} {'bounded':>9} {'fds warm':>8} {'fds end':>7} {'fds max':>7} "
          f"{'fds/min':>8}")
    rows = []
    for role in sorted(series, key=lambda r: r.replace("/children", "~")):
        pts = sorted(series[role].items())
        after = [(t, c) for t, c in pts if t >= warmup]
        if not after:
            continue
        warm, end = after[0][1], pts[-1][1]
        rss_slope = slope_per_min([(t, c[0]) for t, c in after])
        anon = [(t, c[3]) for t, c in after if c[3] is not None]
        anon_slope = slope_per_min(anon) if anon else None
        fd_slope = slope_per_min([(t, c[1]) for t, c in after])
        bounded = (anon_slope if anon_slope is not None else rss_slope) - max(0.0, wal_slopes.get(role, 0.0))
        label = role if not role.endswith("/children") else role.split("/")[0] + " workers"
        anon_text = f"{anon_slope:+.1f}" if anon_slope is not None else "-"
        print(f"{label:<18} {end[2]:>3} {len(pids[role]):>5} {warm[0] / 1024:>14.1f} {end[0] / 1024:>13.1f} "
              f"{max(c[0] for _, c in after) / 1024:>8.1f} {rss_slope:>+9.1f} {anon_text:>9} {bounded:>+9.1f} "
              f"{warm[1]:>8} {end[1]:>7} {max(c[1] for _, c in after):>7} {fd_slope:>+8.3f}")
        rows.append({"process": label, "count": end[2], "processes_seen": len(pids[role]),
                     "most_at_once": max(c[2] for _, c in pts), "rss_warm_kib": warm[0], "rss_end_kib": end[0],
                     "rss_max_kib": max(c[0] for _, c in after), "rss_slope_kib_min": rss_slope,
                     "rss_anon_slope_kib_min": anon_slope, "bounded_slope_kib_min": bounded, "fds_warm": warm[1],
                     "fds_end": end[1], "fds_max": max(c[1] for _, c in after), "fds_slope_min": fd_slope})
        # Workers that come and go (one a job): their sum follows which part
        # of a job each sample caught, and none lives long enough to leak;
        # the bound is on how many there are.
        turnover = len(pids[role]) > max(c[2] for _, c in pts)
        if turnover:
            count_slope = slope_per_min([(t, c[2]) for t, c in after])
            rows[-1]["count_slope_min"] = count_slope
            if count_slope > args.max_fd_slope:
                failures.append(f"{label}: {count_slope:.3f} more processes a minute after the warm-up")
        elif bounded > args.max_rss_slope:
            failures.append(f"{label}: RSS grows {rss_slope:.1f} KiB/min after the warm-up ({bounded:.1f} of it "
                            "counted against the bound)")
        if fd_slope > args.max_fd_slope:
            failures.append(f"{label}: descriptors grow {fd_slope:.3f}/min after the warm-up")
    print("(n: processes at the end; seen: in all samples; a role's workers: its descendants taken together; "
          "KiB/min: VmRSS; anon/min: RssAnon; bounded: anon (else VmRSS) less the store's write-ahead log, "
          "which the RSS bound applies to; for workers that come and go, the bound is on their number instead)")
    return rows


def report(args):
    d = args.dir
    warmup = warmup_of(args.duration)
    series, pids = read_series(d, args.until)
    last_t = max((t for s in series.values() for t in s), default=0)
    print(f"soak report: {d}")
    print(f"samples: 0 to {last_t:.0f} s; warm-up: the first {warmup:.0f} s (a sixth of the run, at most "
          f"{WARMUP_MAX_S} s); slopes: least squares over the samples after it")
    print(f"bounds: RSS {args.max_rss_slope:g} KiB/min, descriptors {args.max_fd_slope:g}/min\n")
    failures = []
    rows = process_table(series, pids, warmup, store_slopes(d, warmup), args, failures)

    held = collections.defaultdict(list)
    try:
        with open(os.path.join(d, "hub-jobs.csv")) as f:
            for line in f:
                t, kind, n = line.strip().split(",")
                if float(t) <= args.until:
                    held[kind].append((float(t), int(n)))
    except OSError:
        pass
    if held:
        print("\nthe hub's jobs whose result the submitter has not acknowledged (crucible_hub_jobs_awaiting_ack):")
        for kind, pts in sorted(held.items()):
            after = [p for p in pts if p[0] >= warmup] or pts
            slope = slope_per_min(after)
            print(f"  {kind:<18} {after[0][1]:>6} at the warm-up's end, {pts[-1][1]:>6} at the end, {slope:+.2f}/min")
            if slope > args.max_fd_slope:
                failures.append(f"the hub holds {slope:.2f} more unacknowledged {kind} jobs a minute")

    print("\nlogs (lines per level):")
    for name, (levels, errors, warnings) in read_logs(d).items():
        print(f"  {name:<16} " + ", ".join(f"{k} {v}" for k, v in sorted(levels.items())))
        for e in errors[:5]:
            print(f"    ERROR: {e[:300]}")
        if errors:
            failures.append(f"{name}: {len(errors)} error lines")
        for text, n in warnings.most_common(5):
            print(f"    warning x{n}: {text[:200]}")

    for extra in ("exits.txt", "stop.txt"):
        p = os.path.join(d, extra)
        if os.path.exists(p):
            with open(p) as f:
                for line in f:
                    failures.append(line.strip())

    fig = loop_figures(d)
    print(f"\nthe loop: {fig['groups']} groups sampled, {fig['settled']} candidates settled "
          f"({', '.join(f'{k} {v}' for k, v in sorted(fig['outcomes'].items()))}), evaluations "
          f"({', '.join(f'{k} {v}' for k, v in sorted(fig['evaluations'].items()))}), "
          f"{fig['learner_steps']} learner steps, last version {fig['last_version']}")
    with open(os.path.join(d, "summary.json"), "w") as f:
        json.dump({"warmup_s": warmup, "last_sample_s": last_t, "processes": rows, "loop": fig,
                   "failures": failures}, f, indent=1)
    if failures:
        print("\nFAILED:\n  " + "\n  ".join(failures))
        return 1
    print("\nok: every slope within its bound, no error line, no role exited")
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    s = sub.add_parser("sample")
    s.add_argument("--dir", required=True)
    s.add_argument("--interval", type=float, default=5)
    s.add_argument("--duration", type=float, required=True)
    s.add_argument("--hub-metrics", help="the hub's metrics page: its held jobs by kind every 12 samples")
    r = sub.add_parser("report")
    r.add_argument("--dir", required=True)
    r.add_argument("--duration", type=float, required=True)
    r.add_argument("--until", type=float, default=float("inf"), help="only the samples up to this second")
    r.add_argument("--max-rss-slope", type=float, default=float(os.environ.get("SOAK_MAX_RSS_SLOPE", 64)),
                   help="KiB/min (64: 3.75 MiB an hour)")
    r.add_argument("--max-fd-slope", type=float, default=float(os.environ.get("SOAK_MAX_FD_SLOPE", 0.05)),
                   help="descriptors/min (0.05: 3 an hour)")
    a = p.parse_args()
    return sample(a) if a.command == "sample" else report(a)


if __name__ == "__main__":
    sys.exit(main())
