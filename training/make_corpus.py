#!/usr/bin/env python3
"""Writes a corpus of short, generated children's stories (standard library only).

Every story has a hero and one to three other characters (a friend, a sibling, a pet, a
grandparent, a teacher, a neighbour or a cousin), drawn from data/names.txt, plus a favourite
toy. About half of the characters carry an invented name instead, built from syllables
("Tovenka", "Marlis"): a name the model has never seen, spelled in several tokens, so that
predicting its pieces at a later mention means copying them from earlier in the story, as a
model must with the names of a teacher's own story. The stories are made so that a name
mentioned early comes back much later, and that
such a late mention is *determined by the context*: whenever a character has not been named
for a while, the name is written after a cue that fits only that character in this story
("her dog Max", "his friend Sam", "Grandma Rose", "Little Mia" for the hero). A model can
then only predict the name by looking far back, which is what separates a KV cache that
keeps important old tokens (H2O) from a plain sliding window.

Output: UTF-8 text (plain ASCII without --world-names) in the project's story file format (include/h2o/text/stories.hpp,
common.format_stories): the paragraphs of a story are separated by a blank line, two stories by
a line holding only "<|story|>". The model reads each story with one newline between paragraphs.

The same seed always gives the same text (Python's own Mersenne Twister, no hash-order
dependence). Use different seeds for training and held-out text.

Usage:
  /usr/bin/python3 training/make_corpus.py --seed 1 --stories 30000 --out build/train/train.txt
  /usr/bin/python3 training/make_corpus.py --seed 2 --stories 50 --out heldout.txt
"""

import os
import random
import re
import sys

from common import (Parser, UsageError, check_outputs, format_stories, run_main, read_input,
                    write_output)
from common import read_names as common_read_names

# Above this many text units (words and punctuation marks, close to tokens) since a
# character's last name mention, the next mention carries the character's cue. Below it the
# story may name characters freely (who speaks next, who finds the ball).
SHORT_GAP = 18

# write_story() keeps adding scenes until a story has a few names mentioned this long after
# their previous mention (units; a little more than 64 tokens).
LONG_GAP = 85
MIN_LONG_MENTIONS = 7
MAX_UNITS = 800

# A pronoun may stand for the character in focus only if it was named at most this long ago.
PRONOUN_GAP = 12

UNIT = re.compile(r"[A-Za-z]+|[0-9]+|[^\sA-Za-z0-9]")
AN = re.compile(r"\b([Aa]) ([aeiou])")  # "a orange kite" -> "an orange kite"
SLOT = re.compile(r"\{(\w+)(?:\.([a-z]+))?\}")

# ---------------------------------------------------------------------------------------------
# Word lists. Capitalised words here must never be names (the names list is checked against
# this text at start-up).

HERO_ADJ = ["kind", "curious", "brave", "happy", "clever", "cheerful", "shy", "playful",
            "gentle", "busy", "friendly", "funny", "quiet", "smart", "sweet", "helpful"]
HOMES = ["in a small house near the woods", "in a blue house on a hill", "in a busy town",
         "on a big farm", "in a cozy cottage by the sea", "in a tall building in the city",
         "near a big green park", "in a little village by a river",
         "in a yellow house with a red door", "at the end of a long, quiet street"]
TOWNS = ["small town", "quiet village", "big city", "sunny valley", "little town by the sea",
         "village near the mountains", "town with many trees"]
PETS = {  # species -> (sound sentence, move verb)
    "dog": ("barked happily", "ran"), "puppy": ("barked", "ran"),
    "cat": ("purred softly", "jumped"), "kitten": ("meowed", "jumped"),
    "bunny": ("wiggled its nose", "hopped"), "duck": ("quacked", "waddled"),
    "parrot": ("squawked", "flew"), "pony": ("neighed", "trotted"),
    "goat": ("bleated", "skipped"), "hamster": ("squeaked", "scurried"),
    "turtle": ("blinked slowly", "crawled"), "frog": ("croaked", "hopped"),
}
PET_ADJ = ["little", "fluffy", "small", "brown", "white", "spotted", "funny", "soft",
           "lazy", "clever", "happy", "tiny", "black", "grey"]
COLORS = ["red", "blue", "green", "yellow", "purple", "orange", "pink", "shiny", "striped",
          "golden", "silver", "spotted"]
TOYS = ["ball", "kite", "toy bear", "boat", "drum", "doll", "robot", "hat", "scarf",
        "truck", "train", "book", "bike", "balloon", "umbrella", "whistle", "wagon", "yo-yo",
        "box of crayons", "toy car", "shell", "bucket", "cape", "backpack"]
PLACES = ["park", "beach", "garden", "forest", "lake", "farm", "zoo", "market", "library",
          "playground", "meadow", "river", "hill", "pond", "orchard", "museum", "field",
          "bakery", "fair", "harbor"]
SPOTS = ["a big tree", "the bench", "a bush", "the bed", "a pile of leaves", "the table",
         "a big rock", "the stairs", "the sofa", "a flower pot", "the old fence", "a blanket",
         "the slide", "a box", "the door", "a wooden cart"]
