"""A flexible part described by a mapping: what a model file's ``flexible:`` entry holds and what
a campaign varies by name (``arm.flexible.E``, ``arm.flexible.modes``, ``arm.flexible.damping``).

One of five sources, then the reduction (docs/flexible.md §1, §2, §8)::

    {"beam": {"length": 1.5, "E": 70e9, "rho": 2700, "nu": 0.3,
              "section": {"rectangle": [0.3, 0.01]}, "n_elements": 40},
     "modes": 8, "damping": 0.005, "method": "cantilever", "nodes": ["tip"]}
    {"plate": {"a": 2.0, "b": 1.0, "thickness": 0.01, "E": 70e9, "rho": 2700, "nu": 0.3},
     "modes": 10, "nodes": [[2.0, 0.5]]}                          # scikit-fem panel
    {"fe": "panel.npz", "modes": 12, "method": "craig_bampton"}   # titopfmu.flex.fe/1 file
    {"reduced": "array.npz"}                                      # titopfmu.flex.reduced/1 file
    {"ansys": "bar.full", "mesh": "bar.rst", "units": {"length": "in",
     "mass": "lbf s^2/in", "time": "s"}, "modes": 12, "nodes": [[21, 22, 23]]}  # ANSYS MAPDL

``section``: ``{"rectangle": [width_y, height_z]}``, ``{"circle": diameter}``, ``{"tube":
[outer, inner]}`` or the properties ``{"A", "Iy", "Iz", "J"}`` (m^2, m^4). ``nodes``: the
child-port nodes kept (a beam's ``"tip"``, a plate's node at ``[x, y]`` (m), or node
indices; an ``fe`` file's interface by default; an ANSYS model's node labels, or lists of
labels: rigid spiders, titopfmu.flex.ansys). ``ansys``: a ``.full`` file, with ``mesh`` (a
``.rst`` or ``.cdb`` of the same model: the node coordinates), ``units`` (required: ANSYS has
none), optionally ``root`` (P: a node label, a point or a spider; default the centroid of the
constrained nodes) and ``total_mass`` (kg, checked). ``method``: ``"cantilever"`` (modal
truncation, the default) or ``"craig_bampton"``. ``damping``: one modal damping ratio, or one
per mode. Paths are relative to ``base``.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .beam import Beam, Section
from .checks import FlexModelError
from .io import read_fe_model, read_reduced_model
from .reduce import ReducedModel, cantilever_modes, craig_bampton

#: the keys of a spec and of its beam
SPEC_KEYS = ("beam", "plate", "fe", "reduced", "ansys", "modes", "method", "damping", "nodes",
             "mesh", "root", "units", "total_mass")  # fmt: skip
#: the sources, exactly one of which a spec gives
SOURCES = ("beam", "plate", "fe", "reduced", "ansys")
#: the keys that only an ANSYS source takes
ANSYS_KEYS = ("mesh", "root", "units", "total_mass")
#: the keys whose values are file paths (relative to the model file in a model file)
PATH_KEYS = ("fe", "reduced", "ansys", "mesh")
BEAM_KEYS = ("length", "E", "rho", "nu", "G", "section", "n_elements", "rotary_inertia",
             "shear_coefficient")  # fmt: skip
PLATE_KEYS = ("a", "b", "thickness", "E", "rho", "nu", "nx", "ny", "element", "shear_coefficient",
              "drilling")  # fmt: skip
SECTIONS = ("rectangle", "circle", "tube")
#: the numbers a campaign may vary, by name (``<block>.flexible.<name>``): the beam's, the
#: number of modes and a single damping ratio
SCALARS = ("length", "a", "b", "thickness", "E", "rho", "nu", "G", "shear_coefficient",
           "n_elements", "nx", "ny", "modes", "damping")  # fmt: skip


def _section(body: str, spec: Any) -> Section:
    if isinstance(spec, Section):
        return spec
    if not isinstance(spec, Mapping) or not spec:
        raise FlexModelError(body, "'beam.section'", "a mapping: {rectangle: [w, h]}, {circle: "
                             "d}, {tube: [outer, inner]} or {A, Iy, Iz, J}")  # fmt: skip
    kind = next(iter(spec))
    if len(spec) == 1 and kind in SECTIONS:
        args = spec[kind]
        args = list(args) if isinstance(args, (list, tuple)) else [args]
        try:
            return getattr(Section, kind)(*[float(a) for a in args], body=body)
        except TypeError:
            raise FlexModelError(body, f"'beam.section.{kind}'",
                                 f"wrong number of values: {args}") from None  # fmt: skip
    unknown = sorted(set(spec) - {"A", "Iy", "Iz", "J"})
    if unknown or len(spec) != 4:
        raise FlexModelError(body, "'beam.section'", f"unknown or missing keys {sorted(spec)}: "
                             f"give one of {SECTIONS} or all of A, Iy, Iz, J")  # fmt: skip
    return Section(float(spec["A"]), float(spec["Iy"]), float(spec["Iz"]), float(spec["J"]))


def _path(base: Path | None, value: Any, body: str, key: str) -> Path:
    if not isinstance(value, (str, Path)):
        raise FlexModelError(body, f"'{key}'", f"a file's path, not {value!r}")
    p = Path(value)
    return p if p.is_absolute() or base is None else base / p


def _as_list(v: Any) -> list:
    """A spec's list value (one item alone as a list of it; None: empty)."""
    return [] if v is None else list(v) if isinstance(v, (list, tuple)) else [v]


