"""A checkpoint and the stories it is measured on, for the scripts that measure one
(evaluate.py, sink_positions.py).

Not a program. It sits above bpe.py and model.py (and common.py below them), so that none of
those imports it back.
"""

import bpe
from common import UsageError, check_checkpoint, read_input, read_stories


def read_model_and_stories(model_path, tokenizer_path, stories_path):
    """(tokenizer, story texts, their token lists, BOS first) for a script that measures a
    checkpoint on stories (evaluate.py, sink_positions.py, name_diagnosis.py), all checked before
    PyTorch is imported: the model file's size and weights (check_checkpoint), the tokenizer
    loadable, the stories readable."""
    check_checkpoint(model_path, read_input(model_path, "model", binary=True))
    try:
        tok = bpe.Tokenizer.load(tokenizer_path)
    except (OSError, ValueError, UnicodeDecodeError) as e:
        raise UsageError(str(e))
    texts = read_stories(stories_path)
    return tok, texts, [tok.encode(t) for t in texts]


def load_model_for_stories(model_path, stories):
    """The checkpoint as a PyTorch model in eval mode on 2 threads, after checking that every
    story (token lists) fits its seq_len and its vocabulary; None when PyTorch is not installed
    (the caller prints "SKIPPED: ..." and exits 0)."""
    try:
        import torch
    except ImportError:
        return None
    from model import load_legacy  # it imports PyTorch itself: only once PyTorch is known there
    torch.set_num_threads(2)
    try:
        model = load_legacy(model_path).eval()
    except (OSError, ValueError, UnicodeDecodeError) as e:
        raise UsageError(str(e))
    too_long = [len(s) for s in stories if len(s) > model.cfg.seq_len]
    if too_long:
        raise UsageError(f"a story has {too_long[0]} tokens, more than seq_len "
                         f"{model.cfg.seq_len}")
    if any(t >= model.cfg.vocab_size for s in stories for t in s):
        raise UsageError(f"the tokenizer's ids go beyond the model's vocabulary of "
                         f"{model.cfg.vocab_size}")
    return model
