#!/usr/bin/env python3
"""Trains the Llama-style model (model.py) on pretokenized stories, on the CPU, and exports
it as a llama2.c legacy checkpoint, with the loss curve as CSV and SVG.

Training runs in phases of growing context (--schedule): most steps at short windows, which
are cheap, and the last ones at the full 1024 tokens, where a name introduced at the start
of a story can be recalled at its end. Each step sees about the same number of tokens. Random
windows of the token stream (BOS marks the start of each story), as llama2.c trains; in the
full-length phase windows start at the BOS of the story holding a random token, so whole
stories are seen, long and short ones in proportion to their tokens.

Forward passes run under bfloat16 autocast (much faster on CPUs with AMX/AVX512-BF16), with
float32 master weights, AdamW, warm-up then cosine decay, gradient clipping at 1.
Evaluation (held-out and a same-size sample of training stories, story by story, full
context) runs in float32.

Usage:
  /usr/bin/python3 training/train.py --train build/train/train.u16 \\
      --heldout build/train/heldout.u16 --tokenizer data/tokenizer.bin \\
      --out data/model.bin --csv data/loss.csv --svg data/loss.svg [--seed 1] \\
      [--schedule 128x16:6000,512x8:4500,1024x4:300] [--threads 2] [--bos-windows long|all]
      [--init data/model.bin] [--regroup-heads 4:2] [--copy-share 0.25] [--copy-passages 4]
      [--copy-gaps mixed] [--copy-probe build/copy/probe.csv] [--checkpoint-dir build/copy/steps]

With --copy-share a share of the training rows carry a passage written twice at a different
distance in every row (copy_rows.py; --copy-passages several a row, --copy-gaps how the distances
are drawn), so that copying by content is learnt beside the stories; --copy-probe measures that
skill and the model's own voice at every evaluation (copy_probe.py). --regroup-heads merges
--init's attention heads into fewer, wider ones (model.regroup_heads), whose RoPE keeps more
slowly turning pairs for a match at any distance.
"""

import array
import csv
import io
import math
import os
import sys
import time

from common import (Parser, UsageError, check_checkpoint, check_outputs, read_input,
                    read_names, read_stories, repo_path, require_finite, run_main, write_output)

# The shipped run's settings (data/README.md); scripts/train-model.sh uses them unless told otherwise.
DEFAULT_SCHEDULE = "128x16:6000,512x8:4500,1024x4:300"
DEFAULT_THREADS = 2


def parse_schedule(text):
    """'256x16:2400,1024x4:300' -> [(seq_len, batch, steps), ...]."""
    phases = []
    try:
        for part in text.split(","):
            shape, steps = part.split(":")
            t, b = shape.split("x")
            phases.append((int(t), int(b), int(steps)))
    except ValueError:
        raise UsageError(f"--schedule must look like 256x16:2400,1024x4:300, got '{text}'")
    if not phases or any(min(p) < 1 for p in phases):
        raise UsageError(f"--schedule needs positive numbers, got '{text}'")
    return phases


