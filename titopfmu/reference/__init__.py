"""Independent references for checking the TITOP blocks (tests, benchmarks, cross-checks).

* :mod:`titopfmu.reference.pinocchio_model` rebuilds a titopfmu tree as a Pinocchio model from the
  block parameters alone. Pinocchio (PyPI ``pin``) is an optional dependency, imported on use.
* :mod:`titopfmu.reference.kane`: Kane's method for unconstrained multibody systems (seed 003).
* :mod:`titopfmu.reference.denoc`: DeNOC with seven equimomental point masses (seed 001).
* :mod:`titopfmu.reference.riccati`: the new-version Riccati transfer-matrix method (seed 002).
* :mod:`titopfmu.reference.flexible`: the floating-frame equations of a flexible body reduced by
  :mod:`titopfmu.flex` (docs/flexible.md), in numpy;
  :mod:`titopfmu.reference.flexible_tree`: trees of rigid and flexible bodies by the projection
  (TMT) method, the reference of ``titopfmu crosscheck`` for flexible models.

The public names below are exported lazily: each submodule is imported on first access of one of
its names, so ``import titopfmu.reference`` needs neither Pinocchio nor the solvers. The
submodules stay importable as usual (``from titopfmu.reference import kane``) and hold further
helpers (conversions, transfer matrices, invariants...).

Renamed exports (to avoid clashes):

* ``kane_simulate`` is :func:`titopfmu.reference.kane.simulate` (``simulate`` alone would shadow
  :func:`titopfmu.simulate`, the engine's, and read like the ``simulate`` methods of
  :class:`DenocModel` and :class:`RiccatiModel`);
* ``RiccatiBody`` is :class:`titopfmu.reference.riccati.Body` (the module's own alias);
* ``pack_state`` / ``unpack_state`` are Kane's (state vector z of seed 003, eq. 1); the other
  solvers pack states with methods (``RiccatiModel.state``) or plain ``(q, u)`` pairs.
"""

from __future__ import annotations

import importlib
from typing import Any

#: Exported name -> (submodule, attribute).
_EXPORTS: dict[str, tuple[str, str]] = {
    # Pinocchio reference of a titopfmu system
    "PinocchioReference": ("pinocchio_model", "PinocchioReference"),
    "UnsupportedBlockError": ("pinocchio_model", "UnsupportedBlockError"),
    "to_pinocchio": ("pinocchio_model", "to_pinocchio"),
    # Kane's method (seed 003)
    "EIGHT_BODY_CONNECTION": ("kane", "EIGHT_BODY_CONNECTION"),
    "JointSpringDamper6": ("kane", "JointSpringDamper6"),
    "KaneBody": ("kane", "KaneBody"),
    "KaneModel": ("kane", "KaneModel"),
    "eight_body_example": ("kane", "eight_body_example"),
    "eight_body_initial_state": ("kane", "eight_body_initial_state"),
    "generalized_accelerations": ("kane", "generalized_accelerations"),
    "kane_model": ("kane", "kane_model"),
    "kane_simulate": ("kane", "simulate"),
    "kinematic_rates": ("kane", "kinematic_rates"),
    "mass_matrix_and_forcing": ("kane", "mass_matrix_and_forcing"),
    "pack_state": ("kane", "pack_state"),
    "unpack_state": ("kane", "unpack_state"),
    # DeNOC with seven point masses (seed 001)
    "DenocBody": ("denoc", "DenocBody"),
    "DenocError": ("denoc", "DenocError"),
    "DenocModel": ("denoc", "DenocModel"),
    "PendulumParameters": ("denoc", "PendulumParameters"),
    "pendulum_initial_state": ("denoc", "pendulum_initial_state"),
    "seven_point_masses": ("denoc", "seven_point_masses"),
    "spherical_pendulum": ("denoc", "spherical_pendulum"),
    # Riccati transfer-matrix method (seed 002)
    "RiccatiBody": ("riccati", "RiccatiBody"),
    "RiccatiError": ("riccati", "RiccatiError"),
    "FlexTreeError": ("flexible_tree", "FlexTreeError"),
    "FlexTreeReference": ("flexible_tree", "FlexTreeReference"),
    "flexible_tree_reference": ("flexible_tree", "flexible_tree_reference"),
    "RiccatiModel": ("riccati", "RiccatiModel"),
    "RiccatiParameterError": ("riccati", "RiccatiParameterError"),
    "RiccatiSolution": ("riccati", "RiccatiSolution"),
    "branch_pendulum": ("riccati", "branch_pendulum"),
    "branch_system": ("riccati", "branch_system"),
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    # lazy: importing titopfmu.reference must not import Pinocchio (nor the solvers)
    try:
        module, attribute = _EXPORTS[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    value = getattr(importlib.import_module(f".{module}", __name__), attribute)
    globals()[name] = value  # later look-ups skip __getattr__
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