THINGS = ["flowers", "birds", "butterflies", "big clouds", "tall trees", "little fish",
          "red apples", "bright lights", "green frogs", "soft sand", "pretty shells",
          "busy ants", "yellow leaves", "round stones", "sailing boats"]
FOODS = ["cookies", "apple pie", "sandwiches", "pancakes", "soup", "cake", "muffins",
         "bread", "lemonade", "strawberries", "cupcakes", "ice cream", "cheese", "grapes"]
GAMES = ["hide and seek", "tag", "catch", "a guessing game", "pretend pirates",
         "hopscotch", "a race", "pretend shop", "ring around the rosy", "follow the leader"]
BAKED = ["cookies", "apple pie", "sandwiches", "pancakes", "soup", "cake", "muffins", "bread",
         "cupcakes", "lemonade", "pizza", "a fruit salad", "hot cocoa", "noodles"]
WEATHER = [("it began to rain", "the rain stopped", "a rainbow"),
           ("a cold wind began to blow", "the wind was calm again", "the warm sun"),
           ("dark clouds filled the sky", "the clouds went away", "the blue sky"),
           ("it started to snow", "the snow stopped", "a white, shiny world")]
FEELINGS = ["happy", "glad", "proud", "excited", "calm", "thankful", "cheerful"]
SAD = ["sad", "worried", "upset", "scared", "lonely", "grumpy"]
CONNECT = ["One day,", "One sunny morning,", "The next day,", "Later that day,",
           "After lunch,", "That afternoon,", "On Saturday,", "One morning,", "Soon,",
           "In the evening,", "After a while,", "The next morning,", "One windy day,",
           "On a warm day,", "One rainy day,", "A few days later,"]
SAY = ["said", "said", "called", "shouted", "whispered", "laughed", "cried", "replied"]

# ---------------------------------------------------------------------------------------------
# Characters


class Character:
    """One person or pet in a story, with the words needed to refer to it."""

    def __init__(self, name, role, gender, detail="", invented=False):
        self.name = name
        self.invented = invented  # a made-up name (several tokens) rather than one of the list
        self.role = role      # hero, friend, sibling, pet, grandparent, teacher, neighbor, cousin
        self.gender = gender  # f, m or n (pets are "it")
        self.detail = detail  # species for a pet, "big sister", "Grandma", "Miss"...

    @property
    def he(self):
        return {"f": "she", "m": "he", "n": "it"}[self.gender]

    @property
    def him(self):
        return {"f": "her", "m": "him", "n": "it"}[self.gender]

    @property
    def his(self):
        return {"f": "her", "m": "his", "n": "its"}[self.gender]

    @property
    def kid(self):
        return "girl" if self.gender == "f" else "boy"

    @property
    def titled(self):
        """Grandparents and teachers always carry their title before the name."""
        return self.role in ("grandparent", "teacher")


# Invented names: onset + vowel (+ ending) syllables, two or three of them. About 28,000
# two-syllable and millions of three-syllable names, so that almost every story brings new ones.
ONSETS = ["b", "d", "f", "g", "h", "j", "k", "l", "m", "n", "p", "r", "s", "t", "v", "w", "z",
          "ch", "sh", "th", "br", "dr", "kr", "tr", "st", "", ""]
VOWELS = ["a", "e", "i", "o", "u", "a", "e", "o", "ai", "ei", "ou", "ia"]
ENDINGS = ["", "", "", "n", "r", "l", "s", "m", "k", "nd", "sh", "x"]
INVENTED_SHARE = 0.5


def invented_name(rng, taken):
    """A pronounceable made-up name, capitalised, not a story word and not in taken."""
    while True:
        syllables = [rng.choice(ONSETS) + rng.choice(VOWELS) + rng.choice(ENDINGS)
                     for _ in range(rng.choice([2, 2, 3]))]
        name = "".join(syllables).capitalize()
        if 4 <= len(name) <= 10 and re.fullmatch(r"[A-Z][a-z]+", name) and \
                name not in taken and name.lower() not in story_words():
            return name


_STORY_WORDS = set()


def story_words():
    """Every word of the word lists, lower case (a name must never be one of them)."""
    if not _STORY_WORDS:
        for lst in (HERO_ADJ, HOMES, TOWNS, PET_ADJ, COLORS, TOYS, PLACES, SPOTS, THINGS, FOODS,
                    BAKED, GAMES, FEELINGS, SAD, CONNECT, SAY, list(PETS)):
            for item in lst:
                _STORY_WORDS.update(w.lower() for w in re.findall(r"[A-Za-z]+", item))
    return _STORY_WORDS


