#!/usr/bin/env python3
"""Does a model copy what it has read, by content, and is it still as good in its own voice?
(PyTorch, fp32, full cache.) train.py runs it at every evaluation (--copy-probe); this program
runs it on one checkpoint.

  secret passage  16 to 64 pieces drawn at random from the whole vocabulary, then story text of
                  the unseen set (never trained on), then the same pieces again: the share of the
                  second reading predicted top-1, its first piece excepted (only copying from the
                  first reading can predict it). Three distances, 10 passages each, within the
                  model's positions: the second reading starts 16-127 tokens after the first
                  one ends (short), 128-511 (middle), 512 to the end of the 1,024 (long).
  read twice      each unseen story's first 100 tokens read twice in a row: top-1 of the first
                  and of the second reading (name_diagnosis.read_twice).
  names           long-gap (> 64) names of the unseen stories, as name_diagnosis.py counts them:
                  whole names recalled, later pieces given the first.
  context gain    perplexity of the unseen stories with a 64-token window over the full cache's.
  held-out        perplexity of the held-out generated stories and their long-gap name recall
                  (the shipped model: 1.644 and 426 of 486).
  rotary gap      with --rotary-gap D, the secret passages once more with the text between the
                  readings given positions spread over D: the same tokens, another distance for
                  RoPE to rotate by (docs/models.md, "Why the long distance does not come").

Usage:
  /usr/bin/python3 training/copy_probe.py --model data/model.bin [--tokenizer data/tokenizer.bin]
      [--unseen data/unseen_stories.txt:data/unseen_names.txt]
      [--heldout data/heldout_stories.txt:data/heldout_names.txt] [--passages 10]
      [--rotary-gap 128,512]
"""

import math
import sys

from common import Parser, UsageError, read_names, read_stories, repo_path, run_main

SECRET_PER_BAND = 10
BANDS = (("short", 16, 127), ("middle", 128, 511), ("long", 512, None))
TWICE = 100
GAP = 64
MIN_POSITIONS = 1 + 32 + 2 * 64 + 512 + 55  # BOS, prefix, two passages, a long gap, some room
DEFAULT_UNSEEN = (repo_path("data", "unseen_stories.txt") + ":" +
                  repo_path("data", "unseen_names.txt"))
DEFAULT_HELDOUT = (repo_path("data", "heldout_stories.txt") + ":" +
                   repo_path("data", "heldout_names.txt"))
FIELDS = ("secret_short", "secret_middle", "secret_long", "secret_all", "twice_first",
          "twice_second", "later_pieces", "multi_piece", "names_recalled", "name_events",
          "context_gain", "heldout_perplexity", "heldout_recalled", "heldout_events")


class ProbeSets:
    """The token lists the probe reads, made once (before PyTorch) from a tokenizer."""

    def __init__(self, tok, unseen, heldout, seq_len, per_band=SECRET_PER_BAND):
        import random
        if seq_len < MIN_POSITIONS:
            raise UsageError(f"the copy probe needs a model of at least {MIN_POSITIONS} "
                             f"positions (its long secret passages), not {seq_len}")
        unseen_stories, unseen_names = unseen.split(":")
        held_stories, held_names = heldout.split(":")
        self.unseen = [tok.encode(t)[:seq_len] for t in read_stories(unseen_stories)]
        self.unseen_pieces = {n: tok.encode(n, bos=False) for n in read_names(unseen_names)}
        self.held = [tok.encode(t)[:seq_len] for t in read_stories(held_stories)]
        self.held_pieces = {n: tok.encode(n, bos=False) for n in read_names(held_names)}
        # The secret passages: fixed by seed 55, so every evaluation reads the same rows.
        text = [t for s in self.unseen for t in s[1:]]
        if not text:
            raise UsageError(f"'{unseen_stories}' holds no text for the secret passages")
        while len(text) < 2 * seq_len:  # a short file is read round again
            text += text
        rng = random.Random(55)
        # (band, tokens, first reading's start, second reading's start, passage length)
        self.secret = []
        for band, low, high in BANDS:
            for _ in range(per_band):
                length = rng.randint(16, 64)
                prefix = rng.randint(0, 32)
                top = seq_len - 1 - prefix - 2 * length
                gap = rng.randint(low, min(high, top) if high else top)
                passage = [rng.randrange(3, tok.vocab_size) for _ in range(length)]
                at = rng.randrange(0, len(text) - prefix - gap)
                row = ([1] + text[at:at + prefix] + passage + text[at + prefix:at + prefix + gap]
                       + passage)
                self.secret.append((band, row, 1 + prefix, 1 + prefix + length + gap, length))


