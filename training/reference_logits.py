#!/usr/bin/env python3
"""Writes the logits of a llama2.c checkpoint for given token ids, computed by this project's
PyTorch model in float32 (no autocast): the reference for C++ parity tests.

Input: token ids as whitespace-separated integers (BOS included if wanted), at most seq_len.
Output: T x V float32 little-endian, one row of vocab_size logits per position, the row for
position t predicting token t+1 (causal: row t sees ids 0..t only).
Prints "SKIPPED: python3-torch is not installed" and exits 0 when torch is missing.

Usage:
  /usr/bin/python3 training/reference_logits.py --model M.bin --tokens IDS.txt --out LOGITS.f32
"""

import sys

from common import (Parser, UsageError, check_input, check_outputs, read_input, run_main,
                    write_output)


def read_ids(path):
    words = read_input(path, "ids").split()
    try:
        ids = [int(w) for w in words]
    except ValueError:
        raise UsageError(f"'{path}' must hold whitespace-separated integers")
    if not ids:
        raise UsageError(f"'{path}' holds no token id")
    return ids


def main(argv):
    ap = Parser(description="Float32 reference logits of a llama2.c checkpoint.")
    ap.add_argument("--model", required=True, help="llama2.c legacy checkpoint")
    ap.add_argument("--tokens", required=True, help="file of whitespace-separated token ids")
    ap.add_argument("--out", required=True, help="output: T x V float32, little-endian")
    args = ap.parse_args(argv)
    # The inputs and the output path are checked before PyTorch is imported (and without it).
    check_outputs({"--out": args.out}, {"--model": args.model, "--tokens": args.tokens})
    check_input(args.model, "model")
    ids = read_ids(args.tokens)
    try:
        import torch
    except ImportError:
        print("SKIPPED: python3-torch is not installed")
        return 0
    from model import load_legacy
    try:
        model = load_legacy(args.model).eval()
    except (OSError, ValueError) as e:
        raise UsageError(str(e))
    v, n = model.cfg.vocab_size, model.cfg.seq_len
    if len(ids) > n:
        raise UsageError(f"{len(ids)} tokens, more than seq_len {n}")
    bad = [i for i in ids if not 0 <= i < v]
    if bad:
        raise UsageError(f"token id {bad[0]} is outside the vocabulary 0..{v - 1}")
    torch.set_num_threads(2)
    with torch.no_grad():
        logits = model(torch.tensor([ids]))[0].float().numpy()
    write_output(args.out, logits.astype("<f4").tobytes())
    print(f"reference_logits: {len(ids)} x {v} logits -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(run_main("reference_logits", main, sys.argv[1:]))
