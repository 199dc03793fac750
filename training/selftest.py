#!/usr/bin/env python3
"""Quick checks of the training code, in a few seconds.

1. Tokenizer (standard library): a tokenizer trained on a few generated stories
   round-trips held-out stories exactly, encodes chunk by chunk exactly as llama2.c's
   whole-text merge loop does, and survives a save/load.
2. Model (needs torch): a few optimisation steps on a tiny model lower the loss; a legacy
   export reads back bit for bit; a sliding window of the full length changes nothing.
Without torch the model checks print SKIPPED and the script still exits 0.

Usage:
  /usr/bin/python3 training/selftest.py
"""

import os
import re
import sys
import tempfile

from common import Parser, UsageError, read_names, repo_path, run_main


def check_tokenizer():
    import bpe
    import make_corpus
    names = read_names(repo_path("data", "names.txt"))
    train = list(make_corpus.generate(11, 40, names))
    held = list(make_corpus.generate(12, 5, names))
    tok = bpe.train(bpe.count_chunks(train), 1024)
    extra = ["Caf\u00e9 \u00fcber \u2603!", "  two  spaces\n\nand lines ", "", "x"]
    for text in held + extra:
        ids = tok.encode(text)
        if tok.decode(ids) != text:
            raise UsageError(f"round trip failed on {text[:40]!r}")
        if ids != tok.encode_slow(text):
            raise UsageError(f"chunked encoding differs from llama2.c's on {text[:40]!r}")
    # The heap-based merge loop against llama2.c's own (rescan every pair after each merge).
    def rescan_merge(tokens):
        while len(tokens) > 1:
            best = max(((tok.scores[j], -k, j) for k in range(len(tokens) - 1)
                        if (j := tok.ids.get(tok.pieces[tokens[k]] + tok.pieces[tokens[k + 1]]))
                        is not None), default=None)
            if best is None:
                break
            k = -best[1]
            tokens[k:k + 2] = [best[2]]
        return tokens
    for text in held + extra + ["a" * 300, "abababab" * 40, "the the the then them"]:
        if tok._merge(tok._initial(" " + text)) != rescan_merge(tok._initial(" " + text)):
            raise UsageError(f"the heap merge differs from llama2.c's loop on {text[:40]!r}")
    # The incremental trainer against the plain one: recount every pair after each merge.
    def rescan_train(chunk_counts, vocab_size):
        pieces = list(tok.pieces[:bpe.N_SPECIAL]) + sorted({c for w in chunk_counts for c in w})
        words = {w: list(w) for w in chunk_counts}
        while len(pieces) < vocab_size:
            counts = {}
            for w, parts in words.items():
                for pair in zip(parts, parts[1:]):
                    counts[pair] = counts.get(pair, 0) + chunk_counts[w]
            if not counts or max(counts.values()) < 2:
                break
            top = max(counts.values())
            a, b = min(p for p, c in counts.items() if c == top)
            if a + b not in pieces:
                pieces.append(a + b)
            for w, parts in words.items():
                out, i = [], 0
                while i < len(parts):
                    if parts[i:i + 2] == [a, b]:
                        out.append(a + b)
                        i += 2
                    else:
                        out.append(parts[i])
                        i += 1
                words[w] = out
        return pieces
    odd = ["a" * 301, "abababab" * 40, "aaaa bbbb aaab aab", "x" * 7, "\u00e9\u00e9\u00e9 caf\u00e9"]
    for texts, size in ((train[:8] + odd, 600), (odd, 300)):
        if bpe.train(bpe.count_chunks(texts), size).pieces != rescan_train(
                bpe.count_chunks(texts), size):
            raise UsageError("the incremental BPE trainer differs from the plain one")
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "tok.bin")
        tok.save(path)
        back = bpe.Tokenizer.load(path)
        if back.pieces != tok.pieces or back.encode(held[0]) != tok.encode(held[0]):
            raise UsageError("tokenizer changed through save/load")
    print(f"tokenizer: {tok.vocab_size} pieces, {len(held) + len(extra)} texts round-trip, "
          "chunked encoding matches the whole-text merge loop, training matches the plain "
          "recount: ok")