def make_cast(rng, names, world=None):
    """Draws the hero and 1-3 other characters with distinct roles and distinct names."""
    picked = rng.sample(names, 4)
    # Half of them, on average, get an invented name instead (see the module's comment).
    for i in range(len(picked)):
        if rng.random() < INVENTED_SHARE:
            picked[i] = invented_name(rng, set(picked) | set(names))
    # With a world list (--world-names), a share of them get a name from it instead: names of
    # many languages and scripts, with marks and apostrophes, which the tokenizer spells in
    # pieces and bytes unlike the invented names' syllables. (Without one, no draw is made, so a
    # seed gives the same stories as before.)
    if world is not None:
        names_list, share = world
        for i in range(len(picked)):
            if rng.random() < share:
                picked[i] = rng.choice([n for n in names_list if n not in picked])
    listed = set(names)
    hero = Character(picked[0], "hero", rng.choice("fm"), invented=picked[0] not in listed)
    # At least two others, so that scenes can leave one of them out for a while.
    n_others = rng.choice([2, 2, 3, 3, 3])
    roles = rng.sample(["friend", "sibling", "pet", "pet", "grandparent", "teacher",
                        "neighbor", "cousin"], 8)
    chosen = []
    for role in roles:
        if role not in chosen:
            chosen.append(role)
        if len(chosen) == n_others:
            break
    cast = [hero]
    for name, role in zip(picked[1:], chosen):
        gender = rng.choice("fm")
        if role == "pet":
            gender, detail = "n", rng.choice(sorted(PETS))
        elif role == "sibling":
            detail = rng.choice(["big", "little"]) + " " + \
                ("sister" if gender == "f" else "brother")
        elif role == "grandparent":
            detail = "Grandma" if gender == "f" else "Grandpa"
        elif role == "teacher":
            detail = "Miss" if gender == "f" else "Mr."
        else:
            detail = ""
        cast.append(Character(name, role, gender, detail, invented=name not in listed))
    return cast


# ---------------------------------------------------------------------------------------------
# The story writer: renders sentence templates left to right, so that it knows, at each name,
# how far back the character was last named.


class Story:
    """Accumulates the text of one story and tracks name mentions.

    Templates name characters with slots: {A} subject (name or pronoun), {A.n} name, {A.o}
    object (name or pronoun), {A.p} possessive ("Max's" or "its"), {A.v} vocative (plain name,
    only for a recently named character), {A.he}/{A.him}/{A.his} plain pronouns, {A.kid}.
    Other slots are filled from keyword arguments.
    """

    def __init__(self, rng, cast):
        self.rng = rng
        self.cast = cast
        self.hero = cast[0]
        self.paragraphs = []
        self.pos = 0          # units written so far
        self.last = {}        # character name -> unit position of its last name mention
        self.focus = None     # the character a pronoun would refer to
        self.toy = None       # (colour, toy) of the hero's favourite toy
        self.long_mentions = 0  # names written more than LONG_GAP units after the last one

    # -- bookkeeping -------------------------------------------------------------------------
    def gap(self, c):
        return self.pos - self.last[c.name] if c.name in self.last else 10**9

    def recent(self, c):
        return self.gap(c) <= SHORT_GAP

    def others(self):
        return self.cast[1:]

    def cue(self, c):
        """Words that single out c in this story, written right before its name."""
        p = self.hero.his
        if c.role == "hero":
            return "little"
        if c.titled:
            return c.detail
        if c.role == "pet":
            return p + " " + c.detail
        if c.role == "sibling":
            return p + " " + c.detail
        return p + " " + c.role  # friend, neighbor, cousin

    # -- rendering ---------------------------------------------------------------------------
    def name_ref(self, c, out):
        """Appends c's name (after its cue when needed) to out and records the mention."""
        words = []
        # A first mention needs no cue (it is not predictable anyway); titles always show.
        if c.titled or (c.name in self.last and self.gap(c) > SHORT_GAP):
            words.append(self.cue(c))
        prefix = " ".join(words)
        if prefix:
            self._emit(prefix + " ", out)
        if c.name in self.last and self.gap(c) > LONG_GAP:
            self.long_mentions += 1
        self.last[c.name] = self.pos
        self._emit_name(c, out)
        self.focus = c

    def _emit(self, text, out):
        out.append(text)
        self.pos += len(UNIT.findall(text))

    def _emit_name(self, c, out):
        # An invented name is one unit but several tokens: it counts about one unit per three
        # letters more, so that MAX_UNITS still keeps a story within 1024 tokens.
        self._emit(c.name, out)
        if c.invented:
            self.pos += len(c.name) // 3

    def _pronoun_ok(self, c):
        return self.focus is c and self.gap(c) <= PRONOUN_GAP and self.rng.random() < 0.6

    def render(self, template, slots):
        out = []
        pieces = SLOT.split(template)
        # SLOT.split gives literal, key, form, literal, key, form, ..., literal
        for i in range(0, len(pieces), 3):
            if pieces[i]:
                self._emit(pieces[i], out)
            if i + 1 >= len(pieces):
                break
            key, form = pieces[i + 1], pieces[i + 2] or ""
            value = slots[key]
            if not isinstance(value, Character):
                self._emit(str(value), out)
                continue
            c = value
            if form == "":
                if self._pronoun_ok(c):
                    self._emit(c.he, out)
                else:
                    self.name_ref(c, out)
            elif form == "n":
                self.name_ref(c, out)
            elif form == "o":
                if self._pronoun_ok(c):
                    self._emit(c.him, out)
                else:
                    self.name_ref(c, out)
            elif form == "p":
                if self._pronoun_ok(c):
                    self._emit(c.his, out)
                else:
                    self.name_ref(c, out)
                    self._emit("'s", out)
            elif form == "v":
                # A vocative is a free choice of name: keep it only at a short gap, else drop
                # it together with its comma ("Come here, Max!" -> "Come here!").
                if not self.recent(c) or c.titled:
                    if out and out[-1].endswith(", "):
                        out[-1] = out[-1][:-2]
                    continue
                self.last[c.name] = self.pos
                self._emit_name(c, out)
            elif form in ("he", "him", "his", "kid"):
                self._emit(getattr(c, form), out)
            else:
                raise KeyError(form)
        text = AN.sub(lambda m: m.group(1) + "n " + m.group(2), "".join(out))
        return text[0].upper() + text[1:]

    def say(self, template, **slots):
        """Adds one sentence to the current paragraph."""
        if not self.paragraphs:
            self.paragraphs.append([])
        self.paragraphs[-1].append(self.render(template, slots))

    def new_paragraph(self):
        self.paragraphs.append([])
        self.focus = None

    def opener(self, template, **slots):
        """First sentence of a paragraph: starts with a time phrase, never with a name."""
        self.new_paragraph()
        self.say(self.rng.choice(CONNECT) + " " + template, **slots)

    def text(self):
        return "\n".join(" ".join(p) for p in self.paragraphs if p)


