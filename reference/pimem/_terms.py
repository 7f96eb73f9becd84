"""What a word is, for every script: the text the index is given, and the terms of a query.

FTS5's `unicode61` tokenizer (with combining marks counted as token characters, so Devanagari,
Thai and Arabic words stay whole) does the bulk of the work in C. Before a text goes in, this module
adds what unicode61 cannot know:

- runs of scripts written without spaces (Han, Hiragana, Katakana, Hangul, Thai, Lao, Khmer,
  Myanmar) become their character pairs and their last character (a character being one with the
  marks that follow it), so every character starts a token and a word of any length is found
  inside a longer run: one character as a prefix query (the pairs it starts, or itself where it
  ends the run), two by their pair, more by all their pairs, with contiguity checked on the
  candidate's line where the index alone cannot tell;
- identifiers with internal boundaries (`exponentialBackoff`, `HTTPServer`, `sha256sum`) keep their
  whole token and add their parts, so a part or a run of consecutive parts is found;
- Arabic harakat are dropped on both sides, so a word matches with or without them;
- both sides are matched in NFC, so a text in NFD (macOS file names) is found by what users type.

A query is cut the same way into terms, each an FTS5 expression plus the atoms (parts, or
characters) a candidate's line must hold contiguously when the index alone cannot tell.
"""

from __future__ import annotations

import functools
import itertools
import operator
import re
import string
import unicodedata
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from importlib import resources

import Stemmer

from ._memo import PureMemo

__all__ = [
    "STOP_WORDS",
    "Term",
    "atoms",
    "contains_run",
    "holds_sequence",
    "holds_term",
    "index_text",
    "iter_terms",
    "nfc",
    "places",
    "query_sequence",
    "query_terms",
    "sequence_in",
    "split_terms",
    "stem_forms",
    "stem_prefix",
]

# Scripts written without spaces between words (Hangul: particles attach to words): the table of
# JM-SEARCH-230, as a regular-expression class. Its code points that are no letter, digit or mark
# separate terms wherever they are, so symbol-only blocks (radicals, Khmer symbols) are left out.
_NO_SPACE_RANGES = (
    "\u0e00-\u0eff"  # Thai, Lao
    "\u1000-\u109f"  # Myanmar
    "\u1100-\u11ff"  # Hangul
    "\u1780-\u17ff"  # Khmer
    "\u3005-\u3007"  # CJK, kana
    "\u3021-\u3029"
    "\u3038-\u303b"
    "\u3040-\u30ff"
    "\u3130-\u318f"  # Hangul
    "\u31f0-\u31ff"  # kana
    "\u3400-\u4dbf"  # CJK
    "\u4e00-\u9fff"
    "\ua960-\ua97f"  # Hangul
    "\uac00-\ud7af"
    "\ud7b0-\ud7ff"
    "\uf900-\ufaff"  # CJK
    "\uff66-\uff9f"  # kana
    "\U00020000-\U0003134f"  # CJK
)
_NO_SPACE_SPANS = tuple(
    (ord(first), ord(last)) for first, last in re.findall("(.)-(.)", _NO_SPACE_RANGES, re.DOTALL)
)
_NO_SPACE_RUN = re.compile(f"[{_NO_SPACE_RANGES}]+")
_NO_SPACE_CHAR = re.compile(f"[{_NO_SPACE_RANGES}]")
_HARAKAT = re.compile("[\u064b-\u065f\u0670]")
# Identifiers are ASCII letter/digit runs with an internal boundary: lower→upper, upper run→word,
# letter↔digit. They are found on the UTF-8 bytes with C-level passes only (a regular expression
# that looks behind at every position ran at 20 MB/s): one translation keeps the runs and blanks the
# rest, another gives each run's shape (a, A, 0 per character), and a run is an identifier when its
# shape holds a boundary. Non-ASCII bytes are all ≥ 0x80, so they only separate runs.
_ALNUM = (string.ascii_lowercase + string.ascii_uppercase + string.digits).encode()
_RUNS_ONLY = bytes(byte if byte in _ALNUM else 0x20 for byte in range(256))
_SHAPES = _RUNS_ONLY.translate(bytes.maketrans(_ALNUM, b"a" * 26 + b"A" * 26 + b"0" * 10))
_BOUNDARIES = (b"aA", b"AAa", b"a0", b"A0", b"0a", b"0A")