def check_invented_names():
    """About half of the generator's characters carry invented names: never a story word, never
    a listed name, and every name the generator reports for --names-out is in its text."""
    import make_corpus
    names = read_names(repo_path("data", "names.txt"))
    seen = set()
    stories = list(make_corpus.generate(21, 40, names, seen))
    invented = sorted(n for n in seen if n not in set(names))
    share = len(invented) / len(seen)
    if not 0.3 <= share <= 0.7:
        raise UsageError(f"{len(invented)} of {len(seen)} names invented, expected about half")
    words = make_corpus.story_words()
    for name in invented:
        if not re.fullmatch(r"[A-Z][a-z]{3,9}", name) or name.lower() in words:
            raise UsageError(f"invented name {name!r} is not a fresh capitalised word")
    text_words = set(re.findall(r"[A-Za-z]+", "\n".join(stories)))
    missing = sorted(seen - text_words)
    if missing:
        raise UsageError(f"names reported but not written: {', '.join(missing[:5])}")
    print(f"invented names: {len(invented)} of {len(seen)} in 40 stories, all fresh words")


def check_renaming():
    """rename_characters.py: a character is a word capitalised inside sentences, not a sentence's
    first word, a role (Mom) or a capitalised common word (Park beside park); each gets one new
    name at every mention, never a listed one, and two characters never share one."""
    import random
    import rename_characters
    story = ("Lily met Tom at the park. Lily said, \"Hi, Tom!\" Mom waved at Lily. "
             "The Park was big, and the park was green. Lily's ball rolled to Tom.")
    stories = [story, "Then Tom ran home. Tom saw Lily. Tom smiled at Lily, then at Tom's cat "
                      "near the Park."]
    names = rename_characters.find_names(stories, 2)
    if names != ["Tom", "Lily"]:
        raise UsageError(f"rename_characters found {names}, expected ['Tom', 'Lily']")
    avoid = {"Ana", "Sam"}
    world = ["Ana", "Siân", "Sam", "Zoë"]
    for seed in range(200):
        out, count = rename_characters.rename_story(story, set(names), random.Random(seed),
                                                    world, avoid, 0.5)
        new_lily = out.split(" ")[0]
        new_tom = out.split(" ")[2]
        if count != 2 or new_lily == new_tom or {new_lily, new_tom} & (avoid | {"Lily", "Tom"}):
            raise UsageError(f"seed {seed}: renamed to {new_lily!r} and {new_tom!r}")
        expected = (story.replace("Lily", "\0").replace("Tom", "\1")
                    .replace("\0", new_lily).replace("\1", new_tom))
        if out != expected:
            raise UsageError(f"seed {seed}: {out!r} is not every mention renamed")
    # A hyphenated name is one name: "Mary-Jane" is renamed whole, never to "Siân-Jane", and the
    # Mary of the same story apart from her.
    story = "Then Mary-Jane met Mary. Later, Mary-Jane saw Mary, and Mary-Jane waved at Mary."
    names = rename_characters.find_names([story], 2)
    if names != ["Mary", "Mary-Jane"]:
        raise UsageError(f"rename_characters found {names}, expected ['Mary', 'Mary-Jane']")
    for seed in range(50):
        out, count = rename_characters.rename_story(story, set(names), random.Random(seed),
                                                    world, avoid, 0.5)
        new_pair, new_mary = out.split(" ")[1], out.split(" ")[3].rstrip(".")
        expected = story.replace("Mary-Jane", "\0").replace("Mary", "\1")
        expected = expected.replace("\0", new_pair).replace("\1", new_mary)
        if count != 2 or "Jane" in out or new_pair == new_mary or out != expected:
            raise UsageError(f"seed {seed}: {out!r} does not rename Mary-Jane and Mary whole")
    print("renamed characters: every mention, never a listed name, Mom and Park kept, "
          "Mary-Jane one name: ok")


