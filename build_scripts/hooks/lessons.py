"""A lesson is its Markdown file: the nav, its notebook link and its prerequisites come
from the files.

* **Nav.** The Lessons section is ``docs/lessons/NN-topic.md`` in number order, each titled
  by its front matter ``title:``; the Notebooks section is ``docs/notebooks/NN-topic.py``,
  titled like the lesson of the same name. mkdocs.yml lists Home, Explorer and About; the
  sections go after Home and after Explorer (or replace sections of those names).
* **Companion notebook.** A lesson whose notebook exists gets a "Companion notebook" note
  after its Summary section (before Sources when it has no Summary), unless it links the
  notebook itself.
* **Prerequisites.** Front matter ``prerequisites:`` is ``none``, a lesson name, or a list
  of lesson names and free text, e.g. ``prerequisites: [01-why-attention, 02-queries-and-keys]``.
  A lesson name (two digits, a hyphen, a slug) must be a file of docs/lessons/ (else the
  lesson gate fails the build naming the file and line); it is shown to the reader as a
  link titled with that lesson's title, under the page's first heading.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from mkdocs.utils.meta import get_data

from .scanner import outside_fences

LESSONS = "lessons"
NOTEBOOKS = "notebooks"
LESSON_NAME = re.compile(r"^\d{2}-[a-z0-9]+(?:-[a-z0-9]+)*$")
PREREQ_LINE = re.compile(r"^prerequisites[ \t]*:")


@dataclass(frozen=True)
class Lesson:
    name: str  # NN-topic
    title: str
    notebook: bool  # docs/notebooks/<name>.py exists


def title_from(name: str) -> str:
    """``04-multi-head-attention`` -> ``Multi head attention``; a name without a number
    (a notebook of a page that is not a lesson): ``code-it-yourself`` -> ``Code it yourself``."""
    words = name.split("-")
    return " ".join(words[1:] if words[0].isdigit() else words).capitalize()


def discover(docs_dir) -> dict[str, Lesson]:
    """The lessons of ``docs_dir``, by name, in number (file name) order."""
    docs = Path(docs_dir)
    found = {}
    for path in sorted((docs / LESSONS).glob("*.md")):
        try:
            _, meta = get_data(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            meta = {}
        title = meta.get("title") if isinstance(meta.get("title"), str) else None
        notebook = (docs / NOTEBOOKS / f"{path.stem}.py").is_file()
        found[path.stem] = Lesson(path.stem, title or title_from(path.stem), notebook)
    return found


def notebook_names(docs_dir) -> list[str]:
    return [p.stem for p in sorted((Path(docs_dir) / NOTEBOOKS).glob("*.py"))]


def _key(item) -> str | None:
    return next(iter(item)) if isinstance(item, dict) and len(item) == 1 else None


def _value(item):
    return next(iter(item.values())) if isinstance(item, dict) and len(item) == 1 else item


def derive_nav(nav: list, lessons: dict[str, Lesson], notebooks: list[str]) -> list:
    """``nav`` (mkdocs.yml's) with the Lessons and Notebooks sections made from the files."""
    nav = [item for item in nav if _key(item) not in ("Lessons", "Notebooks")]
    lesson_items = [{lesson.title: f"{LESSONS}/{name}.md"} for name, lesson in lessons.items()]
    notebook_items = [
        {(lessons[n].title if n in lessons else title_from(n)): f"{NOTEBOOKS}/{n}.py"}
        for n in notebooks
    ]

    def after(pred) -> int:
        return next((i + 1 for i, item in enumerate(nav) if pred(_value(item))), len(nav))

    if lesson_items:
        nav.insert(after(lambda v: v == "index.md"), {"Lessons": lesson_items})
    if notebook_items:
        at = after(lambda v: isinstance(v, str) and v.startswith("explorer/"))
        nav.insert(at, {"Notebooks": notebook_items})
    return nav


def configure(config) -> dict[str, Lesson]:
    """on_config: find the lessons (returned, for the build's state), derive the nav (when
    mkdocs.yml has one)."""
    lessons = discover(config["docs_dir"])
    if config.get("nav") is not None:
        config["nav"] = derive_nav(config["nav"], lessons, notebook_names(config["docs_dir"]))
    return lessons


# ----------------------------------------------------------------------------
# prerequisites


def prerequisites(meta: dict) -> list[str] | None:
    """The front matter's prerequisites as a list of items; [] for ``none``."""
    value = meta.get("prerequisites")
    if value is None:
        return None
    items = value if isinstance(value, list) else [value]
    items = [str(item).strip() for item in items if str(item).strip()]
    return [] if [i.lower() for i in items] == ["none"] else items


def prerequisite_problems(source: str, meta: dict, where: str, known) -> list[str]:
    """A message per prerequisite that looks like a lesson name but is not a lesson."""
    items = prerequisites(meta) or []
    line = next((k + 1 for k, text in enumerate(source.split("\n")) if PREREQ_LINE.match(text)), 1)
    return [
        f"{where}:{line}: prerequisite {item!r} is not a lesson: name a file of "
        f"docs/lessons/ without '.md' ({', '.join(sorted(known)) or 'none yet'}), "
        "or write 'none'"
        for item in items
        if LESSON_NAME.match(item) and item not in known
    ]


def prerequisites_line(items: list[str], lessons: dict[str, Lesson]) -> str:
    """The Markdown shown to the reader, e.g. ``**Before this lesson:** [Title](01-x.md).``"""
    if not items:
        return "**Before this lesson:** nothing; it starts from scratch."
    shown = [f"[{lessons[item].title}]({item}.md)" if item in lessons else item for item in items]
    text = "; ".join(shown)
    return f"**Before this lesson:** {text}" + ("" if text.endswith((".", "!", "?")) else ".")


# ----------------------------------------------------------------------------
# the page


def notebook_note(name: str) -> list[str]:
    return [
        '!!! note "Companion notebook"',
        f"    The [companion notebook](../{NOTEBOOKS}/{name}.py) goes through this lesson in",
        "    Jupyter; it was run when this site was built, and you can download it to run it",
        "    yourself.",
        "",
    ]


def _insert_notebook_note(markdown: str, name: str) -> str:
    if f"{NOTEBOOKS}/{name}.py" in markdown:
        return markdown  # the lesson links its notebook itself
    lines = markdown.split("\n")
    prose = outside_fences(markdown)
    headings = [k for k, line in enumerate(prose) if re.match(r"^##[ \t]+\S", line)]
    summary = next((k for k in headings if re.match(r"^##[ \t]+Summary\b", prose[k])), None)
    sources = next((k for k in headings if re.match(r"^##[ \t]+Sources\b", prose[k])), None)
    if summary is not None:
        at = next((k for k in headings if k > summary), len(lines))
    else:
        at = sources if sources is not None else len(lines)
    return "\n".join(lines[:at] + notebook_note(name) + lines[at:])


def _insert_prerequisites(markdown: str, line: str) -> str:
    lines = markdown.split("\n")
    prose = outside_fences(markdown)
    h1 = next((k for k, text in enumerate(prose) if re.match(r"^#[ \t]+\S", text)), None)
    at = 0 if h1 is None else h1 + 1
    return "\n".join(lines[:at] + ["", line, ""] + lines[at:])


def on_page_markdown(markdown: str, page, lessons: dict[str, Lesson] | None) -> str:
    """A lesson's Markdown with its notebook note and prerequisites line; ``lessons``: the
    site's (the build's, ``BuildState.lessons``)."""
    src = page.file.src_uri
    if not (src.startswith(f"{LESSONS}/") and src.endswith(".md")):
        return markdown
    name = Path(src).stem
    lessons = lessons or {}
    if lessons.get(name) and lessons[name].notebook:
        markdown = _insert_notebook_note(markdown, name)
    items = prerequisites(getattr(page, "meta", None) or {})
    if items is not None:
        markdown = _insert_prerequisites(markdown, prerequisites_line(items, lessons))
    return markdown
