"""SI units of named signals: :mod:`titopfmu.assembly.units` (kept here for the linear models'
callers)."""

from ..assembly.units import split_index, units_of

__all__ = ["split_index", "units_of"]