def _bounded(shape: bytes) -> bool:
    return any(boundary in shape for boundary in _BOUNDARIES)


_BOUNDED = PureMemo(_bounded)  # shape → whether it holds a boundary (hashes make many shapes)
_PART = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
_MAX_PARTS = 8  # more is a hash or an encoded blob, not an identifier
_HEX = re.compile(r"[0-9a-f]{8,}")  # ids and digests: their "parts" would be noise
_MAX_RUN_UNITS = 2_000  # characters of one run indexed as pairs


def _token_char(char: str) -> bool:
    """A character of a word: letters, digits, private use, and combining marks (JM-SEARCH-041)."""
    category = unicodedata.category(char)
    return category[0] in "LNM" or category == "Co"


@functools.cache
def _run_marks() -> re.Pattern[str]:
    """The combining marks a run without spaces may hold (Thai, Lao, Myanmar, Khmer, kana)."""
    marks = (char for first, last in _NO_SPACE_SPANS for char in _span_text(first, last) if _mark(char))
    return re.compile("[" + "".join(map(re.escape, marks)) + "]")


@functools.cache
def _markable_letter() -> re.Pattern[str]:
    """A character of a script whose letters may carry marks."""
    spans = [(first, last) for first, last in _NO_SPACE_SPANS if _run_marks().search(_span_text(first, last))]
    return re.compile("[" + "".join(f"{chr(first)}-{chr(last)}" for first, last in spans) + "]")


def _span_text(first: int, last: int) -> str:
    return "".join(map(chr, range(first, last + 1)))


def _units(run: str) -> list[str]:
    """The characters of a run without spaces, each with the combining marks that follow it."""
    if not _run_marks().search(run):
        return list(run)
    units: list[str] = []
    for char in run:
        if units and unicodedata.category(char)[0] == "M":
            units[-1] += char
        else:
            units.append(char)
    return units


def _grams(run: str) -> str:
    """A run's pairs and its last character: each character starts one of them."""
    units = _units(run)[:_MAX_RUN_UNITS]
    pairs = dict.fromkeys(map(operator.add, units, units[1:]))
    return " " + " ".join(pairs) + " " + units[-1] + " "


def _run_grams(match: re.Match[str]) -> str:
    return _grams(match.group())


def _with_grams(text: str) -> str:
    """The text with its runs without spaces as their grams. Only lines with a non-ASCII character
    are searched for runs: in English work, Unicode is a few lines of a long output, and the line
    split and ASCII test run in C."""
    lines = text.split("\n")
    for number, line in enumerate(lines):
        if not line.isascii():
            lines[number] = _NO_SPACE_RUN.sub(_run_grams, line)
    return "\n".join(lines)


def _parts(identifier: str) -> list[str]:
    return _PART.findall(identifier)


def _identifier_parts(identifier: bytes) -> tuple[str, ...]:
    """The parts an identifier adds to the index: none for a hex id or a blob of many parts."""
    text = identifier.decode("ascii")
    if _HEX.fullmatch(text):
        return ()
    parts = _parts(text)
    return tuple(parts) if len(parts) <= _MAX_PARTS else ()


_INDEXED_PARTS = PureMemo(_identifier_parts)  # identifiers recur: the code's names, across entries


def _identifiers(raw: bytes) -> dict[bytes, None]:
    """A text's identifiers (see _BOUNDARIES), each once, in order, from its UTF-8 bytes."""
    runs, shapes = raw.translate(_RUNS_ONLY).split(), raw.translate(_SHAPES).split()
    return dict.fromkeys(itertools.compress(runs, map(_BOUNDED.__getitem__, shapes)))


_ARABIC_LEAD = b"\xd9"  # the first UTF-8 byte of every haraka (U+064B-065F, U+0670)


def nfc(text: str) -> str:
    """The text in NFC, the one form that queries and entries are matched in (JM-SEARCH-330)."""
    return text if text.isascii() else unicodedata.normalize("NFC", text)


