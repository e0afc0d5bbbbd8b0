#!/usr/bin/env python3
"""Fails when the user documentation names a repository file that does not exist.

Scans README.md, CONTRIBUTING.md, docs/*.md and benchmarks/README.md for paths in backticks and
in markdown links. A path with a slash must exist relative to the repository root or to the
document's directory, and must not leave the repository (`../`); a bare file name with a source
extension (`Passes.td`, `launcher.cpp`) must name some file in the repository; a glob
(`*`) must match at least one file. Absolute paths (`/usr/local/cuda`), home and variable paths
(`~/.cache`, `$OUT`), hidden paths (`.device/`), URLs, build outputs (`build/...`, `build-asan/`)
and code blocks are not repository files and are skipped.

Usage: check_links.py [REPO_ROOT]   (default: the directory two levels above this script)
"""
import glob
import os
import re
import sys

DOCS = ["README.md", "CONTRIBUTING.md", "benchmarks/README.md"]
# Bare names with these extensions are source files; other bare names (`ast.txt`, `loops.mlir`)
# are usually files that tessera writes, not repository files, and are not checked.
FILE_EXTS = {"h", "cpp", "td", "md", "py", "sh", "cmake"}
TOKEN_CHARS = re.compile(r"^[A-Za-z0-9_.\-/*+]+$")


def candidates(text):
    text = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    for m in re.finditer(r"\[[^\]]*\]\(([^)\s]+)\)", text):
        yield m.group(1).split("#")[0]
    for m in re.finditer(r"`([^`\n]+)`", text):
        yield m.group(1)


def is_path(token):
    if not token or not TOKEN_CHARS.match(token):
        return False
    if token.startswith(("-", ".")) and not token.startswith("../"):
        return False
    if "/" in token:
        return not token.startswith(("build/", "build-")) and token not in ("build",)
    ext = token.rsplit(".", 1)[-1] if "." in token else ""
    return ext in FILE_EXTS


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                           os.path.join(os.path.dirname(__file__), "..", ".."))
    docs = DOCS + sorted(os.path.relpath(p, root) for p in glob.glob(os.path.join(root, "docs", "*.md")))
    basenames = set()
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if not d.startswith((".", "build"))]
        basenames.update(filenames)
    failures = []
    for doc in docs:
        path = os.path.join(root, doc)
        if not os.path.exists(path):
            failures.append(f"{doc}: the document itself is missing")
            continue
        here = os.path.dirname(path)
        with open(path, encoding="utf-8") as f:
            text = f.read()
        for token in candidates(text):
            if re.match(r"^[a-z]+://|^mailto:|^#", token):
                continue
            if token.startswith(("/", "~", "$")):
                continue
            if not is_path(token):
                continue
            if "/" not in token:
                if token not in basenames:
                    failures.append(f"{doc}: `{token}` names no file in the repository")
                continue
            ok = False
            for base in (root, here):
                full = os.path.normpath(os.path.join(base, token))
                if os.path.commonpath([full, root]) != root:
                    continue
                if glob.glob(full) if "*" in token else os.path.exists(full):
                    ok = True
                    break
            if not ok:
                failures.append(f"{doc}: `{token}` does not exist in the repository")
    for line in failures:
        print(line)
    if failures:
        print(f"{len(failures)} broken reference(s)")
        return 1
    print(f"checked {len(docs)} documents: every referenced path exists")
    return 0


if __name__ == "__main__":
    sys.exit(main())
