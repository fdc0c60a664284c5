"""Chat templates token for token against transformers (issue 21 item 4).

For each model folder of tests/data/chat_templates (Qwen2.5, Llama 3.1 and
Llama 3.2 Instruct templates over a small tokenizer that holds their special
tokens), renders conversations with transformers' apply_chat_template and
  * writes the text and token ids to OUT (default
    tests/data/chat_templates/golden.json), which chat_template_test then
    holds crucible's renderer and tokenizer to, on any machine (commit it);
  * with --crucible BIN, also runs `BIN tokenize --chat` (the rollout's own
    path: an optional system message, the prompt as the user's, the
    assistant's turn opened) and compares its ids with transformers' at once.
Prints one line per case and a summary; exits 1 on any difference.

Needs transformers and tokenizers (the H200 image has them); no GPU work.
Usage, from the repository root:
  python3 tools/gpu/chat_template_check.py [--out FILE] [--crucible build/bin/crucible]
"""
import argparse
import json
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "chat_templates"
FAMILIES = ["qwen2.5", "llama3.1", "llama3.2"]
CODE = ("Write a faster kernel.\n\n```python\nimport torch\n\nclass Model(torch.nn.Module):\n"
        "    def forward(self, x):\n        return {'y': \"{{ x }}\"}\n```\n")


def message(role, content):
    return {"role": role, "content": content}


# Fixed date_string: Llama 3.2 otherwise prints today's date (strftime_now).
CASES = [
    {"messages": [message("user", "Hi")], "add_generation_prompt": True},
    {"messages": [message("system", "You write CUDA kernels."), message("user", CODE)], "add_generation_prompt": True},
    {"messages": [message("user", "héllo – 世界 \"q\" 'x' \\n  ")], "add_generation_prompt": True},
    {"messages": [message("system", " S "), message("user", "A"), message("assistant", "B"), message("user", "C")],
     "add_generation_prompt": False},
]
ROLLOUT_FORM = [("", "Hi"), ("You write CUDA kernels.", CODE), ("", "héllo – 世界")]


def load(family):
    from transformers import AutoTokenizer
    return AutoTokenizer.from_pretrained(str(DATA / family))


def ids_of(encoded):
    # transformers 5 returns a BatchEncoding from apply_chat_template(tokenize=True); 4.x a list.
    if hasattr(encoded, "keys") and "input_ids" in encoded:
        encoded = encoded["input_ids"]
    return [int(i) for i in encoded]


def crucible_ids(binary, family, system, text):
    cmd = [binary, "tokenize", "--model", str(DATA / family), "--text", text, "--chat", "--json"]
    if system:
        cmd += ["--system", system]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out)["ids"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=str(DATA / "golden.json"))
    ap.add_argument("--crucible", help="a crucible binary to compare the rollout's path with at once")
    args = ap.parse_args()
    import tokenizers
    import transformers

    golden = {"versions": {"transformers": transformers.__version__, "tokenizers": tokenizers.__version__}, "cases": []}
    failures = 0
    for family in FAMILIES:
        tok = load(family)
        for case in CASES:
            kwargs = {"date_string": "26 Jul 2024"}
            text = tok.apply_chat_template(case["messages"], add_generation_prompt=case["add_generation_prompt"],
                                           tokenize=False, **kwargs)
            ids = ids_of(tok.apply_chat_template(case["messages"], add_generation_prompt=case["add_generation_prompt"],
                                                 tokenize=True, **kwargs))
            # apply_chat_template encodes the rendered text without the tokenizer's own special tokens.
            if ids != tok(text, add_special_tokens=False)["input_ids"]:
                print(f"{family}: transformers' ids differ from its own encoding of the text", file=sys.stderr)
                failures += 1
            golden["cases"].append({"family": family, "variables": {**case, **kwargs}, "text": text, "ids": ids})
            print(f"{family:9} {len(case['messages'])} messages, generation prompt {case['add_generation_prompt']!s:5}: "
                  f"{len(ids)} ids")
        if args.crucible:
            for system, prompt in ROLLOUT_FORM:
                conversation = ([message("system", system)] if system else []) + [message("user", prompt)]
                want = ids_of(tok.apply_chat_template(conversation, add_generation_prompt=True, tokenize=True))
                got = crucible_ids(args.crucible, family, system, prompt)
                same = want == got
                failures += not same
                print(f"{family:9} rollout prompt{' with system' if system else ''}: transformers {len(want)} ids, "
                      f"crucible {len(got)} ids: {'same' if same else 'DIFFERENT'}")
                if not same:
                    print(f"  transformers {want}\n  crucible     {got}")
    pathlib.Path(args.out).write_text(json.dumps(golden, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.out}: {len(golden['cases'])} cases; transformers {transformers.__version__}")
    print("all the same" if failures == 0 else f"{failures} differences")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