def check_byte_order_mark():
    """A text's byte-order mark (U+FEFF, as some editors write one first) is no part of the text:
    every script reads its texts through read_input, which skips it, so a story, a names list or
    a CSV file reads the same with or without one, and rename_characters.py writes none."""
    import contextlib
    import io
    import rename_characters
    from common import read_input, read_stories
    with tempfile.TemporaryDirectory() as folder:
        stories, out = os.path.join(folder, "stories.txt"), os.path.join(folder, "renamed.txt")
        text = "Lily met Tom.\n\nThen Lily saw Tom, and Lily waved at Tom.\n"
        with open(stories, "w", encoding="utf-8") as f:
            f.write("\ufeff" + text)
        if read_input(stories, "corpus") != text or read_stories(stories)[0].startswith("\ufeff"):
            raise UsageError("read_input keeps a text's byte-order mark")
        with contextlib.redirect_stdout(io.StringIO()):
            status = rename_characters.main(["--stories", stories, "--out", out,
                                             "--min-count", "2"])
        with open(out, "rb") as f:
            written = f.read()
        if status != 0 or b"\xef\xbb\xbf" in written or not written[:1].isalpha():
            raise UsageError(f"rename_characters wrote {written[:20]!r} from a text with a "
                             "byte-order mark")
    print("byte-order mark: skipped where a text is read, never copied into an output: ok")


def check_model():
    try:
        import torch
    except ImportError:
        print("SKIPPED: python3-torch is not installed")
        return
    from model import Config, Transformer, checkpoint_tensors, export_legacy, load_legacy
    torch.manual_seed(0)
    torch.set_num_threads(2)
    cfg = Config(dim=32, hidden_dim=64, n_layers=2, n_heads=4, n_kv_heads=2, vocab_size=64,
                 seq_len=32)
    model = Transformer(cfg)
    # A learnable pattern: each row counts up from a random start.
    start = torch.randint(0, 64, (8, 1))
    data = (start + torch.arange(33)) % 64
    x, y = data[:, :-1], data[:, 1:]
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)

    def loss_now():
        return torch.nn.functional.cross_entropy(model(x).reshape(-1, 64), y.reshape(-1))

    before = loss_now().item()
    for _ in range(30):
        loss = loss_now()
        opt.zero_grad()
        loss.backward()
        opt.step()
    after = loss_now().item()
    print(f"model: loss {before:.3f} before, {after:.3f} after 30 steps")
    if not after < before * 0.8:
        raise UsageError("training did not lower the loss")
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "m.bin")
        export_legacy(model, path)
        back = load_legacy(path)
        if not all(torch.equal(a, b) for a, b in zip(checkpoint_tensors(model),
                                                      checkpoint_tensors(back))):
            raise UsageError("legacy export does not read back bit for bit")
        with torch.no_grad():
            if not torch.allclose(model(x), back(x)) or \
                    not torch.allclose(model(x), model(x, window=32)):
                raise UsageError("reloaded model or full-length window gives other logits")
            # RoPE sees only relative distances: positions given as 0, 1, 2, ... are the
            # default, and every position moved by the same amount changes no logit.
            import numpy as np
            if not torch.equal(model(x), model(x, positions=np.arange(32))) or \
                    not torch.allclose(model(x), model(x, positions=np.arange(32) + 7.5),
                                       atol=1e-4):
                raise UsageError("positions 0, 1, 2, ... or moved by 7.5 give other logits")
            if torch.allclose(model(x), model(x, positions=np.arange(32) * 3.0), atol=1e-4):
                raise UsageError("stretched positions change no logit: RoPE is not applied")
    print("model: export reads back bit for bit, same logits, positions relative: ok")


