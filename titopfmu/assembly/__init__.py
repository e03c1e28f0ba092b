"""Assembly of blocks into systems, the shared loop solver and the in-process engine."""

from .engine import (
    Engine,
    Evaluation,
    RunInterrupted,
    SimulationError,
    SimulationResult,
    simulate,
)  # fmt: skip
from .loop_solver import LoopNode, TreeLoopSolver
from .system import AssemblyError, System

__all__ = [
    "AssemblyError", "Engine", "Evaluation", "LoopNode", "RunInterrupted", "SimulationError",
    "SimulationResult", "System", "TreeLoopSolver", "simulate",
]  # fmt: skip