def parse_args(argv):
    ap = Parser(description="Train the story model and export it for llama2.c.")
    ap.add_argument("--train", required=True, help="uint16 token ids (pretokenize.py)")
    ap.add_argument("--heldout", required=True, help="uint16 token ids of held-out stories")
    ap.add_argument("--tokenizer", required=True, help="tokenizer (for the vocabulary size)")
    ap.add_argument("--out", required=True, help="llama2.c checkpoint to write")
    ap.add_argument("--csv", required=True, help="loss curve CSV to write")
    ap.add_argument("--svg", required=True, help="loss curve picture to write")
    ap.add_argument("--names", default=repo_path("data", "names.txt"),
                    help="names list, for the name recall printed at each evaluation")
    ap.add_argument("--seed", type=int, default=1, help="random seed (default: 1)")
    ap.add_argument("--schedule", default=DEFAULT_SCHEDULE,
                    help=f"phases SEQxBATCH:STEPS (default: {DEFAULT_SCHEDULE})")
    ap.add_argument("--lr", type=float, default=2e-3, help="peak learning rate (default: 2e-3)")
    ap.add_argument("--warmup", type=int, default=100, help="warm-up steps (default: 100)")
    ap.add_argument("--eval-every", type=int, default=500,
                    help="steps between held-out evaluations (default: 500)")
    ap.add_argument("--dim", type=int, default=128)
    ap.add_argument("--hidden-dim", type=int, default=384)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--heads", type=int, default=8)
    ap.add_argument("--kv-heads", type=int, default=4)
    ap.add_argument("--seq-len", type=int, default=1024, help="context length (default: 1024)")
    ap.add_argument("--threads", type=int, default=DEFAULT_THREADS,
                    help=f"CPU threads (default: {DEFAULT_THREADS})")
    ap.add_argument("--no-bf16", action="store_true", help="train in float32 throughout")
    ap.add_argument("--bos-windows", choices=("long", "all"), default="long",
                    help="which phases draw every window from a story's BOS: 'long' only the "
                         "full-length one (default, the shipped run), 'all' every phase (so each "
                         "window's first token is BOS, the setting under which attention sinks "
                         "form in large models)")
    ap.add_argument("--init", default=None,
                    help="start from this llama2.c checkpoint instead of random weights "
                         "(fine-tuning); its shape replaces --dim, --layers, ... and --seq-len")
    ap.add_argument("--regroup-heads", default=None, metavar="H:KV",
                    help="with --init: merge its attention heads into H query heads and KV "
                         "KV heads of a larger size, the weights kept (e.g. 4:2 turns 8 heads "
                         "of 16 into 4 of 32, whose RoPE has more slowly turning pairs)")
    ap.add_argument("--probe", action="append", default=[], metavar="STORIES:NAMES",
                    help="at every evaluation also measure long-gap name recall (gap > 64) on "
                         "these stories with this names list, split into first and later pieces "
                         "(name_diagnosis.py); may be given several times")
    ap.add_argument("--probe-csv", default=None,
                    help="write the --probe measurements, one row per evaluation and set")
    ap.add_argument("--copy-share", type=float, default=0.0,
                    help="share of the training rows that carry a passage written twice, the "
                         "second reading at a different distance in every row (copy_rows.py); "
                         "0..1 (default: 0, the shipped run)")
    ap.add_argument("--copy-passages", type=int, default=1, metavar="N",
                    help="passages written twice in each copy row, each at its own distance, "
                         "none overlapping (default: 1)")
    ap.add_argument("--copy-gaps", choices=("uniform", "mixed"), default="uniform",
                    help="how the distance between a passage's two readings is drawn: uniform "
                         "over the window (default), or mixed: half so, half log-uniform, so "
                         "short distances are as common as long ones")
    ap.add_argument("--copy-probe", default=None, metavar="CSV",
                    help="at every evaluation (and before the first step) measure copying by "
                         "content and the model's own voice (copy_probe.py: secret passages, "
                         "unseen stories read twice, names, held-out perplexity and name recall) "
                         "and write them to this CSV")
    ap.add_argument("--copy-probe-light", action="store_true",
                    help="--copy-probe measures only the secret passages and the unseen stories "
                         "read twice (seconds, not minutes, on a busy machine)")
    ap.add_argument("--checkpoint-dir", default=None, metavar="DIR",
                    help="also write the model at every evaluation to DIR/step-N.bin (to keep "
                         "the best one of a run)")
    ap.add_argument("--check-options", action="store_true",
                    help="check the options and output paths, then exit (train-model.sh does "
                         "this before it starts; the input files need not exist yet)")
    args = ap.parse_args(argv)
    # Every option is checked here, before any file is read or PyTorch imported.
    args.phases = parse_schedule(args.schedule)
    in_range("--seed", args.seed, 0, 2**31 - 1)
    in_range("--seq-len", args.seq_len, 2, 1 << 20)
    in_range("--dim", args.dim, 2, 1 << 16)
    in_range("--hidden-dim", args.hidden_dim, 1, 1 << 18)
    in_range("--layers", args.layers, 1, 256)
    in_range("--heads", args.heads, 1, args.dim)
    in_range("--kv-heads", args.kv_heads, 1, args.heads)
    in_range("--warmup", args.warmup, 0, 10**9)
    in_range("--eval-every", args.eval_every, 1, 10**9)
    in_range("--threads", args.threads, 1, 1024)
    if args.dim % args.heads or (args.dim // args.heads) % 2:
        raise UsageError(f"--dim {args.dim} must be --heads {args.heads} times an even head size")
    if args.heads % args.kv_heads:
        raise UsageError(f"--heads {args.heads} must be a multiple of --kv-heads {args.kv_heads}")
    require_finite(args.lr, "--lr")
    if not 0 < args.lr <= 1:
        raise UsageError(f"--lr must be above 0 and at most 1, got {args.lr}")
    longest = max(p[0] for p in args.phases)
    if longest > args.seq_len:
        raise UsageError(f"a phase of {longest} tokens is longer than --seq-len {args.seq_len}")
    for probe in args.probe:
        if probe.count(":") != 1 or not all(probe.split(":")):
            raise UsageError(f"--probe must be STORIES:NAMES, got '{probe}'")
    require_finite(args.copy_share, "--copy-share")
    if not 0 <= args.copy_share <= 1:
        raise UsageError(f"--copy-share must be 0..1, got {args.copy_share}")
    if args.checkpoint_dir is not None and not os.path.isdir(args.checkpoint_dir):
        raise UsageError(f"--checkpoint-dir '{args.checkpoint_dir}' is not a folder")
    in_range("--copy-passages", args.copy_passages, 1, 16)
    for option, default in (("--copy-passages", 1), ("--copy-gaps", "uniform")):
        if getattr(args, option[2:].replace("-", "_")) != default and args.copy_share == 0:
            raise UsageError(f"{option} shapes the copy rows: give --copy-share too")
    if args.regroup_heads is not None:
        if args.init is None:
            raise UsageError("--regroup-heads regroups --init's heads: give --init")
        parts = args.regroup_heads.split(":")
        if len(parts) != 2 or not all(x.isdigit() and int(x) > 0 for x in parts):
            raise UsageError(f"--regroup-heads must be H:KV, two positive whole numbers, "
                             f"got '{args.regroup_heads}'")
        args.regroup_heads = tuple(int(x) for x in parts)
    if args.copy_probe_light and args.copy_probe is None:
        raise UsageError("--copy-probe-light needs --copy-probe")
    if args.probe and args.probe_csv is None:
        raise UsageError("--probe needs --probe-csv for its measurements")
    return args


def in_range(option, value, low, high):
    if not low <= value <= high:
        raise UsageError(f"{option} must be {low}..{high}, got {value}")


def lr_at(step, total, peak, warmup):
    """Linear warm-up, then cosine decay to a tenth of the peak."""
    if step < warmup:
        return peak * (step + 1) / warmup
    frac = (step - warmup) / max(1, total - warmup)
    return peak * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * min(frac, 1.0))))


