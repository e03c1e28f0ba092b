"""The ``.npz`` file format of a user's finite-element model of a flexible body (docs/flexible.md,
"File format"): read and write, with the checks of :class:`~titopfmu.flex.fe.FEModel`; and the
``.npz`` of a reduced model (:func:`write_reduced_model`, :func:`read_reduced_model`).

Keys (NumPy ``.npz``, arrays; strings as 0-d unicode arrays):

``format``        ``"titopfmu.flex.fe/1"``
``name``          the body's name
``units``         JSON ``{"length": "m"|"mm"|"in"|"ft", "mass": "kg"|"t"|"g"|"lbf s^2/in"|"slug",
                  "time": "s"}``: a consistent unit system (force = mass length / time^2;
                  rotations in rad; :data:`LENGTH_UNITS`, :data:`MASS_UNITS`)
``node_ids``      (N,) integers: the user's node labels (unique)
``node_positions`` (N, 3) undeformed positions in the body frame R_a (length unit); the root
                  node's is 0
``M``, ``K``      (6N, 6N) mass and stiffness, 6 dofs per node node-major
                  ``[ux, uy, uz, rx, ry, rz]``, in the declared units
``root``          the root node's label (the parent port P)
``interface``     (k,) the child ports' node labels (may be empty)
``total_mass_kg`` optional: the body's mass in kg whatever the units, checked against M's
                  rigid-body mass (to 1e-6 relative): catches a wrong unit declaration
``Sbar``          optional (3, 3, 6N, 6N): the component mass operator (units as M)
``KG__<case>``    optional (6N, 6N): the geometric stiffness per unit load value of a load case
                  (SI load values; ``node<j>`` in a case name is a node's row index j)
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from os import PathLike
from typing import NamedTuple

import numpy as np

from .checks import FlexModelError, FloatArray
from .fe import FEModel, as_mapping_provider
from .reduce import ReducedModel

FORMAT = "titopfmu.flex.fe/1"
#: SI factor of each accepted unit
#: (``"lbf s^2/in"``: the slinch, 1 lbf s^2/in = 175.126836 kg, the mass unit of in-lbf-s
#: models; ``"slug"``: lbf s^2/ft); a .npz file and an ANSYS model (titopfmu.flex.ansys) alike
LENGTH_UNITS = {"m": 1.0, "mm": 1e-3, "in": 0.0254, "ft": 0.3048}
MASS_UNITS = {"kg": 1.0, "t": 1e3, "g": 1e-3, "lbf s^2/in": 4.4482216152605 / 0.0254,
              "slug": 4.4482216152605 / 0.3048}  # fmt: skip
TIME_UNITS = {"s": 1.0}


def unit_factors(body: str, units: object, shown: str | None = None,
                 hint: str = "") -> tuple[float, float, float]:  # fmt: skip
    """The (length, mass, time) SI factors of a declaration ``{"length", "mass", "time"}`` of
    a consistent unit system (force = mass length / time^2), refused by name (body, 'units';
    ``shown``: how the declaration is quoted, by default its repr; ``hint`` before the rule)
    unless each is known."""
    try:
        if not isinstance(units, Mapping) or set(units) != {"length", "mass", "time"}:
            raise KeyError
        return (LENGTH_UNITS[units["length"]], MASS_UNITS[units["mass"]],
                TIME_UNITS[units["time"]])  # fmt: skip
    except (KeyError, TypeError):
        raise FlexModelError(
            body,
            "'units'",
            f"{shown or repr(units)}: {hint}declare the model's consistent system {{length: "
            f"{'|'.join(LENGTH_UNITS)}, mass: {'|'.join(MASS_UNITS)}, time: "
            f"{'|'.join(TIME_UNITS)}}}",
        ) from None
#: relative tolerance of the ``total_mass`` check
MASS_CHECK_TOL = 1e-6


class FEFile(NamedTuple):
    """What :func:`read_fe_model` returns."""

    model: FEModel  # in SI units
    child_nodes: tuple[int, ...]  # the interface nodes' row indices
    node_ids: tuple[int, ...]  # the user's labels, by row


def _scales(n_nodes: int, length: float) -> FloatArray:
    """Per dof: 1 for a translation, the length factor for a rotation (M_ij and K_ij scale by
    mass (or mass / time^2) times g_i g_j)."""
    g = np.ones(6 * n_nodes)
    g.reshape(-1, 6)[:, 3:] = length
    return g


def read_fe_model(path: str | PathLike[str], name: str | None = None) -> FEFile:
    """Read a finite-element model file, convert it to SI units and check it (every refusal a
    :class:`~titopfmu.flex.checks.FlexModelError` naming the body, the array and the fault).

    :param path: the ``.npz`` file
    :param name: the body's name (default: the file's ``name``)
    """
    try:
        data = np.load(path, allow_pickle=False)
    except (OSError, ValueError) as exc:
        raise FlexModelError(name or str(path), "file", f"cannot be read: {exc}") from None
    with data:
        keys = set(data.files)
        body = name or (str(data["name"]) if "name" in keys else str(path))

        def get(key: str) -> np.ndarray:
            if key not in keys:
                raise FlexModelError(body, f"'{key}'", "missing from the file")
            return data[key]

        if str(get("format")) != FORMAT:
            raise FlexModelError(body, "'format'", f"{str(get('format'))!r}, expected {FORMAT!r}")
        try:
            units = json.loads(str(get("units")))
        except ValueError:
            units = None
        lu, mu, tu = unit_factors(body, units, f"{str(get('units'))!r} (JSON)")
        ids = np.asarray(get("node_ids"))
        if ids.ndim != 1 or not np.issubdtype(ids.dtype, np.integer):
            raise FlexModelError(body, "'node_ids'", "must be a 1-D integer array")
        if len(set(ids.tolist())) != ids.size:
            raise FlexModelError(body, "'node_ids'", "labels are not unique")
        row = {int(j): i for i, j in enumerate(ids.tolist())}

        def index(label: object, what: str) -> int:
            try:
                return row[int(label)]  # type: ignore[call-overload]
            except (KeyError, TypeError, ValueError):
                raise FlexModelError(
                    body, f"'{what}'", f"node {label} does not exist in 'node_ids'"
                ) from None

        pos = np.asarray(get("node_positions"), dtype=float)
        if pos.shape != (ids.size, 3):
            raise FlexModelError(
                body, "'node_positions'", f"shape {pos.shape}, expected ({ids.size}, 3)"
            )
        root = index(get("root"), "root")
        children = tuple(index(j, "interface") for j in np.atleast_1d(get("interface")))
        g = _scales(ids.size, lu)
        gg = np.outer(g, g)
        M = np.asarray(get("M"), dtype=float)
        K = np.asarray(get("K"), dtype=float)
        if M.shape != gg.shape or K.shape != gg.shape:
            raise FlexModelError(
                body,
                "matrix 'M'" if M.shape != gg.shape else "matrix 'K'",
                f"shape {(M if M.shape != gg.shape else K).shape}, expected {gg.shape} "
                f"(6 dofs for each of the {ids.size} nodes)",
            )
        M_si = mu * gg * M
        K_si = (mu / tu**2) * gg * K
        Sbar = None
        if "Sbar" in keys:
            Sbar = mu * gg * np.asarray(data["Sbar"], dtype=float)
        kg = {
            k[4:]: (mu / tu**2) * gg * np.asarray(data[k], dtype=float)
            for k in keys
            if k.startswith("KG__")
        }
        total = float(data["total_mass_kg"]) if "total_mass_kg" in keys else None
    model = FEModel(
        name=body,
        node_positions=pos * lu,
        M=M_si,
        K=K_si,
        root=root,
        Sbar=Sbar,
        geometric_stiffness=as_mapping_provider(kg) if kg else None,
    )
    if total is not None:
        Tt, _ = model.rigid_modes()
        m = float(np.trace(Tt.T @ model.M @ Tt) / 3.0)
        if abs(m - total) > MASS_CHECK_TOL * abs(total):
            raise FlexModelError(
                body,
                "matrix 'M'",
                f"rigid-body mass {m:.6g} kg differs from the declared total_mass_kg "
                f"{total:.6g} kg (inconsistent units?)",
            )
    return FEFile(model, children, tuple(int(j) for j in ids.tolist()))


def write_fe_model(
    path: str | PathLike[str],
    model: FEModel,
    child_nodes: tuple[int, ...] | list[int] = (),
    node_ids: tuple[int, ...] | list[int] | None = None,
    kg_cases: tuple[str, ...] | list[str] = (),
) -> None:
    """Write ``model`` (SI units) as a file :func:`read_fe_model` reads back exactly.

    :param child_nodes: the interface (child-port) nodes' row indices
    :param node_ids: the node labels (default 1..N)
    :param kg_cases: load cases whose geometric stiffness is written (from the model's provider)
    """
    n = model.n_nodes
    if model.dof_map is not None:
        raise FlexModelError(model.name, "'dof_map'", "the .npz format holds 6 dofs per node; "
                             "write the reduced model (write_reduced_model) instead")  # fmt: skip
    ids = np.arange(1, n + 1) if node_ids is None else np.asarray(node_ids, dtype=int)
    if ids.shape != (n,) or len(set(ids.tolist())) != n:
        raise FlexModelError(model.name, "'node_ids'", f"must be {n} unique integers")
    children = [model.check_node(j, "child_nodes") for j in child_nodes]
    Tt, _ = model.rigid_modes()
    arrays: dict[str, np.ndarray] = {
        "format": np.array(FORMAT),
        "name": np.array(model.name),
        "units": np.array(json.dumps({"length": "m", "mass": "kg", "time": "s"})),
        "node_ids": ids,
        "node_positions": model.node_positions,
        "M": model.M,
        "K": model.K,
        "root": np.array(ids[model.root]),
        "interface": ids[children] if children else np.zeros(0, dtype=int),
        "total_mass_kg": np.array(np.trace(Tt.T @ model.M @ Tt) / 3.0),
    }
    if model.Sbar is not None:
        arrays["Sbar"] = model.Sbar
    for case in kg_cases:
        kg = model.kg(case)
        if kg is None:
            raise FlexModelError(model.name, "'kg_cases'", f"no geometric stiffness for '{case}'")
        arrays[f"KG__{case}"] = kg
    with open(path, "wb") as f:
        np.savez_compressed(f, **arrays)


REDUCED_FORMAT = "titopfmu.flex.reduced/1"
#: the ReducedModel's array fields, stored under their names
_REDUCED_ARRAYS = ("first_moment", "inertia", "Ct", "Cr", "Mee", "Kee", "damping_ratios", "S",
                   "R", "node_positions", "node_shapes", "KG", "frequencies_full")  # fmt: skip


def write_reduced_model(path: str | PathLike[str], red: ReducedModel) -> None:
    """Write a reduced model (SI units) as ``.npz``: its fields under their names (``name``,
    ``mass``, ``load_cases``, ``coordinates`` and ``node_ids`` too), the ``format``
    ``"titopfmu.flex.reduced/1"``, and the derived arrays the C core reads, ``J1`` (n, 3, 3),
    ``J2`` (n, n, 3, 3), ``Cr1`` (n, 3, n) and ``De`` (n, n) (docs/flexible.md, section 7)."""
    arrays: dict[str, np.ndarray] = {key: np.asarray(getattr(red, key)) for key in _REDUCED_ARRAYS}
    arrays.update(
        format=np.array(REDUCED_FORMAT),
        name=np.array(red.name),
        mass=np.array(red.mass),
        load_cases=np.array(red.load_cases, dtype=str),
        coordinates=np.array(red.coordinates, dtype=str),
        node_ids=np.array(red.node_ids, dtype=int),
        J1=red.J1(),
        J2=red.J2(),
        Cr1=red.Cr1(),
        De=red.damping(),
    )
    with open(path, "wb") as f:
        np.savez_compressed(f, **arrays)


def read_reduced_model(path: str | PathLike[str]) -> ReducedModel:
    """Read a file of :func:`write_reduced_model`, checked as any :class:`ReducedModel` (Mee
    and Kee symmetric positive definite, shapes consistent, damping ratios >= 0)."""
    try:
        data = np.load(path, allow_pickle=False)
    except (OSError, ValueError) as exc:
        raise FlexModelError(str(path), "file", f"cannot be read: {exc}") from None
    with data:
        body = str(data["name"]) if "name" in data.files else str(path)
        needed = ("format", "mass", "load_cases", "coordinates", "node_ids", *_REDUCED_ARRAYS)
        for key in needed:
            if key not in data.files:
                raise FlexModelError(body, f"'{key}'", "missing from the file")
        if str(data["format"]) != REDUCED_FORMAT:
            raise FlexModelError(
                body, "'format'", f"{str(data['format'])!r}, expected {REDUCED_FORMAT!r}"
            )
        fields = {key: np.array(data[key], dtype=float) for key in _REDUCED_ARRAYS}
        try:
            return ReducedModel(
                name=body,
                mass=float(data["mass"]),
                load_cases=tuple(str(c) for c in data["load_cases"]),
                coordinates=tuple(str(c) for c in data["coordinates"]),
                node_ids=tuple(int(j) for j in data["node_ids"]),
                **fields,
            )
        except (TypeError, np.linalg.LinAlgError) as exc:
            raise FlexModelError(body, "file", f"inconsistent arrays: {exc}") from None
