"""A finite-element model exported by ANSYS MAPDL: the stiffness and mass of a ``.full`` file
and the node coordinates of a result (``.rst``) or archive (``.cdb``) file, read with Ansys's
maintained reader ``ansys-mapdl-reader`` (``pip install titopfmu[ansys]``), into an
:class:`~titopfmu.flex.fe.FEModel` (docs/flexible.md, "ANSYS MAPDL models").

Degrees of freedom: the file's own, by node label and component (UX, UY, UZ; ROTX, ROTY, ROTZ
for beams and shells), kept as they are (``FEModel.dof_map``): a solid's node carries
translations only. The dofs ANSYS constrained (D command) are not in the file's matrices: the
model is clamped there, and the root P (the parent port, origin of R_a) is a point that moves
rigidly with the constrained nodes (the reduction's fixed-interface modes are then ANSYS's
own). A port on a solid is a rigid spider: a master node at the centroid of a set of nodes
whose translations follow its rigid motion, u_s = u_m + theta_m x (x_s - x_m) (an RBE2 /
CERIG), the slaves' rotations (if any) theta_m.

Units: ANSYS has none; the file's consistent system is declared (force = mass length /
time^2; the units of :data:`titopfmu.flex.io.LENGTH_UNITS`, ``MASS_UNITS``, ``TIME_UNITS``)
and converted to SI as the ``.npz`` format's (:func:`titopfmu.flex.io.unit_factors`), with the
optional total-mass check.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from os import PathLike
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import scipy.sparse as sp

from .checks import FlexModelError, FloatArray
from .fe import FEModel, skew
from .io import MASS_CHECK_TOL, unit_factors

INSTALL_HINT = "pip install titopfmu[ansys]"


class AnsysModel(NamedTuple):
    """What :func:`read_ansys` returns."""

    model: FEModel  # SI units, body frame R_a (origin P)
    child_nodes: tuple[int, ...]  # the child ports' node indices in ``model``
    labels: tuple[int, ...]  # each node's ANSYS label (0: a point titopfmu added: P, masters)


def _reader(body: str) -> Any:
    try:
        from ansys.mapdl import reader
    except ImportError:
        raise FlexModelError(
            body, "'ansys'", f"reading an ANSYS file needs ansys-mapdl-reader: {INSTALL_HINT}"
        ) from None
    return reader


def _units(body: str, units: object) -> tuple[float, float, float]:
    """(length, mass, time) SI factors of a units declaration (ANSYS files have none)."""
    return unit_factors(body, units, hint="ANSYS files have no units; ")


def _mesh(body: str, path: Path, reader: Any) -> tuple[np.ndarray, FloatArray]:
    """(labels, coordinates (N, 3) in the file's length unit) of a .cdb archive or a result."""
    try:
        if path.suffix.lower() in (".cdb", ".dat"):
            mesh = reader.Archive(str(path))
            return np.asarray(mesh.nnum, dtype=int), np.asarray(mesh.nodes, dtype=float)[:, :3]
        res = reader.read_binary(str(path))
        return np.asarray(res.mesh.nnum, dtype=int), np.asarray(res.mesh.nodes, dtype=float)
    except Exception as exc:  # the reader raises assorted errors on a bad file
        raise FlexModelError(body, "'mesh'", f"'{path}' cannot be read: {exc}") from None


def read_ansys(
    full: str | PathLike[str],
    name: str,
    *,
    units: Mapping[str, str],
    mesh: str | PathLike[str] | None = None,
    coordinates: Mapping[int, Sequence[float]] | None = None,
    root: int | Sequence[float] | Sequence[int] | None = None,
    nodes: Sequence[int | Sequence[int]] = (),
    total_mass: float | None = None,
) -> AnsysModel:
    """Read an ANSYS MAPDL ``.full`` file (K and M) into an :class:`FEModel` in SI units.

    :param full: the ``.full`` file (a modal, or any, solve with the mass matrix written)
    :param name: the body's name (every error names it)
    :param units: the file's consistent unit system ``{length, mass, time}``
    :param mesh: a ``.rst`` result or ``.cdb`` archive of the same model: its node coordinates
    :param coordinates: or the coordinates by node label (file's length unit)
    :param root: where P is: None (the centroid of the nodes ANSYS constrained), a node label
        (a constrained node, or a beam/shell node with 6 dofs when the file is not
        constrained), a point ``[x, y, z]`` (file's length unit; with a constrained file), or a
        list of labels (a spider's master at their centroid, when the file is not constrained)
    :param nodes: the child ports: a node label with 6 dofs, or a list of labels (a spider)
    :param total_mass: the body's mass in kg, checked against M's rigid-body mass (1e-6
        relative): catches a wrong unit declaration. With a constrained file, M holds the free
        dofs' mass only (ANSYS leaves the constrained nodes' share out)
    """
    body = str(name)
    lu, mu, tu = _units(body, units)
    if total_mass is not None and (isinstance(total_mass, bool) or not isinstance(
            total_mass, (int, float)) or not np.isfinite(total_mass) or total_mass <= 0):
        raise FlexModelError(body, "'total_mass'", f"a mass in kg > 0, not {total_mass!r}")
    reader = _reader(body)
    path = Path(full)
    if not path.is_file():
        raise FlexModelError(body, "'ansys'", f"'{path}': no such file")
    try:
        from ansys.mapdl.reader.common import read_table

        ff = reader.read_binary(str(path))
        dof_ref, k, m = ff.load_km(sort=True)
        const = np.asarray(ff.const, dtype=int).reshape(-1, 2)
        per_node = np.asarray(ff.ndof, dtype=int)
        with open(path, "rb") as f:  # the file's third record: its DOF reference numbers
            read_table(f, skip=True)  # (1..6: UX, UY, UZ, ROTX, ROTY, ROTZ), fdfull.inc
            read_table(f, skip=True)
            dof_types = np.asarray(read_table(f), dtype=int).reshape(-1)
    except Exception as exc:  # the reader raises assorted errors on a bad file
        raise FlexModelError(body, "'ansys'", f"'{path}' cannot be read as a .full file: {exc}"
                             ) from None  # fmt: skip
    if k is None or m is None:
        raise FlexModelError(body, "'ansys'", f"'{path}' holds no {'K' if k is None else 'M'}")
    # the reader gives the upper triangles, the constrained dofs as empty rows (load_km)
    K = sp.triu(k, format="csr")
    K = (K + sp.triu(K, 1, format="csr").T).tocsr()
    M = sp.triu(m, format="csr")
    M = (M + sp.triu(M, 1, format="csr").T).tocsr()
    # the reader numbers a node's dofs by position (0, 1, ...): position j is the DOF type
    # dof_types[j] when every node carries all the model's dofs
    if np.any(dof_types < 1) or np.any(dof_types > 6):
        raise FlexModelError(body, "'ansys'", f"'{path}' has DOF types {dof_types.tolist()}: "
                             "structural ones only (1..6: UX, UY, UZ, ROTX, ROTY, ROTZ)")
    if np.any(per_node != dof_types.size):
        raise FlexModelError(body, "'ansys'", f"'{path}': nodes carry different sets of dofs "
                             f"(from {per_node.min()} to {per_node.max()} of "
                             f"{dof_types.size}); not read yet")  # fmt: skip
    dof_ref = np.asarray(dof_ref, dtype=int)
    const = np.asarray(const, dtype=int)
    dof_ref[:, 1] = dof_types[dof_ref[:, 1]] - 1
    if const.size:
        const[:, 1] = dof_types[const[:, 1]] - 1
    constrained = {(int(n), int(c)) for n, c in const}
    keep = np.array([(int(n), int(c)) not in constrained for n, c in dof_ref], dtype=bool)
    dof_ref, K, M = dof_ref[keep], K[keep][:, keep], M[keep][:, keep]

    # node coordinates, by label
    if (mesh is None) == (coordinates is None):
        raise FlexModelError(body, "'mesh'", "give the nodes' coordinates: a .rst or .cdb file "
                             "of the same model (mesh), or coordinates by node label")
    if mesh is not None:
        mp = Path(mesh)
        if not mp.is_file():
            raise FlexModelError(body, "'mesh'", f"'{mp}': no such file")
        lab, xyz = _mesh(body, mp, reader)
        where = {int(j): xyz[i] for i, j in enumerate(lab)}
    else:
        assert coordinates is not None
        where = {int(j): np.asarray(x, dtype=float) for j, x in coordinates.items()}
    file_nodes = sorted({int(n) for n in dof_ref[:, 0]} | {int(n) for n, _ in constrained})
    missing = [j for j in file_nodes if j not in where]
    if missing:
        raise FlexModelError(body, "'mesh'", f"no coordinates for node {missing[0]} of the "
                             f".full file ({len(missing)} missing): not the same model?")

    def label(v: object, what: str) -> int:
        if isinstance(v, bool) or not isinstance(v, (int, np.integer, float)) or int(v) != v:
            raise FlexModelError(body, f"'{what}'", f"{v!r} is not a node label")
        if int(v) not in file_nodes:
            raise FlexModelError(body, f"'{what}'", f"node {int(v)} is not in the .full file")
        return int(v)

    # node table: the file's nodes (rows 0..), then the added points (P, masters)
    labels = list(file_nodes)
    pos = [np.asarray(where[j], dtype=float)[:3] for j in file_nodes]
    row = {j: i for i, j in enumerate(file_nodes)}
    n_dof = dof_ref.shape[0]
    dof_node = np.array([row[int(n)] for n in dof_ref[:, 0]], dtype=int)
    dof_comp = dof_ref[:, 1].copy()
    spiders: list[tuple[int, list[int]]] = []  # (master row, slave rows)
    slaves: set[int] = set()
    constrained_rows = sorted({row[n] for n, _ in constrained})

    def spider(labs: object, what: str) -> int:
        if not isinstance(labs, (list, tuple)) or len(labs) < 1:
            raise FlexModelError(body, f"'{what}'", "a spider is a list of node labels")
        rows = [row[label(v, what)] for v in labs]
        bad = [labels[r] for r in rows if r in slaves or r in constrained_rows]
        if bad or len(set(rows)) != len(rows):
            raise FlexModelError(body, f"'{what}'", f"node {bad[0] if bad else rows} is "
                                 "constrained in the file, repeated, or in another spider")
        slaves.update(rows)
        labels.append(0)
        pos.append(np.mean([pos[r] for r in rows], axis=0))
        spiders.append((len(pos) - 1, rows))
        return len(pos) - 1

    def port(v: object, what: str) -> int:
        """The row of a node label that carries all six dofs (a beam's or a shell's)."""
        r = row[label(v, what)]
        have = int(np.sum(dof_node == r))
        if have != 6:
            raise FlexModelError(body, f"'{what}'", f"node {v} carries {have} of the 6 dofs "
                                 "(UX..ROTZ) a port needs (a solid's node has translations "
                                 "only): give a list of labels, a rigid spider")  # fmt: skip
        return r

    if constrained:
        if root is None:
            labels.append(0)
            pos.append(np.mean([pos[r] for r in constrained_rows], axis=0))
            root_row = len(pos) - 1
        elif isinstance(root, (int, np.integer)) and not isinstance(root, bool):
            root_row = row[label(root, "root")]
            if root_row not in constrained_rows:
                raise FlexModelError(body, "'root'", f"node {root} is free in the file, which "
                                     "is clamped at other nodes: P must be where it is clamped "
                                     "(a constrained node, a point, or the default)")
        elif isinstance(root, (list, tuple)) and len(root) == 3:
            labels.append(0)
            pos.append(np.asarray(root, dtype=float))
            root_row = len(pos) - 1
        else:
            raise FlexModelError(body, "'root'", f"{root!r}: the file is clamped (constrained "
                                 "dofs): a constrained node's label, a point [x, y, z], or none")
    elif isinstance(root, (int, np.integer)) and not isinstance(root, bool):
        root_row = port(root, "root")
    elif isinstance(root, (list, tuple)):
        root_row = spider(list(root), "root")
    else:
        raise FlexModelError(body, "'root'", "the file has no constrained dof (a free body): "
                             "give P, a node label with 6 dofs or a list of labels (a spider)")
    child = []
    for v in nodes:
        child.append(spider(list(v), "nodes") if isinstance(v, (list, tuple))
                     else port(v, "nodes"))  # fmt: skip

    # the spiders' constraints u_slave = T u_master eliminated: new dofs = the other dofs, then
    # 6 per master (docs/flexible.md, eq. of the rigid spider)
    x = np.asarray(pos)
    is_slave = np.isin(dof_node, sorted(slaves))
    kept = np.flatnonzero(~is_slave)
    n_new = kept.size + 6 * len(spiders)
    rows_t, cols_t, vals_t = list(kept), list(range(kept.size)), [1.0] * kept.size
    master_col = {}
    for s_i, (mrow, srows) in enumerate(spiders):
        c0 = kept.size + 6 * s_i
        master_col[mrow] = c0
        for d in np.flatnonzero(np.isin(dof_node, srows)):
            c = int(dof_comp[d])
            if c < 3:  # u_s = u_m - (x_s - x_m)~ theta_m
                rows_t.append(d), cols_t.append(c0 + c), vals_t.append(1.0)
                r = -skew(x[dof_node[d]] - x[mrow])[c]
                for a in range(3):
                    if r[a] != 0.0:
                        rows_t.append(d), cols_t.append(c0 + 3 + a), vals_t.append(float(r[a]))
            else:
                rows_t.append(d), cols_t.append(c0 + c), vals_t.append(1.0)
    T = sp.csr_matrix((vals_t, (rows_t, cols_t)), shape=(n_dof, n_new))
    Kd = (T.T @ K @ T).toarray()
    Md = (T.T @ M @ T).toarray()
    dmap = np.concatenate([
        np.stack([dof_node[kept], dof_comp[kept]], axis=1),
        np.array([[mrow, c] for mrow, _ in spiders for c in range(6)], dtype=int).reshape(-1, 2),
    ])  # fmt: skip
    # SI: M_ij, K_ij scale by mass (/ time^2) g_i g_j, g = 1 (translation) or the length factor
    g = np.where(dmap[:, 1] < 3, 1.0, lu)
    gg = np.outer(g, g)
    model = FEModel(
        name=body,
        node_positions=(x - x[root_row]) * lu,
        M=mu * gg * 0.5 * (Md + Md.T),
        K=(mu / tu**2) * gg * 0.5 * (Kd + Kd.T),
        root=root_row,
        dof_map=dmap,
    )
    if total_mass is not None:
        Tt, _ = model.rigid_modes()
        mass = float(np.trace(Tt.T @ model.M @ Tt) / 3.0)
        if abs(mass - float(total_mass)) > MASS_CHECK_TOL * abs(float(total_mass)):
            raise FlexModelError(
                body,
                "'total_mass'",
                f"M's rigid-body mass is {mass:.6g} kg, not the declared {float(total_mass):.6g}"
                " kg: wrong units?" + (" (the file is clamped: its M leaves the constrained "
                                       "nodes' mass out)" if constrained else ""),
            )
    return AnsysModel(model, tuple(child), tuple(labels))