# ---------------------------------------------------------------------------------------------
# Story parts


def pick(rng, items):
    return rng.choice(items)


def introduce(s):
    """First paragraph: the hero, the other characters and the favourite toy."""
    rng, h = s.rng, s.hero
    adj = pick(rng, HERO_ADJ)
    s.new_paragraph()
    s.say(pick(rng, [
        "Once upon a time, there was a {adj} {H.kid} named {H.n}.",
        "Once upon a time, in a {town}, there lived a {adj} {H.kid} called {H.n}.",
        "There once was a {adj} {H.kid} named {H.n} who lived {home}.",
        "In a {town}, there was a {adj} little {H.kid} named {H.n}.",
        "Once there was a {adj} {H.kid}, and {H.his} name was {H.n}.",
    ]), H=h, adj=adj, town=pick(rng, TOWNS), home=pick(rng, HOMES))
    if rng.random() < 0.5:
        s.say(pick(rng, ["{H} lived {home}.", "{H} loved to {hobby}.",
                         "Every day, {H.n} liked to {hobby}."]),
              H=h, home=pick(rng, HOMES), hobby=pick(rng, [
                  "play outside", "sing songs", "draw pictures", "read books",
                  "run and jump", "help others", "look at the stars", "build things"]))
    for c in s.others():
        introduce_character(s, c)
    color, toy = pick(rng, COLORS), pick(rng, TOYS)
    s.toy = (color, toy)
    s.say(pick(rng, [
        "{H} had a {color} {toy} that {H.he} loved very much.",
        "{H.n}'s favorite toy was a {color} {toy}.",
        "{H} also had a {color} {toy}, and {H.he} took it everywhere.",
        "More than anything, {H.n} loved {H.his} {color} {toy}.",
    ]), H=h, color=color, toy=toy)


def introduce_character(s, c):
    rng, h = s.rng, s.hero
    kw = dict(H=h, C=c, adj=pick(rng, PET_ADJ), cue=s.cue(c))
    if c.role == "pet":
        kw["sp"] = c.detail
        t = pick(rng, ["{H} had a {adj} {sp} named {C.n}.",
                       "{H} lived with {H.his} {sp} {C.n}.",
                       "{H} had a pet {sp}. {cue_cap} {C.n} was {adj} and very {adj2}.",
                       "{H.n}'s best friend was a {adj} {sp} called {C.n}."])
        kw["cue_cap"] = s.cue(c).capitalize()
        kw["adj2"] = pick(rng, ["smart", "fast", "playful", "sleepy", "hungry", "kind"])
    elif c.role == "friend":
        t = pick(rng, ["{H} had a good friend named {C.n}.",
                       "{H.n}'s best friend was a {C.kid} named {C.n}.",
                       "{H} liked to play with {cue} {C.n}, who lived next door.",
                       "{H} had a friend from school, a {C.kid} called {C.n}."])
    elif c.role == "sibling":
        kw["sib"] = c.detail
        t = pick(rng, ["{H} had a {sib} named {C.n}.",
                       "{H} lived with {H.his} {sib} {C.n} and their mom and dad.",
                       "{H} shared a room with {H.his} {sib}, {C.n}."])
    elif c.role == "grandparent":
        kw["g"] = c.detail.lower()
        t = pick(rng, ["{H} loved to visit {H.his} {g}, {C.n}, who had a big garden.",
                       "{H.n}'s {g}, {C.n}, lived in a little house down the road.",
                       "Every Sunday, {H.n} went to see {H.his} {g}, {C.n}."])
    elif c.role == "teacher":
        kw["t"] = "Miss" if c.gender == "f" else "Mr."
        t = pick(rng, ["At school, {H.n}'s teacher was {C.n}.",
                       "{H.n} went to a small school, and {H.his} teacher was {C.n}.",
                       "{C.n} was {H.n}'s teacher, and {C.he} was very kind."])
    elif c.role == "neighbor":
        kw["old"] = "an old woman" if c.gender == "f" else "an old man"
        t = pick(rng, ["Next door lived {H.his} neighbor {C.n}, {old} with a big garden.",
                       "{H.n}'s neighbor was {old} named {C.n}.",
                       "In the house next door lived {H.his} neighbor {C.n}."])
    else:  # cousin
        t = pick(rng, ["{H} had a cousin named {C.n} who lived far away.",
                       "{H.n}'s cousin, a {C.kid} called {C.n}, came to visit for a week.",
                       "{H} was excited, because {H.his} cousin {C.n} was coming to stay."])
    s.say(t, **kw)


