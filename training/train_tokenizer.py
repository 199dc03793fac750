#!/usr/bin/env python3
"""Trains a BPE tokenizer on a story corpus and writes it in llama2.c's tokenizer format.

Learns merges (inside words only, see bpe.py) until the vocabulary reaches --vocab-size or no
pair occurs twice, then checks that every story of the corpus (or of --check) decodes back to
exactly its text, and that every name of --names is a single token. Standard library only.

Usage:
  /usr/bin/python3 training/train_tokenizer.py --corpus build/train/train.txt \\
      --vocab-size 2048 --out data/tokenizer.bin [--check heldout.txt] [--names data/names.txt]
"""

import sys

import bpe
from common import Parser, UsageError, check_outputs, read_names, read_stories, repo_path, run_main


def parse_args(argv):
    ap = Parser(description="Train a llama2.c-format BPE tokenizer.")
    ap.add_argument("--corpus", required=True,
                    help="story file (paragraphs separated by a blank line, stories by a "
                         "line holding only <|story|>)")
    ap.add_argument("--vocab-size", type=int, default=2048,
                    help="largest vocabulary, 300..65535 (default: 2048)")
    ap.add_argument("--out", required=True, help="tokenizer file to write")
    ap.add_argument("--check", help="also check the round trip on this story file")
    ap.add_argument("--names", default=repo_path("data", "names.txt"),
                    help="names that must be single tokens (default: data/names.txt)")
    args = ap.parse_args(argv)
    if not 300 <= args.vocab_size <= 65535:
        raise UsageError(f"--vocab-size must be 300..65535, got {args.vocab_size}")
    return args


def check_round_trip(tok, stories, label):
    bad = sum(1 for s in stories if tok.decode(tok.encode(s)) != s)
    if bad:
        raise UsageError(f"{bad} of {len(stories)} stories of {label} do not round-trip")
    print(f"round trip: {len(stories)} stories of {label} decode back exactly")


def main(argv):
    args = parse_args(argv)
    # Every input is read and checked before the long work; the tokenizer file is written only
    # at the end, when every check passed (a failed run leaves an existing file as it was).
    check_outputs({"--out": args.out}, {"--corpus": args.corpus, "--check": args.check,
                                        "--names": args.names})
    stories = read_stories(args.corpus)
    names = read_names(args.names)
    check_stories = read_stories(args.check) if args.check else []
    try:
        tok = bpe.train(bpe.count_chunks(stories), args.vocab_size)
    except ValueError as e:
        raise UsageError(str(e))
    print(f"tokenizer: {tok.vocab_size} pieces (asked for at most {args.vocab_size})")
    check_round_trip(tok, stories, args.corpus)
    if args.check:
        check_round_trip(tok, check_stories, args.check)
    split = [n for n in names if len(tok.encode(n, bos=False)) != 1]
    if split:
        raise UsageError(f"names that are not one token: {', '.join(split)}; "
                         f"'{args.out}' was not written")
    print(f"names: all {len(names)} names of {args.names} are single tokens (' Name')")
    lengths = sorted(len(tok.encode(s)) for s in stories)
    print(f"tokens per story (BOS included): min {lengths[0]}, median "
          f"{lengths[len(lengths) // 2]}, max {lengths[-1]}, total {sum(lengths)}")
    tok.save(args.out)
    print(f"written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(run_main("train_tokenizer", main, sys.argv[1:]))
