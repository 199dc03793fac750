"""A byte-pair-encoding tokenizer in llama2.c's file format (standard library only).

Not a program: train_tokenizer.py, pretokenize.py and the other scripts import it.

File layout (as llama2.c's tokenizer.bin / tok512.bin):
  uint32 max_token_length, then for each id: float32 score, int32 byte length, the bytes.
Ids: 0 <unk>, 1 <s> (BOS), 2 </s> (EOS), 3..258 the byte tokens <0x00>..<0xFF>, then one
piece per character of the training text, then the merged pieces in the order they were
learned, each scored -rank, so that llama2.c's encoder (merge the best-scored adjacent pair
until none merges) applies them in the order they were learned.

Encoding here gives exactly the ids of llama2.c's run.c and of the project's C++ Tokenizer:
a space is prepended to non-empty text, every character becomes its piece (or one byte token
per UTF-8 byte when the vocabulary lacks it), then the adjacent pair whose concatenation is
the best-scored piece is merged, leftmost first on ties, until no pair merges.

Speed: no learned piece crosses a chunk boundary (see CHUNK), and no concatenation of two
pieces across such a boundary is a piece, so encoding chunk by chunk with a cache gives the
same ids as encoding the whole text at once.
"""

import heapq
import math
import re
import struct

from common import read_input, write_output

UNK, BOS, EOS = 0, 1, 2
FIRST_BYTE = 3
N_SPECIAL = 3 + 256
MAX_TOKEN_LENGTH = 1024  # bytes of the longest piece a tokenizer file may hold (as the C++ one)

# A chunk: an optional single space plus a run of letters, or of digits, or of other
# non-space characters; or one whitespace character alone. Merges happen only inside a chunk.
# Any concatenation across a chunk boundary has a space that is not in first place, or a
# newline, or mixes two classes, and no piece does that.
CHUNK = re.compile(r" ?[A-Za-z]+| ?[0-9]+| ?[^\sA-Za-z0-9]+|\s")


def byte_piece(b):
    return "<0x%02X>" % b