def check_names_rule():
    """Names files hold what a person's name can: the same lines pass and fail as in
    tests/test_name_recall.cpp's names-file test (the C++ read_names())."""
    import tempfile
    from common import is_one_name
    good = ["Zo\u00eb", "\u0141ukasz", "O'Brien", "Mary-Jane", "O\u2019Neil", "Zoe\u0308", "Mia",
            "\u4e2d\u6751", "\u041c\u0430\u0440\u0438\u044f", "\u0395\u03bb\u03ad\u03bd\u03b7"]
    bad = ["-Ann", "Ann-", "O''Brien", "Ann3", "\u0308Zoe", "Ann\u00d7", "Ann\u2014Lee", "Ann.",
           "\ufeff", "Mary Ann", "Ann\u2605", "Ann\uff01", "Ann\ue000"]
    wrong = [n for n in good if not is_one_name(n)] + [n for n in bad if is_one_name(n)]
    if wrong:
        raise UsageError(f"names rule misjudges {wrong!r}")
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "names.txt")
        with open(path, "w", encoding="utf-8", newline="") as f:
            f.write("\ufeff" + "\r\n".join(good) + "\n\n")
        if read_names(path) != good:
            raise UsageError(f"read_names misreads {good!r}: {read_names(path)!r}")
    print("names files: letters with marks, ' and - between letters, a byte-order mark skipped, "
          "as in C++: ok")


def check_story_format():
    """The story file format (common.py, after include/h2o/text/stories.hpp) reads back what
    format_stories writes, and reads blank lines and the separator as the C++ reader does."""
    from common import STORY_SEPARATOR, format_stories, split_stories
    stories = ["One day.\nHe ran.", "A dog.", "  indented\nlast"]
    if split_stories("".join(format_stories(stories))) != stories:
        raise UsageError("format_stories does not read back")
    text = "\r\nA.\r\n \t\r\nB.\n" + STORY_SEPARATOR + " \n\n" + STORY_SEPARATOR + "\nC.\r"
    if split_stories(text) != ["A.\nB.", "C.\r"]:
        raise UsageError(f"split_stories misreads {text!r}: {split_stories(text)!r}")
    # The longest story is the C++ programs' longest text (app/default_files.hpp).
    import re
    from common import MAX_STORY_BYTES
    with open(repo_path("include", "h2o", "app", "default_files.hpp"), encoding="utf-8") as f:
        found = re.search(r"kMaxTextBytes = 1ull << (\d+);", f.read())
    if not found or MAX_STORY_BYTES != 1 << int(found.group(1)):
        raise UsageError("common.MAX_STORY_BYTES differs from the C++ kMaxTextBytes")
    print(f"story format: reads as the C++ reader does, stories of at most {MAX_STORY_BYTES} "
          "bytes as the C++ texts: ok")


def check_import_layers():
    """The modules of training/ import each other in layers, never in a circle: every import of
    another module of the folder counts, at the top or inside a function."""
    import ast
    import glob
    folder = repo_path("training")
    paths = sorted(glob.glob(os.path.join(folder, "*.py")))
    modules = {os.path.basename(p)[:-3] for p in paths}
    imports = {}
    for path in paths:
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read(), path)
        found = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                found.update(a.name for a in node.names if a.name in modules)
            elif isinstance(node, ast.ImportFrom) and node.module in modules:
                found.add(node.module)
        imports[os.path.basename(path)[:-3]] = found - {os.path.basename(path)[:-3]}

    def circle_from(module, path):
        for other in sorted(imports[module]):
            if other in path:
                return path[path.index(other):] + [other]
            found = circle_from(other, path + [other])
            if found:
                return found
        return None
    for module in sorted(imports):
        circle = circle_from(module, [module])
        if circle:
            raise UsageError("training/ imports in a circle: " + " -> ".join(circle))
    if imports.get("common"):
        raise UsageError(f"common.py imports {sorted(imports['common'])}: it must import none")
    print(f"imports: {len(modules)} modules of training/ in layers, common.py at the bottom: ok")


