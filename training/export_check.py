#!/usr/bin/env python3
"""Exports a tiny random model and the floats it should load as, for the C++ loader test.

Writes DIR/tiny.bin, a llama2.c legacy checkpoint of a small grouped-query model (dim 32,
2 layers, 4 heads, 2 KV heads, hidden 64, vocab 300, seq_len 64; seeded, so always the same
bytes), and DIR/tiny.f32, every float32 of that checkpoint after its 28-byte header, in
file order (embedding, rms_att, wq, wk, wv, wo, rms_ffn, w1, w2, w3, rms_final, cos, sin).
It reads the file back and checks it equals the model before exiting 0.
Prints "SKIPPED: python3-torch is not installed" and exits 0 when torch is missing.

Usage:
  /usr/bin/python3 training/export_check.py --out DIR
"""

import os
import sys

from common import Parser, UsageError, run_main


def main(argv):
    ap = Parser(description="Export a tiny random GQA model and its floats.")
    ap.add_argument("--out", required=True, help="existing folder for tiny.bin and tiny.f32")
    ap.add_argument("--seed", type=int, default=1234, help="random seed (default: 1234)")
    args = ap.parse_args(argv)
    try:
        import torch
    except ImportError:
        print("SKIPPED: python3-torch is not installed")
        return 0
    from model import Config, HEADER, Transformer, checkpoint_tensors, export_legacy, \
        load_legacy
    if not os.path.isdir(args.out) or not os.access(args.out, os.W_OK):
        raise UsageError(f"'{args.out}' is not a writable folder")
    torch.manual_seed(args.seed)
    model = Transformer(Config(dim=32, hidden_dim=64, n_layers=2, n_heads=4, n_kv_heads=2,
                               vocab_size=300, seq_len=64))
    with torch.no_grad():  # norms away from 1, so a loader mixing them up is caught
        for name, p in model.named_parameters():
            if p.dim() == 1:
                p.uniform_(0.5, 1.5)
    bin_path = os.path.join(args.out, "tiny.bin")
    floats = export_legacy(model, bin_path)
    floats.astype("<f4").tofile(os.path.join(args.out, "tiny.f32"))
    back = load_legacy(bin_path)
    for a, b in zip(checkpoint_tensors(model), checkpoint_tensors(back)):
        if not torch.equal(a, b):
            raise UsageError("the exported checkpoint does not read back equal")
    size = os.path.getsize(bin_path)
    if size != HEADER.size + 4 * floats.size:
        raise UsageError("tiny.bin has an unexpected size")
    print(f"export_check: {bin_path} ({size} bytes, {floats.size} floats) and tiny.f32 written; "
          "read back equal")
    return 0


if __name__ == "__main__":
    sys.exit(run_main("export_check", main, sys.argv[1:]))
