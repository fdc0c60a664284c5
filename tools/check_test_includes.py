#!/usr/bin/env python3
"""Every test file that includes LibTorch includes it before doctest.

LibTorch brings glog, whose logging.h defines CHECK. Included after
doctest, it replaces doctest's CHECK: the checks still pass silently, but a
failing one aborts the whole binary with "Check failed" instead of being
reported, and none is counted (policy_model_test counted 375 assertions
with glog's CHECK, 1,827 with doctest's). Included before, doctest's
definition wins. The CTest "every test that uses LibTorch includes it
before doctest" runs this over the repository; it follows the project's own
headers ("actors/...", "runtime/...") to see which bring LibTorch in.
Usage: tools/check_test_includes.py [ROOT]; exit 1 naming each offender.
"""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+[<"]([^>"]+)[>"]', re.M)
TORCH = re.compile(r"(torch|ATen|c10|glog)/")


def brings_torch(root, header, memo, seen=frozenset()):
    """Whether a project header includes LibTorch, directly or through others."""
    if header in memo:
        return memo[header]
    path = os.path.join(root, header)
    if header in seen or not os.path.isfile(path):
        return False
    with open(path, encoding="utf-8", errors="replace") as f:
        found = any(TORCH.match(h) or brings_torch(root, h, memo, seen | {header})
                    for h in INCLUDE.findall(f.read()))
    memo[header] = found
    return found


def offenders(root):
    memo, out = {}, []
    for top, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith((".", "build"))]
        for name in files:
            if not name.endswith(".cpp"):
                continue
            path = os.path.join(top, name)
            with open(path, encoding="utf-8", errors="replace") as f:
                includes = INCLUDE.findall(f.read())
            if "doctest/doctest.h" not in includes:
                continue
            first = includes.index("doctest/doctest.h")
            before = any(TORCH.match(h) or brings_torch(root, h, memo) for h in includes[:first])
            after = [h for h in includes[first + 1:] if TORCH.match(h) or brings_torch(root, h, memo)]
            if after and not before:
                out.append("%s: includes %s after doctest/doctest.h (glog's CHECK replaces doctest's)"
                           % (os.path.relpath(path, root), after[0]))
    return sorted(out)


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))
    bad = offenders(root)
    for line in bad:
        print(line)
    if not bad:
        print("check_test_includes: every test that uses LibTorch includes it before doctest")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
