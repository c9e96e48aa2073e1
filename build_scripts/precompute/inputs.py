"""The precompute's inputs: the sentences file, and the errors every step raises.

docs/data/sentences.yaml holds a ``sentences`` list of ``{id, lesson, text}``; `load_sentences`
reads and checks it, naming the entry at fault.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
SENTENCES = ROOT / "docs" / "data" / "sentences.yaml"
OUT = ROOT / "docs" / "assets" / "attention"
ID_PATTERN = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")


class PrecomputeError(Exception):
    """An input problem; the message says what is wrong and what to do."""


class ModelNotFound(PrecomputeError):
    pass


@dataclass(frozen=True)
class Sentence:
    id: str
    lesson: str
    text: str
    source: Path | None = None  # the sentences file it was read from (named in errors)

    def as_asset(self) -> dict:
        """The asset's ``sentence`` block."""
        return {"id": self.id, "lesson": self.lesson, "text": self.text}


def shown_path(path: Path | None) -> str:
    """A path as an error shows it: relative to the repository when inside it."""
    if path is None:
        return "the sentences file"
    path = Path(path).resolve()
    try:
        return path.relative_to(ROOT).as_posix()
    except ValueError:
        return str(path)


def load_sentences(path: Path = SENTENCES) -> list[Sentence]:
    """Read and check sentences.yaml: a `sentences` list of {id, lesson, text}.

    Raises PrecomputeError naming the entry: missing file, bad YAML, missing or empty
    fields, an id that is not lowercase-with-dashes, duplicate ids.
    """
    try:
        data = yaml.safe_load(Path(path).read_text("utf-8"))
    except FileNotFoundError:
        raise PrecomputeError(f"{path}: not found (pass --sentences FILE)") from None
    except yaml.YAMLError as err:
        raise PrecomputeError(f"{path}: not valid YAML: {err}") from None
    if not isinstance(data, dict) or not isinstance(data.get("sentences"), list):
        raise PrecomputeError(f"{path}: expected a top-level `sentences:` list")
    sentences, seen = [], {}
    for n, entry in enumerate(data["sentences"], start=1):
        where = f"{path}: sentence {n}"
        if not isinstance(entry, dict):
            raise PrecomputeError(f"{where}: expected a mapping with id, lesson and text")
        sid = entry.get("id")
        if not isinstance(sid, str) or not ID_PATTERN.match(sid):
            raise PrecomputeError(
                f"{where}: id {sid!r} must be lowercase letters and digits joined by dashes"
            )
        where = f"{path}: sentence {sid!r}"
        if sid in seen:
            raise PrecomputeError(f"{where}: duplicate id (also sentence {seen[sid]})")
        seen[sid] = n
        text, lesson = entry.get("text"), entry.get("lesson")
        if not isinstance(text, str) or not text.strip():
            raise PrecomputeError(f"{where}: text is empty; give the sentence to run")
        if not isinstance(lesson, str) or not lesson.strip():
            raise PrecomputeError(f"{where}: lesson is missing (the lesson this sentence serves)")
        unknown = set(entry) - {"id", "lesson", "text"}
        if unknown:
            raise PrecomputeError(f"{where}: unknown field(s) {sorted(unknown)}")
        sentences.append(Sentence(sid, lesson.strip(), text.strip(), Path(path)))
    if not sentences:
        raise PrecomputeError(f"{path}: the sentences list is empty")
    return sentences