def toy_phrase(s):
    color, toy = s.toy
    return s.hero.his + " " + color + " " + toy


def companion(s, prefer=None):
    """Picks a character to share the next scene with the hero."""
    cands = [c for c in s.others() if prefer is None or c.role in prefer] or s.others()
    # Half the time the one unseen for longest: characters come and go, so names come back
    # after long gaps.
    if s.rng.random() < 0.5:
        return max(cands, key=s.gap)
    return s.rng.choice(cands)


def speak(s, who, lines, listener=None):
    """One line of dialogue; a listener is addressed by name only if named recently."""
    rng = s.rng
    line = pick(rng, lines)
    # The vocative sits at the end of the line; render() drops it if the gap has grown too
    # long by then.
    if listener is not None and listener is not who and not listener.titled and \
            s.recent(listener) and rng.random() < 0.35 and line[-1] in "!.?":
        line = line[:-1] + ", {L.v}" + line[-1]
    verb = pick(rng, SAY) if line[-1] != "?" else "asked"
    # A line put before "said X" ends with a comma instead of a full stop.
    quoted_first = line[:-1] + "," if line[-1] == "." else line
    form = pick(rng, ['"' + quoted_first + '" ' + verb + " {W}.",
                      "{W} " + verb + ', "' + line + '"'])
    if form.startswith('"'):
        form = form.replace("{W}", "{W.n}")
    s.say(form, W=who, L=listener)


def pet_line(s, c):
    sound, move = PETS[c.detail]
    return pick(s.rng, ["{C} " + sound + ".", "{C} " + move + " around in circles.",
                        "{C} " + move + " after " + s.hero.him + " and " + sound + "."])


def action(s, c, place):
    """A sentence of something c does, fitting its role."""
    rng = s.rng
    if c.role == "pet":
        s.say(pet_line(s, c), C=c)
        return
    s.say(pick(rng, [
        "{C} looked at the {things} and smiled.",
        "{C} ran to the edge of the {place}.",
        "{C} sat down on {spot} to rest.",
        "{C} picked up a stick and drew a circle in the dirt.",
        "{C} clapped {C.his} hands.",
        "{C} found a {color} feather on the ground.",
        "{C} pointed at the {things}.",
        "{C} laughed so hard that {C.he} fell down.",
        "{C} took a deep breath of the fresh air.",
        "{C} counted the {things}, one by one.",
    ]), C=c, things=pick(rng, THINGS), place=place, spot=pick(rng, SPOTS),
        color=pick(rng, COLORS))


CHEER = ["What a lovely day!", "This is so much fun!", "I am so happy today.",
         "Look at the {things}!", "Let's play {game}!", "Can we stay a little longer?",
         "I like it here.", "Come and see this!", "Wait for me!", "Let's go together!"]


def episode_play(s):
    rng, h = s.rng, s.hero
    b = companion(s, ["friend", "pet", "sibling", "cousin"])
    place = pick(rng, PLACES)
    s.opener("{H.n} and {B.n} went to the {place}.", H=h, B=b, place=place)
    s.say(pick(rng, ["The {place} was full of {things}.",
                     "There were {things} everywhere.",
                     "The sun was warm, and the {things} looked pretty."]),
          place=place, things=pick(rng, THINGS))
    for _ in range(rng.randint(2, 5)):
        r = rng.random()
        if r < 0.3:
            action(s, rng.choice([h, b]), place)
        elif r < 0.55 and b.role != "pet":
            speak(s, rng.choice([h, b]), [x.replace("{things}", pick(rng, THINGS))
                                         .replace("{game}", pick(rng, GAMES)) for x in CHEER],
                  listener=rng.choice([h, b]))
        elif r < 0.75:
            s.say(pick(rng, ["{A} and {B.n} played {game} for a long time.",
                             "{A} threw {toy} and {B.n} caught it.",
                             "{A} showed {B.o} {toy}.",
                             "{A} and {B.n} raced to {spot}.",
                             "{A} shared a snack with {B.o}."]),
                  A=h, B=b, game=pick(rng, GAMES), toy=toy_phrase(s), spot=pick(rng, SPOTS))
        else:
            speak(s, h, ["I love my " + " ".join(s.toy) + "!",
                         "My " + " ".join(s.toy) + " is the best!",
                         "Do you want to play with my " + s.toy[1] + "?"], listener=b)
    s.say(pick(rng, ["When the sun went down, {A} and {B.n} walked home.",
                     "At the end of the day, {A} felt {feel}.",
                     "It was a wonderful day at the {place}."]),
          A=h, B=b, feel=pick(rng, FEELINGS), place=place)


