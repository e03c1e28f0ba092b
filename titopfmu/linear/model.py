"""The linear state-space model returned by :func:`titopfmu.linearize`."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

_ARRAYS = ("A", "B", "C", "D", "x0", "u0", "y0", "xdot0")
_NAMES = ("state_names", "input_names", "output_names", "output_methods")


@dataclass
class LinearModel:
    """``δẋ = A δx + B δu, δy = C δx + D δu`` about an operating point.

    ``state_names`` are the reduced states (``block.state.rx/ry/rz`` for a quaternion's local
    rotation vector, see :mod:`titopfmu.linear.coordinates`), ``input_names`` the core-input
    components, ``output_names`` the output components. The operating point: time ``t``, full
    state ``x0``, input values ``u0``, output values ``y0``; ``xdot0`` the reduced state
    derivative at it (zero at an equilibrium). ``output_methods[k]`` = "exact" or "central"
    (how row k of C, D was computed); ``position_level[k]`` whether state k is a configuration
    (not a rate); ``units`` the SI unit of each state, input and output name where known
    (``"rad"``, ``"N.m"``; a name missing has none).
    """

    A: np.ndarray
    B: np.ndarray
    C: np.ndarray
    D: np.ndarray
    state_names: list[str]
    input_names: list[str]
    output_names: list[str]
    t: float = 0.0
    x0: np.ndarray = field(default_factory=lambda: np.zeros(0))
    u0: np.ndarray = field(default_factory=lambda: np.zeros(0))
    y0: np.ndarray = field(default_factory=lambda: np.zeros(0))
    xdot0: np.ndarray = field(default_factory=lambda: np.zeros(0))
    output_methods: list[str] = field(default_factory=list)
    position_level: list[bool] = field(default_factory=list)
    units: dict[str, str] = field(default_factory=dict)

    @property
    def n_states(self) -> int:
        return self.A.shape[0]

    def to_control(self):
        """The model as a python-control ``StateSpace`` (named states, inputs and outputs;
        python-control forbids '.' in a signal name: each is written '/' there)."""
        try:
            import control
        except ImportError:
            raise ImportError(
                "LinearModel.to_control needs python-control: pip install control "
                "(the model's A, B, C, D arrays need nothing)"
            ) from None

        def names(v):
            return [n.replace(".", "/") for n in v]

        return control.ss(
            self.A, self.B, self.C, self.D, states=names(self.state_names),
            inputs=names(self.input_names), outputs=names(self.output_names),
        )  # fmt: skip

    def to_fmu(self, path: str | os.PathLike, **options) -> Path:
        """Export the model as a native FMI 2.0 FMU (``fmi_version=3``: FMI 3.0), co-simulation
        and model exchange, no Python where it runs: inputs and outputs absolute, states the
        deviation from the operating point. Options and the FMU's contents:
        :func:`titopfmu.linear.fmu.build_fmu`."""
        from .fmu import build_fmu

        return build_fmu(self, path, **options)

    def frequency_response(self, omega: np.ndarray) -> np.ndarray:
        """H(jω) = C (jω I - A)^-1 B + D for each ω (rad/s): shape (len(ω), ny, nu)."""
        n = self.n_states
        out = np.empty((len(omega), self.C.shape[0], self.B.shape[1]), dtype=complex)
        for k, w in enumerate(omega):
            out[k] = self.C @ np.linalg.solve(1j * w * np.eye(n) - self.A, self.B) + self.D
        return out

    def modes(self, rigid_tol: float = 1e-6):
        """Natural frequencies, damping and mode shapes (:func:`titopfmu.linear.modes.modes`)."""
        from .modes import modes

        return modes(self, rigid_tol=rigid_tol)

    def save(self, path: str | os.PathLike) -> Path:
        """Write the model to ``.npz`` (numpy) or ``.mat`` (MATLAB, scipy.io.savemat)."""
        path = Path(path)
        data = {k: np.asarray(getattr(self, k)) for k in _ARRAYS}
        data.update({k: np.array(getattr(self, k), dtype=str) for k in _NAMES})
        data["t"] = np.array(self.t)
        data["position_level"] = np.array(self.position_level, dtype=bool)
        data["unit_names"] = np.array(list(self.units), dtype=str)
        data["unit_values"] = np.array(list(self.units.values()), dtype=str)
        if path.parent != Path(""):
            path.parent.mkdir(parents=True, exist_ok=True)
        if path.suffix == ".npz":
            np.savez(path, **data)
        elif path.suffix == ".mat":
            from scipy.io import savemat

            text = (*_NAMES, "unit_names", "unit_values")
            mat = {k: (np.array(v, dtype=object) if k in text else v) for k, v in data.items()}
            savemat(path, mat)
        else:
            raise ValueError(f"unknown model file type {path.suffix!r}: use .npz or .mat")
        return path

    @classmethod
    def load(cls, path: str | os.PathLike) -> LinearModel:
        """Read a model written by :meth:`save` to ``.npz``."""
        with np.load(path) as f:
            kw = {k: f[k] for k in _ARRAYS}
            kw.update({k: [str(s) for s in f[k]] for k in _NAMES})
            if "unit_names" in f:  # files written before units were recorded have none
                kw["units"] = {str(k): str(v) for k, v in zip(f["unit_names"], f["unit_values"],
                                                              strict=True)}  # fmt: skip
            return cls(t=float(f["t"]), position_level=[bool(v) for v in f["position_level"]],
                       **kw)  # fmt: skip