def measure(model, sets, light=False):
    """{field: value} for one model (eval mode is set and restored by the caller). light: the
    secret passages and the unseen stories read twice only (a few seconds of CPU; the other
    fields are then None), for frequent evaluations on a busy machine."""
    import torch
    import torch.nn.functional as F
    import name_diagnosis
    with torch.no_grad():
        out = secret_shares(model, sets)
        first, second, total = name_diagnosis.read_twice(model, sets.unseen, TWICE)
        out["twice_first"], out["twice_second"] = first / total, second / total
        if light:
            return dict(out, **{f: None for f in FIELDS if f not in out})
        c, _ = name_diagnosis.diagnose(model, sets.unseen, sets.unseen_pieces, GAP)
        out.update(later_pieces=c["later"], multi_piece=c["multi"],
                   names_recalled=c["recalled"], name_events=c["events"])
        nats = {None: 0.0, GAP: 0.0}
        count = 0
        for s in sets.unseen:
            x = torch.tensor([s])
            for w in nats:
                nats[w] += F.cross_entropy(model(x, window=w)[0].float()[:-1], x[0, 1:],
                                           reduction="sum").item()
            count += len(s) - 1
        out["context_gain"] = math.exp((nats[GAP] - nats[None]) / count)
        held_nats, held_count = 0.0, 0
        for s in sets.held:
            x = torch.tensor([s])
            held_nats += F.cross_entropy(model(x)[0].float()[:-1], x[0, 1:],
                                         reduction="sum").item()
            held_count += len(s) - 1
        out["heldout_perplexity"] = math.exp(held_nats / held_count)
        c, _ = name_diagnosis.diagnose(model, sets.held, sets.held_pieces, GAP)
        out.update(heldout_recalled=c["recalled"], heldout_events=c["events"])
    return out


def secret_shares(model, sets, rotary_gap=None):
    """{secret_short, secret_middle, secret_long, secret_all}: the share of the secret passages'
    second readings predicted top-1 (first pieces excepted). rotary_gap: the distance RoPE is
    shown between the first reading's end and the second's start, the tokens in between
    spread evenly over it, None = their true count. The tokens stay the same, so this tells
    whether copying fails with the distance RoPE rotates by or with the text in between."""
    import numpy as np
    import torch
    hits = {b: [0, 0] for b, _, _ in BANDS}
    with torch.no_grad():
        for band, row, first, second, length in sets.secret:
            positions = None
            if rotary_gap is not None:
                end, between = first + length, second - first - length
                positions = np.arange(len(row), dtype=np.float64)
                positions[end:second] = end + np.arange(between) * (rotary_gap / between)
                positions[second:] = end + rotary_gap + np.arange(len(row) - second)
            top1 = model(torch.tensor([row]), positions=positions)[0].argmax(-1).tolist()
            # Position i predicts row[i + 1]: the pieces second + 1 .. second + length - 1.
            hits[band][0] += sum(top1[i - 1] == row[i] for i in range(second + 1, second + length))
            hits[band][1] += length - 1
    out = {f"secret_{band}": hits[band][0] / hits[band][1] for band, _, _ in BANDS}
    out["secret_all"] = sum(h for h, _ in hits.values()) / sum(n for _, n in hits.values())
    return out


