#!/usr/bin/env python3
"""Why a model does or does not recall a name from far back: splits every long-gap name
mention into its two halves (PyTorch, fp32).

For each mention of a listed name (as " Name", a run of whole tokens) whose previous mention
is more than --gap tokens back, with the full context:
  first piece   is the name's first token the most likely one where it starts? If not, is the
                most likely token the first token of another listed name of the story (the model
                expected a character, but another one), or no name at all?
  later pieces  given the first piece, are the name's other tokens all the most likely ones
                (copying the rest of the name from its earlier mention)? Counted for names of
                more than one token.
  recalled      every piece the most likely one (name_recall.hpp's rule).
With --window W the same for a sliding window of W tokens: the pieces the window cannot see.
With --twice N (default 100) each story's first N tokens are read twice in a row: a model that
copies from its context predicts the second reading almost whole, on any text.

Usage:
  /usr/bin/python3 training/name_diagnosis.py --model data/model.bin \\
      --tokenizer data/tokenizer.bin --stories data/unseen_stories.txt \\
      --names data/unseen_names.txt [--gap 64] [--window 64] [--twice 100]
"""

import sys

from common import Parser, UsageError, read_names, run_main
from story_model import load_model_for_stories, read_model_and_stories


def mentions(tokens, pieces_by_name):
    """[(name, first position, pieces)] for every run of tokens spelling " Name" (the
    tokenizer writes the space before a word into its first token)."""
    found = []
    for name, pieces in pieces_by_name.items():
        n = len(pieces)
        for f in range(1, len(tokens) - n + 1):
            if tokens[f:f + n] == pieces:
                found.append((name, f, n))
    found.sort(key=lambda m: m[1])
    return found


def diagnose(model, stories, pieces_by_name, gap, window=None):
    import torch
    counts = dict(events=0, first=0, other_name=0, no_name=0, multi=0, later=0, recalled=0)
    first_prob = []
    for tokens in stories:
        ms = mentions(tokens, pieces_by_name)
        if not ms:
            continue
        x = torch.tensor([tokens], dtype=torch.long)
        with torch.no_grad():
            logits = model(x, window=window)[0].float()
        probs = logits.softmax(-1)
        top1 = logits.argmax(-1).tolist()
        story_firsts = {pieces_by_name[n][0] for n, _, _ in ms}
        last = {}
        for name, f, n in ms:
            if name in last and f - last[name] > gap:
                counts["events"] += 1
                first_ok = top1[f - 1] == tokens[f]
                first_prob.append(probs[f - 1, tokens[f]].item())
                if first_ok:
                    counts["first"] += 1
                elif top1[f - 1] in story_firsts:
                    counts["other_name"] += 1
                else:
                    counts["no_name"] += 1
                later_ok = all(top1[f + i - 1] == tokens[f + i] for i in range(1, n))
                if n > 1:
                    counts["multi"] += 1
                    counts["later"] += later_ok
                counts["recalled"] += first_ok and later_ok
            last[name] = f
    return counts, first_prob


def read_twice(model, stories, length):
    """(top-1 hits on the first reading, on the second, tokens per reading) when each story's
    first `length` tokens after BOS are read twice in a row: BOS, passage, the same passage. A
    model that copies from its context (induction heads) predicts the second reading almost
    whole, whatever the text; one that does not gains little on it."""
    import torch
    first = second = total = 0
    for tokens in stories:
        passage = tokens[1:1 + length]
        n = len(passage)
        if n < 2:
            continue
        x = [tokens[0]] + passage + passage
        with torch.no_grad():
            top1 = model(torch.tensor([x], dtype=torch.long))[0].argmax(-1).tolist()
        # Position i predicts x[i + 1]; the second reading's first token is a guess either way,
        # so both readings count their n - 1 later tokens.
        first += sum(top1[i] == x[i + 1] for i in range(1, n))
        second += sum(top1[n + i] == x[n + i + 1] for i in range(1, n))
        total += n - 1
    return first, second, total


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
    tok, texts, stories = read_model_and_stories(args.model, args.tokenizer, args.stories)
    pieces_by_name = {n: tok.encode(n, bos=False) for n in read_names(args.names)}
    model = load_model_for_stories(args.model, stories)
    if model is None:
        print("SKIPPED: python3-torch is not installed")
        return 0
    runs = [("full cache", None)] + ([(f"window {args.window}", args.window)]
                                     if args.window else [])
    for label, window in runs:
        c, probs = diagnose(model, stories, pieces_by_name, args.gap, window)
        e = c["events"]
        if e == 0:
            print(f"{label}: no listed name comes back after more than {args.gap} tokens")
            continue
        mean_p = sum(probs) / len(probs)
        print(f"{label}: {e} long-gap mentions (gap > {args.gap})")
        print(f"  recalled (every piece top-1):     {pct(c['recalled'], e)}")
        print(f"  first piece top-1:                {pct(c['first'], e)}; "
              f"mean probability {mean_p:.3f}")
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
