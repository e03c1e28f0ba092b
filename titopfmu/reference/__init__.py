"""Independent references for checking the TITOP blocks (tests and benchmarks).

:mod:`titopfmu.reference.pinocchio_model` rebuilds a titopfmu tree as a Pinocchio model from the
block parameters alone. Pinocchio (PyPI ``pin``) is an optional dependency, imported on use.
"""

from __future__ import annotations

__all__ = ["PinocchioReference", "UnsupportedBlockError", "to_pinocchio"]


def __getattr__(name: str):
    # lazy: importing titopfmu.reference must not require Pinocchio
    if name in __all__:
        from . import pinocchio_model

        return getattr(pinocchio_model, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
