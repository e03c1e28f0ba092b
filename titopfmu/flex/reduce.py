"""Reduction of a finite-element model (:class:`~titopfmu.flex.fe.FEModel`) to the arrays a
floating-frame flexible body evaluates (:class:`ReducedModel`): Craig-Bampton at the root P
(clamped to the floating frame) and optionally at child-port nodes, or plain cantilever modal
truncation. The formulas are in docs/flexible.md.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import scipy.linalg

from . import checks
from .checks import FlexModelError, FloatArray
from .fe import BODY_LOAD_CASES, NODE_LOAD_COMPONENTS, FEModel, skew

#: Levi-Civita symbol eps[c, d, e]
_EPS = np.zeros((3, 3, 3))
for _c, _d, _e in ((0, 1, 2), (1, 2, 0), (2, 0, 1)):
    _EPS[_c, _d, _e], _EPS[_c, _e, _d] = 1.0, -1.0


def _readonly(a: FloatArray) -> FloatArray:
    a = np.array(a, dtype=float)
    a.setflags(write=False)
    return a


@dataclass(frozen=True)
class ReducedModel:
    """A flexible body reduced for the floating frame of reference formulation (SI units).

    Frame R_a: the floating frame, origin at the parent port P (the root node, clamped to it).
    Elastic coordinates q (n): the displacement field is u(r) = sum_k psi_k(r) q_k (m), psi_k
    the k-th column of the reduction basis (the first ``n_constraint`` coordinates are the
    child-port nodes' dofs of Craig-Bampton's static constraint modes, in m and rad; the others
    fixed-interface modal amplitudes, in m kg^-1/2 for the cantilever modes, mass-normalised).
    The kinetic energy is T = 1/2 u^T M(q) u, u = (v_P, omega, qdot) (body-frame components),
    M(q) given exactly by the invariants below (docs/flexible.md, eqs. (4)-(9)).

    :param name: the body's name
    :param mass: m = int rho dV (kg)
    :param first_moment: m c = int rho r dV (3,) (kg m), c the undeformed centre of mass
    :param inertia: J_P = int rho r~^T r~ dV (3, 3) (kg m^2), about P, including the sections'
        rotational inertia
    :param Ct: int rho psi dV (3, n): translation-elastic coupling (kg, per unit q)
    :param Cr: int rho r~ psi dV (3, n): rotation-elastic coupling (kg m, per unit q)
    :param Mee: int rho psi^T psi dV (n, n): modal mass
    :param Kee: (n, n) modal stiffness (N/m per unit q^2)
    :param damping_ratios: (n,) modal damping ratios of the reduced model's own modes
    :param S: (3, 3, n, n) second-order invariant S[a, b, k, l] = int rho psi_k,a psi_l,b dV
        (Shabana's S_ab projected on the modes): the inertia's quadratic dependence on q, the
        centrifugal softening and the Coriolis coupling
    :param R: (3, 3, n) first-order invariant R[a, b, k] = int rho r_a psi_k,b dV: the
        inertia's linear dependence on q
    :param node_ids: (k,) the finite-element node of each node of interest (the root P first,
        then the child ports)
    :param node_positions: (k, 3) their undeformed positions in R_a (m)
    :param node_shapes: (k, 6, n): each node's translation (rows 0-2, m per unit q) and small
        rotation (rows 3-5, rad per unit q) per elastic coordinate
    :param load_cases: names of the geometric-stiffness load cases (see ``KG``)
    :param KG: (n_cases, n, n) modal geometric stiffness per unit load value of each case:
        K_eff = Kee + sum_k lambda_k KG[k]
    :param coordinates: (n,) a name per elastic coordinate
    :param frequencies_full: the eigenfrequencies (rad/s) of the full finite-element model
        clamped at P, for reference (the first min(3 n, N) of them)
    """

    name: str
    mass: float
    first_moment: FloatArray
    inertia: FloatArray
    Ct: FloatArray
    Cr: FloatArray
    Mee: FloatArray
    Kee: FloatArray
    damping_ratios: FloatArray
    S: FloatArray
    R: FloatArray
    node_ids: tuple[int, ...]
    node_positions: FloatArray
    node_shapes: FloatArray
    load_cases: tuple[str, ...]
    KG: FloatArray
    coordinates: tuple[str, ...]
    frequencies_full: FloatArray = field(default_factory=lambda: np.zeros(0))

    def __post_init__(self) -> None:
        for key in ("first_moment", "inertia", "Ct", "Cr", "Mee", "Kee", "damping_ratios", "S",
                    "R", "node_positions", "node_shapes", "KG", "frequencies_full"):  # fmt: skip
            object.__setattr__(self, key, _readonly(getattr(self, key)))
        n = self.n_modes
        expect = {"Ct": (3, n), "Cr": (3, n), "Kee": (n, n), "damping_ratios": (n,),
                  "S": (3, 3, n, n), "R": (3, 3, n), "inertia": (3, 3), "first_moment": (3,),
                  "KG": (len(self.load_cases), n, n)}  # fmt: skip
        for key, shape in expect.items():
            if getattr(self, key).shape != shape:
                raise FlexModelError(
                    self.name, f"matrix '{key}'", f"shape {getattr(self, key).shape} != {shape}"
                )
        k = len(self.node_ids)
        for key, shape in (("node_positions", (k, 3)), ("node_shapes", (k, 6, n))):
            if getattr(self, key).shape != shape:
                raise FlexModelError(
                    self.name, f"'{key}'", f"shape {getattr(self, key).shape} != {shape}"
                )
        if len(self.coordinates) != n:
            raise FlexModelError(
                self.name, "'coordinates'", f"{len(self.coordinates)} names for {n} coordinates"
            )
        checks.positive(self.name, "mass", self.mass)
        checks.positive_definite(self.name, "Mee", checks.square(self.name, "Mee", self.Mee))
        checks.positive_definite(self.name, "Kee", checks.square(self.name, "Kee", self.Kee))
        if np.any(self.damping_ratios < 0) or not np.all(np.isfinite(self.damping_ratios)):
            raise FlexModelError(self.name, "'damping_ratios'", "must be finite and >= 0")

    @property
    def n_modes(self) -> int:
        """Number of elastic coordinates n."""
        return int(self.Mee.shape[0])

    def frequencies(self, loads: dict[str, float] | None = None) -> FloatArray:
        """Undamped eigenfrequencies (rad/s) of the reduced model with the frame fixed in space,
        K_eff = Kee + sum lambda_k KG_k for the load values ``loads`` (none: Kee)."""
        K = self.stiffness(loads or {})
        w2 = scipy.linalg.eigh(K, self.Mee, eigvals_only=True)
        return np.sqrt(np.abs(w2)) * np.sign(w2)

    def stiffness(self, loads: dict[str, float]) -> FloatArray:
        """K_eff = Kee + sum_k lambda_k KG_k (N/m per unit q^2), ``loads`` mapping load-case
        names to their values lambda_k (unknown names refused)."""
        K = np.array(self.Kee)
        for case, value in loads.items():
            if case not in self.load_cases:
                raise FlexModelError(self.name, "'loads'", f"unknown load case '{case}'")
            K = K + float(value) * self.KG[self.load_cases.index(case)]
        return K

    def damping(self) -> FloatArray:
        """De (n, n) (N s/m per unit q^2): modal damping 2 zeta_i omega_i on the reduced
        model's own modes, De = Mee V diag(2 zeta omega) V^T Mee (V: Mee-normalised modes)."""
        return self._derived["De"]

    @functools.cached_property
    def _derived(self) -> dict[str, FloatArray]:
        """J1, J2, Cr1 and De, computed once (read-only)."""
        G = np.moveaxis(self.R, 2, 0)
        tr = np.trace(G, axis1=1, axis2=2)
        J1 = 2.0 * tr[:, None, None] * np.eye(3) - G - np.swapaxes(G, 1, 2)
        H = np.moveaxis(self.S, (0, 1), (2, 3))  # (k, l, c, d)
        trH = np.trace(H, axis1=2, axis2=3)
        J2 = trH[:, :, None, None] * np.eye(3) - np.swapaxes(H, 2, 3)
        Cr1 = np.einsum("cde,delk->kcl", _EPS, np.swapaxes(self.S, 2, 3))
        w2, V = scipy.linalg.eigh(self.Kee, self.Mee)
        MV = self.Mee @ V
        De = MV @ np.diag(2.0 * self.damping_ratios * np.sqrt(np.abs(w2))) @ MV.T
        return {k: _readonly(v) for k, v in (("J1", J1), ("J2", J2), ("Cr1", Cr1), ("De", De))}

    def J1(self) -> FloatArray:
        """(n, 3, 3): J(q) = J_P + sum_k q_k J1_k + ..., J1_k = int rho (r~^T psi_k~ +
        psi_k~^T r~) dV = 2 tr(G) I - G - G^T, G = R[:, :, k] (kg m^2 per unit q)."""
        return self._derived["J1"]

    def J2(self) -> FloatArray:
        """(n, n, 3, 3): J(q) = ... + sum_kl q_k q_l J2_kl, J2_kl = int rho psi_k~^T psi_l~ dV
        = tr(H) I - H^T, H[c, d] = S[c, d, k, l]."""
        return self._derived["J2"]

    def Cr1(self) -> FloatArray:
        """(n, 3, n): Cr(q) = Cr + sum_k q_k Cr1_k, Cr1_k[:, l] = int rho psi_k x psi_l dV."""
        return self._derived["Cr1"]

    def centrifugal_softening(self, axis: FloatArray) -> FloatArray:
        """(n, n) M_soft(e) = e^T sym(J2_kl) e for a unit spin axis e: with the frame spinning
        at the constant rate Omega about e through P, the elastic equations hold
        -Omega^2 M_soft q (the centrifugal softening)."""
        e = np.asarray(axis, dtype=float)
        e = e / np.linalg.norm(e)
        J2 = self.J2()
        m = np.einsum("c,klcd,d->kl", e, J2, e)
        return 0.5 * (m + m.T)

    def mass_matrix(self, q: FloatArray) -> FloatArray:
        """The (6 + n) square mass matrix M(q) of u = (v_P, omega, qdot) (docs eq. (5))."""
        q = np.asarray(q, dtype=float)
        n = self.n_modes
        m = self.mass
        mc = self.first_moment + self.Ct @ q
        J = self.inertia + np.einsum("k,kcd->cd", q, self.J1())
        J = J + np.einsum("k,l,klcd->cd", q, q, self.J2())
        Cr = self.Cr + np.einsum("k,kcl->cl", q, self.Cr1())
        out = np.zeros((6 + n, 6 + n))
        out[:3, :3] = m * np.eye(3)
        out[:3, 3:6] = -skew(mc)
        out[3:6, :3] = skew(mc)
        out[3:6, 3:6] = J
        out[:3, 6:] = self.Ct
        out[6:, :3] = self.Ct.T
        out[3:6, 6:] = Cr
        out[6:, 3:6] = Cr.T
        out[6:, 6:] = self.Mee
        return out


def _modes(K: FloatArray, M: FloatArray, n: int) -> tuple[FloatArray, FloatArray]:
    """The n lowest eigenpairs (omega^2, mass-normalised vectors) of (K, M): from the full
    decomposition (LAPACK's divide and conquer, the driver of a plain ``scipy.linalg.eigh``), so
    that the kept modes are those of the full model's own eigen analysis."""
    if n == 0:
        return np.zeros(0), np.zeros((K.shape[0], 0))
    w2, V = scipy.linalg.eigh(K, M)
    return w2[:n], V[:, :n]


def craig_bampton(
    model: FEModel,
    n_modes: int,
    child_nodes: Sequence[int] = (),
    *,
    constraint_modes: bool = True,
    damping: float | Sequence[float] = 0.0,
    load_cases: Sequence[str] | None = None,
) -> ReducedModel:
    """Craig-Bampton reduction with the root node P clamped to the floating frame.

    Boundary dofs: P's 6 (fixed: the frame carries the rigid motion) and, if
    ``constraint_modes``, the 6 of each node of ``child_nodes`` (kept as static constraint
    modes Psi_c = [-K_ii^-1 K_ic; I]); ``n_modes`` fixed-interface modes (root, and child
    nodes if kept, clamped). Without child constraint modes this is cantilever modal
    truncation (:func:`cantilever_modes`).

    :param model: the finite-element model
    :param n_modes: number of fixed-interface modes (>= 0; with no constraint modes, >= 1)
    :param child_nodes: the child ports' node indices (their shapes are in ``node_shapes``)
    :param constraint_modes: keep the child nodes' dofs as static constraint modes
    :param damping: modal damping ratio(s) of the reduced model's modes (one, or one per mode)
    :param load_cases: geometric-stiffness load cases (default: all body-load cases and the
        six unit loads of each child node)
    """
    body = model.name
    nodes = [model.check_node(j, "child_nodes") for j in child_nodes]
    for j in nodes:
        model.node_dofs(j)  # a port carries all six dofs (refused by name otherwise)
    if model.root in nodes or len(set(nodes)) != len(nodes):
        raise FlexModelError(
            body, "'child_nodes'", f"must be distinct and differ from the root {model.root}"
        )
    if not isinstance(n_modes, (int, np.integer)) or isinstance(n_modes, bool) or n_modes < 0:
        raise FlexModelError(body, "'n_modes'", f"must be an integer >= 0, got {n_modes!r}")
    free = model.free_dofs()
    bnd = (
        np.concatenate([model.node_dofs(j) for j in nodes])
        if (constraint_modes and nodes)
        else np.zeros(0, dtype=int)
    )
    inner = np.setdiff1d(free, bnd)
    if n_modes > inner.size:
        raise FlexModelError(
            body,
            "'n_modes'",
            f"{n_modes} modes asked, the model holds {inner.size} fixed-interface modes",
        )
    if n_modes + bnd.size == 0:
        raise FlexModelError(body, "'n_modes'", "no elastic coordinate: ask for n_modes >= 1")
    K, M = model.K, model.M
    Kii, Mii = K[np.ix_(inner, inner)], M[np.ix_(inner, inner)]
    nd = model.n_dofs
    cols = []
    names: list[str] = []
    if bnd.size:
        Psi = np.zeros((nd, bnd.size))
        Psi[bnd, np.arange(bnd.size)] = 1.0
        Psi[inner] = -scipy.linalg.solve(Kii, K[np.ix_(inner, bnd)], assume_a="pos")
        cols.append(Psi)
        comp = ("ux", "uy", "uz", "rx", "ry", "rz")
        names += [f"node{j}.{c}" for j in nodes for c in comp]
    w2, V = _modes(Kii, Mii, int(n_modes))
    Phi_i = np.zeros((nd, int(n_modes)))
    Phi_i[inner] = V
    cols.append(Phi_i)
    names += [f"mode{k + 1}" for k in range(int(n_modes))]
    Phi = np.hstack(cols)
    full_count = min(3 * Phi.shape[1], free.size)
    w2_full = scipy.linalg.eigh(
        K[np.ix_(free, free)], M[np.ix_(free, free)], eigvals_only=True,
        subset_by_index=(0, full_count - 1))  # fmt: skip
    red = _assemble(model, Phi, names, [model.root, *nodes], damping, load_cases,
                    np.sqrt(np.abs(w2_full)))  # fmt: skip
    # The fixed-interface block is diag(omega^2) and I by construction: set exactly (their
    # projections carry roundoff of eps * max eigenvalue, far above the lowest eigenvalues);
    # the constraint-modal stiffness coupling Psi^T K Phi_i vanishes (K-orthogonality)
    nb = bnd.size
    Kee, Mee = np.array(red.Kee), np.array(red.Mee)
    Kee[nb:, nb:] = np.diag(w2)
    Kee[:nb, nb:] = 0.0
    Kee[nb:, :nb] = 0.0
    Mee[nb:, nb:] = np.eye(w2.size)
    return dataclasses.replace(red, Kee=Kee, Mee=Mee)


def cantilever_modes(
    model: FEModel,
    n_modes: int,
    child_nodes: Sequence[int] = (),
    *,
    damping: float | Sequence[float] = 0.0,
    load_cases: Sequence[str] | None = None,
) -> ReducedModel:
    """Plain modal truncation of the body clamped at P: the ``n_modes`` lowest cantilever
    modes, mass-normalised (Mee = I, Kee = diag(omega^2)); ``child_nodes`` only name the nodes
    whose shapes are kept (the usual choice for an appendage clamped at P)."""
    return craig_bampton(
        model, n_modes, child_nodes, constraint_modes=False, damping=damping,
        load_cases=load_cases)  # fmt: skip


def _assemble(
    model: FEModel,
    Phi: FloatArray,
    names: list[str],
    node_ids: list[int],
    damping: float | Sequence[float],
    load_cases: Sequence[str] | None,
    w_full: FloatArray,
) -> ReducedModel:
    """The invariants of the basis Phi (6N, n) (docs/flexible.md eqs. (6)-(9))."""
    body = model.name
    n = Phi.shape[1]
    M = model.M
    Tt, Tr = model.rigid_modes()
    mI = Tt.T @ M @ Tt
    mass = float(np.trace(mI) / 3.0)
    mc_sk = Tr.T @ M @ Tt  # (m c)~
    first_moment = np.array([mc_sk[2, 1], mc_sk[0, 2], mc_sk[1, 0]])
    inertia = Tr.T @ M @ Tr
    Ct = Tt.T @ M @ Phi
    Cr = Tr.T @ M @ Phi
    Mee = Phi.T @ M @ Phi
    Kee = Phi.T @ model.K @ Phi
    Sbar = model.component_mass()
    S = np.einsum("ik,abij,jl->abkl", Phi, Sbar, Phi, optimize=True)
    d_r_comp = np.zeros((3, model.n_dofs))  # component a of r, as dofs of component a
    node, comp = model.dofs().T
    for a in range(3):
        d_r_comp[a, comp == a] = model.node_positions[node[comp == a], a]
    R = np.einsum("ai,abij,jk->abk", d_r_comp, Sbar, Phi, optimize=True)
    zeta = (
        np.broadcast_to(np.asarray(damping, dtype=float), (n,))
        if np.ndim(damping) == 0
        else np.asarray(damping, dtype=float)
    )
    if zeta.shape != (n,):
        raise FlexModelError(
            body, "'damping'", f"{zeta.size} damping ratios for {n} elastic coordinates"
        )
    if load_cases is None:
        load_cases = list(BODY_LOAD_CASES) + [
            f"node{j}.{c}" for j in node_ids[1:] for c in NODE_LOAD_COMPONENTS
        ]
    kg_list = []
    for case in load_cases:
        full = model.kg(case)
        kg_list.append(np.zeros((n, n)) if full is None else Phi.T @ full @ Phi)
    shapes = np.stack([model.node_shape(Phi, j) for j in node_ids])
    return ReducedModel(
        name=body,
        mass=mass,
        first_moment=first_moment,
        inertia=0.5 * (inertia + inertia.T),
        Ct=Ct,
        Cr=Cr,
        Mee=0.5 * (Mee + Mee.T),
        Kee=0.5 * (Kee + Kee.T),
        damping_ratios=np.array(zeta),
        S=S,
        R=R,
        node_ids=tuple(int(j) for j in node_ids),
        node_positions=model.node_positions[node_ids],
        node_shapes=shapes,
        load_cases=tuple(load_cases),
        KG=np.stack(kg_list) if kg_list else np.zeros((0, n, n)),
        coordinates=tuple(names),
        frequencies_full=w_full,
    )
