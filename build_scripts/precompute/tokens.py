"""A sentence's tokens as an asset lists them: ids, what a reader sees, offsets, specials.

Encoders add their own specials ([CLS] ... [SEP]). A decoder whose tokenizer adds nothing in
front gets ONE document-start token prepended (GPT-2: <|endoftext|>; SmolLM2: <|endoftext|>,
its documents' separator, not the chat marker <|im_start|> its tokenizer names as BOS),
unless the sentence's own text already begins with that token's text: then that token is the
first one, marked special, and nothing is added. Every asset lists what was added in
`tokens.added`.
"""

from __future__ import annotations

import re

from attention_labs.maps import Tokens

from .inputs import PrecomputeError, Sentence, shown_path
from .load import LoadedModel, tokenizer_problem

__all__ = ["MAX_TOKENS", "NEWLINE", "Tokens", "display_token", "tokenize"]

MAX_TOKENS = 64  # asset cap: at most 64 tokens per sentence, special tokens included
NEWLINE = "\u21b5"  # ↵ shows a newline token


def display_token(text: str, start: int, end: int, decoded: str) -> str:
    """What a reader sees for a token: its piece of the original text.

    GPT-2's byte-level markers (Ġ for a space, Ċ for a newline) become a real space and ↵;
    WordPiece continuations (##ing) show without the ##, in the sentence's own case. A
    character split over several byte-level tokens (an emoji) shows on each of them.
    """
    piece = text[start:end] if end > start else decoded
    if "\ufffd" in piece:
        piece = text[start:end]
    return piece.replace("\r\n", NEWLINE).replace("\n", NEWLINE).replace("\r", NEWLINE)


def document_start_id(loaded: LoadedModel) -> int | None:
    """The token a decoder's sentence starts with when its tokenizer adds none (see tokenize)."""
    tok = loaded.tokenizer
    name = loaded.resolved.document_start
    if name is None:
        return tok.bos_token_id
    tid = tok.convert_tokens_to_ids(name)
    if tid is None or tok.convert_ids_to_tokens(tid) != name:
        raise PrecomputeError(f"model {loaded.resolved.id!r}: its tokenizer has no {name!r}")
    return int(tid)


def _without_space(text: str) -> str:
    return re.sub(r"\s+", "", text)


def check_round_trip(loaded: LoadedModel, sentence: Sentence, ids: list[int]) -> None:
    """The sentence's own tokens must decode back to its text (after the tokenizer's own
    normalisation, e.g. lowercasing, and ignoring whitespace): catches an empty or wrong
    tokenizer that maps every word to the unknown token while the offsets look right."""
    tok = loaded.tokenizer
    unk = tok.unk_token_id
    if unk is not None and ids and all(i == unk for i in ids):
        raise PrecomputeError(
            tokenizer_problem(
                loaded.resolved, f"every token of sentence {sentence.id!r} is the unknown token"
            )
        )
    decoded = tok.decode(ids, clean_up_tokenization_spaces=False)
    normalizer = getattr(getattr(tok, "backend_tokenizer", None), "normalizer", None)
    expected = normalizer.normalize_str(sentence.text) if normalizer else sentence.text
    if _without_space(decoded) != _without_space(expected):
        raise PrecomputeError(
            tokenizer_problem(
                loaded.resolved,
                f"sentence {sentence.id!r} decodes to {decoded[:60]!r}, not its own text",
            )
        )


def tokenize(loaded: LoadedModel, sentence: Sentence) -> Tokens:
    """Token ids, display strings, offsets and special flags for one sentence.

    Encoders add their own specials ([CLS] ... [SEP]). The rule for a decoder whose
    tokenizer adds nothing in front: one document-start token is prepended (GPT-2's BOS
    <|endoftext|>, as TransformerLens does; SmolLM2's <|endoftext|>,
    `registry.Packaged.document_start`), so that every query has a first key that is not a
    word of the sentence, UNLESS the text itself begins with that token's text: the
    tokenizer then reads it as that token, which is marked special and nothing is added
    (never a second, unmarked one). Every special token of the tokenizer is marked special
    wherever it comes from. `Tokens.added` lists each token that is not from the text:
    position, id, text and who added it ("tokenizer" or "precompute").

    Raises PrecomputeError naming the sentence when it has no tokens, does not decode back
    to its text (a broken tokenizer), or has more than MAX_TOKENS or the model's positions
    (naming the sentences file that was read).
    """
    tok = loaded.tokenizer
    enc = tok(
        sentence.text,
        return_offsets_mapping=True,
        return_special_tokens_mask=True,
        add_special_tokens=True,
    )
    ids = [int(i) for i in enc["input_ids"]]
    offsets = [list(map(int, o)) for o in enc["offset_mapping"]]
    from_tokenizer = [bool(s) for s in enc["special_tokens_mask"]]
    specials = set(tok.all_special_ids)
    special = [a or i in specials for a, i in zip(from_tokenizer, ids, strict=True)]
    own = [i for i, a in zip(ids, from_tokenizer, strict=True) if not a]
    if not any(not s for s in special) or not own:
        raise PrecomputeError(f"sentence {sentence.id!r}: no tokens (the text is empty)")
    check_round_trip(loaded, sentence, own)
    by = ["tokenizer" if a else None for a in from_tokenizer]
    bos_added = bool(from_tokenizer and from_tokenizer[0])
    start = None if bos_added else document_start_id(loaded)
    if start is not None and ids[0] != start:
        ids, offsets, special = [start, *ids], [[0, 0], *offsets], [True, *special]
        by = ["precompute", *by]
        bos_added = True
    added = [
        {"position": n, "id": ids[n], "text": tok.convert_ids_to_tokens(ids[n]), "by": b}
        for n, b in enumerate(by)
        if b is not None
    ]
    cap = min(MAX_TOKENS, loaded.max_positions or MAX_TOKENS)
    if len(ids) > cap:
        limit = (
            f"the {MAX_TOKENS}-token asset cap"
            if cap == MAX_TOKENS
            else f"the model's {cap} positions"
        )
        raise PrecomputeError(
            f"sentence {sentence.id!r}: {len(ids)} tokens with {loaded.resolved.id} is over "
            f"{limit}; shorten it in {shown_path(sentence.source)}"
        )
    shown = []
    for tid, (start_, end), is_special in zip(ids, offsets, special, strict=True):
        if is_special:
            shown.append(tok.convert_ids_to_tokens(tid))
        else:
            shown.append(display_token(sentence.text, start_, end, tok.decode([tid])))
    return Tokens(ids, shown, offsets, special, bos_added, added)