def index_text(text: str) -> str:
    """The text FTS5 indexes for an entry's (redacted) text: see the module's docstring."""
    text = nfc(text)
    raw = text.encode()
    if not text.isascii():
        if _ARABIC_LEAD in raw and _HARAKAT.search(text):
            text = _HARAKAT.sub("", text)
            raw = text.encode()
        if _NO_SPACE_CHAR.search(text):
            text = _with_grams(text)
    extra = " ".join(itertools.chain.from_iterable(map(_INDEXED_PARTS.__getitem__, _identifiers(raw))))
    return text + "\n" + extra if extra else text


def split_terms(query: str) -> list[str]:
    """Runs of word characters, cut where a script without spaces starts or ends (each such run is
    one term), without repeats, in order."""
    terms: list[str] = []
    seen: set[str] = set()
    for term in iter_terms(query):
        if term.casefold() not in seen:
            seen.add(term.casefold())
            terms.append(term)
    return terms


_ASCII_TERM = re.compile(r"[A-Za-z0-9]+")


def iter_terms(text: str) -> Iterator[str]:
    """The terms of a text as a query's are split (repeats included), one by one: a caller that
    stops early reads no further. A run's script is its first character's: the marks that follow a
    letter stay with it, whatever their own code points, so a letter after them of the other kind
    starts the next term (JM-SEARCH-230)."""
    if text.isascii():
        yield from (found.group() for found in _ASCII_TERM.finditer(text))
        return
    run: list[str] = []
    for char in _HARAKAT.sub("", nfc(text)) + " ":
        if _token_char(char) and not (run and _no_space(run[0]) != _no_space(char) and not _mark(char)):
            run.append(char)
            continue
        if run:
            yield "".join(run)
        run = [char] if _token_char(char) else []


def _without_marks_after(term: str) -> str:
    """A term of a script without spaces without the combining marks from outside the table that
    end it (a term holds such marks only at its end: a character of the table after one starts a
    new term). The index keeps them out of the run, so the run's grams are the term's without them."""
    end = len(term)
    while _mark(term[end - 1]) and not _no_space(term[end - 1]):
        end -= 1
    return term[:end]


def _mark(char: str) -> bool:
    return unicodedata.category(char)[0] == "M"


def _no_space(char: str) -> bool:
    return _NO_SPACE_CHAR.match(char) is not None


def _quote(token: str) -> str:
    return '"' + token.replace('"', '""') + '"'


@dataclass(frozen=True)
class Term:
    """One query term: how FTS5 finds its candidates, and what their lines must hold."""

    text: str
    match: str  # an FTS5 expression
    atoms: tuple[str, ...]  # lower-cased parts or characters, in order
    check: bool  # whether a candidate's line must be checked for the atoms in a row
    whole: str | None = None  # an FTS5 expression for the term as one token: no check needed

    @property
    def stop_word(self) -> bool:
        return self.text.lower() in STOP_WORDS


def query_terms(query: str) -> list[Term]:
    terms = []
    for text in split_terms(query):
        if _no_space(text[0]):
            run = _without_marks_after(text)
            units = [unit.lower() for unit in _units(run)]
            held = tuple(unit.lower() for unit in _units(text))  # the marks after it too
            marked = run != text  # the index holds no such mark in a run: the line is checked
            if len(units) == 1:  # the pairs it starts, or itself ending a run; a bare letter's
                # prefix also finds it carrying a mark, so in a script with marks they are checked
                markable = _markable_letter().match(text) is not None
                terms.append(Term(text, _quote(units[0]) + " *", held, markable or marked))
                continue
            grams = [a + b for a, b in itertools.pairwise(units)]
            terms.append(Term(text, " AND ".join(map(_quote, grams)), held, len(units) > 2 or marked))
            continue
        parts = _parts(text) if text.isascii() else []
        if len(parts) > 1:
            lowered = [part.lower() for part in parts]
            match = f"({_quote(text)} OR ({' AND '.join(map(_quote, lowered))}))"
            terms.append(Term(text, match, tuple(lowered), True, _quote(text)))
        else:
            terms.append(Term(text, _quote(text), (text.lower(),), False))
    return terms


