#!/usr/bin/env python3
"""Checks the project's documentation pages: README.md and docs/*.md.

Every relative link (and image) must name a file or folder that exists, and a link with a
fragment (page.md#some-heading) must name a heading of that page, spelled as GitHub spells its
anchors. Every line must fit in 100 columns, as the programs' output does, and no sentence is
broken by hand: a line of prose that stops mid-sentence while the next line's first word (a
`code` span or a link whole) would still have fitted with room to spare (SLACK columns). How many
tests there are is said in docs/testing.md alone (COUNTS_PAGE): a count of tests anywhere else
("668 tests", "667 unit tests") would disagree with it after the next test is added.
Links inside code blocks and inline code are not links. Prints one line per problem and exits 1
if there is any.

    python3 tests/check_docs.py [ROOT]      ROOT: the repository (default: this file's parent's)
"""
import os
import re
import sys

MAX_COLUMNS = 100
SLACK = 15  # a line this much shorter than the next word would allow: broken by hand
COUNTS_PAGE = os.path.join("docs", "testing.md")
TEST_COUNT = re.compile(r"\b\d[\d,]* (?:[a-z-]+ )?tests?\b")


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


def prose_lines(lines):
    """(number, line) of every line of a paragraph; None for a line that is not (blank, code,
    table, heading, HTML, a picture)."""
    in_code = False
    for number, line in enumerate(lines, 1):
        if line.lstrip().startswith("```"):
            in_code = not in_code
            yield number, None
        elif in_code or not line.strip() or line.lstrip()[0] in "|#<" or line.startswith("!["):
            yield number, None
        else:
            yield number, line


def first_unit(line):
    """The first word of a line, or its first `code span` or [link](...) whole: what a line
    before it would have to hold."""
    text = line.strip()
    for pattern in (r"\(?`[^`]*(`\S*|$)", r"\[[^\]]*\]\([^)]*\)\S*"):
        found = re.match(pattern, text)
        if found:
            return found.group(0)
    return text.split(" ")[0]


def hand_breaks(lines, shown):
    marked = list(prose_lines(lines))
    for (number, line), (_, after) in zip(marked, marked[1:]):
        if line is None or after is None or re.match(r"\s*([-*]|\d+\.)\s", after):
            continue  # the next line starts a list item: a break of its own
        if re.search(r"[.:;!?]\)?$", line.rstrip()):
            continue  # a break between sentences
        if len(line.rstrip()) + 1 + len(first_unit(after)) <= MAX_COLUMNS - SLACK:
            yield (f"{shown}:{number}: the sentence is broken by hand here ('"
                   f"{first_unit(after)}' fits on this line): rewrap the paragraph")


def problems(path, root):
    text = open(path, encoding="utf-8").read()
    shown = os.path.relpath(path, root)
    for number, line in enumerate(text.split("\n"), 1):
        if len(line) > MAX_COLUMNS:
            yield f"{shown}:{number}: {len(line)} columns (at most {MAX_COLUMNS})"
    yield from hand_breaks(text.split("\n"), shown)
    if shown != COUNTS_PAGE:
        for number, line in enumerate(text.split("\n"), 1):
            for found in TEST_COUNT.finditer(line):
                yield (f"{shown}:{number}: '{found.group(0)}': counts of tests are said in "
                       f"{COUNTS_PAGE} only")
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