def load_tokens(path, vocab):
    """The bytes of a pretokenized file (uint16 little-endian ids, BOS = 1 before every story)
    and its story start positions, checked with the standard library only (before PyTorch)."""
    blob = read_input(path, "tokens", binary=True)
    if len(blob) % 2:
        raise UsageError(f"tokens file '{path}' has an odd number of bytes ({len(blob)}); "
                         "uint16 ids take two each")
    ids = array.array("H")
    ids.frombytes(blob)
    if sys.byteorder != "little":
        ids.byteswap()
    if not ids or ids[0] != 1:
        first = f"starts with id {ids[0]}" if ids else "holds no token"
        raise UsageError(f"'{path}' is not pretokenized stories: it {first}, and every story "
                         "starts with BOS = 1")
    top = max(ids)
    if top >= vocab:
        raise UsageError(f"'{path}' holds id {top}, beyond the tokenizer's vocabulary of {vocab}")
    starts, at = [], 0
    while (at := blob.find(b"\x01\x00", at)) >= 0:
        if at % 2 == 0:
            starts.append(at // 2)
        at += 1
    empty = [a for a, b in zip(starts, starts[1:] + [len(ids)]) if b - a < 2]
    if empty:
        raise UsageError(f"'{path}' holds an empty story (BOS with no token after it, at token "
                         f"{empty[0]}); pretokenize.py never writes one")
    return blob, starts


def check_inputs(args):
    """Reads and checks every input file before any training: the tokenizer, the names, the
    token files against the model's shape. Returns what train() needs."""
    import bpe
    try:
        tok = bpe.Tokenizer.load(args.tokenizer)
    except (OSError, ValueError, UnicodeDecodeError) as e:
        raise UsageError(f"cannot load tokenizer '{args.tokenizer}': {e}")
    names = read_names(args.names)
    if args.init is not None:
        check_checkpoint(args.init, read_input(args.init, "model", binary=True))
    train_blob, train_starts = load_tokens(args.train, tok.vocab_size)
    held_blob, held_starts = load_tokens(args.heldout, tok.vocab_size)
    n_train = len(train_blob) // 2
    longest = max(p[0] for p in args.phases)
    if n_train < longest + 2:
        raise UsageError(f"'{args.train}' holds {n_train} tokens, too few for windows of "
                         f"{longest}")
    if any(t >= args.seq_len for t, _, _ in args.phases) and \
            not any(s + args.seq_len + 1 <= n_train for s in train_starts):
        raise UsageError(f"'{args.train}': no story starts {args.seq_len + 1} tokens before the "
                         "end, as the full-length phase needs")
    ends = held_starts[1:] + [len(held_blob) // 2]
    held_longest = max(b - a for a, b in zip(held_starts, ends))
    if held_longest > args.seq_len:
        raise UsageError(f"'{args.heldout}' has a story of {held_longest} tokens, more than "
                         f"--seq-len {args.seq_len}")
    probes = []
    for probe in args.probe:
        stories_path, names_path = probe.split(":")
        texts = read_stories(stories_path)
        stories = [tok.encode(t)[:args.seq_len] for t in texts]
        pieces = {n: tok.encode(n, bos=False) for n in read_names(names_path)}
        probes.append((os.path.basename(stories_path), stories, pieces,
                       sum(len(t.encode("utf-8")) for t in texts)))
    copy_sets = None
    if args.copy_probe is not None:
        import copy_probe
        seq_len = args.seq_len
        if args.init is not None:  # the checkpoint's own, the 7th of its 7 header numbers
            seq_len = int.from_bytes(read_input(args.init, "model", binary=True)[24:28],
                                     "little", signed=True)
        copy_sets = copy_probe.ProbeSets(tok, copy_probe.DEFAULT_UNSEEN,
                                         copy_probe.DEFAULT_HELDOUT, seq_len)
    return tok, names, train_blob, held_blob, probes, copy_sets


def probe_rows(model, step, probes):
    """One row per probe set: step, set, events, recalled, first piece, later pieces (of names of
    more than one token), bits per byte, with the full context."""
    import name_diagnosis
    import torch
    import torch.nn.functional as F
    rows = []
    model.eval()
    with torch.no_grad():
        for label, stories, pieces, n_bytes in probes:
            c, _ = name_diagnosis.diagnose(model, stories, pieces, 64)
            nats = 0.0
            for s in stories:
                x = torch.tensor([s])
                nats += F.cross_entropy(model(x)[0].float()[:-1], x[0, 1:],
                                        reduction="sum").item()
            rows.append((step, label, c["events"], c["recalled"], c["first"], c["later"],
                         c["multi"], nats / math.log(2) / n_bytes))
    model.train()
    return rows


def split_stories(data):
    """Token lists of the stories in a BOS-separated stream."""
    import numpy as np
    starts = np.flatnonzero(data == 1).tolist() + [data.size]
    return [data[a:b].astype(int).tolist() for a, b in zip(starts, starts[1:])]


class Batches:
    """Random training windows; deterministic given the seed."""

    def __init__(self, data, seed, vocab=0, copy_share=0.0, copy_passages=1,
                 copy_gaps="uniform"):
        import numpy as np
        self.data = data
        self.rng = np.random.default_rng(seed)
        # The copy rows draw from their own generator, so the story windows are those of a run
        # without them.
        self.copy_rng = np.random.default_rng([seed, 55])
        self.vocab, self.copy_share, self.copy_passages = vocab, copy_share, copy_passages
        self.copy_gaps = copy_gaps
        self.bos = np.flatnonzero(data == 1)

    def get(self, seq_len, batch, from_bos):
        import numpy as np
        import torch
        if from_bos:
            # The story holding a uniformly random token: long and short stories get windows in
            # proportion to their tokens (a mix of long generated stories and short teacher
            # stories keeps its mix), each window from its story's BOS.
            ok = self.bos[self.bos + seq_len + 1 <= self.data.size]
            tokens = self.rng.integers(ok[0], ok[-1] + 1, size=batch)
            starts = ok[np.searchsorted(ok, tokens, side="right") - 1]
        else:
            starts = self.rng.integers(0, self.data.size - seq_len - 1, size=batch)
        rows = np.stack([self.data[s:s + seq_len + 1] for s in starts]).astype(np.int64)
        if self.copy_share > 0:
            import copy_rows
            copy_rows.add_copy_rows(rows, self.copy_rng, self.vocab, self.copy_share,
                                    self.copy_passages, self.copy_gaps)
        x = torch.from_numpy(rows)
        return x[:, :-1], x[:, 1:]


def mean_story_loss(model, stories):
    """Mean next-token loss over whole stories, float32, full context."""
    import torch
    import torch.nn.functional as F
    total, count = 0.0, 0
    model.eval()
    with torch.no_grad():
        for s in stories:
            x = torch.tensor([s[:model.cfg.seq_len]])
            logits = model(x)[0].float()
            total += F.cross_entropy(logits[:-1], x[0, 1:], reduction="sum").item()
            count += x.shape[1] - 1
    model.train()
    return total / count


def sample_like(stories, n_tokens):
    """The first stories holding at least n_tokens tokens."""
    out, n = [], 0
    for s in stories:
        if n >= n_tokens:
            break
        out.append(s)
        n += len(s)
    return out


def fmt_time(seconds):
    seconds = int(seconds)
    return f"{seconds // 60}m{seconds % 60:02d}s"


def train(args, inputs):
    import numpy as np
    import torch
    from model import Config, Transformer, export_legacy
    import evaluate
    import plot_loss

    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    torch.use_deterministic_algorithms(True, warn_only=True)

    tok, names, train_blob, held_blob, probes, copy_sets = inputs
    vocab = tok.vocab_size
    name_ids = evaluate.name_token_ids(tok, names)
    train_data = np.frombuffer(train_blob, dtype="<u2")
    held = split_stories(np.frombuffer(held_blob, dtype="<u2"))
    n_held = sum(map(len, held))
    # Same-size sample of the training stories, to compare like with like at the end.
    train_sample = sample_like(split_stories(train_data[:4 * n_held + 4096]), n_held)

    cfg = Config(args.dim, args.hidden_dim, args.layers, args.heads, args.kv_heads, vocab,
                 args.seq_len)
    try:
        if args.init is not None:
            from model import load_legacy
            model = load_legacy(args.init)
            if args.regroup_heads is not None:
                from model import regroup_heads
                before = model.cfg
                model = regroup_heads(model, *args.regroup_heads)
                print(f"regrouped attention: {before.n_heads} heads of {before.head_size} "
                      f"({before.n_kv_heads} KV) -> {model.cfg.n_heads} of "
                      f"{model.cfg.head_size} ({model.cfg.n_kv_heads} KV)", flush=True)
            cfg = model.cfg
            if cfg.vocab_size != vocab:
                raise UsageError(f"--init '{args.init}' has a vocabulary of {cfg.vocab_size}, "
                                 f"the tokenizer {vocab}")
            longest = max(p[0] for p in args.phases)
            if longest > cfg.seq_len:
                raise UsageError(f"a phase of {longest} tokens is longer than --init's seq_len "
                                 f"{cfg.seq_len}")
        else:
            model = Transformer(cfg)
    except ValueError as e:
        raise UsageError(f"model shape: {e}")
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1},
                             {"params": no_decay, "weight_decay": 0.0}],
                            lr=args.lr, betas=(0.9, 0.95), eps=1e-8)
    batches = Batches(train_data, args.seed, vocab, args.copy_share, args.copy_passages,
                      args.copy_gaps)
    total_steps = sum(p[2] for p in args.phases)
    total_tokens = sum(t * b * s for t, b, s in args.phases)
    print(f"model: {model.n_params()} parameters, {cfg}")
    print(f"data: {train_data.size} training tokens, {len(held)} held-out stories "
          f"({n_held} tokens); plan: {total_steps} steps, {total_tokens} tokens")

    rows, step, tokens_seen, run_loss, run_n = [], 0, 0, 0.0, 0
    probe_log = []

    def log_probes():
        for r in probe_rows(model, step, probes):
            probe_log.append(r)
            print(f"probe step {r[0]} {r[1]}: recalled {r[3]}/{r[2]}, first piece {r[4]}, later "
                  f"pieces {r[5]}/{r[6]}, {r[7]:.3f} bits per byte", flush=True)
        if args.probe_csv is not None:
            write_output(args.probe_csv, ("step,set,events,recalled,first_piece,later_pieces,"
                                          "multi_piece,bits_per_byte\n" + "".join(
                f"{a},{b},{c},{d},{e},{f},{g},{h:.4f}\n" for a, b, c, d, e, f, g, h
                in probe_log)).encode("utf-8"))

    copy_log = []

    def log_copy_probe():
        import copy_probe
        model.eval()
        m = copy_probe.measure(model, copy_sets, light=args.copy_probe_light)
        model.train()
        copy_log.append(copy_probe.csv_row(step, m))
        print(f"copy probe step {step}: {copy_probe.summary(m)}", flush=True)
        write_output(args.copy_probe, (copy_probe.csv_header() + "".join(copy_log)).encode())
        if args.checkpoint_dir is not None and step > 0:
            export_legacy(model, os.path.join(args.checkpoint_dir, f"step-{step}.bin"))

    if probes:
        log_probes()
    if copy_sets is not None:
        log_copy_probe()
    start = time.time()
    tick, tick_tokens = start, 0
    autocast = not args.no_bf16
    for seq_len, batch, steps in args.phases:
        print(f"phase: {steps} steps of {batch} x {seq_len} tokens")
        for _ in range(steps):
            lr = lr_at(step, total_steps, args.lr, args.warmup)
            for g in opt.param_groups:
                g["lr"] = lr
            x, y = batches.get(seq_len, batch,
                               from_bos=args.bos_windows == "all" or seq_len >= args.seq_len)
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
                logits = model(x)
            loss = torch.nn.functional.cross_entropy(logits.float().reshape(-1, vocab),
                                                     y.reshape(-1))
            if not math.isfinite(loss.item()):
                raise UsageError(f"the training loss became {loss.item()} at step {step + 1} "
                                 f"(learning rate {lr:.3g}); nothing was written")
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            step += 1
            tokens_seen += x.numel()
            tick_tokens += x.numel()
            run_loss += loss.item()
            run_n += 1
            if step % 50 == 0 or step == total_steps:
                now = time.time()
                rate = tick_tokens / max(now - tick, 1e-9)
                left = (total_tokens - tokens_seen) / max(rate, 1e-9)
                print(f"step {step:5d}/{total_steps}  loss {loss.item():.4f}  lr {lr:.2e}  "
                      f"{rate:7.0f} tokens/s  elapsed {fmt_time(now - start)}  "
                      f"left ~{fmt_time(left)} (at this speed)", flush=True)
                tick, tick_tokens = now, 0
            if step % args.eval_every == 0 or step == total_steps:
                model.eval()
                held_loss, recall = evaluate.evaluate(model, held, name_ids, [64])
                model.train()
                require_finite(held_loss, f"the held-out loss at step {step}")
                rows.append((step, tokens_seen, run_loss / run_n, held_loss, lr,
                             time.time() - start))
                print(f"eval  step {step}: train {run_loss / run_n:.4f} (mean since last eval)"
                      f"  held-out {held_loss:.4f} (perplexity {math.exp(held_loss):.3f}), "
                      f"name recall at gap > 64: {recall[64][0]}/{recall[64][1]}", flush=True)
                run_loss, run_n = 0.0, 0
                if probes:
                    log_probes()
                if copy_sets is not None:
                    log_copy_probe()
                elif args.checkpoint_dir is not None:
                    export_legacy(model, os.path.join(args.checkpoint_dir, f"step-{step}.bin"))
                tick = time.time()  # evaluation time does not count as training speed

    elapsed = time.time() - start
    final_train = require_finite(mean_story_loss(model, train_sample), "the final training loss")
    final_held = rows[-1][3]
    # The three files are made in memory first and each replaces its old file whole, only now
    # (a diverged model is refused by export_legacy before anything is written). The picture is
    # drawn from the CSV as written (rounded), so plot_loss.py redraws the same picture.
    csv_text = csv_rows(rows)
    command = "/usr/bin/python3 training/train.py " + " ".join(sys.argv[1:])
    svg_text = plot_loss.draw(plot_loss.parse_rows(csv_text, args.csv), command)
    export_legacy(model, args.out)
    write_output(args.csv, csv_text)
    write_output(args.svg, svg_text)
    print(f"done: {step} steps, {tokens_seen} tokens in {fmt_time(elapsed)}")
    print(f"final (float32, whole stories): train sample loss {final_train:.4f} "
          f"(perplexity {math.exp(final_train):.3f}), held-out loss {final_held:.4f} "
          f"(perplexity {math.exp(final_held):.3f}), ratio "
          f"{math.exp(final_held) / math.exp(final_train):.3f}")
    print(f"wrote {args.out} ({os.path.getsize(args.out)} bytes), {args.csv}, {args.svg}")


def csv_rows(rows):
    """The loss curve as loss.csv's text."""
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["step", "tokens", "train_loss", "heldout_loss", "lr", "seconds"])
    for step, tokens, tl, hl, lr, sec in rows:
        w.writerow([step, tokens, f"{tl:.5f}", f"{hl:.5f}", f"{lr:.6g}", f"{sec:.1f}"])
    return out.getvalue()


def main(argv):
    args = parse_args(argv)
    # No output on another output or on an input (a long run must not end by losing a file).
    check_outputs({"--out": args.out, "--csv": args.csv, "--svg": args.svg,
                   "--probe-csv": args.probe_csv, "--copy-probe": args.copy_probe},
                  {"--train": args.train, "--heldout": args.heldout,
                   "--tokenizer": args.tokenizer, "--init": args.init, "--names": args.names})
    if args.check_options:
        print("train: options ok")
        return 0
    inputs = check_inputs(args)
    try:
        import torch  # noqa: F401
        import numpy  # noqa: F401
    except ImportError:
        raise UsageError("python3-torch is not installed (apt-get install python3-torch)")
    train(args, inputs)
    return 0


if __name__ == "__main__":
    sys.exit(run_main("train", main, sys.argv[1:]))
