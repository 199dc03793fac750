#!/usr/bin/env python3
"""Writes stories sampled from a teacher model (stories260K, trained by Karpathy on TinyStories,
MIT), with the project's own `generate` program: training text in plain English, the way
children's stories are written, to go beside make_corpus.py's generated stories.

Why: make_corpus.py's stories teach long-range name recall, but their few sentence shapes are
all the English a model trained on them alone knows; on a story a person wrote it is lost
(data/README.md). stories260K knows TinyStories' English. Its samples are training text only:
they are written to build/train/ and never committed; what data/ ships is the model trained
on them.

Each story is one run of `generate` from BOS, sampling the teacher's own distribution
(temperature 1, no top-p cut), seed = --seed + story number, so the same seeds always give the
same file, whatever --workers is. A story ends where the teacher ends it (it chooses BOS) or at
its seq_len. Output: the project's story file format (common.format_stories).

Usage:
  /usr/bin/python3 training/teacher_stories.py --generate build/bin/generate \\
      --model ../shared/models/stories260K/stories260K.bin \\
      --tokenizer ../shared/models/stories260K/tok512.bin --stories 30000 --seed 1000000 \\
      --out build/train/teacher.txt [--workers 2]
"""

import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

from common import Parser, UsageError, check_input, check_outputs, format_stories, run_main, \
    write_output

# Each worker runs this many stories' `generate` processes in a row before handing back (fewer
# hand-overs; the order of the output never depends on it).
BATCH = 64


def parse_args(argv):
    ap = Parser(description="Sample training stories from a teacher model with `generate`.")
    ap.add_argument("--generate", required=True, help="the project's generate program")
    ap.add_argument("--model", required=True, help="teacher checkpoint (llama2.c format)")
    ap.add_argument("--tokenizer", required=True, help="the teacher's tokenizer")
    ap.add_argument("--stories", type=int, required=True, help="number of stories")
    ap.add_argument("--seed", type=int, default=1_000_000,
                    help="seed of the first story; story i uses seed + i (default: 1000000)")
    ap.add_argument("--workers", type=int, default=2,
                    help="generate processes at once (default: 2)")
    ap.add_argument("--out", required=True, help="story file to write")
    args = ap.parse_args(argv)
    if not 1 <= args.stories <= 10_000_000:
        raise UsageError(f"--stories must be 1..10000000, got {args.stories}")
    if not 0 <= args.seed <= 2**32 - 1 - args.stories:
        raise UsageError(f"--seed must be 0..{2**32 - 1 - args.stories}, got {args.seed}")
    if not 1 <= args.workers <= 256:
        raise UsageError(f"--workers must be 1..256, got {args.workers}")
    for path, kind in ((args.model, "model"), (args.tokenizer, "tokenizer")):
        check_input(path, kind)
    if not os.access(args.generate, os.X_OK):
        raise UsageError(f"'{args.generate}' is not a program that can run "
                         "(build the project first: bash scripts/build.sh)")
    check_outputs({"--out": args.out}, {"--generate": args.generate, "--model": args.model,
                                        "--tokenizer": args.tokenizer})
    return args


def sample(args, seed):
    """One story of the teacher: its paragraphs joined by one newline."""
    run = subprocess.run([args.generate, "--model", args.model, "--tokenizer", args.tokenizer,
                          "--steps", "0", "--temperature", "1", "--top-p", "1",
                          "--seed", str(seed)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if run.returncode != 0:
        last = run.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or ["no message"]
        raise UsageError(f"generate failed for seed {seed}: {last[0]}")
    text = run.stdout.decode("utf-8", "replace")
    return "\n".join(line.strip() for line in text.split("\n") if line.strip())


def sample_batch(args, first):
    return [sample(args, args.seed + i) for i in range(first, min(first + BATCH, args.stories))]


def stories_in_order(args):
    with ThreadPoolExecutor(max_workers=args.workers) as pool:
        for batch in pool.map(lambda first: sample_batch(args, first),
                              range(0, args.stories, BATCH)):
            for story in batch:
                if story:
                    yield story


def main(argv):
    args = parse_args(argv)
    write_output(args.out, (piece.encode("utf-8")
                            for piece in format_stories(stories_in_order(args))))
    return 0


if __name__ == "__main__":
    sys.exit(run_main("teacher_stories", main, sys.argv[1:]))
