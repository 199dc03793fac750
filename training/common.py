"""Small helpers shared by the training scripts: one-line errors and reading story files.

Not a program. The bottom module of training/: it imports none of the others (bpe.py and
model.py import it; story_model.py, which needs both, sits above them).

Importing it makes Ctrl-C quiet from that moment on (see _on_interrupt below), so every script
imports it before anything slow.
"""

import _signal  # signal's C half: ready at once (signal itself first imports enum and more)
import os
import sys

# Ctrl-C. Python turns it into KeyboardInterrupt, which run_main reports in one line (exit 130);
# but a Ctrl-C that comes while a script is still starting would print a traceback (during its
# imports), or come back as another exception: PyTorch's import turns it into "RuntimeError:
# KeyboardInterrupt". So the interrupt is remembered where it happens, and the script ends with
# the same one line and exit 130 whichever way the exception travels. Installed at import, first
# of all, and only where Ctrl-C was not ignored when the script started (nohup, `cmd &`).
_program = os.path.splitext(os.path.basename(sys.argv[0] if sys.argv and sys.argv[0] else
                                             "python"))[0]
_interrupted = False


def _on_interrupt(signal_number, frame):
    global _interrupted
    _interrupted = True
    raise KeyboardInterrupt


def _interrupted_message():
    return f"{_program}: interrupted; no output file was replaced"


def _quiet_interrupt_hook(kind, value, traceback):
    """sys.excepthook: an exception left unhandled because of Ctrl-C (before run_main, as during
    the script's imports) ends the script in one line with exit 130; any other as before."""
    if _interrupted or issubclass(kind, KeyboardInterrupt):
        try:
            sys.stdout.flush()
        except (OSError, ValueError):
            pass
        print(_interrupted_message(), file=sys.stderr, flush=True)
        os._exit(130)
    sys.__excepthook__(kind, value, traceback)


try:
    if _signal.getsignal(_signal.SIGINT) is _signal.default_int_handler:
        _signal.signal(_signal.SIGINT, _on_interrupt)
        sys.excepthook = _quiet_interrupt_hook
except ValueError:  # imported outside the main thread: signals are not this module's to set
    pass

import argparse  # noqa: E402 (after the Ctrl-C handler, on purpose)
import re  # noqa: E402
import signal  # noqa: E402


class UsageError(Exception):
    """A problem with the command line or the input files: reported in one line, exit 2."""


class Parser(argparse.ArgumentParser):
    """argparse, but a bad command line is one line on stderr (through UsageError)."""

    def error(self, message):
        raise UsageError(message + " (see --help)")


MAX_ERROR_CHARS = 400


def one_line(message):
    """An error message as one printable line: control characters escaped, cut to a few lines
    of a terminal (as the C++ programs show theirs, base/format.hpp's printable())."""
    text = "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii")
                   for ch in str(message))
    if len(text) > MAX_ERROR_CHARS:
        text = text[:MAX_ERROR_CHARS] + f"... ({len(text) - MAX_ERROR_CHARS} more characters)"
    return text


class Terminated(BaseException):
    """SIGTERM, SIGHUP or SIGQUIT, raised where the program is (as Ctrl-C raises KeyboardInterrupt),
    so that write_output removes its temporary file on the way out."""

    def __init__(self, signal_number):
        super().__init__(signal_number)
        self.signal_number = signal_number


def _raise_terminated(signal_number, frame):
    raise Terminated(signal_number)


def _die_of(signal_number):
    """Ends the process by the signal's default action, so the caller sees it killed by it."""
    signal.signal(signal_number, signal.SIG_DFL)
    os.kill(os.getpid(), signal_number)


