#!/usr/bin/env python3
"""Turns a story corpus into token ids for training: uint16, little-endian, BOS before
every story (as llama2.c's pretokenized shards). Standard library only.

Usage:
  /usr/bin/python3 training/pretokenize.py --tokenizer data/tokenizer.bin \\
      --corpus build/train/train.txt --out build/train/train.u16
"""

import array
import sys

import bpe
from common import Parser, UsageError, check_outputs, read_stories, run_main, write_output


def parse_args(argv):
    ap = Parser(description="Encode stories as uint16 token ids.")
    ap.add_argument("--tokenizer", required=True, help="llama2.c tokenizer file")
    ap.add_argument("--corpus", required=True,
                    help="story file (paragraphs separated by a blank line, stories by a "
                         "line holding only <|story|>)")
    ap.add_argument("--out", required=True, help="uint16 file to write")
    return ap.parse_args(argv)


def main(argv):
    args = parse_args(argv)
    check_outputs({"--out": args.out}, {"--tokenizer": args.tokenizer, "--corpus": args.corpus})
    try:
        tok = bpe.Tokenizer.load(args.tokenizer)
    except (OSError, ValueError, UnicodeDecodeError) as e:
        raise UsageError(f"cannot load tokenizer '{args.tokenizer}': {e}")
    if tok.vocab_size > 65536:
        raise UsageError("vocabulary too large for uint16 ids")
    stories = read_stories(args.corpus)
    ids = array.array("H")
    lengths = []
    for s in stories:
        t = tok.encode(s, bos=True)
        lengths.append(len(t))
        ids.extend(t)
    if sys.byteorder != "little":
        ids.byteswap()
    write_output(args.out, ids.tobytes())
    lengths.sort()
    print(f"pretokenize: {len(stories)} stories, {len(ids)} tokens -> {args.out} "
          f"(per story: min {lengths[0]}, median {lengths[len(lengths) // 2]}, "
          f"max {lengths[-1]})")
    return 0


if __name__ == "__main__":
    sys.exit(run_main("pretokenize", main, sys.argv[1:]))