def check_signal_cleanup():
    """A script stopped by SIGTERM, SIGHUP, SIGQUIT or Ctrl-C while write_output writes leaves no
    temporary file, and its exit shows the signal (killed by the signal, 130 for Ctrl-C)."""
    import signal
    import subprocess
    child = (
        "import signal, sys, time\n"
        "signal.signal(signal.SIGINT, signal.default_int_handler)  # even if started ignored\n"
        "signal.signal(signal.SIGTERM, signal.SIG_DFL)\n"
        "signal.signal(signal.SIGHUP, signal.SIG_DFL)\n"
        "signal.signal(signal.SIGQUIT, signal.SIG_DFL)\n"
        f"sys.path.insert(0, {repo_path('training')!r})\n"
        "from common import run_main, write_output\n"
        "def pieces():\n"
        "    yield b'x' * 100000\n"
        "    print('ready', flush=True)\n"
        "    time.sleep(60)\n"
        "    yield b'never'\n"
        "sys.exit(run_main('writer', lambda argv: write_output(sys.argv[1], pieces()), []))\n")
    for signal_number, status in ((signal.SIGTERM, -signal.SIGTERM),
                                  (signal.SIGHUP, -signal.SIGHUP),
                                  (signal.SIGQUIT, -signal.SIGQUIT), (signal.SIGINT, 130)):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "out.bin")
            with open(path, "wb") as f:
                f.write(b"old")
            run = subprocess.Popen([sys.executable, "-c", child, path], stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, restore_signals=True)
            ready = run.stdout.readline()
            run.send_signal(signal_number)
            _, err = run.communicate(timeout=60)
            left = sorted(os.listdir(d))
            with open(path, "rb") as f:
                kept = f.read()
            if ready != b"ready\n" or run.returncode != status or left != ["out.bin"] or \
                    kept != b"old":
                raise UsageError(f"signal {signal_number}: exit {run.returncode} (expected "
                                 f"{status}), files {left}, {err.decode()[-200:]!r}")
    print("signals: SIGTERM, SIGHUP, SIGQUIT and Ctrl-C leave no temporary file, exit by the "
          "signal: ok")


