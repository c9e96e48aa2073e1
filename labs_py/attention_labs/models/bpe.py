"""Byte-level BPE in pure Python, as SmolLM2 uses it: its vocabulary and merges read from the
model's own GGUF file (the fields ``tokenizer.ggml.tokens``, ``.token_type``, ``.merges``).

`tokenizers` (Rust) is not in Pyodide, so the browser needs its own; this one gives the same
ids as the tokenizer that transformers builds from the same GGUF (``GPT2Tokenizer`` with the
file's vocabulary and merges and its control tokens added whole; checked against it in
tests/python/test_smollm2_tokenizer.py). Four steps:

1. **Special tokens typed in the text** (the 17 the file marks as control, type 3:
   ``<|endoftext|>``, ``<|im_start|>``, ``<|im_end|>``, ``<file_sep>``...) are cut out whole,
   leftmost and longest first, and become their own ids.
2. **Pre-tokenization**, GPT-2's rule (Radford et al. 2019, the regular expression of its
   ``encoder.py``, which ``tokenizers``' ByteLevel pre-tokenizer uses)::

       's|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+

   Python's `re` has no ``\\p{L}``, so `pre_tokenize` walks the text by hand with
   `unicodedata` (letters: category L*, numbers: N*, whitespace: Unicode White_Space).
   A word keeps the one space before it (" cat"); a run of spaces gives all but its last to
   a word of spaces. The file's ``tokenizer.ggml.pre`` is ``smollm``, which transformers does
   not map to another rule: it splits with this one, and so does this module.
3. **Bytes as characters**: each word's UTF-8 bytes, each byte written as one printable
   character (GPT-2's ``bytes_to_unicode``: a space is ``Ġ``, a newline ``Ċ``), so that
   every text, emoji and all, is made of the 256 base tokens and nothing is unknown.
4. **BPE** (Sennrich et al. 2016): merge the adjacent pair of lowest rank in ``merges``
   (48,900 of them, best first), again and again, until no pair of the word is in the list;
   each remaining piece is a token of the vocabulary (49,152).

Nothing is added around the text (the file's ``add_bos_token`` is false); the map source
prepends ``<|endoftext|>`` itself, as the precomputed maps do (`own_decoder`).

Offsets are ``[start, end)`` character indices into the caller's text. A character split over
several tokens (an emoji is often 2 to 4 byte tokens) gives each of them the whole
character's span, as ``tokenizers`` does.

Sources: Sennrich, Haddow and Birch 2016, "Neural Machine Translation of Rare Words with
Subword Units", ACL (BPE); Radford et al. 2019, "Language Models are Unsupervised Multitask
Learners" (section 2.2: byte-level BPE); Allal et al. 2025, "SmolLM2: When Smol Goes Big"
(the model and its 49,152-token vocabulary).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

__all__ = [
    "MAX_TOKENS",
    "BytePairTokenizer",
    "Encoding",
    "TooManyTokens",
    "bytes_to_unicode",
    "pre_tokenize",
]

MAX_TOKENS = 256  # the page's cap on a prompt; the model itself reads 8,192 positions
CONTROL = 3  # tokenizer.ggml.token_type of a control (special) token

# Unicode's White_Space property (what \s matches in tokenizers' regular expressions).
# Python's str.isspace differs: it also counts U+001C..U+001F, which \s does not.
WHITESPACE = frozenset(
    "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)
_CONTRACTIONS = ("re", "ve", "ll", "s", "t", "m", "d")  # after an apostrophe, longest first


def bytes_to_unicode() -> dict[int, str]:
    """GPT-2's table: each of the 256 byte values -> one printable character.

    The bytes that are printable Latin-1 characters ('!'..'~', '¡'..'¬', '®'..'ÿ') stand for
    themselves; the other 68 (control characters, the space, ...) get the characters from
    U+0100 on, in byte order: so the space (byte 32) is 'Ġ' (U+0120) and the newline 'Ċ'.
    """
    keep = [*range(ord("!"), ord("~") + 1), *range(0xA1, 0xAC + 1), *range(0xAE, 0xFF + 1)]
    table, extra = {}, 0
    for b in range(256):
        if b in keep:
            table[b] = chr(b)
        else:
            table[b] = chr(256 + extra)
            extra += 1
    return table


def _kind(ch: str) -> str:
    """'s' whitespace, 'L' letter, 'N' number, 'o' anything else (punctuation, symbols...)."""
    if ch in WHITESPACE:
        return "s"
    cat = unicodedata.category(ch)[0]
    return cat if cat in "LN" else "o"


def pre_tokenize(text: str) -> list[tuple[int, int]]:
    """GPT-2's split of `text` into words, as ``[start, end)`` character spans that cover it.

    The regular expression's alternatives in order, at each position: a contraction ('s 't 're
    've 'm 'll 'd, lowercase only); an optional space then letters; an optional space then
    digits; an optional space then other characters (neither whitespace, letter nor digit);
    whitespace not followed by a non-space (all of a run but its last character when a word
    follows, the whole run at the end of the text); else one whitespace character.
    """
    kinds = [_kind(ch) for ch in text]
    n, i, spans = len(text), 0, []
    while i < n:
        start = i
        if text[i] == "'" and i + 1 < n:
            found = next((c for c in _CONTRACTIONS if text.startswith(c, i + 1)), None)
            if found:
                spans.append((i, i + 1 + len(found)))
                i += 1 + len(found)
                continue
        # " ?\p{L}+", " ?\p{N}+", " ?[^\s\p{L}\p{N}]+": one class, after at most one space
        j = i + 1 if text[i] == " " and i + 1 < n and kinds[i + 1] != "s" else i
        if kinds[j] != "s":
            k = kinds[j]
            j += 1
            while j < n and kinds[j] == k:
                j += 1
            spans.append((start, j))
            i = j
            continue
        # whitespace: "\s+(?!\S)" then "\s+"
        j = i
        while j < n and kinds[j] == "s":
            j += 1
        if j < n and j - i > 1:
            j -= 1  # leave the last space to the word that follows
        elif j < n:
            j = i + 1  # one whitespace character before a word: "\s+" takes just it
        spans.append((i, j))
        i = j
    return spans


class TooManyTokens(ValueError):
    """The text needs more tokens than the cap (`MAX_TOKENS`, or the caller's)."""

    def __init__(self, count: int, limit: int):
        self.count, self.limit = count, limit
        over = count - limit
        super().__init__(
            f"the text is {count} tokens long; at most {limit} are read here: shorten it by "
            f"{over} token{'s' if over > 1 else ''}"
        )


@dataclass
class Encoding:
    """One encoded text: parallel lists, one entry per token (``seq_len`` of them).

    ``ids`` vocabulary ids; ``tokens`` the vocabulary strings in the byte alphabet (``Ġcat``);
    ``offsets`` ``[start, end)`` into the text; ``special`` True for a control token typed in
    the text; ``text`` what a reader sees of each token: its piece of the text (a newline
    as ↵), the token itself for a special one.
    """

    ids: list[int] = field(default_factory=list)
    tokens: list[str] = field(default_factory=list)
    offsets: list[list[int]] = field(default_factory=list)
    special: list[bool] = field(default_factory=list)
    text: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.ids)


