"""Where a listed name is mentioned in a tokenized story: the rule of the C++ programs
(find_name_mentions and long_gap_mentions of src/measure/name_recall.cpp), followed line for line
so that a script counts the very mentions the programs count (standard library only).

Not a program. A mention is found in the text the tokens spell, not in the tokens alone: a name at
a paragraph's start is spelled without the space before it ("\\nMia", not " Mia"), and "Mia's",
"O'Brien" or "Mary-Jane" must be told apart by where a word begins and ends. The rule, in short
(include/h2o/measure/name_recall.hpp says it in full): a word is letters, combining marks after a
letter, digits, and ' or - (or U+2019) between two letters; a listed name is mentioned where it is
written as a whole word (or with a possessive 's after it), the longest listed name winning; in a
script written without spaces (Han, Kana, Thai, ...) a word may end after any letter. A mention
counts only when it is a run of whole tokens: its first token starts at the name or at the space
before it, its last ends with it.
"""

from common import is_name_letter

BOS, EOS = 1, 2


def utf8_sequence(text, i):
    """(code point, length 1..4) of the valid UTF-8 sequence at text[i] (bytes), or (0, 0) where
    the bytes are not valid UTF-8 (an overlong form, a surrogate, beyond U+10FFFF): the rule of
    src/base/utf8.cpp's utf8_sequence."""
    lead = text[i]
    if lead < 0x80:
        return lead, 1
    if lead & 0xE0 == 0xC0:
        n, cp, low = 2, lead & 0x1F, 0x80
    elif lead & 0xF0 == 0xE0:
        n, cp, low = 3, lead & 0x0F, 0x800
    elif lead & 0xF8 == 0xF0:
        n, cp, low = 4, lead & 0x07, 0x10000
    else:
        return 0, 0
    if i + n > len(text):
        return 0, 0
    for k in range(1, n):
        if text[i + k] & 0xC0 != 0x80:
            return 0, 0
        cp = (cp << 6) | (text[i + k] & 0x3F)
    if cp < low or cp > 0x10FFFF or 0xD800 <= cp <= 0xDFFF:
        return 0, 0
    return cp, n


def _letter(cp):
    return is_name_letter(chr(cp))


def _mark(cp):
    return 0x300 <= cp <= 0x36F


def _joiner(cp):
    return cp in (0x27, 0x2019, 0x2D)  # ' U+2019 -


def _unspaced(cp):
    """A letter of a script written without spaces between words (Thai, Lao, Myanmar, Khmer,
    Hiragana, Katakana, Han)."""
    return (0x0E00 <= cp <= 0x0EFF or 0x1000 <= cp <= 0x109F or 0x1780 <= cp <= 0x17FF or
            0x3040 <= cp <= 0x30FF or 0x31F0 <= cp <= 0x31FF or 0x3400 <= cp <= 0x4DBF or
            0x4E00 <= cp <= 0x9FFF or 0xF900 <= cp <= 0xFAFF or 0xFF66 <= cp <= 0xFF9F)


def _word_character(cp):
    return _letter(cp) or _mark(cp) or 0x30 <= cp <= 0x39


def _character_before(text, j):
    """(code point, where it starts) of the character ending right before text[j]; None at the
    text's start or when the bytes there are not UTF-8."""
    i = j
    while i > 0 and j - i < 4:
        i -= 1
        if text[i] & 0xC0 != 0x80:
            break
    if i == j:
        return None
    cp, n = utf8_sequence(text, i)
    return (cp, i) if n == j - i else None


def word_boundary(text, j):
    """True when no word goes on across text[j] (bytes), between the character before j and the
    one at j."""
    after, after_length = utf8_sequence(text, j) if j < len(text) else (0, 0)
    found = _character_before(text, j)
    if after_length == 0 or found is None:
        return True
    before, before_start = found
    if _joiner(after):  # the ' of "O'Brien" is inside a word: a letter on each side
        next_at = j + after_length
        if not ((_letter(before) or _mark(before)) and next_at < len(text)):
            return True
        following, n = utf8_sequence(text, next_at)
        return not (n > 0 and _letter(following))
    if _joiner(before):
        if not _letter(after):
            return True
        previous = _character_before(text, before_start)
        return not (previous is not None and (_letter(previous[0]) or _mark(previous[0])))
    if not _word_character(before) or not _word_character(after):
        return True
    if _mark(after):
        return False  # a mark belongs to the letter before it
    return _unspaced(before) or _unspaced(after)


def _possessive_length(text, j):
    """The bytes of a possessive 's (or U+2019 s) ending a word at text[j]; 0 when none."""
    for possessive in (b"'s", "\u2019s".encode("utf-8")):
        if text.startswith(possessive, j) and word_boundary(text, j + len(possessive)):
            return len(possessive)
    return 0


def token_texts(tokenizer):
    """The bytes each token writes after a token that is neither BOS nor EOS (byte tokens as their
    byte); BOS and EOS write nothing."""
    return [b"" if t in (BOS, EOS) else tokenizer.decode_piece(None, t)
            for t in range(tokenizer.vocab_size)]


def find_mentions(tokens, names, texts):
    """([(name index, first token, last token)] of every whole-token mention of a listed name in
    the text that `tokens` spell, in text order; [names written in the text whose tokens also hold
    text around them]). names: the list (str); texts: token_texts(tokenizer)."""
    text = bytearray()
    start = [0] * (len(tokens) + 1)
    for p, token in enumerate(tokens):
        start[p] = len(text)
        piece = texts[token] if 0 <= token < len(texts) else b""
        if p > 0 and tokens[p - 1] == BOS and piece.startswith(b" "):
            piece = piece[1:]  # after BOS a leading space is the dummy prefix, not text
        text += piece
    start[len(tokens)] = len(text)
    text = bytes(text)
    token_at = [0] * len(text)
    for p in range(len(tokens)):
        for i in range(start[p], start[p + 1]):
            token_at[i] = p
    encoded = [name.encode("utf-8") for name in names]
    mentions, unusable = [], []
    i = 0
    while i < len(text):
        cp, length = utf8_sequence(text, i)
        if length == 0 or not _letter(cp) or not word_boundary(text, i):
            i += length or 1
            continue
        found, end = None, i
        for k, name in enumerate(encoded):  # the longest listed name written here whole
            if len(name) <= end - i or not text.startswith(name, i):
                continue
            name_end = i + len(name)
            if word_boundary(text, name_end) or _possessive_length(text, name_end) > 0:
                found, end = k, name_end
        if found is None:
            i += length
            continue
        first, last = token_at[i], token_at[end - 1]
        whole = ((start[first] == i or (start[first] + 1 == i and text[i - 1] == 0x20)) and
                 start[last + 1] == end)
        if whole:
            mentions.append((found, first, last))
        elif names[found] not in unusable:
            unusable.append(names[found])
        i = end
    return mentions, unusable


def long_gap_mentions(mentions, gap):
    """The mentions (find_mentions) whose name's previous mention starts more than `gap` tokens
    before them: the name events the C++ programs count."""
    last, counted = {}, []
    for mention in mentions:
        name, first, _ = mention
        if first >= 1 and name in last and first - last[name] > gap:
            counted.append(mention)
        last[name] = first
    return counted