def summary(m):
    """One line (under 160 columns) of a measurement."""
    line = (f"secret passage {100 * m['secret_all']:.1f}% (short {100 * m['secret_short']:.1f}, "
            f"middle {100 * m['secret_middle']:.1f}, long {100 * m['secret_long']:.1f}); "
            f"read twice {100 * m['twice_first']:.1f}% -> {100 * m['twice_second']:.1f}%")
    if m["context_gain"] is None:
        return line
    return line + (
        f"; later pieces {m['later_pieces']}/{m['multi_piece']}, names "
        f"{m['names_recalled']}/{m['name_events']}, context gain {m['context_gain']:.3f}; "
        f"held-out perplexity {m['heldout_perplexity']:.3f}, names "
        f"{m['heldout_recalled']}/{m['heldout_events']}")


def csv_header():
    return "step," + ",".join(FIELDS) + "\n"


def csv_row(step, m):
    return f"{step}," + ",".join("" if m[f] is None else f"{m[f]:.4f}"
                                 if isinstance(m[f], float) else str(m[f])
                                 for f in FIELDS) + "\n"


def parse_gaps(text):
    """--rotary-gap's list of whole distances 1..100000; [] when not given."""
    if text is None:
        return []
    gaps = []
    for part in text.split(","):
        if not part.isdigit() or not 1 <= int(part) <= 100000:
            raise UsageError(f"--rotary-gap takes whole distances 1..100000 separated by "
                             f"commas, got '{text}'")
        gaps.append(int(part))
    return gaps


def check_pair(option, value):
    if value.count(":") != 1 or not all(value.split(":")):
        raise UsageError(f"{option} must be STORIES:NAMES, got '{value}'")


def main(argv):
    ap = Parser(description="Measures copying by content and the model's own voice.")
    ap.add_argument("--model", required=True, help="llama2.c checkpoint")
    ap.add_argument("--tokenizer", default=repo_path("data", "tokenizer.bin"),
                    help="llama2.c tokenizer file (default: data/tokenizer.bin)")
    ap.add_argument("--unseen", default=DEFAULT_UNSEEN, metavar="STORIES:NAMES",
                    help="stories never trained on, and their names (default: data/unseen_*)")
    ap.add_argument("--heldout", default=DEFAULT_HELDOUT, metavar="STORIES:NAMES",
                    help="held-out stories in the model's own voice (default: data/heldout_*)")
    ap.add_argument("--passages", type=int, default=SECRET_PER_BAND,
                    help=f"secret passages at each of the three distances (default: "
                         f"{SECRET_PER_BAND}, as train.py --copy-probe reads)")
    ap.add_argument("--rotary-gap", default=None, metavar="D[,D...]",
                    help="then read the secret passages again with the text between the two "
                         "readings given positions spanning D (the tokens stay; only the "
                         "distance RoPE rotates by changes): does copying fail with that "
                         "distance or with the text in between?")
    args = ap.parse_args(argv)
    if not 1 <= args.passages <= 1000:
        raise UsageError(f"--passages must be 1..1000, got {args.passages}")
    gaps = parse_gaps(args.rotary_gap)
    check_pair("--unseen", args.unseen)
    check_pair("--heldout", args.heldout)
    from story_model import read_model_and_stories, load_model_for_stories
    tok, _, _ = read_model_and_stories(args.model, args.tokenizer, args.unseen.split(":")[0])
    try:
        import torch  # noqa: F401
    except ImportError:
        print("SKIPPED: python3-torch is not installed")
        return 0
    model = load_model_for_stories(args.model, [])
    sets = ProbeSets(tok, args.unseen, args.heldout, model.cfg.seq_len, args.passages)
    print(summary(measure(model, sets)))
    for gap in gaps:
        m = secret_shares(model, sets, gap)
        print(f"text between the readings given a rotary distance of {gap}: secret passage "
              f"short {100 * m['secret_short']:.1f}%, middle {100 * m['secret_middle']:.1f}%, "
              f"long {100 * m['secret_long']:.1f}%")
    return 0


if __name__ == "__main__":
    sys.exit(run_main("copy_probe", main, sys.argv[1:]))