def shown(piece: str) -> str:
    """A token's piece of text as the explorer shows it: newlines as ↵ (as the precompute)."""
    return piece.replace("\r\n", "\u21b5").replace("\n", "\u21b5").replace("\r", "\u21b5")


class BytePairTokenizer:
    """A byte-level BPE tokenizer over one vocabulary and its merges (see the module).

    Args:
        tokens: the vocabulary in id order (``tokenizer.ggml.tokens``), in the byte alphabet.
        merges: the merge rules, best first, each ``"left right"`` (``tokenizer.ggml.merges``).
        token_type: one type per token (``tokenizer.ggml.token_type``); those of type 3
            (control) are matched whole in the text. None: no special tokens.

    Raises:
        ValueError: a merge is not two tokens separated by one space, or the vocabulary lacks
            one of the 256 byte characters (it could not encode every text).
    """

    def __init__(self, tokens: list[str], merges: list[str], token_type: list[int] | None = None):
        self.tokens = list(tokens)
        self.vocab = {t: i for i, t in enumerate(self.tokens)}
        self.ranks = {}
        for rank, merge in enumerate(merges):
            pair = tuple(merge.split(" "))
            if len(pair) != 2:
                raise ValueError(f"merge {rank} ({merge!r}) is not two tokens and one space")
            self.ranks.setdefault(pair, rank)
        self.byte_char = bytes_to_unicode()
        self.char_byte = {c: b for b, c in self.byte_char.items()}
        types = token_type or [1] * len(self.tokens)
        self.special_ids = {i for i, t in enumerate(types) if t == CONTROL}
        specials = sorted((self.tokens[i] for i in self.special_ids), key=len, reverse=True)
        # longest first: at one position the longest special token wins
        self._specials = re.compile("|".join(map(re.escape, specials))) if specials else None
        self._cache: dict[str, list[str]] = {}

    def bpe(self, word: str) -> list[str]:
        """The tokens of one word written in the byte alphabet (e.g. ``"Ġlower"``): apply the
        merge of lowest rank among adjacent pairs until none applies. Returns the pieces."""
        if word in self._cache:
            return self._cache[word]
        parts = list(word)
        while len(parts) > 1:
            pairs = list(zip(parts[:-1], parts[1:], strict=True))
            ranked = [self.ranks.get(pair) for pair in pairs]
            best = min((r for r in ranked if r is not None), default=None)
            if best is None:
                break
            left, right = pairs[ranked.index(best)]
            merged, n = [], 0
            while n < len(parts):  # every occurrence of the pair, left to right
                if n + 1 < len(parts) and parts[n] == left and parts[n + 1] == right:
                    merged.append(left + right)
                    n += 2
                else:
                    merged.append(parts[n])
                    n += 1
            parts = merged
        if len(self._cache) < 20_000:
            self._cache[word] = parts
        return parts

    def _encode_span(self, text: str, base: int, enc: Encoding) -> None:
        for start, end in pre_tokenize(text):
            # each byte of the word as a character, with the index in text of the character
            # it belongs to; a byte whose character is not in the vocabulary (21 of the 256
            # are not: bytes no UTF-8 text uses, and rare control characters) is dropped, as
            # tokenizers' BPE drops a symbol it has no token for (there is no unknown token)
            chars, owner = [], []
            for n, ch in enumerate(text[start:end]):
                for b in ch.encode("utf-8"):
                    if self.byte_char[b] in self.vocab:
                        chars.append(self.byte_char[b])
                        owner.append(base + start + n)
            at = 0
            for piece in self.bpe("".join(chars)) if chars else ():
                enc.ids.append(self.vocab[piece])
                enc.tokens.append(piece)
                enc.offsets.append([owner[at], owner[at + len(piece) - 1] + 1])
                enc.special.append(False)
                at += len(piece)

    def encode(self, text: str, max_tokens: int = MAX_TOKENS) -> Encoding:
        """Tokenize `text` (nothing is added before or after it).

        Args:
            text: any string; the empty string gives no tokens.
            max_tokens: the cap (default `MAX_TOKENS`, 256).

        Returns:
            an `Encoding` of seq_len tokens.

        Raises:
            TypeError: text is not a str.
            TooManyTokens (a ValueError): more than `max_tokens` tokens; its message gives the
                count and the limit.
        """
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        enc, pos = Encoding(), 0
        for m in self._specials.finditer(text) if self._specials else ():
            self._encode_span(text[pos : m.start()], pos, enc)
            enc.ids.append(self.vocab[m.group()])
            enc.tokens.append(m.group())
            enc.offsets.append([m.start(), m.end()])
            enc.special.append(True)
            pos = m.end()
        self._encode_span(text[pos:], pos, enc)
        if len(enc) > max_tokens:
            raise TooManyTokens(len(enc), max_tokens)
        enc.text = [
            tok if sp else shown(text[s:e])
            for tok, sp, (s, e) in zip(enc.tokens, enc.special, enc.offsets, strict=True)
        ]
        return enc

    def token_bytes(self, token_id: int) -> bytes:
        """The bytes a token stands for (a special token: its text in UTF-8)."""
        token = self.tokens[token_id]
        if token_id in self.special_ids:
            return token.encode("utf-8")
        return bytes(self.char_byte[c] for c in token)

    def decode(self, ids) -> str:
        """The text of `ids`: their bytes joined, then read as UTF-8 (a character cut between
        tokens that are not all here becomes U+FFFD, as transformers' ``errors="replace"``)."""
        return b"".join(self.token_bytes(int(i)) for i in ids).decode("utf-8", errors="replace")