def check_copy_rows():
    """copy_rows.py: every copy row holds one passage written twice, the row's other tokens
    untouched, and the second reading starts at a different distance from row to row (so only
    copying by content predicts it, not copying from a fixed offset back)."""
    try:
        import numpy as np
    except ImportError:
        print("copy rows: SKIPPED (numpy is not installed)")
        return
    import copy_rows
    rng = np.random.default_rng(7)
    distances = set()
    for i in range(300):
        base = rng.integers(3, 4096, size=129)
        row = base.copy()
        kind = "random" if i % 2 else "text"
        first, second, n = copy_rows.plant(row, rng, 4096, kind)
        if not copy_rows.PASSAGE_MIN <= n <= copy_rows.PASSAGE_MAX or row[0] != 1:
            raise UsageError(f"copy row {i}: passage of {n} tokens, first token {row[0]}")
        if not (1 <= first and first + n <= second and second + n <= row.size):
            raise UsageError(f"copy row {i}: readings at {first} and {second} overlap or overflow")
        if not np.array_equal(row[first:first + n], row[second:second + n]):
            raise UsageError(f"copy row {i}: the second reading differs from the first")
        if kind == "text" and not np.array_equal(row[first:first + n], base[first:first + n]):
            raise UsageError(f"copy row {i}: a text passage is not the row's own text")
        if kind == "random" and not (row[first:first + n] >= 3).all():
            raise UsageError(f"copy row {i}: a random passage holds a special id")
        kept = np.ones(row.size, bool)
        kept[[0]] = False
        kept[first:first + n] = kept[second:second + n] = False
        if not np.array_equal(row[kept], base[kept]):
            raise UsageError(f"copy row {i}: tokens outside the two readings changed")
        distances.add(second - first)
    if len(distances) < 60:
        raise UsageError(f"copy rows: only {len(distances)} distances in 300 rows")
    rows = rng.integers(3, 4096, size=(64, 129))
    same = rows.copy()
    if copy_rows.add_copy_rows(same, rng, 4096, 0.0) or not np.array_equal(same, rows):
        raise UsageError("copy rows: share 0 changed a row")
    if copy_rows.add_copy_rows(same, rng, 4096, 1.0) != 64 or (same[:, 0] != 1).any():
        raise UsageError("copy rows: share 1 left a row as it was")
    # Several passages a row: each written twice, none overlapping another, and one passage
    # a row draws the same rows as before (the runs of docs/models.md stay reproducible).
    for i in range(100):
        base = rng.integers(3, 4096, size=1025)
        row, taken = base.copy(), np.zeros(1025, bool)
        placed = [copy_rows.plant(row, rng, 4096, "random", taken) for _ in range(4)]
        if None in placed:
            raise UsageError(f"copy row {i}: no room for 4 passages in 1,024 tokens")
        cover = np.zeros(1025, int)
        for first, second, n in placed:
            cover[first:first + n] += 1
            cover[second:second + n] += 1
            if not np.array_equal(row[first:first + n], row[second:second + n]):
                raise UsageError(f"copy row {i}: a second reading differs from its first")
        if cover.max() > 1 or not np.array_equal(row[cover == 0][1:], base[cover == 0][1:]):
            raise UsageError(f"copy row {i}: passages overlap, or tokens outside them changed")
    if copy_rows.plant(np.ones(40, np.int64), rng, 4096, "text", np.ones(40, bool)) is not None:
        raise UsageError("copy rows: a passage was placed in a row with no room")
    rows = rng.integers(3, 4096, size=(8, 257))
    by_hand, a, b = rows.copy(), np.random.default_rng(3), np.random.default_rng(3)
    a.random(8)  # the rows chosen at share 1: all of them, one passage each, as before
    for row in by_hand:
        copy_rows.plant(row, a, 4096, "random" if a.random() < 0.5 else "text")
    copy_rows.add_copy_rows(rows, b, 4096, 1.0)
    if not np.array_equal(rows, by_hand):
        raise UsageError("copy rows: one passage a row no longer draws the rows it drew")
    # Mixed gaps: every draw within 0..room, and distances under an eighth of the window about
    # three times as common as uniform draws make them (uniform: 1/8).
    for gaps in ("uniform", "mixed"):
        drawn = np.array([copy_rows.draw_gap(rng, 950, gaps) for _ in range(4000)])
        short = float((drawn < 119).mean())
        if drawn.min() < 0 or drawn.max() > 950 or \
                not (0.1 < short < 0.15 if gaps == "uniform" else 0.3 < short < 0.5):
            raise UsageError(f"copy rows: {gaps} gaps drew {drawn.min()}..{drawn.max()}, "
                             f"{100 * short:.0f}% of them under 119")
    print(f"copy rows: one passage written twice per row, {len(distances)} distances in 300 "
          "rows; 4 passages a row never overlap; mixed gaps favour short distances: ok")


def check_copy_probe():
    """copy_probe.py measures copying: a stand-in model that copies perfectly (after token A,
    predict what followed A's last earlier occurrence) reads nearly every secret passage's second
    reading right (and most of a story read twice), one that always predicts the same token
    reads none of it."""
    try:
        import torch
    except ImportError:
        print("copy probe: SKIPPED (python3-torch is not installed)")
        return
    import bpe
    import copy_probe

    class Copier:
        def __init__(self, vocab, copies):
            self.vocab, self.copies = vocab, copies

        def __call__(self, x, window=None, positions=None):
            row = x[0].tolist()
            logits = torch.zeros(1, len(row), self.vocab)
            seen = {}
            for t, token in enumerate(row):
                guess = row[seen[token] + 1] if self.copies and token in seen else 0
                logits[0, t, guess] = 1.0
                seen[token] = t
            return logits

    tok = bpe.Tokenizer.load(repo_path("data", "tokenizer.bin"))
    story = repo_path("data", "heldout_story.txt") + ":" + repo_path("data", "heldout_names.txt")
    sets = copy_probe.ProbeSets(tok, story, story, 1024, per_band=2)
    copier = copy_probe.measure(Copier(tok.vocab_size, True), sets, light=True)
    blank = copy_probe.measure(Copier(tok.vocab_size, False), sets, light=True)
    # Read twice, "the last occurrence" misleads where a word comes back within the passage.
    if copier["secret_all"] < 0.95 or copier["twice_second"] < 0.5:
        raise UsageError(f"copy probe: a perfect copier scores {copier['secret_all']:.3f} on the "
                         f"secret passages, {copier['twice_second']:.3f} read twice")
    if blank["secret_all"] > 0 or blank["twice_second"] > 0.05:
        raise UsageError(f"copy probe: a model that copies nothing scores "
                         f"{blank['secret_all']:.3f} on the secret passages")
    # A copier by content ignores positions: the secret passages read with the text between
    # them at another rotary distance are read the same.
    if copy_probe.secret_shares(Copier(tok.vocab_size, True), sets, 5)["secret_all"] != \
            copier["secret_all"]:
        raise UsageError("copy probe: --rotary-gap changes what a position-blind copier reads")
    print(f"copy probe: a copier reads {100 * copier['secret_all']:.1f}% of the secret passages' "
          f"second readings, a non-copier {100 * blank['secret_all']:.1f}%: ok")


