"""The co-simulation master: TITOP FMUs wired into a tree, the algebraic loop solved exactly.

At every communication point the master

1. resolves, in dependency order (the FMUs' ``ModelStructure``), every input that does not
   depend on the loop: twists and poses down the tree, loop closures' wrenches, joint laws'
   efforts;
2. solves the algebraic loop of the tree (accelerations down, wrenches up) with Newton's method
   on the FMUs' interface Jacobians, from their directional derivatives, and the in-process
   engine's :class:`~titopfmu.assembly.loop_solver.TreeLoopSolver`;
3. advances every FMU by one communication step (``fmi2DoStep``), each input a line over the
   step extrapolated from its last values (fourth order in the step with RK4 inside the FMUs).

With fixed steps and Newton's loop, the steps between output points run in compiled code
(:mod:`.fastpath`, ``_step.c``): the same program and algorithm on the same arrays, the loop
solved by an LU factorization of the assembled interface Jacobians (``compiled = False``: the
Python path).

:class:`CoSimulation` holds the options; its methods come in layers, one module each, every
module importing only those below it:

- :mod:`.wiring`: components, connections and held inputs, checked as they are given;
- :mod:`.plan`: the tree, the loop's variables, the order of the FMU calls;
- :mod:`.binding`: the FMUs instantiated, the plan bound to channels and flat arrays;
- :mod:`.loop`: steps 1-2, the loop's solution at a point (Newton, or Gauss-Seidel);
- :mod:`.coupling`: step 3, the inputs over the step and ``fmi2DoStep``;
- :mod:`.results`: what is recorded, :class:`CosimResult`;
- :mod:`.stepping`: runs with fixed or error-controlled steps, or in model exchange.
"""

from __future__ import annotations

import os

from .binding import StepStats as StepStats
from .binding import _Body as _Body
from .binding import _reissue_logged as _reissue_logged
from .binding import _user_stacklevel as _user_stacklevel
from .components import Component, FmuFile
from .components import CosimError as CosimError
from .coupling import OWN_STEP as OWN_STEP
from .coupling import _line_weights as _line_weights
from .plan import ACC as ACC
from .plan import PRE as PRE
from .plan import _Op as _Op
from .results import CosimResult as CosimResult
from .stepping import Stepping
from .wiring import alias_name as alias_name


class CoSimulation(Stepping):
    """A system of FMU components, its connections and its run.

    >>> cs = CoSimulation()
    >>> cs.add("base", "fmus/TitopRigidBodyC1.fmu", {"mass": 10.0, "inertia": np.eye(3)})
    >>> cs.add("arm", "fmus/TitopRevoluteBodyC0.fmu", {"mass": 2.0, "com": [0, -1, 0]})
    >>> cs.connect("base.C1", "arm.P")          # a TITOP port pair: motion down, wrench up
    >>> result = cs.simulate(5.0, step=1e-3, record=["arm.joint.m[3]"])
    """

    def __init__(self) -> None:
        self.components: dict[str, Component] = {}
        self._files: dict[str, FmuFile] = {}
        self.port_links: list[tuple[str, str, str, str]] = []  # child comp/port -> parent comp/port
        self.signal_links: list[tuple[str, str, str, str]] = []  # out comp/var -> in comp/var
        self.inputs: dict[tuple[str, str], float] = {}
        #: how coupled inputs move over a communication step: "polynomial" (default: each
        #: input a line over the step, its value and first derivative sent to the FMU,
        #: ``fmi2SetRealInputDerivatives``; the line is the least-squares fit over the step of
        #: the polynomial of degree :attr:`extrapolation_degree` through the input's last
        #: values: fourth order in the step with degree 3 and RK4 inside the FMUs; an FMU that
        #: cannot interpolate inputs holds the line's mean; with a loop closure FMU in the
        #: system and no explicit degree, "extrapolated" is used), "extrapolated" (inputs held at
        #: their linear extrapolation to mid-step, second order) or "hold" (inputs held at
        #: their value at the start of the step, first order)
        self.coupling = "polynomial"
        #: degree (0 to 3) of the polynomial through the last values of each coupled input
        #: that ``coupling="polynomial"`` extrapolates over the next step; None (default): 3,
        #: or the "extrapolated" coupling when a loop closure FMU is present
        #: (:meth:`_effective_degree`)
        self.extrapolation_degree: int | None = None
        #: "newton" (default: interface Jacobian, exact tree solve) or "gauss-seidel"
        self.loop = "newton"
        #: largest number of Gauss-Seidel sweeps per communication point
        self.gauss_seidel_max_iterations = 100
        #: degree of the polynomial through the last loop solutions that gives the first guess
        #: of the next one (fewer iterations; the solution itself does not depend on it)
        self.guess_order = 3
        #: fixed steps with Newton's loop run in the compiled step (:mod:`.fastpath`) when every
        #: body's FMU provides directional derivatives; False: the Python path (same results)
        self.compiled = True
        #: component -> {System name -> FMU name} (``from_system``: ``hinge`` -> ``C1``,
        #: ``m`` -> ``joint.m``), accepted wherever a reference is taken
        self.aliases: dict[str, dict[str, str]] = {}
        #: how a System maps onto this co-simulation (``from_system``), else None
        self.system_mapping = None
        self._ready = False
        self._deadline: float | None = None  # time.perf_counter() limit of the run (timeout)
        self._timeout: float | None = None

    @classmethod
    def from_system(cls, system, fmus: str | os.PathLike | None = None, **options) -> CoSimulation:
        """The co-simulation of a :class:`~titopfmu.System` (see
        :func:`titopfmu.master.from_system.populate`): one FMU per block, same names."""
        from .from_system import populate

        return populate(cls(), system, fmus, **options)
