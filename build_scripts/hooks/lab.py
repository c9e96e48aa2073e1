"""```lab fences: a live lab, computed once here.

A fence such as

    ```lab
    lab: attention_pattern
    causal: true
    ```

is parsed as YAML, validated against the lab's parameter schema, computed once here in
CPython with the same ``attention_labs`` code the browser runs, and replaced by a
``<div class="attn-lab" data-config="...">`` holding the parameters and that initial
result, so the page shows the result before any Python loads in the browser. Inside it,
the same result as static HTML (hooks/lab_static.py) for a reader without JavaScript; the
lab controller replaces it when the widget mounts.

A lab whose parameters come from a committed file (the real_scores lab: a real head's
queries and keys, from its asset under docs/assets/attention/) defines
``fence_params(params, docs) -> params``; it is called here first, with the build's docs
folder, and what it returns is validated and becomes the placeholder's parameters.
"""

from __future__ import annotations

import html

import yaml
from attention_labs.labs import LabParameterError, get_lab, lab_schema, run_lab

from .lab_static import static_html
from .runtime import data_attribute
from .scanner import Fence, FenceError, Page

NAME = "lab"


class LabFenceError(FenceError):
    """A lab fence that cannot be built; the message starts with ``file:line:``."""


def parse_fence(body: str, where: str) -> tuple[str, dict]:
    """The lab name and parameters of one fence body; LabFenceError naming ``where``."""
    try:
        spec = yaml.safe_load(body) if body.strip() else None
    except yaml.YAMLError as err:
        raise LabFenceError(f"{where}: lab fence is not valid YAML: {err}") from None
    if not isinstance(spec, dict) or "lab" not in spec:
        raise LabFenceError(
            f"{where}: lab fence must be YAML with a 'lab:' key, e.g. 'lab: attention_pattern'"
        )
    spec = dict(spec)
    return spec.pop("lab"), spec


def placeholder(name: str, out: dict, indent: str, runtime: dict | None = None) -> str:
    """The HTML that replaces a fence: parameters, schema and initial result as JSON, and
    the build's ``runtime`` (hooks/runtime.py: where the browser finds Python); inside it,
    the initial result as static HTML (hooks/lab_static.py)."""
    payload = {
        "lab": name,
        "params": out["params"],
        "schema": lab_schema(name),
        "initial": out,
        "runtime": runtime if runtime is not None else {},
    }
    label = html.escape(f"Interactive lab: {name.replace('_', ' ')}")
    lines = [
        f'<div class="attn-lab" data-lab="{html.escape(name)}" role="group" aria-label="{label}" '
        f'data-config="{data_attribute(payload)}">',
        *static_html(name, out),
        "</div>",
    ]
    return "\n".join(indent + line for line in lines)


def render(fence: Fence, page: Page) -> str:
    where = page.where(fence)
    if fence.end is None:
        raise LabFenceError(f"{where}: lab fence is never closed (add a line with ```)")
    name, params = parse_fence(fence.body, where)
    try:
        fill = getattr(get_lab(name), "fence_params", None)  # parameters from committed files
        if fill is not None:
            params = fill(params, page.build.docs)
        out = run_lab(name, params)
    except LabParameterError as err:
        raise LabFenceError(f"{where}: {err}") from None
    return placeholder(name, out, fence.indent, page.build.runtime)
