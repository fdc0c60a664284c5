#!/usr/bin/env python3
"""Checks the Slurm and Kubernetes recipes in tools/deploy against a crucible binary.

  check_recipes.py CRUCIBLE_BINARY [--root DIR]

DIR (default: this file's folder) holds slurm/ and kubernetes/. Prints one line
per check, then a summary; exits 1 when any check fails, naming the file.

Slurm: `bash -n` and `shellcheck -S warning -x` (when shellcheck is on PATH) on
every .sbatch and .sh; every `crucible SUBCOMMAND ...` invocation (arrays such as
KEYS=(--keys ...) expanded, `bash -c '...'` scripts followed into "$@") uses a
subcommand and flags that `CRUCIBLE_BINARY SUBCOMMAND --help` lists; cluster.toml
parses (tomllib: the binary has no config-check command).

Kubernetes: the manifests parse as YAML; kustomization resources exist; in every
pod template each container's command/args (`sh -c` scripts tokenized with shlex)
uses known subcommands and flags; every volumeMount names a volume of its pod (or
a volumeClaimTemplate); every configMap a volume names is in the manifests, and a
file a flag names under its mount is a key of it; every absolute path a flag or
the TOML a role reads names lies under one of the container's mounts or in the
image (/opt/crucible, this repository); one image name everywhere, the one
kustomization.yaml rewrites; the evaluator asks for nvidia.com/gpu; the TOML in
the ConfigMap parses; curve/'s patches add flags the patched commands accept and
mount the folder they name.
"""
import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib

import yaml

IMAGE_ROOT = "/opt/crucible"  # the built repository inside the image (kubernetes/README.md)
SHELLS = {"sh", "bash", "/bin/sh", "/bin/bash"}
STOP = {"||", "&&", ";", "|", "&", ")", "then", "do"}
# Which container runs the role that reads each TOML section.
SECTION_ROLE = {"learner": "learner", "rollout": "rollout", "detector": "detector", "referee": "hub"}


class Report:
    def __init__(self):
        self.failed = 0
        self.passed = 0

    def check(self, ok, what, why=""):
        if ok:
            self.passed += 1
            print(f"ok    {what}")
        else:
            self.failed += 1
            print(f"FAIL  {what}: {why}")
        return ok


class Binary:
    """The subcommands and flags a crucible binary's --help lists."""

    def __init__(self, path):
        self.path = path
        self.cache = {}

    def help(self, words):
        key = tuple(words)
        if key not in self.cache:
            run = subprocess.run([self.path, *words, "--help"], capture_output=True, text=True, timeout=60)
            text = run.stdout + run.stderr
            flags, subs, section = set(), set(), None
            for line in text.splitlines():
                if re.match(r"^\S.*:$", line):
                    section = line[:-1].strip().lower()
                    continue
                if section and section.startswith("options") and line.lstrip().startswith("-"):
                    first = line.strip().split("  ")[0].split(" ")[0]
                    flags.update(f for f in first.split(",") if f.startswith("--"))
                elif section == "subcommands" and line.startswith("  ") and line.strip():
                    subs.add(line.split()[0])
            self.cache[key] = (run.returncode == 0, flags, subs)
        return self.cache[key]


def is_binary(token):
    return token in ("$CRUCIBLE", "crucible") or token.endswith("/crucible")


def logical_lines(text):
    """The commands of a shell script: comments dropped, continuations and
    quoted strings that span lines (a `bash -c '...'` script) joined."""
    out, pending = [], ""
    for line in text.splitlines():
        if line.lstrip().startswith("#") and not pending:
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        pending += line
        try:
            shlex.split(pending)
        except ValueError:  # an open quote: the command goes on
            pending += "\n"
            continue
        out.append(pending)
        pending = ""
    if pending:
        out.append(pending)
    return out


def invocations(tokens, positional=None):
    """Yields (words, flags) for every crucible invocation in a token list."""
    i = 0
    while i < len(tokens):
        t = tokens[i]
        if t in SHELLS and i + 2 < len(tokens) and tokens[i + 1] == "-c":
            args = tokens[i + 3:]
            for line in logical_lines(tokens[i + 2]):
                try:
                    inner = shlex.split(line)
                except ValueError:
                    continue
                yield from invocations(inner, args)
            return
        zero = positional[0] if positional else None
        tested = i > 0 and tokens[i - 1] in ("[[", "[", "-x", "-f", "-e", "-s")  # [[ -x $CRUCIBLE ]]
        if not tested and (is_binary(t) or (t == "$0" and zero is not None and is_binary(zero))):
            rest = []
            for u in tokens[i + 1:]:
                if u in STOP or u.startswith((">", "<", "2>")):
                    break
                if u == "$@" and positional is not None:
                    rest.extend(positional[1:])
                else:
                    rest.append(u)
            yield rest
            return
        i += 1


