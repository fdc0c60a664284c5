#!/usr/bin/env python3
"""Lays out KernelBench v0 problems as a crucible task set with candidate
variants, for the seed corpus of tools/gpu/loop_kernelbench.sh (stage 1 of a
tiny policy that then writes KernelBench candidates in the loop).

For each problem LEVEL/NAME.py it writes OUT/LEVEL/NAME/task.py (the file as
it is) and variants that are the task file followed by a ModelNew of its own:
  equal.py          the reference's computation (ModelNew subclasses Model)
  slower.py         the reference computed twice
  incorrect.py      the reference's result scaled and shifted
  not_compiling.py  a call left unclosed
  faster.py         a known-faster rewrite from --faster, where one exists
                    (FASTER_DIR/LEVEL_NUMBER_*.py, e.g. level1_12_diag_broadcast.py)
The KernelBench files stay outside the repository; this runs where they are.

    tools/gpu/make_kernelbench_tasks.py --kernelbench .kb --faster tools/gpu/kernelbench_faster \
        --out /tmp/kb-tasks level1/12 level1/88 level1/23
"""
import argparse
import pathlib
import sys

VARIANTS = {
    "equal": '''
class ModelNew(Model):
    """Keep the reference's computation."""
''',
    "slower": '''
class ModelNew(Model):
    """Compute the reference twice and return the second result."""

    def forward(self, *args):
        super().forward(*args)
        return super().forward(*args)
''',
    "incorrect": '''
class ModelNew(Model):
    """Scale and shift the reference's result."""

    def forward(self, *args):
        return super().forward(*args) * 1.5 + 0.25
''',
    "not_compiling": '''
class ModelNew(Model):
    """Call the reference."""

    def forward(self, *args):
        return super().forward(*args
''',
}


def find_problem(kernelbench, spec):
    """LEVEL/NUMBER (or LEVEL/NUMBER_NAME) -> the problem file."""
    level, _, number = spec.partition("/")
    hits = sorted((kernelbench / level).glob(f"{number.split('_')[0]}_*.py"))
    if len(hits) != 1:
        sys.exit(f"{spec}: {len(hits)} files match {kernelbench / level}/{number.split('_')[0]}_*.py")
    return level, hits[0]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kernelbench", required=True, help="folder holding level1/, level2/")
    ap.add_argument("--faster", default="", help="folder of known-faster rewrites (LEVEL_NUMBER_*.py)")
    ap.add_argument("--out", required=True, help="task set folder to write")
    ap.add_argument("problems", nargs="+", help="LEVEL/NUMBER, e.g. level1/12")
    a = ap.parse_args()
    kb, out = pathlib.Path(a.kernelbench), pathlib.Path(a.out)
    for spec in a.problems:
        level, problem = find_problem(kb, spec)
        task = problem.read_text()
        folder = out / level / problem.stem
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "task.py").write_text(task)
        for name, model_new in VARIANTS.items():
            (folder / f"{name}.py").write_text(task.rstrip() + "\n\n" + model_new)
        number = problem.stem.split("_")[0]
        rewrites = sorted(pathlib.Path(a.faster).glob(f"{level}_{number}_*.py")) if a.faster else []
        if rewrites:
            (folder / "faster.py").write_text(rewrites[0].read_text())
        print(f"{level}/{problem.stem}: {len(VARIANTS) + bool(rewrites)} variants")


if __name__ == "__main__":
    main()
