"""Inline builds the compile pool's first call does not reach, found in the
source and built ahead all the same.

The pool (sandbox_worker.on_compile) constructs ModelNew and calls it once
on meta tensors, so that builds in __init__ or on a first forward run there,
ahead of the GPU. A forward that reads a value first (`.item()`, a data
pointer) or branches on the device raises or turns away on meta tensors
before it builds, and one that builds on a later call (after a profiling
run) is not reached by one call: their builds then ran in the timed worker,
on the GPU's time (CUDA-L1 A100 L2-67 and L2-71 on the H200: 48 s and 52 s
of a correctness phase; catalogue legit/inline_extension_on_later_call). Here every `load_inline(...)` call in the candidate's
source whose arguments are plain data of the module (literals, module-level
names, containers, `+` and f-strings of them: no call, no attribute, no
local) is evaluated in the module's namespace and built through the same
wrapper (extensions.py), keyed by its arguments: the timed worker finds it
in the cache when it makes the same call.

What it allows: any call site. What it does not do: run candidate code (an
argument needing a call or a local is skipped, and the timed worker builds
it as before); a build found here that the candidate never makes costs the
pool's time only.

Who calls it: sandbox_worker.on_compile, stage 1, after the first call.
"""

import ast

_PLAIN = (ast.Constant, ast.Name, ast.List, ast.Tuple, ast.Dict, ast.BinOp, ast.JoinedStr, ast.FormattedValue,
          ast.Load, ast.Add, ast.expr_context)


def _plain(node):
    return all(isinstance(n, _PLAIN) for n in ast.walk(node))


def _is_load_inline(func):
    return (isinstance(func, ast.Name) and func.id == "load_inline") or \
        (isinstance(func, ast.Attribute) and func.attr == "load_inline")


def inline_calls(source, namespace):
    """The keyword arguments of each load_inline call in source whose
    arguments evaluate in namespace (the candidate module's globals)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and _is_load_inline(node.func)):
            continue
        if node.args or any(k.arg is None or not _plain(k.value) for k in node.keywords):
            continue  # positional or ** arguments: leave it to the call itself
        try:
            kwargs = {k.arg: eval(compile(ast.Expression(k.value), "<load_inline argument>", "eval"),  # noqa: S307
                                  {"__builtins__": {}}, namespace)
                      for k in node.keywords}
        except Exception:  # noqa: BLE001  (a local name, a type error: not plain module data)
            continue
        if "name" in kwargs:
            found.append(kwargs)
    return found


def build_ahead(source, namespace, load_inline):
    """Builds each call inline_calls finds with load_inline (the worker's
    wrapper); a failed build is kept by the wrapper as any other. Returns
    how many calls were tried."""
    calls = inline_calls(source, namespace)
    for kwargs in calls:
        try:
            load_inline(**kwargs)
        except Exception:  # noqa: BLE001  (kept as FAILED by the wrapper; the timed worker reports it)
            pass
    return len(calls)
