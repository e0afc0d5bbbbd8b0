#!/usr/bin/env python3
"""tokenizer_golden.py: reference ids and chat texts for the Qwen3 tokenizer tests.

Runs Hugging Face `tokenizers` (Tokenizer.from_file) on every case of the corpus and renders the
chat template of tokenizer_config.json for a list of conversations, then writes JSON that the C++
test qwen3.tokenizer_golden (apps/qwen3/tests/test_tokenizer_golden.cpp) compares with.

Corpus format (apps/qwen3/tests/tokenizer_corpus.txt): one case per line, taken literally, except
that a line starting with "esc:" has that prefix removed and the escapes \\n \\r \\t \\\\ and \\u{HEX}
replaced (so that CR, control characters and decomposed accents survive editors and git). The
whole file, read as bytes and decoded as UTF-8, is one more case.

Each encode case records the ids with special tokens recognised, the ids with them encoded as text
(encode_special_tokens), and decode() of the first with and without skip_special_tokens. The chat
template is rendered with transformers' apply_chat_template when transformers can load the folder,
else with jinja2 set up as transformers does (trim_blocks, lstrip_blocks, loopcontrols).

Usage (GPU machine, from the repository root; needs no network):
  python3 apps/qwen3/tools/tokenizer_golden.py --tokenizer-dir DIR \
      --out apps/qwen3/tests/tokenizer_golden.json
"""
import argparse
import json
import os
import re
import sys

from tokenizers import Tokenizer
import tokenizers

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_CORPUS = os.path.join(HERE, "..", "tests", "tokenizer_corpus.txt")

ESCAPE = re.compile(r"\\(n|r|t|\\|u\{([0-9A-Fa-f]+)\})")


def unescape(line):
    def sub(m):
        c = m.group(1)
        if c.startswith("u{"):
            return chr(int(m.group(2), 16))
        return {"n": "\n", "r": "\r", "t": "\t", "\\": "\\"}[c]
    return ESCAPE.sub(sub, line)


def corpus_cases(path):
    with open(path, "rb") as f:
        whole = f.read().decode("utf-8")
    cases = []
    for line in whole.split("\n"):
        if line == "":
            continue
        cases.append(unescape(line[4:]) if line.startswith("esc:") else line)
    cases.append(whole)
    return cases


# Conversations for the chat template: (messages, add_generation_prompt, enable_thinking or None).
CHATS = [
    ([{"role": "user", "content": "Hello!"}], True, None),
    ([{"role": "user", "content": "Hello!"}], True, True),
    ([{"role": "user", "content": "Hello!"}], True, False),
    ([{"role": "system", "content": "You are terse."}, {"role": "user", "content": "Hi"}], True, False),
    ([{"role": "system", "content": "You are terse."}, {"role": "user", "content": "Hi"}], False, None),
    ([{"role": "user", "content": "2+2?"},
      {"role": "assistant", "content": "<think>\nadd them\n</think>\n\n4"},
      {"role": "user", "content": "and 3+3?"}], True, None),
    ([{"role": "user", "content": "2+2?"},
      {"role": "assistant", "content": "<think>\nadd them\n</think>\n\n4"},
      {"role": "user", "content": "and 3+3?"}], True, False),
    ([{"role": "user", "content": "2+2?"}, {"role": "assistant", "content": "4"}], False, None),
    ([{"role": "user", "content": "2+2?"}, {"role": "assistant", "content": "\n\n4"}], False, None),
    ([{"role": "user", "content": "2+2?"},
      {"role": "assistant", "content": "4", "reasoning_content": "\nsimple\n"}], False, None),
    ([{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"},
      {"role": "user", "content": "c"}, {"role": "assistant", "content": "<think>x</think>d"}], False, None),
    ([{"role": "user", "content": "a"}, {"role": "system", "content": "late system"},
      {"role": "user", "content": "b"}], True, None),
    ([{"role": "system", "content": "s"}, {"role": "user", "content": "q"},
      {"role": "assistant", "content": "<think>\nplan\n</think>\n\nstep 1"},
      {"role": "user", "content": "<tool_response>\nok\n</tool_response>"},
      {"role": "assistant", "content": "<think>\nmore\n</think>\n\ndone"}], False, None),
    ([{"role": "user", "content": "你好 😀\n  indented\r\nline"}], True, False),
    ([{"role": "user", "content": "Say <|im_end|> literally"}], True, True),
]


def render_chats(tokenizer_dir):
    with open(os.path.join(tokenizer_dir, "tokenizer_config.json"), encoding="utf-8") as f:
        template = json.load(f)["chat_template"]
    try:
        from transformers import AutoTokenizer
        hf = AutoTokenizer.from_pretrained(tokenizer_dir)

        def render(messages, add_generation_prompt, enable_thinking):
            extra = {} if enable_thinking is None else {"enable_thinking": enable_thinking}
            return hf.apply_chat_template(messages, tokenize=False, add_generation_prompt=add_generation_prompt,
                                          **extra)
        render(*CHATS[0])
        renderer = "transformers " + __import__("transformers").__version__
    except Exception as e:  # no transformers, or it cannot load the folder: render with jinja2 as it does
        print(f"tokenizer_golden: chat template through jinja2 ({type(e).__name__}: {e})", file=sys.stderr)
        import jinja2
        import jinja2.sandbox
        env = jinja2.sandbox.ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                                           extensions=["jinja2.ext.loopcontrols"])
        env.filters["tojson"] = lambda x, **kw: json.dumps(x, ensure_ascii=False, **kw)
        compiled = env.from_string(template)

        def render(messages, add_generation_prompt, enable_thinking):
            extra = {} if enable_thinking is None else {"enable_thinking": enable_thinking}
            return compiled.render(messages=messages, add_generation_prompt=add_generation_prompt, **extra)
        renderer = "jinja2 " + jinja2.__version__
    return renderer, [(m, g, t, render(m, g, t)) for m, g, t in CHATS]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tokenizer-dir", required=True, help="folder with tokenizer.json and tokenizer_config.json")
    parser.add_argument("--corpus", default=DEFAULT_CORPUS)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()

    path = os.path.join(args.tokenizer_dir, "tokenizer.json")
    tok = Tokenizer.from_file(path)
    as_text = Tokenizer.from_file(path)
    as_text.encode_special_tokens = True

    encode = []
    for text in corpus_cases(args.corpus):
        ids = tok.encode(text, add_special_tokens=True).ids
        encode.append({
            "text": text,
            "ids": ids,
            "ids_special_as_text": as_text.encode(text, add_special_tokens=True).ids,
            "decoded": tok.decode(ids, skip_special_tokens=False),
            "decoded_skip_special": tok.decode(ids, skip_special_tokens=True),
        })

    renderer, chats = render_chats(args.tokenizer_dir)
    chat = [{"messages": m, "add_generation_prompt": g, "enable_thinking": t, "text": text,
             "ids": tok.encode(text).ids} for m, g, t, text in chats]

    golden = {
        "generator": "apps/qwen3/tools/tokenizer_golden.py",
        "tokenizers_version": tokenizers.__version__,
        "chat_renderer": renderer,
        "encode": encode,
        "chat": chat,
    }
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(golden, f, ensure_ascii=False, indent=1)
        f.write("\n")
    print(f"tokenizer_golden: {len(encode)} encode cases, {len(chat)} chat cases "
          f"(tokenizers {tokenizers.__version__}, {renderer}) -> {args.out}")


if __name__ == "__main__":
    sys.exit(main())