def check_invocation(report, binary, where, rest):
    words = []
    ok, flags, subs = binary.help([])
    for w in rest:
        if w not in subs:
            break
        words.append(w)
        ok, flags, subs = binary.help(words)
    if not words:
        report.check(False, f"{where}: crucible {' '.join(rest[:1])}", f"no such subcommand (crucible --help)")
        return
    used = sorted({w.split("=", 1)[0] for w in rest[len(words):] if w.startswith("--")})
    unknown = [f for f in used if f not in flags]
    report.check(ok and not unknown, f"{where}: crucible {' '.join(words)} {' '.join(used)}",
                 f"crucible {' '.join(words)} --help lists no {', '.join(unknown)}")


def flag_values(rest):
    """(flag, value) pairs of an invocation's words: --f=v and --f v."""
    out = []
    for i, w in enumerate(rest):
        if w.startswith("--"):
            if "=" in w:
                out.append(tuple(w.split("=", 1)))
            elif i + 1 < len(rest) and not rest[i + 1].startswith("-"):
                out.append((w, rest[i + 1]))
    return out


def check_slurm(report, binary, folder):
    scripts = sorted(f for f in os.listdir(folder) if f.endswith((".sbatch", ".sh")))
    report.check(bool(scripts), f"{folder}: has scripts", "none found")
    arrays = {}
    texts = {}
    for name in scripts:
        path = os.path.join(folder, name)
        with open(path) as f:
            texts[name] = f.read()
        run = subprocess.run(["bash", "-n", path], capture_output=True, text=True)
        report.check(run.returncode == 0, f"{path}: bash -n", run.stderr.strip())
        if shutil.which("shellcheck"):
            run = subprocess.run(["shellcheck", "-S", "warning", "-x", name], cwd=folder,
                                 capture_output=True, text=True)
            report.check(run.returncode == 0, f"{path}: shellcheck -S warning", run.stdout.strip())
        else:
            print(f"skip  {path}: shellcheck (not installed)")
        # NAME=(--flag ...) arrays, expanded where an invocation says "${NAME[@]}".
        for m in re.finditer(r"(\w+)=\(([^)]*)\)", texts[name]):
            try:
                arrays.setdefault(m.group(1), []).extend(shlex.split(m.group(2)))
            except ValueError:
                pass
    count = 0
    for name in scripts:
        for line in logical_lines(texts[name]):
            if "crucible" not in line.lower():
                continue
            try:
                tokens = shlex.split(line)
            except ValueError:
                continue
            expanded = []
            for t in tokens:
                m = re.fullmatch(r"\$\{(\w+)\[@\]\}", t)
                expanded.extend(arrays.get(m.group(1), []) if m else [t])
            for rest in invocations(expanded):
                check_invocation(report, binary, os.path.join(folder, name), rest)
                count += 1
    report.check(count > 0, f"{folder}: crucible invocations found ({count})", "none: the extraction broke")
    for name in sorted(f for f in os.listdir(folder) if f.endswith(".toml")):
        path = os.path.join(folder, name)
        try:
            with open(path, "rb") as f:
                tomllib.load(f)
            report.check(True, f"{path}: TOML parses")
        except tomllib.TOMLDecodeError as e:
            report.check(False, f"{path}: TOML parses", str(e))


def under(path, roots):
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


def load_yaml(report, path):
    try:
        with open(path) as f:
            docs = [d for d in yaml.safe_load_all(f) if d]
        report.check(True, f"{path}: YAML parses ({len(docs)} documents)")
        return docs
    except (OSError, yaml.YAMLError) as e:
        report.check(False, f"{path}: YAML parses", str(e))
        return []


def container_invocations(c):
    cmd = [str(x) for x in (c.get("command") or []) + (c.get("args") or [])]
    return list(invocations(cmd))


