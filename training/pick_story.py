#!/usr/bin/env python3
"""Copies the first story of a corpus whose length in tokens (BOS included) lies in
[--min, --max]: the lessons' default text must fill most of a 1024-token context.
Standard library only.

Usage:
  /usr/bin/python3 training/pick_story.py --tokenizer data/tokenizer.bin \\
      --corpus heldout_pool.txt --min 900 --max 1000 --out data/heldout_story.txt
"""

import sys

import bpe
from common import (Parser, UsageError, check_outputs, format_story, read_stories, run_main,
                    write_output)


def main(argv):
    ap = Parser(description="Pick the first story of a given token length.")
    ap.add_argument("--tokenizer", required=True, help="llama2.c tokenizer file")
    ap.add_argument("--corpus", required=True,
                    help="story file (paragraphs separated by a blank line, stories by a "
                         "line holding only <|story|>)")
    ap.add_argument("--min", type=int, default=900, help="fewest tokens (default: 900)")
    ap.add_argument("--max", type=int, default=1000, help="most tokens (default: 1000)")
    ap.add_argument("--out", required=True, help="text file to write (the story and a newline)")
    args = ap.parse_args(argv)
    if not 1 <= args.min <= args.max:
        raise UsageError(f"need 1 <= --min <= --max, got {args.min} and {args.max}")
    check_outputs({"--out": args.out}, {"--tokenizer": args.tokenizer, "--corpus": args.corpus})
    try:
        tok = bpe.Tokenizer.load(args.tokenizer)
    except (OSError, ValueError, UnicodeDecodeError) as e:
        raise UsageError(f"cannot load tokenizer '{args.tokenizer}': {e}")
    for i, story in enumerate(read_stories(args.corpus)):
        n = len(tok.encode(story))
        if args.min <= n <= args.max:
            write_output(args.out, format_story(story) + "\n")
            print(f"pick_story: story {i} of {args.corpus}, {n} tokens with BOS -> {args.out}")
            return 0
    raise UsageError(f"no story of {args.corpus} has {args.min}..{args.max} tokens")


if __name__ == "__main__":
    sys.exit(run_main("pick_story", main, sys.argv[1:]))
