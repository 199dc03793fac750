"""Training rows that only copying by content predicts: a passage written twice inside story text.

Not a program: train.py imports it (--copy-share).

A copy row is an ordinary training window (BOS, then story text) in which a passage of 16 to 64
tokens is written at a random place and again a random distance later:

    BOS  story text ... [passage] ... story text ... [passage] ... story text
         <- prefix ->            <--- gap ------->

The gap is drawn uniformly from every length the window leaves room for (0 to nearly the whole
window), and then the prefix, so the second reading starts at a different distance from the first
in every row: a model cannot learn "copy from N tokens back" (copying by position), only "find
where the current tokens were seen before and read on" (copying by content, an induction head).
Half of the passages are random pieces drawn uniformly from the whole vocabulary (nothing but the
first reading predicts them), half are the window's own story text at the passage's first place,
read again later (a passage of real text written twice, so the copy also works on text).
A row may carry several passages (train.py --copy-passages), each at its own distance, none
overlapping another: more of every step is copying to learn.
"""

import math

import numpy as np

PASSAGE_MIN = 16
PASSAGE_MAX = 64
FIRST_ORDINARY_ID = 3  # 0 <unk>, 1 BOS, 2 EOS are never drawn as passage pieces
PLACE_TRIES = 50  # draws of a place for a passage that must avoid the earlier ones of its row


def draw_gap(rng, room, gaps):
    """The story tokens between the two readings, 0..room. 'uniform': every length alike (short
    distances, under an eighth of the window, are then rare); 'mixed': half the passages so, half
    log-uniform (each doubling of the distance alike), so short distances are learnt as well."""
    if gaps == "mixed" and rng.random() < 0.5:
        return min(room, int(math.exp(rng.random() * math.log(room + 1)) - 1 + 0.5))
    return int(rng.integers(0, room + 1))


def plant(row, rng, vocab, kind, taken=None, gaps="uniform"):
    """Writes a passage twice into row (a numpy int64 array of seq_len + 1 tokens, row[0] = BOS)
    in place. kind 'random': pieces drawn from the vocabulary; 'text': the row's own text at the
    first place. taken: None, or a boolean mask of the row's positions that earlier passages
    hold; the two readings are then drawn again until they avoid them (marked in it after), and
    None is returned when PLACE_TRIES draws found no room. gaps: draw_gap's. Returns (first start, second start,
    passage length)."""
    n = row.size
    for _ in range(PLACE_TRIES if taken is not None else 1):
        length = int(rng.integers(PASSAGE_MIN, min(PASSAGE_MAX, (n - 1) // 2) + 1))
        room = n - 1 - 2 * length          # tokens of story text around the two readings
        gap = draw_gap(rng, room, gaps)
        prefix = int(rng.integers(0, room - gap + 1))
        first = 1 + prefix
        second = first + length + gap
        if taken is None:
            break
        if not (taken[first:first + length].any() or taken[second:second + length].any()):
            taken[first:first + length] = taken[second:second + length] = True
            break
    else:
        return None
    if kind == "random":
        passage = rng.integers(FIRST_ORDINARY_ID, vocab, size=length)
    else:
        passage = row[first:first + length].copy()
        passage[passage == 1] = FIRST_ORDINARY_ID + 1  # a story boundary inside is not copied
    row[first:first + length] = passage
    row[second:second + length] = passage
    row[0] = 1
    return first, second, length


def add_copy_rows(rows, rng, vocab, share, passages=1, gaps="uniform"):
    """Turns about `share` of the batch's rows (numpy (batch, seq_len + 1)) into copy rows, half
    of the passages random, half text; each row is chosen independently, so a batch of 4 at
    share 0.25 holds none or several as well as one. passages: how many passages each copy row
    carries, never overlapping (more copying to learn from in every step; a row too short for
    them all gets what fits). gaps: how the distances are drawn (draw_gap)."""
    chosen = rng.random(rows.shape[0]) < share
    for i in chosen.nonzero()[0]:
        taken = None if passages == 1 else np.zeros(rows.shape[1], bool)
        for _ in range(passages):
            kind = "random" if rng.random() < 0.5 else "text"
            plant(rows[i], rng, vocab, kind, taken, gaps)
    return int(chosen.sum())