class Tokenizer:
    """Pieces, scores and the llama2.c encode/decode rules."""

    def __init__(self, pieces, scores):
        if len(pieces) != len(scores):
            raise ValueError("pieces and scores differ in length")
        self.pieces = list(pieces)
        self.scores = [float(s) for s in scores]
        self.ids = {}
        for i, p in enumerate(self.pieces):
            self.ids.setdefault(p, i)  # the smallest id wins on a duplicate, as in C++
        self._cache = {}

    @property
    def vocab_size(self):
        return len(self.pieces)

    # -- encoding ----------------------------------------------------------------------------
    def _initial(self, text):
        """One token per character, or byte tokens for characters not in the vocabulary."""
        out = []
        for ch in text:
            i = self.ids.get(ch)
            if i is not None:
                out.append(i)
            else:
                out.extend(FIRST_BYTE + b for b in ch.encode("utf-8"))
        return out

    def _merge(self, tokens):
        """llama2.c's merge loop: best score first, leftmost on ties, until nothing merges.

        In O(n log n), as the C++ Tokenizer does it: the mergeable adjacent pairs wait in a heap
        ordered by (score, then position), the tokens form a linked list, and a pair taken from
        the heap is used only if both of its tokens are still there unchanged. Merging keeps the
        left token's slot, so slots stay in text order and "leftmost" is the smallest slot.
        """
        pieces, scores, ids = self.pieces, self.scores, self.ids
        n = len(tokens)
        if n < 2:
            return tokens
        tokens = list(tokens)
        nxt = list(range(1, n + 1))  # n = no next token
        prv = list(range(-1, n - 1))
        heap = []

        def push(a, b):
            j = ids.get(pieces[tokens[a]] + pieces[tokens[b]])
            if j is not None and scores[j] > -1e10:
                heapq.heappush(heap, (-scores[j], a, b, tokens[a], tokens[b], j))

        for k in range(n - 1):
            push(k, k + 1)
        alive = [True] * n
        while heap:
            _, a, b, ta, tb, j = heapq.heappop(heap)
            if not (alive[a] and alive[b] and nxt[a] == b and tokens[a] == ta and tokens[b] == tb):
                continue  # a stale pair: one of its tokens was merged since
            tokens[a] = j
            alive[b] = False
            nxt[a] = nxt[b]
            if nxt[b] < n:
                prv[nxt[b]] = a
            if prv[a] >= 0:
                push(prv[a], a)
            if nxt[a] < n:
                push(a, nxt[a])
        out, k = [], 0
        while k < n:
            out.append(tokens[k])
            k = nxt[k]
        return out

    def encode_chunk(self, chunk):
        ids = self._cache.get(chunk)
        if ids is None:
            ids = tuple(self._merge(self._initial(chunk)))
            if len(self._cache) < 1_000_000:
                self._cache[chunk] = ids
        return ids

    def encode(self, text, bos=True, eos=False):
        """Token ids of text, as the C++ Tokenizer::encode(text, bos, eos) gives them."""
        out = [BOS] if bos else []
        if text:
            for chunk in CHUNK.findall(" " + text):
                out.extend(self.encode_chunk(chunk))
        if eos:
            out.append(EOS)
        return out

    def encode_slow(self, text, bos=True):
        """The same as encode(), without chunks or cache: the reference for the tests."""
        out = [BOS] if bos else []
        if text:
            out.extend(self._merge(self._initial(" " + text)))
        return out

    # -- decoding ----------------------------------------------------------------------------
    def decode_piece(self, prev, tok):
        piece = self.pieces[tok]
        if prev == BOS and piece.startswith(" "):
            piece = piece[1:]
        m = re.fullmatch(r"<0x([0-9A-Fa-f]{2})>", piece)
        if m:
            return bytes([int(m.group(1), 16)])
        return piece.encode("utf-8")

    def decode(self, tokens):
        """Text of tokens; BOS and EOS themselves write nothing."""
        out = bytearray()
        prev = None
        for t in tokens:
            if t not in (BOS, EOS):
                out += self.decode_piece(prev, t)
            prev = t
        return out.decode("utf-8", errors="replace")

    # -- files -------------------------------------------------------------------------------
    def to_bytes(self):
        """The llama2.c tokenizer file's bytes."""
        data = [p.encode("utf-8") for p in self.pieces]
        out = [struct.pack("<I", max(len(d) for d in data))]
        for d, s in zip(data, self.scores):
            out.append(struct.pack("<fi", s, len(d)))
            out.append(d)
        return b"".join(out)

    def save(self, path):
        """Writes the file whole or not at all (common.write_output)."""
        write_output(path, self.to_bytes())

    @staticmethod
    def load(path):
        blob = read_input(path, "tokenizer", binary=True)
        if len(blob) < 4:
            raise ValueError(f"tokenizer '{path}' is too short")
        (max_len,) = struct.unpack_from("<I", blob, 0)
        # The C++ Tokenizer's rules (text/tokenizer.cpp): a sane max_token_length, finite
        # scores, and at least <unk>, BOS, EOS and the 256 byte tokens.
        if not 1 <= max_len <= MAX_TOKEN_LENGTH:
            raise ValueError(f"tokenizer '{path}': max_token_length is {max_len}, expected "
                             f"1..{MAX_TOKEN_LENGTH}")
        at, pieces, scores = 4, [], []
        while at < len(blob):
            if at + 8 > len(blob):
                raise ValueError(f"tokenizer '{path}' is truncated")
            score, n = struct.unpack_from("<fi", blob, at)
            at += 8
            if n < 0 or n > max_len or at + n > len(blob):
                raise ValueError(f"tokenizer '{path}': bad piece length {n}")
            if not math.isfinite(score):
                raise ValueError(f"tokenizer '{path}': entry {len(pieces)} has a non-finite score")
            pieces.append(blob[at:at + n].decode("utf-8"))
            scores.append(score)
            at += n
        if len(pieces) < N_SPECIAL:
            raise ValueError(f"tokenizer '{path}' holds {len(pieces)} entries, fewer than the "
                             f"{N_SPECIAL} of <unk>, BOS, EOS and the 256 byte tokens")
        return Tokenizer(pieces, scores)


