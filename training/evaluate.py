#!/usr/bin/env python3
"""Measures a llama2.c checkpoint on stories: perplexity, bits per byte and name recall
(PyTorch, fp32).

Each story is encoded on its own (BOS first) and run with its whole context. Bits per byte is
the C++ side's measure (include/h2o/measure/bits_per_byte.hpp): the loss of every predicted
token, in bits, over the UTF-8 bytes of the stories as the model reads them.

Name recall (the definition the C++ side implements too): for each position t, the next
token tokens[t+1] counts when it is the token of a name in names.txt (" Name", a single
token) and the previous position p holding that same token is more than N back,
(t+1) - p > N; first mentions do not count. Recall = share of counted positions where the
model's most likely token at t is tokens[t+1]. With --window W the model runs again with
attention limited to the last W positions (a sliding window), to show what the far
context is worth. Names the tokenizer splits into several tokens are listed and not counted
here (the C++ programs count them too: include/h2o/measure/name_recall.hpp).

Usage:
  /usr/bin/python3 training/evaluate.py --model data/model.bin --tokenizer data/tokenizer.bin \\
      --stories data/heldout_stories.txt [--names data/names.txt] [--gaps 32,64,128] \\
      [--window 64,128]
"""

import math
import sys

from common import Parser, UsageError, read_names, repo_path, require_finite, run_main
from story_model import load_model_for_stories, read_model_and_stories


def single_token_names(tok, names):
    """({token: name} for the names that are one token (" Name" with its leading space, as it
    occurs in stories), [the names the tokenizer splits])."""
    ids, split = {}, []
    for n in names:
        t = tok.encode(n, bos=False)
        if len(t) == 1:
            ids[t[0]] = n
        else:
            split.append(f"{n} ({len(t)} tokens)")
    return ids, split


def name_token_ids(tok, names):
    """The token of each name; every name must be one token (the training names are)."""
    ids, split = single_token_names(tok, names)
    if split:
        raise UsageError(f"names that are not one token: {', '.join(split)}")
    return ids


def counted_positions(tokens, name_ids, gap):
    """Positions t whose next token is a name last seen more than `gap` tokens before."""
    last, out = {}, []
    for t in range(len(tokens) - 1):
        nxt = tokens[t + 1]
        if nxt in name_ids:
            if nxt in last and (t + 1) - last[nxt] > gap:
                out.append(t)
            last[nxt] = t + 1
    return out


def story_predictions(model, tokens, window=None):
    """(sum of next-token losses, count, top-1 predictions) for one story, fp32."""
    import torch
    import torch.nn.functional as F
    x = torch.tensor([tokens], dtype=torch.long)
    with torch.no_grad():
        logits = model(x, window=window)[0].float()
    loss = F.cross_entropy(logits[:-1], x[0, 1:], reduction="sum").item()
    return loss, len(tokens) - 1, logits.argmax(-1).tolist()


def evaluate(model, stories_tokens, name_ids, gaps, window=None):
    """Mean loss and name recall {gap: (hits, counted, per-story counts)} over stories."""
    total, count = 0.0, 0
    recall = {g: [0, 0, []] for g in gaps}
    for tokens in stories_tokens:
        loss, n, top1 = story_predictions(model, tokens, window)
        total += loss
        count += n
        for g in gaps:
            pos = counted_positions(tokens, name_ids, g)
            recall[g][0] += sum(1 for t in pos if top1[t] == tokens[t + 1])
            recall[g][1] += len(pos)
            recall[g][2].append(len(pos))
    return total / count, recall


def report(label, loss, recall, predicted, text_bytes):
    print(f"{label}: loss {loss:.4f} nats/token, perplexity {math.exp(loss):.3f}, "
          f"{loss * predicted / math.log(2) / text_bytes:.3f} bits per byte")
    for g, (hits, counted, per) in recall.items():
        if counted == 0:  # no share to print: say so instead of 0/0 = nan%
            print(f"  name recall, gap > {g:3d}: no name comes back after so long a gap")
            continue
        print(f"  name recall, gap > {g:3d}: {hits}/{counted} = {100 * hits / counted:.1f}% "
              f"(per story: min {min(per)}, max {max(per)} counted)")


def parse_ints(text, what):
    try:
        values = [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise UsageError(f"{what} must be comma-separated integers, got '{text}'")
    if not values or min(values) < 1:
        raise UsageError(f"{what} must be positive integers, got '{text}'")
    return values


def main(argv):
    ap = Parser(description="Perplexity and name recall of a checkpoint on stories.")
    ap.add_argument("--model", required=True, help="llama2.c legacy checkpoint")
    ap.add_argument("--tokenizer", required=True, help="llama2.c tokenizer file")
    ap.add_argument("--stories", required=True,
                    help="story file (paragraphs separated by a blank line, stories by a "
                         "line holding only <|story|>)")
    ap.add_argument("--names", default=repo_path("data", "names.txt"),
                    help="names list (default: data/names.txt)")
    ap.add_argument("--gaps", default="32,64,128", help="values of N (default: 32,64,128)")
    ap.add_argument("--window", default="", help="also with sliding windows, e.g. 64,128")
    args = ap.parse_args(argv)
    gaps = parse_ints(args.gaps, "--gaps")
    windows = parse_ints(args.window, "--window") if args.window else []
    # Every input is checked before PyTorch is imported (and without it).
    tok, texts, stories = read_model_and_stories(args.model, args.tokenizer, args.stories)
    names, split = single_token_names(tok, read_names(args.names))
    text_bytes = sum(len(s.encode("utf-8")) for s in texts)
    predicted = sum(len(s) - 1 for s in stories)
    model = load_model_for_stories(args.model, stories)
    if model is None:
        print("SKIPPED: python3-torch is not installed")
        return 0
    counted = "1 story" if len(stories) == 1 else f"{len(stories)} stories"
    print(f"{counted}, {sum(map(len, stories))} tokens (BOS included), {text_bytes} bytes")
    if split:
        print(f"names not counted (several tokens): {', '.join(split)}")
    loss, recall = evaluate(model, stories, names, gaps)
    require_finite(loss, "the full-context loss")
    report("full context", loss, recall, predicted, text_bytes)
    for w in windows:
        loss, recall = evaluate(model, stories, names, gaps, window=w)
        require_finite(loss, f"the loss with a sliding window of {w}")
        report(f"sliding window of {w}", loss, recall, predicted, text_bytes)
    return 0


if __name__ == "__main__":
    sys.exit(run_main("evaluate", main, sys.argv[1:]))
