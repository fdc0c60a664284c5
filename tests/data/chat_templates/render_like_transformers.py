"""Renders chat templates with jinja2 exactly as transformers' apply_chat_template
does (transformers/utils/chat_template_utils.py: ImmutableSandboxedEnvironment
with trim_blocks and lstrip_blocks, its own tojson filter, raise_exception and
strftime_now), without transformers itself. The reference for
actors/policy/chat_template.test.cpp.

Reads a JSON list of cases from the file named by argv[1]; each is
{"template": TEXT} or {"folder": DIR} (DIR/tokenizer_config.json), and
"variables": {...}. Writes a JSON list of {"text": ...} or {"error": ...}.
"""
import json
import sys
from datetime import datetime

import jinja2
from jinja2.sandbox import ImmutableSandboxedEnvironment


def raise_exception(message):
    raise jinja2.exceptions.TemplateError(message)


def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def strftime_now(format):
    return datetime.now().strftime(format)


def environment():
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=["jinja2.ext.loopcontrols"])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    return env


def token(value):
    return value["content"] if isinstance(value, dict) else value


def render(case):
    variables = {"tools": None, "documents": None}
    if "folder" in case:
        with open(case["folder"] + "/tokenizer_config.json", encoding="utf-8") as f:
            config = json.load(f)
        source = config["chat_template"]
        if isinstance(source, list):
            source = next(t["template"] for t in source if t["name"] == "default")
        for key in ("bos_token", "eos_token", "unk_token", "pad_token"):
            if config.get(key) is not None:
                variables[key] = token(config[key])
    else:
        source = case["template"]
    variables.update(case.get("variables", {}))
    try:
        return {"text": environment().from_string(source).render(**variables)}
    except Exception as e:  # the C++ side fails too; messages differ
        return {"error": f"{type(e).__name__}: {e}"}


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        cases = json.load(f)
    json.dump([render(c) for c in cases], sys.stdout, ensure_ascii=False)


if __name__ == "__main__":
    main()
