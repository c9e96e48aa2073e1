"""BERT's WordPiece tokenizer in pure Python, as all-MiniLM-L6-v2 uses it.

`tokenizers` (Rust) is not in Pyodide, so the browser needs its own; this one gives the same
ids and offsets as the model's ``tokenizer.json`` for the settings that model uses (checked
against `tokenizers` in tests/python/test_minilm_tokenizer.py):

1. special tokens typed in the text ([CLS], [SEP], [MASK], [PAD], [UNK]) are kept whole, as
   the model's added vocabulary does (``normalized: false``: matched before normalising);
2. BertNormalizer: clean the text (drop NUL, U+FFFD and control characters; every other
   whitespace becomes a space), put spaces around CJK ideographs, strip accents (NFD, then
   drop the non-spacing marks, category Mn) and lowercase, character by character;
3. BertPreTokenizer: split on whitespace, and make every punctuation character a word of its
   own (Unicode category P*, plus the ASCII symbols ``$+<=>^`|~``);
4. WordPiece: per word, the longest piece of the vocabulary from the start, then the longest
   ``##`` continuation, and so on; a word with a piece that matches nothing, or longer than
   100 characters, becomes one [UNK];
5. ``[CLS] ... [SEP]`` around it; at most `MAX_TOKENS` (128) tokens in all.

Sources: Devlin et al. 2019, "BERT: Pre-training of Deep Bidirectional Transformers for
Language Understanding", NAACL (section 3 and appendix A.2: WordPiece, 30,000 tokens, the
uncased model's lowercasing and accent stripping); Wu et al. 2016, "Google's Neural Machine
Translation System" (arXiv:1609.08144, section 4.1: wordpieces); the reference
implementation is ``tokenization.py`` of google-research/bert (BasicTokenizer,
WordpieceTokenizer).

Offsets are ``[start, end)`` character indices into the text the caller gave (the special
tokens that the tokenizer adds have ``[0, 0]``), so a reader sees each piece in its own case.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

__all__ = ["MAX_TOKENS", "Encoding", "WordPiece", "TooManyTokens"]

MAX_TOKENS = 128  # the model's tokenizer.json truncates at 128; we refuse instead
MAX_WORD_CHARS = 100  # longer words become [UNK] (max_input_chars_per_word)
SPECIALS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")

# CJK Unified Ideographs and their extensions and compatibility blocks: the ranges BERT's
# _is_chinese_char and tokenizers' BertNormalizer pad with spaces. Hangul, kana and Thai are
# not in them (they are split like any other letters).
_CJK = (
    (0x4E00, 0x9FFF),
    (0x3400, 0x4DBF),
    (0x20000, 0x2A6DF),
    (0x2A700, 0x2B73F),
    (0x2B740, 0x2B81F),
    (0x2B920, 0x2CEAF),
    (0xF900, 0xFAFF),
    (0x2F800, 0x2FA1F),
)
_ASCII_PUNCT = set("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")


class TooManyTokens(ValueError):
    """The text needs more tokens than the model's cap (`MAX_TOKENS`)."""

    def __init__(self, count: int, limit: int = MAX_TOKENS):
        self.count, self.limit = count, limit
        over = count - limit
        super().__init__(
            f"text is {count} tokens long with [CLS] and [SEP]; all-MiniLM-L6-v2 takes at most "
            f"{limit} here: shorten it by {over} token{'s' if over > 1 else ''}"
        )


@dataclass
class Encoding:
    """One encoded text: parallel lists, one entry per token (``seq_len`` of them).

    ``ids`` vocabulary ids; ``tokens`` the vocabulary strings (``##ing``); ``offsets``
    ``[start, end)`` into the text; ``special`` True for every special token ([CLS], [SEP],
    [UNK], and [MASK] or [PAD] typed in the text), as the precomputed assets mark them;
    ``text`` the piece of the original text each token covers (the token string for a
    special token), as the explorer shows it.
    """

    ids: list[int] = field(default_factory=list)
    tokens: list[str] = field(default_factory=list)
    offsets: list[list[int]] = field(default_factory=list)
    special: list[bool] = field(default_factory=list)
    text: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.ids)


def _is_cjk(cp: int) -> bool:
    return any(lo <= cp <= hi for lo, hi in _CJK)


def _is_control(ch: str) -> bool:
    if ch in "\t\n\r":
        return False  # whitespace, not control, for BERT
    return unicodedata.category(ch) in ("Cc", "Cf", "Co", "Cs")


def _is_punctuation(ch: str) -> bool:
    return ch in _ASCII_PUNCT or unicodedata.category(ch).startswith("P")