def run_main(prog, main, argv):
    """Runs main(argv); every failure is one line on stderr, never a traceback: UsageError and
    OSError (bad input, a file that cannot be read or written) exit 2, Ctrl-C 130 (also when a
    library turned it into another exception), SIGTERM, SIGHUP and SIGQUIT end the process by
    that signal (after write_output removed its temporary file), anything else exits 1."""
    global _program
    _program = prog
    for signal_number in (signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
        if signal.getsignal(signal_number) == signal.SIG_DFL:  # not when ignored (nohup)
            signal.signal(signal_number, _raise_terminated)
    try:
        return main(argv)
    except Terminated as e:
        name = signal.Signals(e.signal_number).name
        print(f"{prog}: stopped by {name}; no partial output file is left", file=sys.stderr)
        sys.stderr.flush()
        _die_of(e.signal_number)
        return 128 + e.signal_number
    except UsageError as e:
        print(f"{prog}: {one_line(e)}", file=sys.stderr)
        return 2
    except OSError as e:
        where = f" '{e.filename}'" if e.filename else ""
        print(f"{prog}: {one_line(e.strerror or e)}{where}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(_interrupted_message(), file=sys.stderr)
        return 130
    except MemoryError:
        print(f"{prog}: out of memory", file=sys.stderr)
        return 1
    except Exception as e:
        if _interrupted:  # Ctrl-C, come back as another exception (PyTorch's RuntimeError)
            print(_interrupted_message(), file=sys.stderr)
            return 130
        # A bug or an input no check foresaw: still one line.
        print(f"{prog}: error: {type(e).__name__}: {one_line(e)}", file=sys.stderr)
        return 1


def count_non_finite_floats(blob, offset=0):
    """How many little-endian float32 values of blob[offset:] are NaN or infinite (standard
    library only, so a diverged checkpoint is refused before PyTorch is imported)."""
    import array
    import math
    usable = (len(blob) - offset) // 4 * 4
    floats = array.array("f")
    floats.frombytes(blob[offset:offset + usable])
    if sys.byteorder != "little":
        floats.byteswap()
    if math.isfinite(sum(floats)):  # fast path; a huge finite sum may overflow, so then count
        return 0
    return sum(1 for x in floats if not math.isfinite(x))


CHECKPOINT_HEADER_BYTES = 28  # seven int32: dim, hidden_dim, n_layers, n_heads, n_kv_heads,
                              # vocab_size (negative: a classifier of its own), seq_len


def check_checkpoint(path, blob):
    """A llama2.c version-0 checkpoint's bytes, checked in the C++ loader's order
    (src/model/checkpoint.cpp) and with its words, before PyTorch is imported: a whole header of
    a shape a model can have, exactly the bytes that shape implies (fewer: truncated; more:
    trailing bytes), and only then every weight finite (standard library only)."""
    import struct
    if len(blob) < CHECKPOINT_HEADER_BYTES:
        raise UsageError(f"model file '{path}' is truncated: the header needs "
                         f"{CHECKPOINT_HEADER_BYTES} bytes, the file has {len(blob)}")
    dim, hidden, layers, heads, kv_heads, vocab, seq_len = struct.unpack_from("<7i", blob)
    shape = (f"dim {dim}, hidden {hidden}, {layers} layers, {heads} heads, {kv_heads} KV heads, "
             f"vocab {vocab}, seq_len {seq_len}")
    if (min(dim, hidden, layers, heads, kv_heads, seq_len) < 1 or vocab == 0 or dim % heads or
            heads % kv_heads or dim // heads % 2):
        raise UsageError(f"model file '{path}': its header ({shape}) is no model's shape")
    head_size, classifiers = dim // heads, 1 if vocab > 0 else 2
    floats = (classifiers * abs(vocab) * dim + layers * (2 * dim + 2 * dim * dim +
              2 * kv_heads * head_size * dim + 3 * hidden * dim) + dim + seq_len * head_size)
    expected = CHECKPOINT_HEADER_BYTES + 4 * floats
    if len(blob) < expected:
        raise UsageError(f"model file '{path}' is truncated: its header ({shape}) implies "
                         f"{expected} bytes, the file has {len(blob)}")
    if len(blob) > expected:
        raise UsageError(f"model file '{path}' has {len(blob) - expected} trailing bytes: its "
                         f"header ({shape}) implies {expected} bytes, the file has {len(blob)}")
    bad = count_non_finite_floats(blob, CHECKPOINT_HEADER_BYTES)
    if bad:
        raise UsageError(f"model file '{path}': {bad} of its weights are NaN or infinite (a "
                         "diverged training run)")


def require_finite(value, what):
    """value, if it is a finite number; a UsageError naming `what` otherwise (NaN, inf)."""
    import math
    if not math.isfinite(value):
        raise UsageError(f"{what} is {value}, not a finite number")
    return value


# Largest file each kind of input may be: far above what the pipeline makes, far below what would
# exhaust memory. A bigger file, or one that is not a regular file (a device such as /dev/zero, a
# pipe, a folder), is refused before a byte is read.
LIMITS = {
    "corpus": 1 << 30,      # training stories (the shipped run's corpus is about 70 MB; reading
                            # and encoding one takes about 4 bytes of memory per byte)
    "tokens": 1 << 30,      # pretokenized uint16 ids (about a quarter of the corpus's bytes)
    "names": 1 << 20,
    "model": 2 << 30,       # llama2.c checkpoint
    "tokenizer": 64 << 20,
    "ids": 64 << 20,        # token ids as text
    "csv": 64 << 20,
}


def check_input(path, kind):
    """The size of an input file, after checking it is a regular file within LIMITS[kind] (for a
    script that reads it later, so that a bad path fails before anything else)."""
    import stat
    try:
        info = os.stat(path)
    except OSError as e:
        raise UsageError(f"cannot read {kind} file '{path}': {e.strerror}")
    if not stat.S_ISREG(info.st_mode):
        raise UsageError(f"{kind} file '{path}' is not a regular file")
    if info.st_size > LIMITS[kind]:
        raise UsageError(f"{kind} file '{path}' is {info.st_size} bytes, more than the limit of "
                         f"{LIMITS[kind]}")
    return info.st_size


def read_input(path, kind, binary=False):
    """The whole of an input file, after checking it is a regular file within LIMITS[kind]. As
    text, without the byte-order mark some editors write first (U+FEFF, no part of the text: the
    C++ programs skip it too): every script reads its texts here."""
    check_input(path, kind)
    try:
        if binary:
            with open(path, "rb") as f:
                return f.read()
        with open(path, encoding="utf-8") as f:
            text = f.read()
        return text[1:] if text.startswith("\ufeff") else text
    except OSError as e:
        raise UsageError(f"cannot read {kind} file '{path}': {e.strerror}")
    except UnicodeDecodeError:
        raise UsageError(f"{kind} file '{path}' is not UTF-8 text")


# The story file format; its one owner is include/h2o/text/stories.hpp, which this follows line
# for line: blank lines (empty, or only spaces and tabs) separate the paragraphs of a story; a line
# holding only STORY_SEPARATOR (trailing spaces and tabs allowed) separates two stories; "\r\n"
# counts as "\n". The model reads a story as its non-blank lines joined by one "\n".
STORY_SEPARATOR = "<|story|>"


def split_stories(text):
    """The stories of a text as the model reads them (see STORY_SEPARATOR above)."""
    stories, lines = [], []
    pieces = text.split("\n")
    for i, line in enumerate(pieces):
        if i + 1 < len(pieces) and line.endswith("\r"):
            line = line[:-1]  # "\r\n" counts as "\n"; a lone "\r" is text
        if line.rstrip(" \t") == STORY_SEPARATOR:
            if lines:
                stories.append("\n".join(lines))
            lines = []
        elif line.strip(" \t"):
            lines.append(line)
    if lines:
        stories.append("\n".join(lines))
    return stories


def format_story(story):
    """A story (paragraphs joined by one "\n", as the model reads it) as people write it: its
    paragraphs separated by a blank line. split_stories reads it back unchanged."""
    return "\n\n".join(story.split("\n"))


def format_stories(stories):
    """Yields the text of a file of several stories, piece by piece (format_story, with a line
    holding STORY_SEPARATOR between two stories), ending in a newline."""
    for i, story in enumerate(stories):
        yield ("\n" + STORY_SEPARATOR + "\n\n" if i else "") + format_story(story) + "\n"


# The longest story: what a C++ program reads as one whole text file (kMaxTextBytes of
# include/h2o/app/default_files.hpp; selftest.py checks that the two agree). The models read at
# most seq_len tokens of a story anyway; the limit keeps one giant "story" (a 20 MB word is one
# chunk to the tokenizer, about 110 bytes of memory per byte) from exhausting memory.
MAX_STORY_BYTES = 1 << 20

# Control characters other than whitespace (tab, newline, vertical tab, form feed, carriage
# return): a file holding them is not text (a corpus of NUL bytes, a binary file named by
# mistake). The teacher's stories never hold them: `generate` drops such bytes, as run.c does.
CONTROL_CHARACTER = re.compile("[\x00-\x08\x0e-\x1f\x7f]")


def check_story_text(text, what):
    """A UsageError naming `what` when text holds a control character (CONTROL_CHARACTER)."""
    found = CONTROL_CHARACTER.search(text)
    if found:
        line = text.count("\n", 0, found.start()) + 1
        raise UsageError(f"{what} holds the control character U+{ord(found.group()):04X} on "
                         f"line {line}; a story file is plain text")


def read_stories(path):
    """Stories of a story file (split_stories), each at most MAX_STORY_BYTES of plain text."""
    text = read_input(path, "corpus")
    check_story_text(text, f"corpus file '{path}'")
    stories = split_stories(text)
    del text
    if not stories:
        raise UsageError(f"'{path}' holds no story")
    for number, story in enumerate(stories, 1):
        if len(story) * 4 > MAX_STORY_BYTES and len(story.encode("utf-8")) > MAX_STORY_BYTES:
            raise UsageError(f"story {number} of '{path}' is {len(story.encode('utf-8'))} bytes, "
                             f"more than the limit of {MAX_STORY_BYTES} (the longest text the "
                             "C++ programs read)")
    return stories


def check_writable(path, option="an output"):
    """Fails early, before long work, when the output file cannot be created: its folder must
    exist and take a new file, and the path must not be empty, a folder, a device or a pipe.
    option names the output in the message when the path is empty ("--out")."""
    import stat
    import tempfile
    if not path:  # abspath("") is the current folder: its parent would get the test file
        raise UsageError(f"{option} is empty: give the name of the file to write")
    if path.endswith(os.sep):
        raise UsageError(f"cannot write '{path}': it names a folder, not a file")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise UsageError(f"cannot write '{path}': folder '{folder}' does not exist")
    if os.path.exists(path) and not stat.S_ISREG(os.stat(path).st_mode):
        raise UsageError(f"cannot write '{path}': it is not a regular file")
    try:
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".write-check-"):
            pass
    except OSError as e:
        raise UsageError(f"cannot write '{path}': {e.strerror}")


def _same_file_key(path):
    """What tells two paths of one file apart from others: the device and inode of an existing
    file (so a hard link or a symbolic link is the same file), else the path made absolute with
    its links resolved."""
    try:
        info = os.stat(path)
        return ("inode", info.st_dev, info.st_ino)
    except OSError:
        return ("path", os.path.realpath(path))


def check_outputs(outputs, inputs=None):
    """The one check of a script's output paths, before any work: each can be written
    (check_writable), no two of them name the same file, and none names an input file (an
    output written over an input or another output would lose one of them, after a long run).
    outputs and inputs: {option: path}, in the order the message should name them; a path None
    (an option not given) or "-" (standard output) is skipped."""
    taken = [(_same_file_key(path), option, "input")
             for option, path in (inputs or {}).items() if path not in (None, "-", "")]
    for option, path in outputs.items():
        if path is None or path == "-":
            continue
        if not path:
            raise UsageError(f"{option} is empty: give the name of the file to write")
        key = _same_file_key(path)
        for other_key, other, role in taken:
            if key == other_key and role == "input":
                raise UsageError(f"{option} '{path}' is the same file as the input {other}: an "
                                 "output must not replace an input")
            if key == other_key:
                raise UsageError(f"{option} '{path}' is the same file as {other}: give each "
                                 "output a file of its own")
        taken.append((key, option, "output"))
    for option, path in outputs.items():
        if path is not None and path != "-":
            check_writable(path, option)


def write_output(path, data):
    """Writes data (bytes, str, or an iterable of them, written as they come so a large file is
    never whole in memory) as the file at path, so that nothing is ever half-written: to a
    temporary file beside it first, renamed into place only when complete (the C++ side's
    base/output_file.hpp does the same). A failure leaves an existing file as it was."""
    import tempfile
    folder = os.path.dirname(os.path.abspath(path))
    fd, temporary = tempfile.mkstemp(dir=folder, prefix=os.path.basename(path) + ".tmp-")
    try:
        with os.fdopen(fd, "wb") as f:
            for chunk in [data] if isinstance(data, (bytes, bytearray, str)) else data:
                f.write(chunk.encode("utf-8") if isinstance(chunk, str) else chunk)
            f.flush()
            os.fsync(f.fileno())
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(temporary, 0o666 & ~mask)
        os.replace(temporary, path)
    except BaseException as e:
        if os.path.exists(temporary):
            os.unlink(temporary)
        if isinstance(e, OSError) and not e.filename:  # a full disk names no file: say which
            raise UsageError(f"cannot write '{path}': {e.strerror or e}") from e
        raise


def repo_path(*parts):
    """A path inside the repository, from this file's place in training/."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", *parts)


def is_name_letter(c):
    """A letter of a name, by src/measure/name_recall.cpp's rule (the same code points)."""
    o = ord(c)
    if "A" <= c <= "Z" or "a" <= c <= "z":
        return True
    if o < 0xC0 or o in (0xD7, 0xF7) or 0x300 <= o <= 0x36F:  # signs; combining marks
        return False
    if 0x2000 <= o <= 0x2BFF or 0x3000 <= o <= 0x303F:  # punctuation, symbols; CJK punctuation
        return False
    if 0xE000 <= o <= 0xF8FF or 0xFF00 <= o <= 0xFF20:  # private use; full-width punctuation
        return False
    if 0xFF3B <= o <= 0xFF40 or 0xFF5B <= o <= 0xFF65:
        return False
    return not (o == 0xFEFF or o >= 0xFFF0)  # byte-order mark, specials (and beyond them)


def is_one_name(line):
    """Letters (with combining marks after one), and ' or U+2019 or - only between two letters:
    the rule of read_names() in src/measure/name_recall.cpp."""
    after_letter, joiner_waiting = False, False
    for c in line:
        if is_name_letter(c):
            after_letter, joiner_waiting = True, False
        elif 0x300 <= ord(c) <= 0x36F and after_letter:
            continue  # a mark belongs to the letter before it
        elif c in "'\u2019-" and after_letter:
            after_letter, joiner_waiting = False, True
        else:
            return False
    return after_letter and not joiner_waiting


def read_names(path):
    """The names list, one name per line (is_one_name); blank lines skipped, a byte-order mark
    before the first line too (read_input), as the C++ read_names() does."""
    text = read_input(path, "names")
    names = []
    for number, line in enumerate(text.split("\n"), start=1):
        line = line[:-1] if line.endswith("\r") else line
        if not line:
            continue
        if not is_one_name(line):
            shown = line[:60].encode("unicode_escape").decode("ascii")
            raise UsageError(f"names file '{path}': line {number} ('{shown}') is not one name"
                             " (letters, with ' or - between them)")
        names.append(line)
    if not names:
        raise UsageError(f"names file '{path}' holds no names")
    return names
