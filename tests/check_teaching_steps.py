#!/usr/bin/env python3
"""The classroom's teaching steps hold: every word and claim of the steps README.md ("In the
classroom") and docs/classroom.md ("A lesson plan") give is checked against the data the explorer
page embeds (the JSON in <script id="data">) for the default story, h2o and window at 10%.

    check_teaching_steps.py EXPLORE SOURCE WORK

EXPLORE is bin/explore, SOURCE the checkout (its README.md and docs/), WORK a folder for the page.
Each claim names a step, a layer, a KV head and words as the docs write them; the words must be in
both docs, and in the data they must be in the state the docs say. Exits 1 naming every claim that
fails.
"""
import json
import re
import subprocess
import sys
from pathlib import Path

# A token's state at step t in one KV head of a policy, as the page computes it (page.js, paint):
# unread after t; evicted when it left at or before t; else recent in the newest `recent`
# positions, heavy (kept besides the window) before them.
def state(policy, layer, head, p, t):
    evicted = policy["layers"][layer][head]["evicted"][p]
    if p > t:
        return "unread"
    if 0 <= evicted <= t:
        return "evicted now" if evicted == t else "evicted"
    return "recent" if p > t - policy["recent"] else "heavy"


def main():
    explore, source, work = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
    work.mkdir(parents=True, exist_ok=True)
    page = work / "explorer.html"
    subprocess.run([explore, "--out", str(page)], check=True, stdout=subprocess.DEVNULL)
    html = page.read_text(encoding="utf-8")
    data = re.search(r'<script type="application/json" id="data">\n(.*?)\n</script>', html, re.S)
    D = json.loads(data.group(1))
    h2o = next(p for p in D["policies"] if p["name"] == "h2o")
    texts = D["texts"]
    docs = {name: (source / name).read_text(encoding="utf-8")
            for name in ("README.md", "docs/classroom.md")}
    flat = {name: " ".join(text.split()) for name, text in docs.items()}  # lines joined
    problems = []

    def words(first, last):  # the text of positions first..last as the docs write it
        return "".join(texts[first:last + 1]).strip()

    def in_docs(phrase, only=None):  # in both docs, or in the one named
        for name, text in flat.items():
            if (only is None or name == only) and phrase not in text:
                problems.append(f"{name} does not say {phrase!r}")

    def expect(step, layer, head, first, last, wanted, phrase):
        shown = words(first, last)
        if shown != phrase.strip('"'):
            problems.append(f"positions {first}-{last} read {shown!r}, not {phrase}")
        for p in range(first, last + 1):
            got = state(h2o, layer, head, p, step)
            if got != wanted:
                problems.append(f"step {step}, layer {layer}, KV head {head}: {texts[p]!r} "
                                f"(position {p}) of {phrase} is {got}, not {wanted}")

    # Step 1: from step 0 on, nothing is evicted before the cache holds its budget.
    first_eviction = min(t for layer in h2o["layers"] for head in layer
                         for t in head["evicted"] if t >= 0)
    if first_eviction < D["budget"]:
        problems.append(f"h2o evicts at step {first_eviction}, before its budget {D['budget']}")

    # Step 3, at step 300: layer 2's KV heads 0 and 1 (the layer that copies, lesson 15) both keep
    # the story's first words ("Once upon") and the heroine's invented name, Noufem, in three
    # pieces; head 0 "girl called Noufem" and "cousin Rue was", head 1 "favorite toy" and "Rue
    # wanted".
    in_docs("explorer.html#step=300&layer=2&head=0")
    noufem = [p for p in range(1, len(texts)) if words(p, p + 2) == "Noufem"][0]
    for head in (0, 1):
        expect(300, 2, head, 1, 2, "heavy", '"Once upon"')
        expect(300, 2, head, noufem, noufem + 2, "heavy", '"Noufem"')
    in_docs('"Once upon"')
    in_docs("(Noufem, three pieces)")
    for head, phrase in ((0, '"girl called Noufem"'), (0, '"cousin Rue was"'),
                         (1, '"favorite toy"'), (1, '"Rue wanted"')):
        in_docs(phrase)
        found = [p for p in range(len(texts)) for q in range(p, min(p + 8, len(texts)))
                 if D["word_starts"][p] == "1" and words(p, q) == phrase.strip('"')]
        if not found:
            problems.append(f"the story has no {phrase}")
            continue
        p = found[0]
        q = next(q for q in range(p, len(texts)) if words(p, q) == phrase.strip('"'))
        expect(300, 2, head, p, q, "heavy", phrase)

    # Step 4: at step 254 of layer 1, KV head 1 the oldest recent word is "picked" (210); at step
    # 255 H2O evicts "Grandma" (48), a heavy hitter, instead.
    in_docs("explorer.html#step=254&layer=1&head=1")
    in_docs('"picked" (position 210)')
    in_docs('"Grandma" (position 48)')
    oldest_recent = 254 - h2o["recent"] + 1
    if oldest_recent != 210 or words(210, 210) != "picked":
        problems.append(f"the oldest recent word at step 254 is "
                        f"{words(oldest_recent, oldest_recent)!r} (position {oldest_recent}), "
                        f"not \"picked\" (210)")
    expect(254, 1, 1, 48, 48, "heavy", '"Grandma"')
    expect(255, 1, 1, 48, 48, "evicted now", '"Grandma"')
    expect(255, 1, 1, 210, 210, "heavy", '"picked"')  # left the window, stayed

    # How often an eviction takes an old heavy hitter rather than the word leaving the window:
    # "about one in ten" in every layer (7% to 13%).
    in_docs("In every layer about one eviction in ten takes such an old heavy hitter")
    in_docs("Most of the time H2O evicts the word that has just left its recent window",
            "docs/classroom.md")
    others = [(p, t) for layer in h2o["layers"] for head in layer
              for p, t in enumerate(head["evicted"]) if t >= 0 and p > t - h2o["recent"]]
    if others:
        problems.append(f"h2o evicts {len(others)} recent words (first: position, step "
                        f"{others[0]}), though the docs say it evicts old ones")
    for layer, heads in enumerate(h2o["layers"]):
        old = all_ = 0
        for head in heads:
            for p, t in enumerate(head["evicted"]):
                if t >= 0:
                    all_ += 1
                    old += p < t - h2o["recent"]
        share = old / all_
        print(f"layer {layer}: {old} of {all_} evictions take an old heavy hitter ({share:.1%})")
        if not 0.07 <= share < 0.14:
            problems.append(f"layer {layer}: {share:.1%} of evictions take an old heavy hitter, "
                            f"not 7% to 14%, about one in ten, as the docs say")

    # The header's reason, as docs/classroom.md quotes it: the full cache's attention on what h2o
    # held and window had evicted (3.7%), and the reverse (4.1%), from the page's own verdict block.
    verdict = re.search(r'<details id="verdict".*?</details>', html, re.S)
    shown = verdict.group(0) if verdict else ""
    claims = (("the full cache recalls 10 of 10 names", "the full cache recalls 10 of 10"),
              ("gave 3.7% of its attention to what H2O held", "gave 3.7% of its"),
              ("4.1% to what the window held", "4.1% to tokens window held"))
    for phrase, on_page in claims:
        in_docs(phrase, "docs/classroom.md")
        if on_page not in " ".join(shown.split()):
            problems.append(f"the page's verdict block does not say {on_page!r}")

    for problem in problems:
        print("teaching steps: " + problem)
    if problems:
        return 1
    print("teaching steps: every word and claim holds in the page's data")
    return 0


if __name__ == "__main__":
    sys.exit(main())