def normalize(text: str) -> list[tuple[str, int]]:
    """BertNormalizer (clean text, CJK spacing, accents, lowercase) with alignment.

    Returns a list of (character, index of the original character it came from); a space
    added around a CJK ideograph carries that ideograph's index.
    """
    out: list[tuple[str, int]] = []
    for i, ch in enumerate(text):
        cp = ord(ch)
        if cp == 0 or cp == 0xFFFD or _is_control(ch):
            continue
        if ch.isspace():
            out.append((" ", i))
            continue
        if _is_cjk(cp):
            out.extend(((" ", i), (ch, i), (" ", i)))
            continue
        # strip accents first, then lowercase (tokenizers' order), one character at a time
        for d in unicodedata.normalize("NFD", ch):
            if unicodedata.category(d) == "Mn":
                continue
            out.extend((lower, i) for lower in d.lower())
    return out


def pre_tokenize(chars: list[tuple[str, int]]) -> list[list[tuple[str, int]]]:
    """BertPreTokenizer: words split on spaces, each punctuation character a word alone."""
    words: list[list[tuple[str, int]]] = []
    current: list[tuple[str, int]] = []
    for ch, i in chars:
        if ch.isspace():
            if current:
                words.append(current)
            current = []
        elif _is_punctuation(ch):
            if current:
                words.append(current)
            words.append([(ch, i)])
            current = []
        else:
            current.append((ch, i))
    if current:
        words.append(current)
    return words


class WordPiece:
    """A WordPiece tokenizer over one vocabulary (BERT uncased rules, see the module).

    Args:
        vocab: the vocabulary, one token per line in id order (the model's ``vocab.txt``),
            as a list of strings or as the file's text.

    Raises:
        ValueError: the vocabulary lacks one of [PAD], [UNK], [CLS], [SEP], [MASK].
    """

    def __init__(self, vocab: list[str] | str):
        if isinstance(vocab, str):
            vocab = vocab.split("\n")
            if vocab and vocab[-1] == "":
                vocab.pop()  # the file's final newline
        self.vocab = {token: i for i, token in enumerate(vocab)}
        missing = [s for s in SPECIALS if s not in self.vocab]
        if missing:
            raise ValueError(f"vocab has no {', '.join(missing)}: is it BERT's vocab.txt?")
        self.unk_id = self.vocab["[UNK]"]
        self._specials = re.compile("|".join(re.escape(s) for s in SPECIALS))

    def word_pieces(self, word: str) -> list[tuple[str, int, int]]:
        """Greedy longest-match-first WordPiece of one normalised word.

        Returns [(token, start, end)] with character positions in `word`; one ``("[UNK]", 0,
        len(word))`` when the word is longer than 100 characters or some remainder starts no
        vocabulary piece.
        """
        if len(word) > MAX_WORD_CHARS:
            return [("[UNK]", 0, len(word))]
        pieces, start = [], 0
        while start < len(word):
            end = len(word)
            while end > start:
                piece = word[start:end] if start == 0 else "##" + word[start:end]
                if piece in self.vocab:
                    break
                end -= 1
            else:
                return [("[UNK]", 0, len(word))]
            pieces.append((piece, start, end))
            start = end
        return pieces

    def _encode_span(self, text: str, base: int, enc: Encoding) -> None:
        for word in pre_tokenize(normalize(text)):
            chars = "".join(ch for ch, _ in word)
            for token, s, e in self.word_pieces(chars):
                start, end = base + word[s][1], base + word[e - 1][1] + 1
                enc.ids.append(self.vocab[token])
                enc.tokens.append(token)
                enc.offsets.append([start, end])
                enc.special.append(token == "[UNK]")  # any special id, as the precompute

    def encode(self, text: str, max_tokens: int = MAX_TOKENS) -> Encoding:
        """Tokenize `text` to ``[CLS] pieces [SEP]``.

        Args:
            text: any string (it may be empty: the result is then [CLS] [SEP]).
            max_tokens: the cap with [CLS] and [SEP] (default `MAX_TOKENS`, 128).

        Returns:
            an `Encoding` of seq_len = number of pieces + 2 tokens.

        Raises:
            TypeError: text is not a str.
            TooManyTokens (a ValueError): more than `max_tokens` tokens; its message gives
                the count and the limit.
        """
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        enc = Encoding()
        self._add_special(enc, "[CLS]", [0, 0])
        pos = 0
        for m in self._specials.finditer(text):
            self._encode_span(text[pos : m.start()], pos, enc)
            self._add_special(enc, m.group(), [m.start(), m.end()])
            pos = m.end()
        self._encode_span(text[pos:], pos, enc)
        self._add_special(enc, "[SEP]", [0, 0])
        if len(enc) > max_tokens:
            raise TooManyTokens(len(enc), max_tokens)
        enc.text = [
            tok if sp else text[s:e]
            for tok, sp, (s, e) in zip(enc.tokens, enc.special, enc.offsets, strict=True)
        ]
        return enc

    def _add_special(self, enc: Encoding, token: str, offsets: list[int]) -> None:
        enc.ids.append(self.vocab[token])
        enc.tokens.append(token)
        enc.offsets.append(offsets)
        enc.special.append(True)
