"""Small helpers shared by the training scripts: one-line errors and reading story files.

Not a program.
"""

import argparse
import os
import sys


class UsageError(Exception):
    """A problem with the command line or the input files: reported in one line, exit 2."""


class Parser(argparse.ArgumentParser):
    """argparse, but a bad command line is one line on stderr (through UsageError)."""

    def error(self, message):
        raise UsageError(message + " (see --help)")


def run_main(prog, main, argv):
    """Runs main(argv); turns UsageError and OSError into one line on stderr and exit 2."""
    try:
        return main(argv)
    except UsageError as e:
        print(f"{prog}: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        where = f" '{e.filename}'" if e.filename else ""
        print(f"{prog}: {e.strerror or e}{where}", file=sys.stderr)
        return 2


# Largest file each kind of input may be: far above what the pipeline makes, far below what would
# exhaust memory. A bigger file, or one that is not a regular file (a device such as /dev/zero, a
# pipe, a folder), is refused before a byte is read.
LIMITS = {
    "corpus": 4 << 30,      # training stories (the shipped run's corpus is about 70 MB)
    "tokens": 4 << 30,      # pretokenized uint16 ids
    "names": 1 << 20,
    "model": 2 << 30,       # llama2.c checkpoint
    "tokenizer": 64 << 20,
    "ids": 64 << 20,        # token ids as text
    "csv": 64 << 20,
}


def read_input(path, kind, binary=False):
    """The whole of an input file, after checking it is a regular file within LIMITS[kind]."""
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
    try:
        if binary:
            with open(path, "rb") as f:
                return f.read()
        with open(path, encoding="utf-8") as f:
            return f.read()
    except OSError as e:
        raise UsageError(f"cannot read {kind} file '{path}': {e.strerror}")
    except UnicodeDecodeError:
        raise UsageError(f"{kind} file '{path}' is not UTF-8 text")


def read_stories(path):
    """Stories of a corpus file: separated by one empty line, no empty line inside a story."""
    text = read_input(path, "corpus")
    stories = [s.strip("\n") for s in text.split("\n\n")]
    stories = [s for s in stories if s]
    if not stories:
        raise UsageError(f"'{path}' holds no story")
    return stories


def check_writable(path):
    """Fails early, before long work, when the output file cannot be created."""
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise UsageError(f"cannot write '{path}': folder '{folder}' does not exist")
    if not os.access(folder, os.W_OK) or (os.path.exists(path) and not os.access(path, os.W_OK)):
        raise UsageError(f"cannot write '{path}': permission denied")


def repo_path(*parts):
    """A path inside the repository, from this file's place in training/."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", *parts)


def read_names(path):
    """The names list (one capitalised word per line), as make_corpus.py checks it."""
    names = [ln.strip() for ln in read_input(path, "names").splitlines() if ln.strip()]
    if not names:
        raise UsageError(f"names file '{path}' is empty")
    return names