def check_path(report, repo, where, path, mounts):
    """An absolute path a role reads: under a mount, or in the image (this repository)."""
    if under(path, [IMAGE_ROOT]):
        inside = os.path.join(repo, os.path.relpath(path, IMAGE_ROOT))
        ok = path.startswith(IMAGE_ROOT + "/build/") or os.path.exists(inside)
        report.check(ok, f"{where}: {path} is in the image", f"{os.path.relpath(inside, repo)} is not in the repository")
    else:
        report.check(under(path, mounts), f"{where}: {path} lies under a mount",
                     f"no volumeMount of the container holds it (mounts: {', '.join(sorted(mounts))})")


def check_kubernetes(report, binary, folder, repo):
    kust_path = os.path.join(folder, "kustomization.yaml")
    kust = (load_yaml(report, kust_path) or [{}])[0]
    docs = {}
    for res in kust.get("resources", []):
        path = os.path.join(folder, res)
        if report.check(os.path.isfile(path), f"{kust_path}: resource {res} exists", f"{path} is missing"):
            docs[res] = load_yaml(report, path)
    for name in sorted(os.listdir(folder)):
        if name.endswith(".yaml") and name != "kustomization.yaml":
            report.check(name in docs, f"{kust_path}: lists {name}", "a manifest kustomize would not apply")
    everything = [(res, d) for res, ds in docs.items() for d in ds]
    configmaps = {d["metadata"]["name"]: d.get("data", {}) for _, d in everything if d.get("kind") == "ConfigMap"}
    claims = {d["metadata"]["name"] for _, d in everything if d.get("kind") == "PersistentVolumeClaim"}
    readme = open(os.path.join(folder, "README.md")).read() if os.path.exists(os.path.join(folder, "README.md")) else ""

    tomls = {}
    for cm, data in configmaps.items():
        for key, text in data.items():
            if key.endswith(".toml"):
                try:
                    tomls[key] = tomllib.loads(text)
                    report.check(True, f"configmap {cm}: {key} parses as TOML")
                except tomllib.TOMLDecodeError as e:
                    report.check(False, f"configmap {cm}: {key} parses as TOML", str(e))

    images = set()
    containers = {}  # container name -> (where, container, pod spec)
    for res, d in everything:
        if d.get("kind") not in ("Deployment", "StatefulSet", "Job", "DaemonSet"):
            continue
        where = f"{os.path.join(folder, res)} {d['kind']}/{d['metadata']['name']}"
        pod = d["spec"]["template"]["spec"]
        volumes = {v["name"]: v for v in pod.get("volumes", [])}
        templates = {t["metadata"]["name"] for t in d["spec"].get("volumeClaimTemplates", [])}
        for v in volumes.values():
            if "configMap" in v:
                cm = v["configMap"]["name"]
                report.check(cm in configmaps, f"{where}: volume {v['name']} names configMap {cm}",
                             "no ConfigMap of that name among the kustomization's resources")
            if "persistentVolumeClaim" in v:
                claim = v["persistentVolumeClaim"]["claimName"]
                report.check(claim in claims or f"`{claim}`" in readme,
                             f"{where}: claim {claim} is declared or documented",
                             "no PersistentVolumeClaim of that name here, nor in README.md")
        for c in pod.get("containers", []) + pod.get("initContainers", []):
            cwhere = f"{where} container {c['name']}"
            containers[c["name"]] = (cwhere, c, pod)
            images.add(c.get("image"))
            mounts = {}
            for m in c.get("volumeMounts", []):
                report.check(m["name"] in volumes or m["name"] in templates,
                             f"{cwhere}: mount {m['name']} is a volume of the pod",
                             "no volume or volumeClaimTemplate of that name")
                mounts[m["mountPath"]] = volumes.get(m["name"], {})
            calls = container_invocations(c)
            report.check(bool(calls), f"{cwhere}: runs crucible", "no crucible invocation in command/args")
            for rest in calls:
                check_invocation(report, binary, cwhere, rest)
                for flag, value in flag_values(rest):
                    if not value.startswith("/"):
                        continue
                    check_path(report, repo, f"{cwhere} {flag}", value, mounts)
                    for mp, vol in mounts.items():
                        if "configMap" in vol and under(value, [mp]) and value != mp:
                            key = os.path.relpath(value, mp).split("/")[0]
                            cm = vol["configMap"]["name"]
                            report.check(key in configmaps.get(cm, {}), f"{cwhere} {flag}: {key} is a key of {cm}",
                                         f"configMap {cm} has no key {key}")
    for section, role in SECTION_ROLE.items():
        for key, conf in tomls.items():
            if section not in conf or role not in containers:
                continue
            cwhere, c, _ = containers[role]
            mounts = [m["mountPath"] for m in c.get("volumeMounts", [])]
            for k, v in conf[section].items():
                if isinstance(v, str) and v.startswith("/"):
                    check_path(report, repo, f"{key} [{section}] {k} (read by {cwhere})", v, mounts)
    if "rollout" in tomls.get("crucible.toml", {}) and "evaluator" in containers:
        tasks = tomls["crucible.toml"]["rollout"].get("tasks_dir")
        for rest in container_invocations(containers["evaluator"][1]):
            given = dict(flag_values(rest)).get("--tasks")
            report.check(given == tasks, f"evaluator --tasks {given} is [rollout] tasks_dir",
                         f"[rollout] tasks_dir is {tasks}")
    report.check(len(images) == 1, f"{folder}: one image name ({', '.join(map(str, images))})",
                 "containers name different images")
    rewritten = {i.get("name") for i in kust.get("images", [])}
    report.check(images <= rewritten, f"{kust_path}: images rewrites {', '.join(map(str, images))}",
                 f"it rewrites {', '.join(map(str, rewritten)) or 'none'}")
    for role, required in (("evaluator", True), ("learner", False), ("rollout", False)):
        if role not in containers:
            report.check(not required, f"{folder}: has an {role} container", "none")
            continue
        cwhere, c, _ = containers[role]
        limits = (c.get("resources") or {}).get("limits") or {}
        report.check("nvidia.com/gpu" in limits, f"{cwhere}: limits nvidia.com/gpu",
                     "no GPU limit (Kubernetes schedules extended resources by limits)")
    curve = os.path.join(folder, "curve", "kustomization.yaml")
    if os.path.exists(curve):
        check_curve(report, binary, curve, containers)


