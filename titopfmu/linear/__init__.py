"""Linear models for control design (issue 22): linearisation at any operating point, trim,
modes and families along a scheduling parameter, from the C core's exact derivatives.

One file per algorithm: :mod:`.coordinates` (minimal attitude coordinates), :mod:`.linearize`,
:mod:`.trim`, :mod:`.modes`, :mod:`.family` (LPV grids and plots), :mod:`.cli`.
"""

from .family import linearize_family, plot_frequency_response, plot_poles
from .linearize import LinearizationError, linearize
from .model import LinearModel
from .modes import Mode, modes, modes_table
from .trim import TrimError, TrimResult, trim

__all__ = [
    "LinearModel", "LinearizationError", "Mode", "TrimError", "TrimResult", "linearize",
    "linearize_family", "modes", "modes_table", "plot_frequency_response", "plot_poles", "trim",
]  # fmt: skip
