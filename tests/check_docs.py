#!/usr/bin/env python3
"""Checks the project's documentation pages: README.md and docs/*.md.

Every relative link (and image) must name a file or folder that exists, and a link with a
fragment (page.md#some-heading) must name a heading of that page, spelled as GitHub spells its
anchors. Every line must fit in 100 columns, as the programs' output does. Links inside code
blocks and inline code are not links. Prints one line per problem and exits 1 if there is any.

    python3 tests/check_docs.py [ROOT]      ROOT: the repository (default: this file's parent's)
"""
import os
import re
import sys

MAX_COLUMNS = 100


def pages(root):
    found = [os.path.join(root, "README.md")]
    docs = os.path.join(root, "docs")
    found += sorted(os.path.join(docs, name) for name in os.listdir(docs) if name.endswith(".md"))
    return found


def anchor(heading):
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"[`*]", "", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(path):
    text = re.sub(r"```.*?```", "", open(path, encoding="utf-8").read(), flags=re.S)
    return {anchor(m.group(1)) for m in re.finditer(r"^#+\s+(.*)$", text, flags=re.M)}


def problems(path, root):
    text = open(path, encoding="utf-8").read()
    shown = os.path.relpath(path, root)
    for number, line in enumerate(text.split("\n"), 1):
        if len(line) > MAX_COLUMNS:
            yield f"{shown}:{number}: {len(line)} columns (at most {MAX_COLUMNS})"
    prose = re.sub(r"```.*?```", "", text, flags=re.S)
    prose = re.sub(r"`[^`\n]*`", "", prose)
    for match in re.finditer(r"\]\(([^)\s]+)\)", prose):
        link = match.group(1)
        if re.match(r"[a-z]+:", link):
            continue  # https:, mailto: ...: not checked here (no network)
        target, _, fragment = link.partition("#")
        full = os.path.normpath(os.path.join(os.path.dirname(path), target)) if target else path
        if not os.path.exists(full):
            yield f"{shown}: link to a missing file: {link}"
        elif fragment and full.endswith(".md") and fragment not in anchors(full):
            yield f"{shown}: link to a missing heading: {link}"


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(
        os.path.dirname(os.path.abspath(__file__)))
    found = [problem for path in pages(root) for problem in problems(path, root)]
    for problem in found:
        print(problem)
    print(f"{len(pages(root))} pages checked, {len(found)} problems")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