def atoms(text: str) -> list[tuple[str, tuple[str, ...]]]:
    """A line as query terms see it: per word, its lower-cased whole and its atoms (an identifier's
    parts, a run without spaces' characters, else the word itself), so contiguity never crosses a
    word. A hex run and an identifier of more than 8 parts are one atom, as the index holds them
    (JM-SEARCH-231): a term's parts never match inside them."""
    words: list[tuple[str, tuple[str, ...]]] = []
    for term in split_terms_keep(text):
        lowered = term.lower()
        if _no_space(term[0]):
            words.append((lowered, tuple(unit.lower() for unit in _units(term))))
        elif term.isascii():  # a word of one part is that part
            parts = _INDEXED_PARTS[term.encode()]
            words.append((lowered, tuple(part.lower() for part in parts) if parts else (lowered,)))
        else:
            words.append((lowered, (lowered,)))
    return words


def split_terms_keep(text: str) -> list[str]:
    """Like `split_terms`, with repeats (the words of a line, in order)."""
    words: list[str] = []
    run: list[str] = []
    for char in _HARAKAT.sub("", text) + " ":
        if _token_char(char) and not (run and _no_space(run[0]) != _no_space(char) and not _mark(char)):
            run.append(char)
            continue
        if run:
            words.append("".join(run))
        run = [char] if _token_char(char) else []
    return words


def _in_row(atoms: Sequence[str], wanted: Sequence[str]) -> bool:
    """Whether `wanted` occurs in `atoms` as consecutive items (an atom never holds a NUL)."""
    return "\0" + "\0".join(wanted) + "\0" in "\0" + "\0".join(atoms) + "\0"


def contains_run(words: list[tuple[str, tuple[str, ...]]], wanted: tuple[str, ...], whole: str) -> bool:
    """Whether one word is `whole`, or holds `wanted` as consecutive parts or characters."""
    return any(word == whole or _in_row(parts, wanted) for word, parts in words)


def _stream(words: list[tuple[str, tuple[str, ...]]]) -> list[str]:
    """Words as one run of atoms: an identifier as its parts, a run without spaces as characters."""
    return [atom for _, parts in words for atom in parts]


def query_sequence(query: str) -> list[str]:
    """The query's atoms in order, repeats kept: what `sequence_in` looks for."""
    return _stream(atoms(query))


def sequence_in(words: list[tuple[str, tuple[str, ...]]], wanted: list[str]) -> bool:
    """Whether a line holds the query's atoms one after the other (a contiguous run of words)."""
    return _in_row(_stream(words), wanted)


# Where a text may hold atoms in a row: each atom literally, ignoring case, with nothing between
# them (one word) or only characters that are no word characters (`[\W_]` holds every one of
# those). Found by the regex engine in C, a necessary condition that the exact check then confirms
# on the words around each place, so a long text costs one scan, not a Python loop per character.
_GLUE = {False: "", True: r"[\W_]*"}
# the one character whose lower case is two (the regex would miss it), and the marks atoms drop
_UNSEARCHABLE = re.compile(f"\u0130|{_HARAKAT.pattern}")
# A word is followed this far on each side of a place: longer runs are blobs (the index holds no
# parts of them, nor the characters of a run past _MAX_RUN_UNITS), checked near the place only.
_WORD_REACH = 1_000


@functools.lru_cache(maxsize=512)
def _pattern(wanted: tuple[str, ...], apart: bool) -> re.Pattern[str]:
    return re.compile(_GLUE[apart].join(map(re.escape, wanted)), re.IGNORECASE)


def places(text: str, wanted: tuple[str, ...], apart: bool) -> list[tuple[int, int]] | None:
    """The stretches of whole words of `text` (start, end) around each place that may hold
    `wanted` in a row, one word (`apart` false) or a run of words (see _WORD_REACH); None when a
    place could be missed (the text has Arabic harakat, or a dotted capital I): then the whole text
    is to be checked."""
    if not text.isascii() and _UNSEARCHABLE.search(text):
        return None
    pattern = _pattern(wanted, apart)
    found: list[tuple[int, int]] = []
    reach = 0
    place = pattern.search(text)
    while place is not None:
        start, end = place.span()
        if end > reach:  # else inside the stretch just found
            low, high = max(0, start - _WORD_REACH), min(len(text), end + _WORD_REACH)
            while start > low and _token_char(text[start - 1]):
                start -= 1
            while end < high and _token_char(text[end]):
                end += 1
            found.append((start, end))
            reach = end
        place = pattern.search(text, place.start() + 1)  # overlapping places too
    return found


