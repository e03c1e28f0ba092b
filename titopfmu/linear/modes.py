"""Modes of a linear model: natural frequencies, damping ratios, mode shapes, rigid-body modes."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg


@dataclass
class Mode:
    """One eigenvalue λ of A (of a complex pair, the one with Im λ > 0).

    ``omega_n`` = |λ| (rad/s), ``freq_hz`` = |λ|/2π, ``damping`` = -Re λ/|λ| (1 for a real
    negative λ, NaN for λ = 0), ``damped_freq`` = Im λ (rad/s); ``shape`` = state name -> complex
    component of the eigenvector (largest component 1); ``rigid`` whether |λ| is below the rigid
    tolerance (a rigid-body mode: free translation or rotation, free joint, drift);
    ``label`` names the states it moves most.
    """

    eigenvalue: complex
    omega_n: float
    freq_hz: float
    damping: float
    damped_freq: float
    shape: dict
    rigid: bool
    label: str

    def __str__(self) -> str:
        if self.rigid:
            return f"rigid-body mode ({self.label}), λ = {self.eigenvalue:.3g}"
        return (
            f"{self.freq_hz:.6g} Hz ({self.omega_n:.6g} rad/s), damping {self.damping:.4g}: "
            f"{self.label}"
        )


def _label(shape: dict, rigid: bool, n: int = 3) -> str:
    mags = sorted(shape.items(), key=lambda kv: -abs(kv[1]))
    names = [k for k, v in mags[:n] if abs(v) > 0.1]
    return ("rigid: " if rigid else "") + ", ".join(names)


def modes(model, rigid_tol: float = 1e-6) -> list[Mode]:
    """The modes of ``model`` (a :class:`~titopfmu.linear.model.LinearModel`), sorted by |λ|.

    A mode is rigid when |λ| <= ``rigid_tol`` * max(1, ||A_b||_2), A_b the balanced A
    (scipy.linalg.matrix_balance): exact zeros of A come out of eig at ~sqrt(eps) ||A_b|| when
    they are defective (double zeros of a free body), well below the default tolerance.
    """
    A = np.asarray(model.A)
    if A.size == 0:
        return []
    # balanced first (a diagonal similarity: same eigenvalues): a stiff second-order model
    # (a flexible body's high modes) has |A| ~ omega_max^2 but |A_b| ~ omega_max, so that the
    # rigid tolerance below no longer swallows its low modes
    Ab, T = scipy.linalg.matrix_balance(A, permute=False)
    lam, Vb = np.linalg.eig(Ab)
    V = T @ Vb
    tol = rigid_tol * max(1.0, float(np.linalg.norm(Ab, 2)))
    out = []
    for k in np.argsort(np.abs(lam)):
        val = complex(lam[k])
        if val.imag < -tol:  # the conjugate of a kept mode
            continue
        v = V[:, k]
        v = v / v[int(np.argmax(np.abs(v)))]
        shape = dict(zip(model.state_names, v, strict=True))
        wn = abs(val)
        rigid = wn <= tol
        out.append(
            Mode(
                eigenvalue=val,
                omega_n=wn,
                freq_hz=wn / (2 * np.pi),
                damping=-val.real / wn if wn > 0 else float("nan"),
                damped_freq=abs(val.imag),
                shape=shape,
                rigid=rigid,
                label=_label(shape, rigid),
            )
        )
    return out


def modes_table(mode_list: list[Mode]) -> str:
    """A plain-text table of modes (one line each)."""
    lines = [f"{'f (Hz)':>12} {'ωn (rad/s)':>12} {'damping':>9}  states"]
    for m in mode_list:
        if m.rigid:
            lines.append(f"{'rigid':>12} {m.omega_n:12.3g} {'':>9}  {m.label}")
        else:
            lines.append(f"{m.freq_hz:12.6g} {m.omega_n:12.6g} {m.damping:9.4f}  {m.label}")
    return "\n".join(lines)
