"""Internal links and anchors: MkDocs' own validation (mkdocs.yml `validation:`) makes
`mkdocs build --strict` fail on a link to a missing page or a missing anchor, naming the
page that holds the link."""

import pytest
import yaml
from helpers import ROOT, mkdocs_build, project_copy

PAGE = """---
title: Links
---

# Links

See [the pattern](../lessons/03-attention-pattern.md#the-causal-mask-in-one-sentence).
{extra}
"""


def test_validation_is_configured_to_fail_on_links_and_anchors():
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text("utf-8"))
    for key in ("unrecognized_links", "anchors", "absolute_links"):
        assert config["validation"][key] == "warn"  # warnings are fatal under --strict


def test_good_links_build(tmp_path):
    config = project_copy(tmp_path, pages={"extra/links.md": PAGE.format(extra="")})
    proc, output = mkdocs_build(tmp_path / "site", config)
    assert proc.returncode == 0, output


@pytest.mark.parametrize(
    "extra, expected",
    [
        (
            "A [dead link](../lessons/99-missing.md).",
            "Doc file 'extra/links.md' contains a link '../lessons/99-missing.md', "
            "but the target 'lessons/99-missing.md' is not found",
        ),
        (
            "A [dead anchor](../lessons/03-attention-pattern.md#no-such-section).",
            "Doc file 'extra/links.md' contains a link "
            "'../lessons/03-attention-pattern.md#no-such-section', "
            "but the doc 'lessons/03-attention-pattern.md' does not contain an anchor "
            "'#no-such-section'",
        ),
        (
            "A [dead local anchor](#nowhere).",
            "Doc file 'extra/links.md' contains a link '#nowhere', but there is no such anchor",
        ),
    ],
    ids=["page", "anchor", "own-anchor"],
)
def test_dead_link_fails_the_build_naming_the_page_and_link(tmp_path, extra, expected):
    config = project_copy(tmp_path, pages={"extra/links.md": PAGE.format(extra=extra)})
    proc, output = mkdocs_build(tmp_path / "site", config)
    assert proc.returncode != 0, output
    assert expected in " ".join(output.split()), output