def episode_lost(s):
    rng, h = s.rng, s.hero
    color, toy = s.toy
    s.opener("{H.n} could not find {toy}.", H=h, toy=toy_phrase(s))
    s.say("{H} felt very {sad}.", H=h, sad=pick(rng, SAD))
    speak(s, h, ["Where is my " + color + " " + toy + "?", "I lost my " + toy + "!",
                 "Has anyone seen my " + toy + "?"])
    spots = rng.sample(SPOTS, rng.randint(2, 4))
    for spot in spots[:-1]:
        s.say(pick(rng, ["{H} looked under {spot}, but it was not there.",
                         "{H} looked behind {spot}. Nothing!",
                         "{H} searched near {spot}, but {H.he} found only dust."]),
              H=h, spot=spot)
    finder = companion(s)
    s.say(pick(rng, ["Then {F.n} found it under {spot}!",
                     "At last, {F.n} found the {toy} behind {spot}.",
                     "Just then, {F.n} came with the {toy}. It was near {spot}."]),
          F=finder, spot=spots[-1], toy=toy)
    if finder.role == "pet":
        s.say(pet_line(s, finder), C=finder)
    else:
        speak(s, finder, ["Here it is!", "I found your " + toy + "!", "Look what I found!"],
              listener=h)
    s.say(pick(rng, ["{H} hugged {F.o} and said thank you.",
                     "{H} was so {feel} to have {H.his} {toy} back.",
                     "{H} smiled and held the {color} {toy} tight."]),
          H=h, F=finder, feel=pick(rng, FEELINGS), toy=toy, color=color)


def episode_weather(s):
    rng, h = s.rng, s.hero
    start, stop, after = pick(rng, WEATHER)
    b = companion(s)
    place = pick(rng, PLACES)
    s.opener("{H.n} was at the {place} when {start}.", H=h, place=place, start=start)
    s.say(pick(rng, ["{H} ran under {spot} with {B.n}.",
                     "{H} and {B.n} hid under {spot}.",
                     "{H} took {B.n} and ran to {spot}."]), H=h, B=b, spot=pick(rng, SPOTS))
    if b.role == "pet":
        s.say(pet_line(s, b), C=b)
    else:
        speak(s, b, ["Don't be scared.", "We will be safe here.", "It will stop soon.",
                     "I don't like this weather!"], listener=h)
    speak(s, h, ["I hope it stops soon.", "Let's wait here.", "I am a little cold."],
          listener=b)
    s.say("After a while, {stop}.", stop=stop)
    s.say(pick(rng, ["{H} looked up and saw {after}.", "{H} and {B.n} saw {after}.",
                     "Then {H.n} saw {after} and laughed."]), H=h, B=b, after=after)


def episode_visit(s):
    rng, h = s.rng, s.hero
    b = companion(s, ["grandparent", "neighbor", "cousin", "teacher"])
    food = pick(rng, BAKED)
    s.opener("{H.n} went to see {B.n}.", H=h, B=b)
    if b.role == "pet":
        s.say(pet_line(s, b), C=b)
        s.say("{H} gave {B.o} some water and a little food.", H=h, B=b)
        return
    s.say(pick(rng, ["{B} made {food} for {H.o}.",
                     "{B} and {H.n} made {food} together.",
                     "{B} was making {food} in the kitchen."]), B=b, H=h, food=food)
    speak(s, h, ["It smells so good!", "Can I help?", "I love " + food + "!",
                 "Yum, thank you!"], listener=b)
    for _ in range(rng.randint(1, 3)):
        s.say(pick(rng, ["{B} told {H.o} a story about a {adj} dragon.",
                         "{B} showed {H.o} an old photo of a {place}.",
                         "{H} and {B.n} sang a song together.",
                         "{B} taught {H.o} how to plant {things}.",
                         "{H} helped {B.o} clean the table.",
                         "{B} laughed at {H.n}'s funny joke."]),
              B=b, H=h, adj=pick(rng, HERO_ADJ), place=pick(rng, PLACES),
              things=pick(rng, ["seeds", "beans", "carrots", "tulips", "tomatoes"]))
    speak(s, b, ["You are a good helper.", "Come back soon!", "I am glad you came.",
                 "You make me very happy."], listener=h)


def episode_school(s):
    rng, h = s.rng, s.hero
    b = companion(s, ["teacher", "friend", "sibling", "cousin"])
    s.opener("{H.n} and {B.n} went to the {place}.", H=h, B=b,
             place=pick(rng, ["library", "museum", "school garden", "art room", "music room"]))
    activity = pick(rng, ["painted a picture of {things}", "read a book about {things}",
                          "made a card out of paper", "built a tower of blocks",
                          "learned a new song", "wrote a short poem about {things}"])
    activity = activity.replace("{things}", pick(rng, THINGS))
    s.say("{H} " + activity + ".", H=h)
    if b.role == "pet":
        s.say(pet_line(s, b), C=b)
    else:
        speak(s, b, ["That is very nice!", "You did a great job.", "Can you show me how?",
                     "I want to try too!"], listener=h)
        action(s, b, "room")
    s.say(pick(rng, ["{H} felt {feel}.", "{H} smiled a big smile.",
                     "{H} could not wait to show everyone."]), H=h, feel=pick(rng, FEELINGS))


