#!/usr/bin/env python3
"""check_memory.py BIN_DIR WORK_DIR: compare_policies' peak memory grows with the text, not with
its square.

A random model with a long context (make_random_model --seq-len 16384) reads a text and then one
twice as long, with the full cache, H2O and the picture (--svg, the one output that needs the
step-by-step record). The peak resident memory of each run (getrusage through os.wait4) may grow
by what the longer text needs in keys and values (a few hundred bytes per token for this model),
never by what recording every step's kept positions took: about N^2 / 2 positions of 8 bytes for
the full cache alone, 75 KiB per extra token at these lengths.
"""
import os
import random
import re
import shutil
import subprocess
import sys

MAX_BYTES_PER_TOKEN = 8 * 1024


def run(command):
    """Runs command; stops the check with its error when it fails."""
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"FAILED: {' '.join(command)} exited {result.returncode}: {result.stderr}")


def measured(command):
    """Runs command; returns (its stdout, its own peak resident memory in bytes)."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_end)
        os.dup2(write_end, 1)
        os.execv(command[0], command)
    os.close(write_end)
    with os.fdopen(read_end) as pipe:
        out = pipe.read()
    _, status, usage = os.wait4(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"FAILED: {' '.join(command)} exited {os.waitstatus_to_exitcode(status)}")
    return out, usage.ru_maxrss * 1024  # Linux reports KiB


def main():
    bin_dir, work = sys.argv[1], sys.argv[2]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    model = os.path.join(work, "model")
    run([os.path.join(bin_dir, "make_random_model"), "--shape", "260k", "--seq-len", "16384",
              "--out", model])
    words = ["the", "cat", "sat", "on", "a", "mat", "and", "dog", "ran", "to", "big", "red",
             "ball", "Tom", "Lily"]
    rng = random.Random(1)
    results = []
    for count in (700, 1400):
        text = os.path.join(work, f"text_{count}.txt")
        with open(text, "w") as f:
            f.write(" ".join(rng.choice(words) for _ in range(count)) + ".\n")
        out, peak = measured([os.path.join(bin_dir, "compare_policies"),
                              "--model", os.path.join(model, "model.bin"),
                              "--tokenizer", os.path.join(model, "tok.bin"), "--text", text,
                              "--budgets", "10", "--policies", "full,h2o",
                              "--svg", os.path.join(work, "policies.svg")])
        tokens = int(re.search(r"story 1: (\d+) tokens", out).group(1))
        results.append((tokens, peak))
        print(f"{tokens} tokens: peak resident memory {peak / 2**20:.1f} MiB")
    (short_tokens, short_peak), (long_tokens, long_peak) = results
    per_token = (long_peak - short_peak) / (long_tokens - short_tokens)
    print(f"growth: {per_token:.0f} bytes per extra token (limit {MAX_BYTES_PER_TOKEN})")
    if per_token > MAX_BYTES_PER_TOKEN:
        sys.exit("FAILED: peak memory grows faster than the text")
    print("memory stays flat: ok")

    # Lesson 07 on 40 tokens with budgets of a million: room for 40 tokens, not a million.
    _, peak = measured([os.path.join(bin_dir, "07_h2o_tensor_cache"), "--tokens", "40",
                        "--heavy", "1000000", "--recent", "1000000"])
    print(f"lesson 07, 40 tokens, budget 2,000,000: peak resident memory {peak / 2**20:.1f} MiB")
    if peak > 64 * 2**20:
        sys.exit("FAILED: lesson 07 allocates for its budget, not for the tokens it reads")


if __name__ == "__main__":
    main()
