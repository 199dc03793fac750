#!/usr/bin/env python3
"""Gives the characters of every story new names, drawn afresh for each story: training text in
which a name can only be predicted by copying it from earlier in the same story. Standard
library only.

Why: stories260K's samples (teacher_stories.py) name their characters Lily, Tom or Max, one token
each, so a model trained on them learns those names by heart and copies nothing; and the
generator's invented names (make_corpus.py) come back only in its few sentence shapes, so a model
copies them only there (docs/models.md). Renamed, the teacher's stories ask for copying in the
teacher's voice too.

Which words are names: a capitalised word (or capitalised words joined by hyphens: "Mary-Jane" is
one name) that follows a lower-case word or a comma (so not one that only starts sentences) at least
--min-count times over the whole file, whose lower-case form is at most a tenth as common (so not
"Park" beside "park"), and not a title or a family word (Mom, Grandpa, Mr, Princess, ...). Each name
of a story gets a new one, the same at every mention ("Lily's" becomes "Siân's"): from --world-names
with probability 1 - --invented-share, else an invented one built from syllables as make_corpus.py
builds them; never one of --avoid-names (the generator's list), and two characters of a story never
share one.
With --repeat-share P a story is followed, with probability P, by a second story holding it
twice in a row: text that can be predicted only by copying it.

Usage:
  /usr/bin/python3 training/rename_characters.py --stories build/ft/teacher.txt \\
      --out build/ft/teacher_renamed.txt [--seed 1] [--repeat-share 0.3]
"""

import collections
import random
import re
import sys

from common import (Parser, UsageError, check_outputs, format_stories, read_names,
                    read_stories, repo_path, run_main, write_output)
from make_corpus import invented_name

# Capitalised words that name a role, not a character: never renamed.
NOT_NAMES = {
    "I", "Mom", "Dad", "Mommy", "Daddy", "Mama", "Papa", "Mum", "Mummy", "Grandma", "Grandpa",
    "Granny", "Nana", "Aunt", "Auntie", "Uncle", "Mr", "Mrs", "Ms", "Miss", "Sir", "Dr", "Doctor",
    "Captain", "King", "Queen", "Princess", "Prince", "Santa", "God", "Oh", "Yes", "No", "The",
    "Once",
}
# A capitalised word, or capitalised words joined by hyphens: "Mary-Jane" is one name, so neither
# "Mary" nor "Jane" alone is renamed inside it. Not part of a longer word ("Mary-jane", "x-Mary").
WHOLE_WORD = r"(?<![A-Za-z]-)\b{}\b(?!-[A-Za-z])"
NAME = re.compile(WHOLE_WORD.format(r"[A-Z][a-z]+(?:-[A-Z][a-z]+)*"))
# A capitalised word after a lower-case word or a comma and a space: not a sentence's start.
NAME_INSIDE_SENTENCE = re.compile(r"(?<=[a-z,] )" + NAME.pattern)
LOWER_WORD = re.compile(r"\b[a-z]+\b")


def find_names(stories, min_count):
    """The words of `stories` that name characters (the module's rule), most frequent first."""
    inside = collections.Counter()
    lower = collections.Counter()
    for story in stories:
        inside.update(NAME_INSIDE_SENTENCE.findall(story))
        lower.update(LOWER_WORD.findall(story))
    names = [w for w, n in inside.items()
             if n >= min_count and lower[w.lower()] * 10 <= n and w not in NOT_NAMES]
    return sorted(names, key=lambda w: (-inside[w], w))


def rename_story(story, names, rng, world, avoid, invented_share):
    """(the story with each of its characters renamed, how many were renamed)."""
    found = sorted({w for w in NAME.findall(story) if w in names})
    mapping = {}
    for old in found:
        taken = set(mapping.values()) | avoid
        free = [n for n in world if n not in taken]
        if free and rng.random() >= invented_share:
            mapping[old] = rng.choice(free)
        else:
            mapping[old] = invented_name(rng, taken)
    if not mapping:
        return story, 0
    pattern = re.compile(WHOLE_WORD.format("(" + "|".join(map(re.escape, mapping)) + ")"))
    return pattern.sub(lambda m: mapping[m.group(1)], story), len(mapping)


def main(argv):
    ap = Parser(description="Rename every story's characters with names new to it.")
    ap.add_argument("--stories", required=True,
                    help="story file (paragraphs separated by a blank line, stories by a line "
                         "holding only <|story|>)")
    ap.add_argument("--out", required=True, help="story file to write")
    ap.add_argument("--world-names", default=repo_path("training", "world_names.txt"),
                    help="names to draw from, one per line (default: training/world_names.txt)")
    ap.add_argument("--avoid-names", default=repo_path("data", "names.txt"),
                    help="names never given (default: data/names.txt, the generator's list)")
    ap.add_argument("--invented-share", type=float, default=0.5,
                    help="share of the new names invented from syllables (default: 0.5)")
    ap.add_argument("--repeat-share", type=float, default=0.0,
                    help="share of the stories also written twice in a row (default: 0)")
    ap.add_argument("--min-count", type=int, default=3,
                    help="times a word must stand inside a sentence to be a name (default: 3)")
    ap.add_argument("--seed", type=int, default=1, help="random seed (default: 1)")
    args = ap.parse_args(argv)
    for option, share in (("--invented-share", args.invented_share),
                          ("--repeat-share", args.repeat_share)):
        if not 0.0 <= share <= 1.0:
            raise UsageError(f"{option} must be 0..1, got {share}")
    if args.min_count < 1:
        raise UsageError(f"--min-count must be at least 1, got {args.min_count}")
    if args.seed < 0:
        raise UsageError(f"--seed must be 0 or more, got {args.seed}")
    check_outputs({"--out": args.out}, {"--stories": args.stories,
                                        "--world-names": args.world_names,
                                        "--avoid-names": args.avoid_names})
    world = read_names(args.world_names)
    avoid = set(read_names(args.avoid_names))
    stories = read_stories(args.stories)
    names = set(find_names(stories, args.min_count))
    if not names:
        raise UsageError(f"no word of '{args.stories}' names a character {args.min_count} "
                         "times inside a sentence: nothing to rename")
    rng = random.Random(args.seed)
    out, renamed, characters, repeated = [], 0, 0, 0
    for story in stories:
        story, count = rename_story(story, names, rng, world, avoid, args.invented_share)
        renamed += count > 0
        characters += count
        out.append(story)
        if rng.random() < args.repeat_share:
            out.append(story + "\n\n" + story)
            repeated += 1
    write_output(args.out, "".join(format_stories(out)))
    top = ", ".join(find_names(stories, args.min_count)[:8])
    print(f"rename_characters: {len(names)} names found ({top}, ...); {renamed} of "
          f"{len(stories)} stories renamed, {characters} characters; {repeated} also written "
          f"twice -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(run_main("rename_characters", main, sys.argv[1:]))