def episode_help(s):
    rng, h = s.rng, s.hero
    animal = pick(rng, ["a little bird with a hurt wing", "a kitten stuck in a tree",
                        "a lost duckling", "a tiny mouse in the rain", "a sad old horse"])
    b = companion(s)
    place = pick(rng, PLACES)
    s.opener("{H.n} found {animal} near the {place}.", H=h, animal=animal, place=place)
    speak(s, h, ["Oh no, it needs help!", "Poor thing!", "We have to help it."], listener=b)
    s.say(pick(rng, ["{H} asked {B.n} to help.", "{H} ran to get {B.n}.",
                     "{B.n} came to help {H.o}."]), H=h, B=b)
    if b.role == "pet":
        s.say(pet_line(s, b), C=b)
    s.say(pick(rng, ["Together they made a warm bed of leaves for it.",
                     "They gave it some water and crumbs.",
                     "Slowly and gently, they helped it to a safe place."]))
    s.say(pick(rng, ["Soon it was well again.", "It looked much happier.",
                     "The next day it was strong and happy."]))
    s.say("{H} felt very {feel}.", H=h, feel=pick(rng, FEELINGS))


def episode_share(s):
    rng, h = s.rng, s.hero
    b = companion(s, ["friend", "sibling", "cousin", "neighbor"])
    color, toy = s.toy
    if b.role == "pet":
        s.opener("{B.n} took {toy} and ran away!", B=b, toy=toy_phrase(s))
        s.say("{H} ran after {B.o}, laughing.", H=h, B=b)
        s.say("{H} could not be angry for long.", H=h)
        return
    s.opener("{B.n} wanted to play with {toy}.", B=b, toy=toy_phrase(s))
    speak(s, b, ["Can I play with your " + toy + "?", "May I try your " + toy + "?"],
          listener=h)
    s.say(pick(rng, ["At first, {H.n} did not want to share.",
                     "{H} held the {toy} close and said no.",
                     "{H} frowned, because {H.he} loved the {toy} so much."]), H=h, toy=toy)
    s.say("{B} looked {sad}.", B=b, sad=pick(rng, SAD))
    s.say(pick(rng, ["Then {H.n} remembered that sharing is kind.",
                     "Then {H.n} thought about how {B.n} felt.",
                     "Then {H.n} had an idea."]), H=h, B=b)
    speak(s, h, ["Here, you can have a turn.", "Let's play with it together!",
                 "You can try it first."], listener=b)
    s.say(pick(rng, ["{B} smiled, and they played together all afternoon.",
                     "{B} was so happy, and {H.n} was happy too.",
                     "They took turns, and it was more fun than playing alone."]), B=b, H=h)


def episode_picnic(s):
    rng, h = s.rng, s.hero
    b = companion(s)
    food, food2 = rng.sample(FOODS, 2)
    place = pick(rng, PLACES)
    s.opener("{H.n} and {B.n} had a picnic at the {place}.", H=h, B=b, place=place)
    s.say("They brought {food} and {food2} in a big basket.", food=food, food2=food2)
    if b.role == "pet":
        s.say(pet_line(s, b), C=b)
    else:
        speak(s, b, ["This is the best picnic ever!", "I am so hungry!",
                     "Can I have some " + food + "?"], listener=h)
    s.say(pick(rng, ["A small ant walked across the blanket.",
                     "A bird sat on a branch and watched them.",
                     "The wind blew a napkin away."]))
    s.say("{H} laughed and ate some {food2}.", H=h, food2=food2)


def ending(s):
    """Last paragraph: the hero says goodnight to the characters, named after their cues."""
    rng, h = s.rng, s.hero
    s.opener(pick(rng, ["{H.n} was very tired.", "{H.n} went home.",
                        "{H.n} got ready for bed."]), H=h)
    for c in rng.sample(s.others(), len(s.others())):
        if c.role == "pet":
            s.say(pick(rng, ["{H} hugged {C.n} and said goodnight.",
                             "{C.n} curled up at the end of the bed.",
                             "{H} gave {C.n} a little kiss on the head."]), H=h, C=c)
        else:
            s.say(pick(rng, ["{H} thought about {C.n} and smiled.",
                             "{H} said goodnight to {C.n}.",
                             "{H} could not wait to see {C.n} again."]), H=h, C=c)
    s.say(pick(rng, ["{H} closed {H.his} eyes and dreamed of {things}.",
                     "It had been a {adj} day, and {H.n} fell asleep with a smile.",
                     "From that day on, {H.n} always kept {toy} close."]),
          H=h, things=pick(rng, THINGS), adj=pick(rng, ["wonderful", "busy", "happy", "long"]),
          toy=toy_phrase(s))


EPISODES = [episode_play, episode_lost, episode_weather, episode_visit, episode_school,
            episode_help, episode_share, episode_picnic]