# ---------------------------------------------------------------------------------------------
# Training


def count_chunks(texts):
    """How often each chunk occurs (the dummy-prefix space included, as encoding sees it)."""
    counts = {}
    for text in texts:
        for ch in CHUNK.findall(" " + text):
            counts[ch] = counts.get(ch, 0) + 1
    return counts


def train(chunk_counts, vocab_size):
    """Learns merges until the vocabulary has vocab_size pieces; returns a Tokenizer.

    Each step merges the most frequent adjacent pair of pieces, counted over the chunks times
    their counts; ties go to the smallest (left piece, right piece) pair, so the result depends
    only on the counts. Inside a chunk a pair merges left to right ("aaa" -> "aa" "a").

    In time proportional to the merges made, not to the text per step: the pieces of all chunks
    form linked lists, every pair remembers where it occurs, a merge updates only those places
    and their neighbours' pairs, and the pair counts wait in a heap (an entry whose count changed
    since is skipped). So one 100 KB word trains in seconds, not minutes.
    """
    chars = sorted({c for chunk in chunk_counts for c in chunk})
    pieces = ["<unk>", "<s>", "</s>"] + [byte_piece(b) for b in range(256)] + chars
    scores = [0.0] * len(pieces)
    if len(pieces) > vocab_size:
        raise ValueError(f"vocabulary of {vocab_size} is too small for {len(chars)} characters")
    known = set(pieces)

    # Every character of every distinct chunk is a slot: sym[k] its piece (None once merged into
    # its left neighbour), nxt[k] / prv[k] the next / previous live slot of its chunk (-1: none),
    # freq[k] its chunk's count. A pair is named by the slot of its left piece.
    sym, nxt, prv, freq = [], [], [], []
    for chunk in sorted(chunk_counts):
        first = len(sym)
        sym.extend(chunk)
        nxt.extend(range(first + 1, first + len(chunk)))
        nxt.append(-1)
        prv.append(-1)
        prv.extend(range(first, first + len(chunk) - 1))
        freq.extend([chunk_counts[chunk]] * len(chunk))
    pair_count = {}
    where = {}  # pair -> set of slots where it starts
    for k, n in enumerate(nxt):
        if n >= 0:
            pair = (sym[k], sym[n])
            pair_count[pair] = pair_count.get(pair, 0) + freq[k]
            where.setdefault(pair, set()).add(k)
    heap = [(-c, a, b) for (a, b), c in pair_count.items()]
    heapq.heapify(heap)

    def change(pair, k, delta):
        count = pair_count.get(pair, 0) + delta
        if delta > 0:
            where.setdefault(pair, set()).add(k)
        else:
            slots = where.get(pair)
            if slots is not None:
                slots.discard(k)
        if count > 0:
            pair_count[pair] = count
            heapq.heappush(heap, (-count, pair[0], pair[1]))
        else:
            pair_count.pop(pair, None)

    rank = 0
    while len(pieces) < vocab_size and heap:
        negative, a, b = heapq.heappop(heap)
        if pair_count.get((a, b)) != -negative:
            continue  # an entry from before the pair's count changed
        if -negative < 2:
            break
        merged = a + b
        if merged not in known:
            known.add(merged)
            pieces.append(merged)
            scores.append(-float(rank))
            rank += 1
        for i in sorted(where.pop((a, b), ())):
            j = nxt[i]
            if sym[i] != a or j < 0 or sym[j] != b:
                continue  # taken by the merge just left of it ("aaa")
            f, left, right = freq[i], prv[i], nxt[j]
            if left >= 0:
                change((sym[left], a), left, -f)
            if right >= 0:
                change((b, sym[right]), j, -f)
            sym[i], sym[j] = merged, None
            nxt[i] = right
            if right >= 0:
                prv[right] = i
            if left >= 0:
                change((sym[left], merged), left, f)
            if right >= 0:
                change((merged, sym[right]), i, f)
        pair_count.pop((a, b), None)
    return Tokenizer(pieces, scores)
