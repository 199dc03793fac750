#!/usr/bin/env python3
"""Why a model does or does not recall a name from far back: splits every long-gap name
mention into its two halves (PyTorch, fp32).

It first prints, before PyTorch is imported, how many name events the stories hold: mentions of
a listed name whose previous mention is more than --gap tokens back, found in the text as the
C++ programs find them (name_mentions.py: a whole word of the text, at a paragraph's start too,
spelled by a run of whole tokens), and said in their words. For each, with the full context:
  first piece   is the name's first token the most likely one where it starts? If not, is the
                most likely token the first token of another listed name of the story (the model
                expected a character, but another one), or no name at all?
  later pieces  given the first piece, are the name's other tokens all the most likely ones
                (copying the rest of the name from its earlier mention)? Counted for names of
                more than one token.
  recalled      every piece the most likely one (name_recall.hpp's rule).
With --window W the same for a sliding window of W tokens: the pieces the window cannot see.
With --twice N (default 100) each story's first N tokens are read twice in a row: a model that
copies from its context predicts the second reading almost whole, on any text. A model whose
numbers overflow (logits NaN or infinite) is refused, as the C++ programs refuse it.

Usage:
  /usr/bin/python3 training/name_diagnosis.py --model data/model.bin \\
      --tokenizer data/tokenizer.bin --stories data/unseen_stories.txt \\
      --names data/unseen_names.txt [--gap 64] [--window 64] [--twice 100]
"""

import os
import sys

from common import Parser, UsageError, read_names, run_main
from name_mentions import find_mentions, long_gap_mentions, token_texts
from story_model import load_model_for_stories, read_model_and_stories


class NameTokens:
    """A names list with what the tokenizer's tokens write, for finding its mentions
    (name_mentions.py: the C++ programs' rule)."""

    def __init__(self, tokenizer, names):
        self.names = list(names)
        self.texts = token_texts(tokenizer)


def story_mentions(tokens, names, gap):
    """([(name, first position, last position)] of every mention of a listed name in a story,
    [those of them whose previous mention is more than `gap` tokens back]). names: NameTokens, or
    {name: its tokens as " Name"} (train.py's --probe: then only the mentions written after a
    space, as one run of those tokens, are found)."""
    if isinstance(names, NameTokens):
        found, _ = find_mentions(tokens, names.names, names.texts)
        return found, long_gap_mentions(found, gap)
    found = []
    for k, pieces in enumerate(names.values()):
        n = len(pieces)
        for f in range(1, len(tokens) - n + 1):
            if tokens[f:f + n] == pieces:
                found.append((k, f, f + n - 1))
    found.sort(key=lambda m: m[1])
    return found, long_gap_mentions(found, gap)


def finite_logits(model, tokens, where, window=None):
    """The model's logits (float32, T x V) reading the token ids `tokens`; a UsageError naming
    `where` when any is NaN or infinite: a model whose numbers overflow cannot be measured (the
    C++ programs refuse it so too)."""
    import torch
    with torch.no_grad():
        logits = model(torch.tensor([tokens], dtype=torch.long), window=window)[0].float()
    if not torch.isfinite(logits).all():
        raise UsageError(f"the model's logits on {where} are not finite (its numbers "
                         "overflowed): this model cannot be measured")
    return logits


def diagnose(model, stories, names, gap, window=None):
    """Counts of the long-gap mentions of stories (token lists) split into first and later
    pieces, and the probabilities of their first pieces. names: see story_mentions."""
    counts = dict(events=0, first=0, other_name=0, no_name=0, multi=0, later=0, recalled=0)
    first_prob = []
    for number, tokens in enumerate(stories, 1):
        found, counted = story_mentions(tokens, names, gap)
        if not counted:
            continue
        logits = finite_logits(model, tokens, f"story {number}", window)
        probs = logits.softmax(-1)
        top1 = logits.argmax(-1).tolist()
        story_firsts = {tokens[f] for _, f, _ in found}  # the first tokens of its names
        for _, f, last in counted:
            counts["events"] += 1
            first_ok = top1[f - 1] == tokens[f]
            first_prob.append(probs[f - 1, tokens[f]].item())
            if first_ok:
                counts["first"] += 1
            elif top1[f - 1] in story_firsts:
                counts["other_name"] += 1
            else:
                counts["no_name"] += 1
            later_ok = all(top1[p - 1] == tokens[p] for p in range(f + 1, last + 1))
            if last > f:
                counts["multi"] += 1
                counts["later"] += later_ok
            counts["recalled"] += first_ok and later_ok
    return counts, first_prob