def remember(s):
    """A sentence that brings back the character absent for longest, after its cue."""
    rng, h = s.rng, s.hero
    c = max(s.others(), key=s.gap)
    if s.gap(c) < LONG_GAP or rng.random() < 0.3:
        return
    if c.role == "pet":
        t = pick(rng, ["{H} wished that {C.n} could see this.",
                       "{H} wanted to tell {C.n} all about it.",
                       "Back at home, {C.n} was waiting by the door."])
    else:
        t = pick(rng, ["{H} thought of {C.n}, who would love this.",
                       "{H} wanted to tell {C.n} all about it.",
                       "{H} decided to bring some {things} to {C.n} later.",
                       "Just then, {H.n} remembered what {C.n} always said."])
    s.say(t, H=h, C=c, things=pick(rng, THINGS))


def write_story(rng, names, names_seen=None, world=None):
    """One whole story as text: introduction, scenes, ending.

    Scenes are added until the text is long enough and enough names came back after a long
    gap, but never past MAX_UNITS (so a story stays within a 1024-token context).
    """
    s = Story(rng, make_cast(rng, names, world))
    if names_seen is not None:
        names_seen.update(c.name for c in s.cast)
    introduce(s)
    target = rng.randint(200, 740)  # units before the ending
    episodes = []
    while (s.pos < target or s.long_mentions < MIN_LONG_MENTIONS) and s.pos < MAX_UNITS:
        ep = rng.choice(EPISODES)
        if episodes and ep is episodes[-1]:
            continue
        episodes.append(ep)
        ep(s)
        remember(s)
    ending(s)
    return s.text()


# ---------------------------------------------------------------------------------------------
# Command line


def read_names(path):
    """Reads the names list: one capitalised single word per line, at least 100, no repeats."""
    lines = read_input(path, "names").splitlines()
    names = [ln.strip() for ln in lines if ln.strip()]
    for n in names:
        if not re.fullmatch(r"[A-Z][a-z]+", n):
            raise UsageError(f"names file '{path}': '{n}' is not one capitalised word")
    if len(set(names)) != len(names):
        raise UsageError(f"names file '{path}' lists a name twice")
    if len(names) < 100:
        raise UsageError(f"names file '{path}' has {len(names)} names, at least 100 needed")
    return names


def check_no_name_collisions(names):
    """Word lists must never produce a capitalised name-like word by accident."""
    words = story_words()
    clash = sorted(n for n in names if n.lower() in words)
    if clash:
        raise UsageError("names that are also story words: " + ", ".join(clash))


def default_names_path():
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "names.txt")


def parse_args(argv):
    ap = Parser(
        description="Write generated children's stories (paragraphs separated by a blank line, "
                    "stories by a line holding only <|story|>).")
    ap.add_argument("--seed", type=int, default=1, help="random seed (default: 1)")
    ap.add_argument("--stories", type=int, default=1000, help="number of stories (default: 1000)")
    ap.add_argument("--names", default=default_names_path(),
                    help="names list, one per line (default: data/names.txt)")
    ap.add_argument("--world-names", default=None,
                    help="a second names list, of many languages and scripts (any letters, marks, "
                         "' and - between letters: training/world_names.txt); a share of the "
                         "characters is named from it")
    ap.add_argument("--world-share", type=float, default=0.4,
                    help="share of the characters named from --world-names (default: 0.4)")
    ap.add_argument("--out", required=True, help="output text file ('-' for stdout)")
    ap.add_argument("--names-out", default=None,
                    help="also write the characters' names of these stories, list and invented "
                         "ones, sorted, one per line (for --names of the C++ programs)")
    args = ap.parse_args(argv)
    if args.stories < 1 or args.stories > 10_000_000:
        raise UsageError(f"--stories must be 1..10000000, got {args.stories}")
    if args.seed < 0:
        raise UsageError(f"--seed must be >= 0, got {args.seed}")
    if not 0 <= args.world_share <= 1:
        raise UsageError(f"--world-share must be 0..1, got {args.world_share}")
    return args


def generate(seed, count, names, names_seen=None, world=None):
    """Yields `count` stories; the whole sequence depends only on seed and names (and world:
    (names, share) or None). names_seen, a set, gathers the characters' names on the way."""
    rng = random.Random(seed)
    for _ in range(count):
        yield write_story(rng, names, names_seen, world)


def main(argv):
    args = parse_args(argv)
    check_outputs({"--out": args.out, "--names-out": args.names_out},
                  {"--names": args.names, "--world-names": args.world_names})
    names = read_names(args.names)
    check_no_name_collisions(names)
    world = None
    if args.world_names is not None:
        world_names = [n for n in common_read_names(args.world_names) if n not in names]
        if len(world_names) < 100:
            raise UsageError(f"names file '{args.world_names}' has {len(world_names)} names not "
                             "in --names, at least 100 needed")
        check_no_name_collisions(world_names)
        world = (world_names, args.world_share)
    names_seen = set()
    # Story by story (a large corpus is never whole in memory), into a file that replaces --out
    # only when complete.
    pieces = format_stories(generate(args.seed, args.stories, names, names_seen, world))
    if args.out == "-":
        for piece in pieces:
            sys.stdout.write(piece)
        sys.stdout.flush()
    else:
        write_output(args.out, (piece.encode("utf-8") for piece in pieces))
    if args.names_out is not None:
        write_output(args.names_out, "".join(n + "\n" for n in sorted(names_seen)).encode("utf-8"))
    return 0


if __name__ == "__main__":
    sys.exit(run_main("make_corpus", main, sys.argv[1:]))
