"""Lab: the sinusoidal position encodings of Vaswani et al. 2017 (NeurIPS), section 3.5.

Row p of the [position, dimension] matrix is the vector added to the embedding of the
token at position p: pair i of dimensions (2i, 2i + 1) holds sin and cos of p times the
angular frequency base^(-2i / d_model), so the first pairs turn fast (wavelength 2 pi
positions) and the last ones slowly (every 2 pi * base^((d_model - 2) / d_model)
positions: 47,117 at d_model 64, nearer 2 pi * base as d_model grows).

The lab returns the matrix (n_positions, d_model), each pair's frequency and wavelength,
and the dot product of the encoding of ``position`` with the encoding of every other
position, against their offset. That dot product is sum_i cos(offset * omega_i): it
depends on the offset only, not on where the pair of positions sits.
"""

from __future__ import annotations

import numpy as np

from ..attention import rope_frequencies, sinusoidal_positions
from ..params import LabParameterError, Param
from ..static import Table, Text, spread

SCHEMA = (
    Param("d_model", "integer", 64, "Width of each encoding (even).", 2, 256),
    Param("n_positions", "integer", 48, "How many positions (rows) to draw.", 2, 256),
    Param("base", "number", 10000.0, "Base of the wavelengths (10000 in the paper).", 2.0, 1e6),
    Param(
        "position",
        "integer",
        20,
        "The position whose encoding is compared with all others.",
        0,
        255,
    ),
)

LARGEST = {"d_model": 256, "n_positions": 256, "position": 255}


def compute(params: dict) -> dict:
    """``encodings`` (n_positions, d_model) [position, dimension]; ``frequencies`` and
    ``wavelengths`` (d_model / 2,); ``offsets`` and ``dots`` (n_positions,): the dot
    product of position ``position``'s encoding with position ``position + offset``'s."""
    d_model, n = params["d_model"], params["n_positions"]
    if d_model % 2:
        raise LabParameterError(
            "d_model", f"d_model must be an even whole number from 2 to 256, got {d_model}"
        )
    if params["position"] >= n:
        raise LabParameterError(
            "position",
            f"position must be a whole number from 0 to n_positions - 1 = {n - 1}, "
            f"got {params['position']}",
        )
    encodings = sinusoidal_positions(np.arange(n), d_model, params["base"])
    frequencies = rope_frequencies(d_model, params["base"])
    p = params["position"]
    return {
        "encodings": encodings,
        "frequencies": frequencies,
        "wavelengths": 2 * np.pi / frequencies,
        "position": p,
        "offsets": np.arange(n) - p,
        "dots": encodings @ encodings[p],
    }


def static_view(result: dict, params: dict) -> list[Table | Text]:
    """Without JavaScript: how a position's encoding matches its neighbours', and the
    first dimensions' wavelengths."""
    p = result["position"]
    rows = [
        (f"{result['offsets'][i]:+d}", (p + result["offsets"][i], result["dots"][i]))
        for i in spread(len(result["offsets"]), 13)
    ]
    dots = Table(
        f"The dot product of position {p}'s encoding with the encoding of position {p} + offset.",
        ("Offset", "Position", "Dot product"),
        rows,
        digits=2,
    )
    waves = ", ".join(f"{w:.1f}" for w in result["wavelengths"][:6])
    return [
        dots,
        Text(
            f"The {len(result['wavelengths'])} pairs of dimensions turn at wavelengths from "
            f"{result['wavelengths'][0]:.2f} to {result['wavelengths'][-1]:,.0f} positions "
            f"(the first six: {waves})."
        ),
    ]