def read_twice(model, stories, length):
    """(top-1 hits on the first reading, on the second, tokens per reading) when each story's
    first `length` tokens after BOS are read twice in a row: BOS, passage, the same passage. A
    model that copies from its context (induction heads) predicts the second reading almost
    whole, whatever the text; one that does not gains little on it."""
    first = second = total = 0
    for number, tokens in enumerate(stories, 1):
        passage = tokens[1:1 + length]
        n = len(passage)
        if n < 2:
            continue
        x = [tokens[0]] + passage + passage
        top1 = finite_logits(model, x, f"story {number} read twice").argmax(-1).tolist()
        # Position i predicts x[i + 1]; the second reading's first token is a guess either way,
        # so both readings count their n - 1 later tokens.
        first += sum(top1[i] == x[i + 1] for i in range(1, n))
        second += sum(top1[n + i] == x[n + i + 1] for i in range(1, n))
        total += n - 1
    return first, second, total


def plural(count, word):
    """ "1 story", "2 stories", "2 tokens" (as the C++ programs write counts)."""
    if count == 1:
        return f"1 {word}"
    return f"{count} {word[:-1]}ies" if word.endswith("y") else f"{count} {word}s"


def reading_summary(file_name, stories, tokens, events, gap):
    """What the C++ programs print about a text they read, in their words and wrapped as they
    wrap it (reading_summary of src/app/reading_report.cpp, wrap_words of base/format.cpp), so
    that the two counts of name events can be compared."""
    text = (f"read {plural(stories, 'story')} of {file_name}: {plural(tokens, 'token')}, "
            f"{plural(events, 'name event')} (a name last seen more than {gap} tokens back)")
    lines, indent = [], "  "
    while len(text) > 100:
        space = text.rfind(" ", 0, 101)
        if space <= len(indent):
            break  # one long word: kept whole
        lines.append(text[:space])
        text = indent + text[space:].lstrip(" ")
    return "\n".join(lines + [text])


def pct(a, b):
    return f"{a} of {b} ({100 * a / b:.1f}%)" if b else f"{a} of 0"


def main(argv):
    ap = Parser(description="Splits long-gap name recall into its first and later pieces.")
    ap.add_argument("--model", required=True, help="llama2.c checkpoint")
    ap.add_argument("--tokenizer", required=True, help="llama2.c tokenizer file")
    ap.add_argument("--stories", required=True, help="story file (<|story|> between stories)")
    ap.add_argument("--names", required=True, help="the characters' names, one per line")
    ap.add_argument("--gap", type=int, default=64,
                    help="count mentions whose previous one is more than this many tokens back "
                         "(default: 64)")
    ap.add_argument("--twice", type=int, default=100,
                    help="also read each story's first N tokens twice in a row and compare the "
                         "two readings' top-1 (does the model copy from its context?); 0: skip "
                         "(default: 100)")
    ap.add_argument("--window", type=int, default=0,
                    help="also with a sliding window of this many tokens (default: 0, none)")
    args = ap.parse_args(argv)
    if args.gap < 1:
        raise UsageError(f"--gap must be positive, got {args.gap}")
    if args.twice < 0 or args.twice > 100_000:
        raise UsageError(f"--twice must be 0 (skip) to 100000 tokens, got {args.twice}")
    if args.window < 0:
        raise UsageError(f"--window must be 0 (none) or positive, got {args.window}")
    tok, _, stories = read_model_and_stories(args.model, args.tokenizer, args.stories)
    names = NameTokens(tok, read_names(args.names))
    # The name events depend on the text alone: counted (as the C++ programs count them, and in
    # their words) before PyTorch is imported.
    events = sum(len(story_mentions(tokens, names, args.gap)[1]) for tokens in stories)
    print(reading_summary(os.path.basename(args.stories), len(stories),
                          sum(map(len, stories)), events, args.gap))
    runs = [("full cache", None)] + ([(f"window {args.window}", args.window)]
                                     if args.window else [])
    if events == 0:
        print(f"no listed name comes back after more than {args.gap} tokens")
        runs = []
    model = load_model_for_stories(args.model, stories)
    if model is None:
        print("SKIPPED: python3-torch is not installed")
        return 0
    for label, window in runs:
        c, probs = diagnose(model, stories, names, args.gap, window)
        e = c["events"]
        print(f"{label}:")
        print(f"  recalled (every piece top-1):     {pct(c['recalled'], e)}")
        print(f"  first piece top-1:                {pct(c['first'], e)}; "
              f"mean probability {sum(probs) / len(probs):.3f}")
        print(f"    top-1 another name of the story: {pct(c['other_name'], e)}")
        print(f"    top-1 no name of the story:      {pct(c['no_name'], e)}")
        print(f"  later pieces top-1 (given first): {pct(c['later'], c['multi'])}")
    if args.twice:
        length = min(args.twice, (model.cfg.seq_len - 1) // 2)
        first, second, total = read_twice(model, stories, length)
        if total:
            print(f"each story's first {length} tokens read twice in a row, next token top-1:")
            print(f"  first reading:  {pct(first, total)}")
            print(f"  second reading: {pct(second, total)}")
    return 0


if __name__ == "__main__":
    sys.exit(run_main("name_diagnosis", main, sys.argv[1:]))
