"""Where a :class:`~titopfmu.assembly.system.System` comes from: the ``MODEL`` argument that every
command (``run``, ``crosscheck``, ``export``, ``campaign``, ``linearize``) takes.

* a model file (``.yaml``, ``.yml``, ``.json``; ``docs/model-files.md``);
* a URDF file (``.urdf``, :func:`titopfmu.import_urdf`);
* an MJCF file (``.mjcf``, or ``.xml`` whose root is ``<mujoco>``: :func:`titopfmu.import_mjcf`);
* the name of a shipped model (``balloon``), also written ``example:balloon``;
* ``package.module:function`` or ``path/to/file.py:function``: a function taking no argument
  that returns a System; a module is looked up from the current directory first, as
  ``python -m`` does, so a model in a local module needs no ``PYTHONPATH``.

:func:`default_record` gives the columns a run records when the model names no ``outputs``.
"""

from __future__ import annotations

import importlib
import importlib.util
import re
import sys
from pathlib import Path

from .blocks.base import TitopError

#: One line on what MODEL may be (the commands' help).
MODEL_HELP = (
    "model file (.yaml/.json), .urdf, MJCF (.xml, .mjcf), a shipped model ('balloon'), or "
    "package.module:function / file.py:function returning a System"
)


class ModelSourceError(TitopError):
    """MODEL names nothing that gives a System (the message says what it may be)."""


def is_mjcf(path: Path) -> bool:
    """An MJCF file: ``.mjcf``, or ``.xml`` whose root element is ``<mujoco>``."""
    if path.suffix.lower() == ".mjcf":
        return True
    if path.suffix.lower() != ".xml" or not path.is_file():
        return False
    with open(path, encoding="utf-8", errors="replace") as f:
        head = f.read(4096)
    return re.search(r"<mujoco\b", re.sub(r"<!--.*?-->", "", head, flags=re.S)) is not None


def load_model(ref: str, floating_base: bool = False):
    """The System that ``ref`` names (see the module's docstring). ``floating_base``: URDF only
    (an MJCF model says it with a free joint). Raises FileNotFoundError for a missing file,
    :class:`ModelSourceError` for a reference that names no model, and the readers' own errors
    (``ModelFileError`` with file and line, ...) for a bad one."""
    from . import modelfile

    p = Path(ref)
    if not p.exists() and ":" in ref and not _drive(ref):
        return _from_function(ref)
    if not p.exists() and "/" not in ref and "." not in ref:
        p = modelfile.example_path(ref)
    if p.suffix.lower() == ".urdf":
        from .urdf import import_urdf

        return import_urdf(str(p), floating_base=floating_base)
    if is_mjcf(p):
        from .mjcf import import_mjcf

        return import_mjcf(str(p))
    return modelfile.load(p)


def _drive(ref: str) -> bool:
    """``C:\\...``: a Windows path, not ``module:function``."""
    return len(ref) > 2 and ref[1] == ":" and ref[0].isalpha() and ref[2] in "\\/"


def _from_function(ref: str):
    """``example:NAME``, ``module:function`` or ``file.py:function``: call it, check it is a
    System."""
    from . import modelfile
    from .assembly.system import System

    where, _, name = ref.rpartition(":")
    if not where or not name:
        raise ModelSourceError(f"model {ref!r}: expected module:function after the colon")
    if where == "example":
        try:
            return modelfile.load(modelfile.example_path(name))
        except FileNotFoundError:
            raise ModelSourceError(f"unknown example {name!r}: choose from ['balloon']") from None
    if where.endswith(".py"):
        path = Path(where)
        if not path.is_file():
            raise FileNotFoundError(f"model {ref!r}: no file {where}")
        spec = importlib.util.spec_from_file_location(path.stem, path)
        module = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(module)
        except Exception as exc:
            raise ModelSourceError(f"model {ref!r}: {_failure(exc)}") from None
    else:
        added = "" not in sys.path and "." not in sys.path
        if added:  # the current directory, as `python -m` has it
            sys.path.insert(0, "")
        try:
            module = importlib.import_module(where)
        except ImportError as exc:
            raise ModelSourceError(f"model {ref!r}: cannot import {where!r} ({exc})") from None
        except Exception as exc:  # an error in the user's module: where, in one line
            raise ModelSourceError(f"model {ref!r}: {_failure(exc)}") from None
        finally:
            if added:
                sys.path.remove("")
    fn = getattr(module, name, None)
    if not callable(fn):
        raise ModelSourceError(f"model {ref!r}: {where} has no function {name!r}")
    try:
        system = fn()
    except TitopError:
        raise
    except Exception as exc:
        raise ModelSourceError(f"model {ref!r}: {name}() failed: {_failure(exc)}") from None
    if not isinstance(system, System):
        raise ModelSourceError(
            f"model {ref!r}: {name}() returned {type(system).__name__}, not a titopfmu System"
        )
    return system


def _failure(exc: BaseException) -> str:
    """``file:line: Type: message`` of an exception raised in a user's code (its innermost
    frame), for a one-line error."""
    import traceback

    frames = traceback.extract_tb(exc.__traceback__)
    where = f"{frames[-1].filename}:{frames[-1].lineno}: " if frames else ""
    return f"{where}{type(exc).__name__}: {exc}"


def default_record(system) -> dict[str, str]:
    """Columns when the model has no ``outputs``: the root's position and Euler angles and the
    position part of every forward joint's motion."""
    from .blocks.bodies import JointBody, RigidBody

    rec: dict[str, str] = {}
    for b in system.blocks.values():
        if isinstance(b, RigidBody):
            for i, ax in enumerate("xyz"):
                rec[f"{b.name}.{ax}"] = f"{b.name}.position[{i + 1}]"
            for i, ax in enumerate(("phi", "theta", "psi")):
                rec[f"{b.name}.{ax}"] = f"{b.name}.euler[{i + 1}]"
        elif isinstance(b, JointBody) and not b.inverse and b.joint.dof:
            n = b.ports["joint.m"].size
            for i in range(2 * n // 3, n):
                rec[f"{b.name}.q{i - 2 * n // 3 + 1}" if n > 3 else f"{b.name}.q"] = (
                    f"{b.name}.joint.m[{i + 1}]"
                )
    return rec


__all__ = ["MODEL_HELP", "ModelSourceError", "default_record", "is_mjcf", "load_model"]
