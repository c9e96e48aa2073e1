"""Numbers in prose (build_scripts/hooks/numbers.py): ``{{ expr }}`` filled from a page's
```numbers fences at build time, left alone in code, failing with docs/<file>:<line>."""

import pytest
from helpers import broken_lesson, mkdocs_build, project_copy

from build_scripts import hooks
from build_scripts.hooks.numbers import NumbersError

FENCE = "```numbers\nimport numpy\nx = np.array([1.0, 2.5])\n```\n"


def render(text, offset=0):
    return hooks.render_page(text, "lessons/x.md", offset, kinds=())


def test_expressions_are_filled_and_the_fence_is_not_shown():
    prose = "Sum {{ x.sum():.2f }}, all \\(({{ x:g }})\\), n={{ len(x) }}.\n"
    out = render(f"# T\n\n{FENCE}\n{prose}")
    assert "Sum 3.50, all \\((1, 2.5)\\), n=2." in out
    assert "```numbers" not in out and "import numpy" not in out


def test_code_fences_and_inline_code_are_left_alone():
    text = f"{FENCE}\n```python\nprint('{{{{ x }}}}')\n```\n\nWrite `{{{{ x:.3f }}}}` here.\n"
    out = render(text)
    assert "print('{{ x }}')" in out and "`{{ x:.3f }}`" in out


def test_a_page_without_a_numbers_fence_is_unchanged():
    text = "# T\n\nBraces {{ like this }} stay.\n"
    assert render(text) == text


def test_an_expression_that_raises_names_its_file_line():
    text = f"{FENCE}\nLine six.\nBad {{{{ y + 1 }}}} here.\n"  # line 7, 2 lines of front matter
    with pytest.raises(
        NumbersError, match=r"^docs/lessons/x.md:9: cannot fill '\{\{ y \+ 1 \}\}': NameError"
    ):
        render(text, offset=2)


def test_a_numbers_fence_that_raises_names_the_failing_line():
    text = "# T\n\n```numbers\na = 1\nb = 1 / 0\n```\n"
    with pytest.raises(
        NumbersError, match=r"^docs/lessons/x.md:5: numbers fence raised ZeroDivision"
    ):
        render(text)


def test_a_bad_expression_fails_the_real_build_with_file_and_line(tmp_path):
    text, _ = broken_lesson("lab: attention_pattern")
    text = text.replace("After.\n", f"After.\n\n{FENCE}\nThe value {{{{ x[7] }}}}.\n", 1)
    line = text.split("\n").index("The value {{ x[7] }}.") + 1
    config = project_copy(tmp_path, pages={"lessons/99-numbers.md": text})
    proc, output = mkdocs_build(tmp_path / "site", config)
    assert proc.returncode != 0, output
    assert f"docs/lessons/99-numbers.md:{line}: cannot fill" in output, output
    assert "IndexError" in output and "Traceback" not in output, output
