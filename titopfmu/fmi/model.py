"""Whole-model FMUs: a :class:`~titopfmu.System` (or part of one) as one native FMU, its
algebraic loop solved inside by the core's sweep, so that any FMI host runs it exactly.

:func:`build_model_fmu` writes the FMU; ``titopfmu export MODEL --fmu OUT.fmu`` calls it. The FMU
is the C core (``titopfmu/core/csrc``), the FMI functions written once (``fmi2_block.c`` or
``fmi3_block.c`` on ``fmu.c``), the whole-model file ``fmu_model.c`` with the internal integrator
``ode.c``, and a configuration generated here (``fmu_config.h``): which body is which, which
variable is which parameter, input or output. No physics here, only which variable is what.

Variables (docs/fmus.md, "Model FMUs"):

- **parameters**: every block parameter and initial condition by its model-file name
  (``balloon.mass``, ``pend1.theta0``, ``balloon.inertia[2,3]``, ``balloon.children.C[2]``,
  ``balloon.external.buoyancy.point[1]``, ``slider_law.k``), with its declared unit and
  description, start value the system's own; ``solver.rtol``, ``solver.atol``,
  ``solver.max_step`` and ``solver.max_substeps`` for co-simulation's internal integrator;
- **inputs**: each input of the bodies fed from outside the FMU (a joint effort, an external
  wrench, an imposed motion vector) by its System name (``pend1.joint.tau``,
  ``balloon.buoyancy``); one fed by a ``Constant`` starts at its value. A part of a model
  (``blocks=``) keeps its TITOP ports at the cut: the root's parent port, named ``P`` as a block
  FMU's (``P.m`` in, ``P.W`` out), and the child ports where the rest hangs, by System name
  (``base.C.m`` out, ``base.C.W`` in);
- **outputs**: the model file's ``outputs:`` (one scalar per CSV column of ``titopfmu run``, by
  its column name) and any ``signals`` asked for (every component, ``pend1.joint.m[1]``..);
- **states** (model exchange): ``block.state.NAME`` and their derivatives, in the engine's
  order; a flexible body's elastic coordinates and rates after its own
  (``arm.state.q.mode1``, ``arm.state.qd.mode1``), their initial values the parameters
  ``arm.elastic_q0[k]``, ``arm.elastic_qdot0[k]``; its reduced model's matrices are constant
  tables of the configuration (:func:`_flex_tables`), not parameters.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..assembly.system import System, split_port
from ..assembly.units import split_index, units_of
from ..blocks.base import TitopError
from ..blocks.declarations import BlockType
from ..core.model import GROUND, IMPOSED, NativeTree, builtin_kind
from ..spatial.rotations import dcm_from_quaternion, euler_from_dcm
from .catalog import Param
from .native.generate import (
    C_INPUT,
    C_LOCAL,
    C_OUTPUT,
    C_PARAM,
    COMPONENT_UNITS,
    T_INT,
    T_REAL,
    Array,
    NativeFmu,
    flex_tables,
)
from .native.generate import Variable as Var
from .terminals import osp_file_name

#: the output roles of fmu_model.c (MOUT_*), in the order of their codes
MODEL_OUT_ROLES = ["MOUT_POSITION", "MOUT_EULER", "MOUT_TWIST", "MOUT_ACC", "MOUT_JOINT_MOTION",
                   "MOUT_EFFORT", "MOUT_BODY_WRENCH", "MOUT_WRENCH_PARENT", "MOUT_PORT_MOTION",
                   "MOUT_STATE"]  # fmt: skip

#: the engine's defaults (``titopfmu run``), the internal integrator's unless the model's
#: experiment says otherwise
DEFAULT_EXPERIMENT = {"t_final": 20.0, "output_interval": 0.01, "rtol": 1e-8, "atol": 1e-10}

#: the parameters of co-simulation's internal integrator (ode.h, DOP853)
SOLVER = [
    ("solver.rtol", "", "relative tolerance of the internal integrator (DOP853, error control) "
     "of co-simulation", "MPAR_RTOL"),
    ("solver.atol", "", "absolute tolerance of the internal integrator of co-simulation",
     "MPAR_ATOL"),
    ("solver.max_step", "s", "largest internal step of co-simulation (0: no limit; the "
     "integrator chooses its steps by error control, whatever the communication step)",
     "PAR_MAX_STEP"),
    ("solver.max_substeps", "", "largest number of internal step attempts in one communication "
     "step: a longer step is refused with an error (never hours of work)", "PAR_MAX_SUBSTEPS"),
]  # fmt: skip


class ModelFmuError(TitopError):
    """A system (or part) that a model FMU cannot represent; the message names the block."""


@dataclass
class _Output:
    name: str  # the FMU variable's base name
    role: str
    arg: int
    width: int  # the whole signal's width
    first: int  # first component exported
    count: int  # components exported
    units: list[str]
    description: str
    scalar: bool  # one scalar named `name` (a model-file column), else name[1..count]


@dataclass
class ModelPlan:
    """What a model FMU holds: the core model of the exported bodies and how the FMU's
    variables map onto it (made by :func:`plan_model`)."""

    system: System
    name: str
    tree: NativeTree
    body_names: list[str]
    inputs: list[tuple[str, int, int, np.ndarray, list[str], str]] = field(default_factory=list)
    outputs: list[_Output] = field(default_factory=list)
    params: list[tuple[Param, int]] = field(default_factory=list)  # (parameter, argument)
    states: list[tuple[str, str]] = field(default_factory=list)  # (name, unit)
    experiment: dict = field(default_factory=dict)


def _decl(block) -> BlockType:
    return type(block).declaration


def _refuse_foreign(system: System, names: Iterable[str]) -> None:
    """A block a model FMU cannot compute (a user's subclass, a Python function block) is
    refused by name."""
    for n in names:
        b = system.blocks[n]
        if getattr(type(b), "__dict__", {}).get("declaration") is None:
            raise ModelFmuError(
                f"block '{n}' ({type(b).__name__}) is not a built-in block: a model FMU runs "
                "without Python and computes built-in blocks only (a user's block class may "
                "change any equation)"
            )


def plan_model(
    system: System,
    *,
    blocks: Iterable[str] | None = None,
    outputs: Mapping[str, str] | None = None,
    signals: Iterable[str] = (),
    name: str | None = None,
) -> ModelPlan:
    """How ``system`` (or the part ``blocks`` of it) becomes one FMU; refuses what the FMU cannot
    compute with a :class:`ModelFmuError` naming the block. ``outputs``: column -> signal (the
    model file's ``outputs:`` by default); ``signals``: more signals exported whole."""
    plan = system.check()
    src = system._source
    keep = set(system.blocks) if blocks is None else set(blocks)
    unknown = sorted(keep - set(system.blocks))
    if unknown:
        raise ModelFmuError(f"no block named {', '.join(map(repr, unknown))} in '{system.name}'")
    tree = [n for n in plan.tree if n in keep]
    if not tree:
        raise ModelFmuError(f"'{system.name}': no body to export")
    _refuse_foreign(system, sorted(keep))
    blk = system.blocks
    # the root hanging from a boundary parent port goes first (the core's parent input)
    cut_roots = [n for n in tree if blk[n].has_parent and src[(n, "P")][0] not in keep]
    if len(cut_roots) > 1:
        raise ModelFmuError(
            f"the part of '{system.name}' to export hangs from {len(cut_roots)} bodies outside it "
            f"({', '.join(cut_roots)}); a model FMU has at most one TITOP parent port: export "
            "connected parts"
        )
    if cut_roots:
        tree.remove(cut_roots[0])
        tree.insert(0, cut_roots[0])
    index = {n: i for i, n in enumerate(tree)}
    parents: list[tuple[int, int] | None] = []
    for n in tree:
        b = blk[n]
        if b.has_parent and src[(n, "P")][0] in keep:
            pb, pp = src[(n, "P")]
            parents.append((index[pb], blk[pb].child_names.index(pp)))
        else:
            parents.append(None)
    boundary_ports = []
    for n in tree:
        for j, c in enumerate(blk[n].child_names):
            other = src.get((n, c))
            if other is not None and other[0] not in keep:
                if type(blk[other[0]]).__name__ == "LoopClosure":
                    raise ModelFmuError(
                        f"loop closure '{other[0]}' on '{n}.{c}' is outside the part exported: "
                        "export it with both bodies it closes"
                    )
                boundary_ports.append((index[n], j))
    # loop closures and joint laws inside
    closures, laws, mimics = [], [], []
    for n in sorted(keep - set(tree)):
        b = blk[n]
        d = _decl(b)
        if d.family == "closure":
            sides = []
            for s in ("left", "right"):
                ob, op = src[(n, s)]
                if ob not in keep:
                    raise ModelFmuError(
                        f"loop closure '{n}': its {s} side '{ob}.{op}' is outside the part "
                        "exported"
                    )
                sides.append((index[ob], blk[ob].child_names.index(op)))
            closures.append((b, sides[0], sides[1]))
        elif d.family == "law":
            sb, sp = src[(n, "m")]
            dst = [k for k, v in src.items() if v == (n, "tau") and k[1] == "joint.tau"]
            ok = (sb in index and sp == "joint.m" and getattr(blk[sb], "joint", None) is not None
                  and blk[sb].joint.dof == 1 and len(dst) == 1 and dst[0][0] in index
                  and not getattr(blk[dst[0][0]], "inverse", False)
                  and blk[dst[0][0]].joint.dof == 1)  # fmt: skip
            if not ok:
                raise ModelFmuError(
                    f"joint law '{n}' ({type(b).__name__}) must read the motion of a 1-dof joint "
                    "body and set the effort of one forward 1-dof joint body, both in the part "
                    "exported: the core computes that law only"
                )
            laws.append((b, index[sb], index[dst[0][0]]))
        elif d.family == "mimic":
            sb, sp = src[(n, "m")]
            dst = [k for k, v in src.items() if v == (n, "tau")]
            ok = (sb in index and sp == "joint.m" and len(dst) == 1
                  and dst[0][1] == "joint.tau" and dst[0][0] in index)  # fmt: skip
            if not ok:
                raise ModelFmuError(
                    f"mimic joint '{n}' must read the motion of its leader and set the effort "
                    "of its follower, both joint bodies in the part exported"
                )
            mimics.append((b, index[dst[0][0]], index[sb]))
    offsets, nx = [], 0
    for n in tree:
        offsets.append(nx)
        nx += blk[n].n_states
    try:
        nt = NativeTree([blk[n] for n in tree], parents, offsets, closures, laws, nx,
                        boundary_parent=bool(cut_roots), boundary_ports=boundary_ports,
                        mimics=mimics)  # fmt: skip
    except RuntimeError as exc:  # a mimic joint the core refuses (the engine's words too)
        if not mimics:
            raise
        raise ModelFmuError(f"{exc} (mimic joints: {', '.join(m.name for m, _, _ in mimics)})"
                            ) from None  # fmt: skip
    mp = ModelPlan(system, name or system.name, nt, tree)
    _plan_inputs(mp, keep)
    _plan_params(mp, closures, laws, mimics)
    info = getattr(system, "model_info", None)
    if outputs is None:
        outputs = dict(info.outputs) if info is not None else {}
    _plan_outputs(mp, outputs, list(signals), dict(info.units) if info is not None else {})
    for n in tree:
        b = blk[n]
        declared = {s.name: s.unit for s in _decl(b).states}
        mp.states += [(f"{n}.state.{s}", declared.get(s, "")) for s in b.state_names]
    exp = dict(DEFAULT_EXPERIMENT)
    if info is not None:
        exp.update({k: v for k, v in info.experiment.items() if k in DEFAULT_EXPERIMENT})
    mp.experiment = exp
    return mp


def _plan_inputs(mp: ModelPlan, keep: set[str]) -> None:
    """The FMU's inputs: the core inputs fed from outside (or from a Constant), then the
    boundary ports' motion vector and wrenches."""
    system, nt, blk, src = mp.system, mp.tree, mp.system.blocks, mp.system._source
    core = [(i, port, w, off) for i, port, w, off in nt.inputs]
    core += [(i, e, 6, off) for i, e, off in nt.externals]
    for i, port, w, off in core:
        n = mp.body_names[i]
        sname = f"{n}.{port}"
        sb, sp = src[(n, port)]
        start = np.zeros(w)
        if sb in keep:
            s = blk[sb]
            if not (_decl(s).name == "Constant"):
                raise ModelFmuError(
                    f"block '{sb}' ({type(s).__name__}) feeds '{sname}': a model FMU computes "
                    "the bodies, loop closures, joint laws and constants only; leave '{sb}' out "
                    f"of the blocks exported, and '{sname}' becomes an input of the FMU"
                )
            start = np.asarray(s.evaluate(0.0, {})[sp], dtype=float).reshape(w)
        desc = f"input '{sname}' of the model (fed by '{sb}.{sp}' in the system)"
        mp.inputs.append((sname, off, w, start, units_of(system, sname, w), desc))
    if nt.parent_input is not None:
        n = mp.body_names[0]
        mp.inputs.append(("P.m", nt.parent_input, 18, np.zeros(18),
                          units_of(system, f"{n}.P.m", 18),
                          f"TITOP parent port of '{n}': the motion vector of the parent's port "
                          "[v̇_P, ω̇, v_P, ω, IP, Θ], in the parent's frame R_b"))  # fmt: skip
    ports = [(i, j) for i, b in enumerate(mp.body_names)
             for j in range(blk[b].n_children)]  # fmt: skip
    port_rows = nt.structure["ports"]
    for k, (i, j) in enumerate(ports):
        w0 = int(port_rows[k][1])
        if w0 >= 0:
            b = mp.body_names[i]
            c = blk[b].child_names[j]
            mp.inputs.append((f"{b}.{c}.W", w0, 6, np.zeros(6), units_of(system, f"{b}.{c}.W", 6),
                              f"TITOP child port '{c}' of '{b}': the wrench applied on '{b}' at "
                              f"the port by what hangs from it, in '{b}''s frame R_a"))  # fmt: skip


def _block_values(block) -> dict:
    """A block's FMU parameter values by declared name (the Euler-angle form of an attitude it
    holds as a quaternion)."""
    values = block.parameter_values()
    out = {}
    for p in _decl(block).fmu_parameters():
        if p.check in ("children", "external"):
            out[p.name] = values.get(p.name, {})
        elif p.alternative is not None:
            out[p.name] = euler_from_dcm(dcm_from_quaternion(values[p.alternative]))
        else:
            out[p.name] = values[p.name]
    return out


#: a forward ball or free joint body's or a free-flying root's damping, stiffness and spring
#: references (titop_body's): model FMU parameters by their block names (not parameters of the
#: block FMUs)
JOINT_LAW_PARAMS = (("damping", "PAR_JDAMPING"), ("stiffness", "PAR_JSTIFFNESS"),
                     ("spring_ref", "PAR_JSPRING_REF"),
                     ("spring_position", "PAR_JSPRING_POS"))  # fmt: skip


#: a flexible body's initial elastic state [q(0), q̇(0)] (docs/flexible.md §6): model FMU
#: parameters by their block names, roles of fmu_model.c (MPAR_*), argument the body
ELASTIC_PARAMS = (("elastic_q0", "MPAR_ELASTIC_Q0", "coordinates q(0)"),
                  ("elastic_qdot0", "MPAR_ELASTIC_QD0", "rates q̇(0)"))  # fmt: skip


def _plan_params(mp: ModelPlan, closures, laws, mimics=()) -> None:
    blk = mp.system.blocks
    port, ext = 0, 0
    for i, n in enumerate(mp.body_names):
        b = blk[n]
        values = _block_values(b)
        for p in _decl(b).fmu_parameters():
            if p.check == "children":
                for c, pc in values["children"].items():
                    mp.params.append((Param(f"{n}.children.{c}", (3,), "m", np.asarray(pc, float),
                                            f"position of child port '{c}' of '{n}': vector from "
                                            "P to the port, in the body frame R_a",
                                            role="PAR_POINT"), port))  # fmt: skip
                    port += 1
            elif p.check == "external":
                for e, spec in values["external"].items():
                    mp.params.append((Param(f"{n}.external.{e}.point", (3,), "m",
                                            np.asarray(spec["point"], float),
                                            f"point where external wrench '{e}' of '{n}' acts: "
                                            "vector from P, in the body frame R_a",
                                            role="PAR_EXT_POINT"), ext))  # fmt: skip
                    ext += 1
            else:
                mp.params.append((Param(f"{n}.{p.name}", tuple(p.shape), p.unit,
                                        np.asarray(values[p.name], float), p.description,
                                        role=p.role), i))  # fmt: skip
        for name, role in JOINT_LAW_PARAMS:  # titop_body's, not a block FMU's parameters
            if name in _decl(b).names:
                p = _decl(b).parameter(name)
                mp.params.append((Param(f"{n}.{name}", tuple(p.shape), p.unit,
                                        np.asarray(getattr(b, name), float), p.description,
                                        role=role), i))  # fmt: skip
        red = getattr(b, "flexible", None)
        if red is not None:  # the flexible part's initial state (its matrices are constant data)
            coords = ", ".join(red.coordinates)
            for name, role, what in ELASTIC_PARAMS:
                mp.params.append((Param(f"{n}.{name}", (red.n_modes,), "",
                                        np.asarray(getattr(b, name), float).reshape(red.n_modes),
                                        f"initial elastic {what} of the flexible part of '{n}' "
                                        f"(reduced model '{red.name}'; coordinates {coords}; "
                                        "units of the coordinates, per s for the rates)",
                                        role=role), i))  # fmt: skip
    for k, (lc, _, _) in enumerate(closures):
        for p in _decl(lc).fmu_parameters():
            mp.params.append((Param(f"{lc.name}.{p.name}", tuple(p.shape), p.unit,
                                    np.asarray(getattr(lc, p.name), float), p.description,
                                    role=p.role), k))  # fmt: skip
    for k, (law, _, _) in enumerate(laws):
        for p in _decl(law).fmu_parameters():
            mp.params.append((Param(f"{law.name}.{p.name}", (), p.unit,
                                    np.asarray(getattr(law, p.name), float), p.description,
                                    boolean=p.json == "boolean", role=p.role), k))  # fmt: skip
    for k, (mm, _, _) in enumerate(mimics):
        for p in _decl(mm).fmu_parameters():
            mp.params.append((Param(f"{mm.name}.{p.name}", (), p.unit,
                                    np.asarray(getattr(mm, p.name), float), p.description,
                                    role=p.role), k))  # fmt: skip
    exp = getattr(mp.system, "model_info", None)
    e = dict(DEFAULT_EXPERIMENT)
    if exp is not None:
        e.update({k: v for k, v in exp.experiment.items() if k in DEFAULT_EXPERIMENT})
    defaults = {"solver.rtol": float(e["rtol"]), "solver.atol": float(e["atol"]),
                "solver.max_step": 0.0, "solver.max_substeps": 100000}  # fmt: skip
    for name, unit, desc, role in SOLVER:
        mp.params.append((Param(name, (), unit, defaults[name], desc,
                                integer=name == "solver.max_substeps", role=role), 0))  # fmt: skip


#: signal -> (role, width of the signal) by what the core computes (NativeTree.reader's set)
def _signal_role(mp: ModelPlan, sig: str) -> tuple[str, int, int]:
    """(role, argument, width) of the signal ``block.rest`` (no index), or a ModelFmuError."""
    _system, blk = mp.system, mp.system.blocks
    bname, rest = split_port(sig)
    if bname not in blk:
        raise ModelFmuError(f"output '{sig}': no block '{bname}'")
    if bname not in mp.body_names:
        raise ModelFmuError(f"output '{sig}': '{bname}' is not a body of the model FMU (it "
                            "exports the signals of bodies)")
    i = mp.body_names.index(bname)
    b = blk[bname]
    kind = builtin_kind(type(b))
    dof = getattr(getattr(b, "joint", None), "dof", 0)
    inverse = getattr(b, "inverse", False)
    if rest.startswith("state.") and rest[6:] in b.state_names:
        x0 = sum(blk[n].n_states for n in mp.body_names[:i])
        return "MOUT_STATE", x0 + b.state_names.index(rest[6:]), 1
    table = {"position": ("MOUT_POSITION", 3), "euler": ("MOUT_EULER", 3),
             "twist": ("MOUT_TWIST", 6), "acc": ("MOUT_ACC", 6)}  # fmt: skip
    if dof and not inverse:
        table["joint.m"] = ("MOUT_JOINT_MOTION", 3 * dof)
    if dof and inverse:
        table["joint.tau"] = ("MOUT_EFFORT", dof)
    if kind in (GROUND, IMPOSED):
        table["W"] = ("MOUT_BODY_WRENCH", 6)
    if rest in table and mp.tree.reader(i, rest) is not None:
        role, w = table[rest]
        return role, i, w
    raise ModelFmuError(
        f"output '{sig}': a model FMU exports {', '.join(sorted(table))} and the states of "
        f"'{bname}' ({type(b).__name__}); not '{rest}'"
    )


def _plan_outputs(mp: ModelPlan, columns: Mapping[str, str], signals: list[str],
                  units: Mapping[str, str]) -> None:  # fmt: skip
    system, nt = mp.system, mp.tree
    if nt.parent_input is not None:
        n = mp.body_names[0]
        mp.outputs.append(_Output("P.W", "MOUT_WRENCH_PARENT", 0, 6, 0, 6,
                                  units_of(system, f"{n}.P.W", 6),
                                  f"TITOP parent port of '{n}': the wrench W_{{A/B,P}} applied by "
                                  "the model on its parent at P, in the parent's frame R_b",
                                  False))  # fmt: skip
    blk = system.blocks
    k = 0
    for _i, b in enumerate(mp.body_names):
        for _j, c in enumerate(blk[b].child_names):
            if int(nt.structure["ports"][k][1]) >= 0:
                mp.outputs.append(_Output(f"{b}.{c}.m", "MOUT_PORT_MOTION", k, 18, 0, 18,
                                          units_of(system, f"{b}.{c}.m", 18),
                                          f"TITOP child port '{c}' of '{b}': the motion vector of "
                                          "the port [v̇, ω̇, v, ω, IP, Θ], in the frame R_a of "
                                          f"'{b}'", False))  # fmt: skip
            k += 1
    for col, sig in columns.items():
        base, idx = split_index(sig)
        role, arg, w = _signal_role(mp, base)
        if idx is None and w != 1:
            raise ModelFmuError(f"output '{col}': '{sig}' has {w} components; name one "
                                f"('{sig}[1]')")  # fmt: skip
        idx = 0 if idx is None else idx
        if not 0 <= idx < w:
            raise ModelFmuError(f"output '{col}': '{sig}' has {w} components")
        unit = units.get(col) or units_of(system, sig, None)[0]
        mp.outputs.append(_Output(col, role, arg, w, idx, 1, [unit], f"{sig} (model output)",
                                  True))  # fmt: skip
    for sig in signals:
        alias, _, rest = sig.partition("=")
        if rest:  # NAME=SIGNAL: an output (or outputs NAME[k]) of that name
            sig = rest.strip()
        base, idx = split_index(sig)
        role, arg, w = _signal_role(mp, base)
        first, count = (0, w) if idx is None else (idx, 1)
        if not 0 <= first < w:
            raise ModelFmuError(f"signal '{sig}': '{base}' has {w} components")
        us = units_of(system, base, w)[first : first + count]
        oname = alias.strip() if rest else sig if idx is not None else base
        mp.outputs.append(_Output(oname, role, arg, w, first, count, us, f"signal {sig}",
                                  idx is not None or w == 1))  # fmt: skip


def describe_model(mp: ModelPlan, fmi_version: int = 2) -> NativeFmu:
    """The variables and the C configuration of the model FMU of ``mp``."""
    from .native.generate import T_BOOL

    nt = mp.tree
    fmu = NativeFmu(None, 0, fmi_version=fmi_version, name=_identifier(mp.name),
                    title=f"{mp.name}: whole-model FMU (titopfmu), the algebraic loop of its "
                          "TITOP blocks solved inside")  # fmt: skip
    V, A = fmu.variables, fmu.arrays
    names: set[str] = set()

    def add(name: str, causality: int, values, units, desc: str, shape=(), vtype=T_REAL) -> int:
        vr0 = len(V)
        flat = np.atleast_1d(np.asarray(values, dtype=float)).reshape(-1)
        if shape == ():
            comp = [name] if flat.size == 1 else [f"{name}[{k + 1}]" for k in range(flat.size)]
            dims = () if flat.size == 1 else (flat.size,)
        else:
            comp = [n for n, _ in Param(name, shape, "", 0, "").names()]
            dims = tuple(shape)
        for k, cn in enumerate(comp):
            if cn in names:
                raise ModelFmuError(
                    f"two variables of the model FMU are named '{cn}' (a parameter and an "
                    "output signal of the same name, e.g. a root's initial 'position' and its "
                    "'position' signal): name the output, signal 'NAME=SIGNAL' (titopfmu "
                    "export --signal NAME=SIGNAL)"
                )
            names.add(cn)
            V.append(Var(cn, vtype, causality, float(flat[k]), units[k] if k < len(units) else "",
                         desc))  # fmt: skip
        A.append(Array(name, vr0, dims, desc))
        return vr0

    for sname, off, w, start, us, desc in mp.inputs:
        fmu.inputs.append((off, add(sname, C_INPUT, start, us, desc), w))
    mouts = []
    for o in mp.outputs:
        if o.scalar:
            vr0 = add(o.name, C_OUTPUT, 0.0, o.units, o.description)
        else:
            vr0 = add(o.name, C_OUTPUT, np.zeros(o.count), o.units, o.description)
        mouts.append((o.role, o.arg, vr0, o.count, o.first))
    for p, arg in mp.params:
        vtype = T_BOOL if p.boolean else T_INT if p.integer else T_REAL
        shape = tuple(p.shape)
        units = list(COMPONENT_UNITS.get(p.role, ())) or [p.unit] * max(
            1, int(np.prod(shape)) if shape else 1
        )
        vr0 = add(p.name, C_PARAM, p.default, units, p.description, shape, vtype)
        fmu.params.append((p.role, arg, vr0))
    x0 = len(V)
    for s, unit in mp.states:
        V.append(Var(s, T_REAL, C_LOCAL, 0.0, unit, "continuous state (model exchange)"))
    dx0 = len(V)
    for k, (s, unit) in enumerate(mp.states):
        V.append(Var(f"der({s})", T_REAL, C_LOCAL, 0.0, _rate_unit(unit),
                     "derivative of the state", derivative_of=x0 + k + 1))  # fmt: skip
    A += [Array(V[vr].name, vr, (), V[vr].description) for vr in range(x0, len(V))]
    st = nt.structure
    nx = len(mp.states)
    nin = nt.nin
    fmu.defines.update(FMU_NX=nx, FMU_NIN=nin, FMU_X_VR0=x0, FMU_DX_VR0=dx0,
                       FMU_NBODIES=len(mp.body_names), FMU_NPORTS=len(st["ports"]),
                       FMU_NEXTS=len(st["exts"]), FMU_NCLOSURES=len(st["closures"]),
                       FMU_NLAWS=len(st["laws"]), FMU_NMIMICS=len(st["mimics"]),
                       FMU_NMOUT=len(mouts),
                       MPAR_RTOL=100, MPAR_ATOL=101, MPAR_ELASTIC_Q0=102,
                       MPAR_ELASTIC_QD0=103)  # fmt: skip
    lines = [f"#define {r} {k}" for k, r in enumerate(MODEL_OUT_ROLES)]

    def table(ctype: str, tname: str, rows, width: int) -> None:
        lines.append(f"static const {ctype} {tname}[][{width}] = {{")
        body = [("    {" + ", ".join(str(int(v)) for v in r) + "},") for r in rows]
        lines.extend(body or ["    {" + ", ".join(["0"] * width) + "},"])
        lines.append("};")

    table("int", "FMU_BODIES", st["bodies"], 11)
    table("int", "FMU_PORTS", st["ports"], 2)
    table("int", "FMU_EXTS", st["exts"], 2)
    table("int", "FMU_CLOSURES", st["closures"], 2)
    table("int", "FMU_LAWS", st["laws"], 2)
    table("int", "FMU_MIMICS", st["mimics"], 2)
    lines.append("static const int FMU_MOUTPUTS[][5] = {")
    lines += [f"    {{{r}, {a}, {v}, {n}, {f}}}," for r, a, v, n, f in mouts] or [
        "    {0, 0, 0, 0, 0},"
    ]
    lines.append("};")
    lines += _flex_tables(nt, fmu.defines)
    lines.append("static const char *const FMU_BODY_NAME[] = {")
    lines += [f'    "{_c_string(n)}",' for n in mp.body_names]
    lines.append("};")
    fmu.config_lines = lines
    # FMU_OUTPUTS of the block layout: unused by fmu_model.c, kept well formed
    fmu.outputs = [("0", 0, vr0, n) for _r, _a, vr0, n, _f in mouts] or [("0", 0, 0, 0)]
    e = mp.experiment
    fmu.experiment = (0.0, float(e["t_final"]), float(e["output_interval"]), float(e["rtol"]))
    return fmu


def _flex_tables(nt: NativeTree, defines: dict) -> list[str]:
    """The flexible parts of the core model as constant tables of fmu_config.h (fmu_model.h),
    by :func:`~titopfmu.fmi.native.generate.flex_tables` (the block FMUs' writer too). The
    matrices are constant data of the FMU, not parameters."""
    try:
        return flex_tables(nt.flex, [b.name for b in nt.blocks], defines)
    except ValueError as exc:
        raise ModelFmuError(str(exc)) from None


def _rate_unit(unit: str) -> str:
    return {"m": "m/s", "rad": "rad/s", "m/s": "m/s2", "rad/s": "rad/s2"}.get(unit, "")


def _c_string(s: str) -> str:
    return s.replace("\\", "\\\\").replace('"', '\\"')


def _identifier(name: str) -> str:
    """A C identifier (the modelIdentifier) from a model's name."""
    out = "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in name) or "model"
    return out if not out[0].isdigit() else "m_" + out


def build_model_fmu(
    system: System,
    path: str | os.PathLike,
    *,
    fmi_version: int = 2,
    blocks: Iterable[str] | None = None,
    outputs: Mapping[str, str] | None = None,
    signals: Iterable[str] = (),
    name: str | None = None,
    win64: bool | None = None,
    t_final: float | None = None,
) -> Path:
    """Write the model FMU of ``system`` (or of the part ``blocks`` of it, which keeps its TITOP
    ports at the cut) to ``path``: co-simulation and model exchange, FMI 2.0 or 3.0
    (``fmi_version``), Linux and (when MinGW-w64 is installed, or ``win64``) Windows binaries
    and ``sources/``. ``outputs``: column -> signal (default: the model file's ``outputs:``);
    ``signals``: more signals exported whole; ``t_final``: the default experiment's stop time
    (s; default: the model's experiment). Returns the path written. Raises
    :class:`ModelFmuError` for what the FMU cannot compute."""
    from .native.build import build_model_native

    mp = plan_model(system, blocks=blocks, outputs=outputs, signals=signals, name=name)
    if t_final is not None:  # the default experiment's stop time (s)
        mp.experiment["t_final"] = float(t_final)
    fmu = describe_model(mp, fmi_version)
    path = Path(path)
    with tempfile.TemporaryDirectory(prefix="titopfmu-model-") as tmp:
        built = build_model_native(fmu, mp, tmp, win64=win64)
        path.parent.mkdir(parents=True, exist_ok=True)
        part = path.with_name(path.name + ".part")
        shutil.copyfile(built, part)
        osp = built.with_name(osp_file_name(built.stem))
        if osp.exists():  # FMI 2.0: the OSP-IS model description beside the FMU, by its name
            shutil.copyfile(osp, path.with_name(osp_file_name(path.stem)))
        part.replace(path)
    return path