def check_curve(report, binary, path, containers):
    """curve/: each JSON patch's added flag is accepted by the patched command, and
    each folder it names is mounted in that container by a strategic-merge patch."""
    comp = (load_yaml(report, path) or [{}])[0]
    added_mounts = {}
    for p in comp.get("patches", []):
        body = yaml.safe_load(p["patch"])
        if isinstance(body, dict):
            for c in body["spec"]["template"]["spec"].get("containers", []):
                added_mounts.setdefault(c["name"], []).extend(m["mountPath"] for m in c.get("volumeMounts", []))
    for p in comp.get("patches", []):
        body = yaml.safe_load(p["patch"])
        if not isinstance(body, list):
            continue
        names = {}
        for op in body:
            m = re.fullmatch(r"/spec/template/spec/containers/(\d+)/(name|command|args)(/.*)?", op["path"])
            if not m:
                continue
            if op["op"] == "test" and m.group(2) == "name":
                names[m.group(1)] = op["value"]
            if op["op"] == "add":
                name = names.get(m.group(1))
                if not report.check(name in containers, f"{path}: patch of {p['target']['name']} names its container",
                                    f"container {m.group(1)} is {name}, not one of the manifests'"):
                    continue
                cwhere, c, _ = containers[name]
                for rest in container_invocations(c):
                    check_invocation(report, binary, f"{path} on {name}", rest + [str(op["value"])])
                flag, _, value = str(op["value"]).partition("=")
                if value.startswith("/"):
                    mounts = [x["mountPath"] for x in c.get("volumeMounts", [])] + added_mounts.get(name, [])
                    report.check(under(value, mounts), f"{path} on {name}: {flag} {value} lies under a mount",
                                 "neither the manifest nor the component mounts it")


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("binary", help="the crucible binary the recipes run")
    ap.add_argument("--root", default=here, help="folder holding slurm/ and kubernetes/ (default: this one)")
    args = ap.parse_args()
    repo = os.path.abspath(os.path.join(here, "..", ".."))
    report = Report()
    binary = Binary(args.binary)
    ok, _, subs = binary.help([])
    if not report.check(ok and subs, f"{args.binary} --help lists subcommands", "it does not run"):
        return 1
    check_slurm(report, binary, os.path.join(args.root, "slurm"))
    check_kubernetes(report, binary, os.path.join(args.root, "kubernetes"), repo)
    print(f"{report.passed} checks passed, {report.failed} failed")
    return 1 if report.failed else 0


if __name__ == "__main__":
    sys.exit(main())