def _pieces(text: str, wanted: tuple[str, ...], apart: bool) -> list[str]:
    spans = places(text, wanted, apart)
    return [text] if spans is None else [text[start:end] for start, end in spans]


def holds_term(text: str, term: Term) -> bool:
    """Whether one word of the text is the term, or holds its atoms as consecutive parts or
    characters (JM-SEARCH-040, -042): `contains_run` on the words where that may be."""
    whole = term.text.lower()
    return any(contains_run(atoms(piece), term.atoms, whole) for piece in _pieces(text, term.atoms, False))


def holds_sequence(text: str, wanted: list[str]) -> bool:
    """Whether the text holds the query's atoms one after the other (JM-RANK-001): `sequence_in`
    on the words where that may be."""
    return any(sequence_in(atoms(piece), wanted) for piece in _pieces(text, tuple(wanted), True))


_STEMMER = Stemmer.Stemmer("porter")
_HEX_LETTERS = re.compile("[a-f]+")  # a stem of these letters may start a hex run (JM-SEARCH-231)


@functools.lru_cache(maxsize=1 << 14)
def stem_prefix(word: str) -> str | None:
    """The Porter stem of a word, when it is long enough to search as a prefix and differs from it,
    and no hex run can start with it (`faded`'s `fade` would find `fadedbeef`)."""
    lowered = word.lower()
    if not lowered.isascii() or not lowered.isalpha():
        return None
    stem: str = _STEMMER.stemWord(lowered)
    return stem if len(stem) >= 4 and stem != lowered and not _HEX_LETTERS.fullmatch(stem) else None


# Endings that inflect or derive an English word; each form made with them is kept only where
# Porter's stem of the form is the word itself
_ENDINGS = ("s", "ed", "ing", "er", "ers", "ment", "ments", "ion", "ions")
_VOWELS = frozenset("aeiou")


def _forms(word: str) -> set[str]:
    """The word (of four letters or more: stem_forms sees to it) with each ending, spelled as English
    does: `es` after a hissing sound, a final `e` dropped and a short final consonant doubled before
    an ending that starts with a vowel."""
    forms = set()
    short = word[-1] not in _VOWELS | {"w", "x", "y"} and word[-2] in _VOWELS
    short = short and word[-3] not in _VOWELS
    for ending in _ENDINGS:
        if ending[0] not in _VOWELS:
            forms.add(
                word + ("es" if ending == "s" and word.endswith(("s", "x", "z", "ch", "sh")) else ending)
            )
        elif word.endswith("e"):
            forms.add(word[:-1] + ending)
        else:
            forms.add(word + ending)
            if short:
                forms.add(word + word[-1] + ending)
    return forms


@functools.lru_cache(maxsize=1 << 14)
def stem_forms(word: str) -> tuple[str, ...]:
    """Other words whose Porter stem is this word, when the word is its own stem of four letters or
    more (`bookmark`: `bookmarks`, `bookmarked`, `bookmarking` …); a stem that differs from the word
    is searched as a prefix instead (stem_prefix). Only these whole words, never every word that
    starts with it: `cafe` must not find `cafebabe`; and no hex run (`deadbeef`: not `deadbeefed`)."""
    lowered = word.lower()
    if len(lowered) < 4 or not lowered.isascii() or not lowered.isalpha():
        return ()
    if _STEMMER.stemWord(lowered) != lowered:
        return ()
    forms = sorted(_forms(lowered))
    stems = _STEMMER.stemWords(forms)
    return tuple(
        form for form, stem in zip(forms, stems, strict=True) if stem == lowered and not _HEX.fullmatch(form)
    )


def _load_stop_words() -> frozenset[str]:
    text = resources.files("pimem").joinpath("stop-words-en.txt").read_text(encoding="utf-8")
    return frozenset(line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#"))


STOP_WORDS = _load_stop_words()
