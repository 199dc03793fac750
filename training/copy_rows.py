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
"""

PASSAGE_MIN = 16
PASSAGE_MAX = 64
FIRST_ORDINARY_ID = 3  # 0 <unk>, 1 BOS, 2 EOS are never drawn as passage pieces


def plant(row, rng, vocab, kind):
    """Writes a passage twice into row (a numpy int64 array of seq_len + 1 tokens, row[0] = BOS)
    in place. kind 'random': pieces drawn from the vocabulary; 'text': the row's own text at the
    first place. Returns (first start, second start, passage length)."""
    n = row.size
    length = int(rng.integers(PASSAGE_MIN, min(PASSAGE_MAX, (n - 1) // 2) + 1))
    room = n - 1 - 2 * length          # tokens of story text around the two readings
    gap = int(rng.integers(0, room + 1))
    prefix = int(rng.integers(0, room - gap + 1))
    first = 1 + prefix
    second = first + length + gap
    if kind == "random":
        passage = rng.integers(FIRST_ORDINARY_ID, vocab, size=length)
    else:
        passage = row[first:first + length].copy()
        passage[passage == 1] = FIRST_ORDINARY_ID + 1  # a story boundary inside is not copied
    row[first:first + length] = passage
    row[second:second + length] = passage
    row[0] = 1
    return first, second, length


def add_copy_rows(rows, rng, vocab, share):
    """Turns about `share` of the batch's rows (numpy (batch, seq_len + 1)) into copy rows, half
    with random passages, half with text passages; each row is chosen independently, so a batch
    of 4 at share 0.25 holds none or several as well as one."""
    chosen = rng.random(rows.shape[0]) < share
    for i in chosen.nonzero()[0]:
        kind = "random" if rng.random() < 0.5 else "text"
        plant(rows[i], rng, vocab, kind)
    return int(chosen.sum())