def _properties(body: str, spec: Mapping, source: str, keys: tuple[str, ...],
                required: tuple[str, ...], integers: tuple[str, ...]) -> dict:  # fmt: skip
    """The properties of a beam or plate spec (``spec[source]``), checked: a mapping of known
    keys with the required ones; whole floats of the integer keys as ints (JSON, YAML)."""
    props = spec[source]
    if not isinstance(props, Mapping):
        raise FlexModelError(body, f"'{source}'", f"a mapping of the {source}'s properties")
    unknown = sorted(set(props) - set(keys))
    if unknown:
        raise FlexModelError(body, f"'{source}.{unknown[0]}'",
                             f"unknown key; keys: {', '.join(keys)}")  # fmt: skip
    missing = [k for k in required if k not in props]
    if missing:
        raise FlexModelError(body, f"'{source}.{missing[0]}'", "missing")
    return {k: int(v) if k in integers and isinstance(v, float) and v.is_integer() else v
            for k, v in props.items()}  # fmt: skip


def reduced_from_spec(body: str, spec: Mapping, base: str | Path | None = None) -> ReducedModel:
    """The reduced model a spec describes (see the module's docstring); every refusal a
    :class:`FlexModelError` naming ``body`` and the key."""
    if not isinstance(spec, Mapping):
        raise FlexModelError(body, "'flexible'", f"a mapping, not {type(spec).__name__}")
    unknown = sorted(set(spec) - set(SPEC_KEYS))
    if unknown:
        raise FlexModelError(body, f"'{unknown[0]}'", f"unknown key; keys: {', '.join(SPEC_KEYS)}")
    sources = [k for k in SOURCES if k in spec]
    if len(sources) != 1:
        raise FlexModelError(body, "'flexible'", f"give exactly one of {', '.join(SOURCES)} "
                             f"(got {sources or 'none'})")  # fmt: skip
    stray = [k for k in ANSYS_KEYS if k in spec and "ansys" not in spec]
    if stray:
        raise FlexModelError(body, f"'{stray[0]}'", "applies to an ANSYS source (ansys: ...)")
    base = None if base is None else Path(base)
    if "reduced" in spec:
        extra = sorted(set(spec) - {"reduced"})
        if extra:
            raise FlexModelError(body, f"'{extra[0]}'", "a reduced model is already reduced: "
                                 "modes, method, damping and nodes apply to beam or fe")
        return read_reduced_model(_path(base, spec["reduced"], body, "reduced"))
    if "beam" in spec:
        kw = _properties(body, spec, "beam", BEAM_KEYS, ("length", "E", "rho", "section"),
                         ("n_elements",))  # fmt: skip
        kw["section"] = _section(body, kw["section"])
        fe = Beam(body, **kw).fe_model()
        nodes_default: tuple[int, ...] = ()
    elif "plate" in spec:
        from .plate import Plate

        kw = _properties(body, spec, "plate", PLATE_KEYS, ("a", "b", "thickness", "E", "rho", "nu"),
                         ("nx", "ny"))  # fmt: skip
        plate = Plate(body, **kw)
        fe = plate.fe_model()
        nodes_default = ()
    elif "ansys" in spec:
        from .ansys import read_ansys

        if "units" not in spec:
            raise FlexModelError(body, "'units'", "missing: ANSYS files have no units; declare "
                                 "the model's {length, mass, time}")  # fmt: skip
        if "mesh" not in spec:
            raise FlexModelError(body, "'mesh'", "missing: the .rst or .cdb file of the same "
                                 "model, for the node coordinates")  # fmt: skip
        a = read_ansys(
            _path(base, spec["ansys"], body, "ansys"),
            body,
            units=spec["units"],
            mesh=_path(base, spec["mesh"], body, "mesh"),
            root=spec.get("root"),
            nodes=_as_list(spec.get("nodes")),
            total_mass=spec.get("total_mass"),
        )
        fe, nodes_default = a.model, a.child_nodes
    else:
        f = read_fe_model(_path(base, spec["fe"], body, "fe"), name=body)
        fe, nodes_default = f.model, tuple(f.child_nodes)
    nodes = None if "ansys" in spec else spec.get("nodes")
    if nodes is None:
        child = list(nodes_default)
    else:
        child = []
        for v in nodes if isinstance(nodes, (list, tuple)) else [nodes]:
            if v == "tip" and "beam" in spec:
                child.append(fe.n_nodes - 1)
            elif "plate" in spec and isinstance(v, (list, tuple)) and len(v) == 2:
                child.append(plate.node_at(float(v[0]), float(v[1])))
            elif isinstance(v, int) or (isinstance(v, float) and v.is_integer()):
                child.append(int(v))
            else:
                raise FlexModelError(body, "'nodes'", f"{v!r}: a node index (or 'tip' on a beam)")
    modes = spec.get("modes", 8)
    if isinstance(modes, float) and modes.is_integer():
        modes = int(modes)
    if isinstance(modes, bool) or not isinstance(modes, int) or modes < 1:
        raise FlexModelError(body, "'modes'", f"a number of modes >= 1, not {modes!r}")
    method = spec.get("method", "cantilever")
    if method not in ("cantilever", "craig_bampton"):
        raise FlexModelError(body, "'method'", f"'cantilever' or 'craig_bampton', not {method!r}")
    reduce = cantilever_modes if method == "cantilever" else craig_bampton
    return reduce(fe, modes, child, damping=spec.get("damping", 0.0))


def spec_scalars(spec: Mapping) -> dict[str, float]:
    """The numbers of a spec a campaign may vary (:data:`SCALARS`), by name."""
    out: dict[str, float] = {}
    source = next((spec[k] for k in ("beam", "plate") if isinstance(spec.get(k), Mapping)), {})
    for k in SCALARS:
        v = source.get(k, spec.get(k) if k in ("modes", "damping") else None)
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            out[k] = float(v)
    return out


def spec_with(spec: Mapping, name: str, value: float) -> dict:
    """A copy of ``spec`` with the number ``name`` (one of :func:`spec_scalars`) set."""
    out = copy.deepcopy(dict(spec))
    if name in ("modes", "n_elements", "nx", "ny"):
        value = int(round(value))
    if name in ("modes", "damping"):
        out[name] = value
    else:
        key = "beam" if "beam" in out else "plate"
        out[key] = dict(out[key], **{name: value})
    return out