def check_regroup_heads():
    """model.regroup_heads keeps the weights: merging nothing changes no logit; each merged
    head's first old head keeps its RoPE frequencies, so with the other old heads' queries
    zeroed, the merged head's scores are that old head's, at every position; impossible
    mergers are refused."""
    try:
        import torch
    except ImportError:
        print("regroup heads: SKIPPED (python3-torch is not installed)")
        return
    import math
    from model import Config, Transformer, apply_rope, regroup_heads
    torch.manual_seed(1)
    cfg = Config(dim=32, hidden_dim=48, n_layers=1, n_heads=4, n_kv_heads=2, vocab_size=40,
                 seq_len=24)
    model = Transformer(cfg)
    x = torch.randint(0, 40, (2, 24))
    with torch.no_grad():
        if not torch.equal(model(x), regroup_heads(model, 4, 2)(x)):
            raise UsageError("regroup_heads into the same heads changes the logits")

        def scores(m, h):  # (batch, heads, time, time) before the mask, of m's first layer
            c, att = m.cfg, m.layers[0].attention
            t = h.shape[1]
            q = apply_rope(att.wq(h).view(2, t, c.n_heads, c.head_size),
                           m.freqs_cos[:t], m.freqs_sin[:t]).transpose(1, 2)
            k = apply_rope(att.wk(h).view(2, t, c.n_kv_heads, c.head_size),
                           m.freqs_cos[:t], m.freqs_sin[:t]).transpose(1, 2)
            k = k.repeat_interleave(c.n_heads // c.n_kv_heads, dim=1)
            return q @ k.transpose(2, 3) / math.sqrt(c.head_size)

        # Old KV heads 0 and 1 merge; merged query head 0 is old heads 0 and 2 (both the first
        # to use their KV head), merged head 1 old heads 1 and 3. Old heads 2 and 3 get zero
        # queries, so each merged head scores as its first old head alone.
        for u in (2, 3):
            model.layers[0].attention.wq.weight[u * 8:(u + 1) * 8] = 0
        merged = regroup_heads(model, 2, 1)
        h = torch.randn(2, 24, 32)
        old, new = scores(model, h), scores(merged, h)
        if not (torch.allclose(new[:, 0], old[:, 0], atol=1e-5) and
                torch.allclose(new[:, 1], old[:, 1], atol=1e-5)):
            raise UsageError("a merged head does not score as its first old head")
    for heads, kv in ((3, 1), (2, 2), (0, 1)):
        try:
            regroup_heads(model, heads, kv)
        except ValueError:
            continue
        raise UsageError(f"regroup_heads accepted {heads} heads, {kv} KV from 4 and 2")
    print("regroup heads: same heads same logits, merged heads score as their first: ok")


def main(argv):
    Parser(description="Quick self-test of the training code.").parse_args(argv)
    check_import_layers()
    check_names_rule()
    check_story_format()
    check_signal_cleanup()
    check_invented_names()
    check_renaming()
    check_byte_order_mark()
    check_copy_rows()
    check_tokenizer()
    check_model()
    check_regroup_heads()
    check_copy_probe()
    print("selftest: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(run_main("selftest", main, sys.argv[1:]))
