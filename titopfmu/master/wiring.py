"""The system a co-simulation runs: its components, their connections and the held inputs.

:class:`Wiring` is the lowest layer of :class:`~titopfmu.master.cosim.CoSimulation`: ``add`` an
instance of an FMU file, ``connect`` a TITOP port pair (motion vector down, wrench up) or outputs
to inputs, ``set_input`` to hold inputs at a value. Every reference is checked as it is given
(component, variable, causality, type, size, a port pair's direction), the message naming the
valid choices. :func:`alias_name` reads a System's names as an FMU's (``from_system``). What the
connections make of a run (the tree, the loop, the order of the FMU calls) is :mod:`.plan`'s.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

import numpy as np

from .components import Component, CosimError, FmuFile


def alias_name(aliases: Mapping[str, str], name: str) -> str:
    """The FMU name of ``name`` under ``aliases`` (System name -> FMU name): ``hinge`` ->
    ``C1``, ``hinge.m[3]`` -> ``C1.m[3]``, ``m[2]`` -> ``joint.m[2]``; others unchanged."""
    base, bracket, idx = name.partition("[")
    if base in aliases:
        return aliases[base] + bracket + idx
    port, dot, what = base.rpartition(".")
    if dot and port in aliases and what in ("m", "W"):
        return f"{aliases[port]}.{what}{bracket}{idx}"
    return name


class Wiring:
    """Components, connections and held inputs. The state is set up by
    :class:`~titopfmu.master.cosim.CoSimulation`: ``components``, ``_files`` (one
    :class:`~.components.FmuFile` per path), ``port_links`` (child component and port -> parent
    component and port), ``signal_links`` (output -> input), ``inputs`` (held values) and
    ``aliases``; every change clears ``_ready``, so that the next run plans again."""

    def add(self, name: str, fmu: str | os.PathLike, parameters: Mapping | None = None) -> None:
        """Add a component ``name``: an instance of the FMU file ``fmu`` with ``parameters``
        (FMI names; arrays by base name, e.g. ``inertia`` for ``inertia[i,j]``)."""
        if name in self.components:
            raise CosimError(f"a component named '{name}' already exists")
        key = os.fspath(fmu)
        if key not in self._files:
            self._files[key] = FmuFile.load(key)
        self.components[name] = Component(name, self._files[key], dict(parameters or {}))
        self._ready = False

    def _split(self, ref: str) -> tuple[Component, str]:
        if not isinstance(ref, str) or "." not in ref:
            raise CosimError(
                f"reference {ref!r} must read 'component.variable' or 'component.port'"
            )
        c, rest = ref.split(".", 1)
        if c not in self.components:
            known = ", ".join(self.components) or "none yet (add them first)"
            raise CosimError(f"reference '{ref}': no component '{c}'; components: {known}")
        if c in self.aliases:
            rest = alias_name(self.aliases[c], rest)
            if rest.startswith("@"):  # a name of c for another component's variable
                c, rest = rest[1:].split(".", 1)
        return self.components[c], rest

    def connect(self, source: str, target: str) -> None:
        """Connect ``source`` to ``target``.

        A TITOP port pair ``"parent.Cj"`` -> ``"child.P"`` (child-kind to parent-kind) carries
        the motion vector down and the wrench up. Otherwise an output variable (or an array of
        them, ``"c.joint.m"`` for ``joint.m[1..k]``) feeds an input of the same size.
        """
        a, pa = self._split(source)
        b, pb = self._split(target)
        if pa in a.child_ports and pb in b.parent_ports:
            for link in self.port_links:
                if (link[2], link[3]) == (b.name, pb):
                    raise CosimError(f"port '{target}' is already connected")
                if (link[0], link[1]) == (a.name, pa):
                    raise CosimError(f"port '{source}' is already connected")
            self.port_links.append((a.name, pa, b.name, pb))
            self._ready = False
            return
        self._check_port_pair(a, pa, b, pb, source, target)
        outs = self._expand_var(a, pa, "output", source)
        ins = self._expand_var(b, pb, "input", target)
        if len(outs) != len(ins):
            raise CosimError(
                f"'{source}' ({len(outs)} values) and '{target}' ({len(ins)}) differ in size"
            )
        for o, i in zip(outs, ins, strict=True):
            if any((lk[2], lk[3]) == (b.name, i) for lk in self.signal_links):
                raise CosimError(f"input '{b.name}.{i}' is already connected")
            if (b.name, i) in self.inputs:
                raise CosimError(f"input '{b.name}.{i}' is held by set_input; not both")
            self.signal_links.append((a.name, o, b.name, i))
        self._ready = False

    def _check_port_pair(self, a: Component, pa: str, b: Component, pb: str, source: str,
                         target: str) -> None:  # fmt: skip
        """Raise a CosimError naming the valid choices when either side of a connection is a
        TITOP port but the two do not make a child-port -> parent-port pair."""
        kinds = {"child": "a child port (motion vector out, wrench in)",
                 "parent": "a parent port (motion vector in, wrench out)"}  # fmt: skip

        def kind(c: Component, p: str) -> str | None:
            return "child" if p in c.child_ports else "parent" if p in c.parent_ports else None

        ka, kb = kind(a, pa), kind(b, pb)
        if ka is None and kb is None:
            return
        if ka == "parent" and kb == "child":
            raise CosimError(
                f"'{source}' -> '{target}': a TITOP connection goes from a child port to a "
                f"parent port: connect('{target}', '{source}')"
            )
        if ka == "child":
            free = [f"{n}.{p}" for n, c in self.components.items() for p in c.parent_ports
                    if n != a.name and not any((lk[2], lk[3]) == (n, p)
                                               for lk in self.port_links)]  # fmt: skip
            other = f"'{target}' is {kinds[kb]}" if kb else f"'{target}' is not a port"
            raise CosimError(
                f"'{source}' -> '{target}': '{source}' is {kinds['child']}; it connects to a "
                f"parent port, and {other}. Unconnected parent ports: "
                + (", ".join(free) or "none")
            )
        if kb == "parent":
            free = [f"{n}.{p}" for n, c in self.components.items() for p in c.child_ports
                    if n != b.name and not any((lk[0], lk[1]) == (n, p)
                                               for lk in self.port_links)]  # fmt: skip
            other = f"'{source}' is {kinds[ka]}" if ka else f"'{source}' is not a port"
            raise CosimError(
                f"'{source}' -> '{target}': '{target}' is {kinds['parent']}; it is fed by a "
                f"child port, and {other}. Unconnected child ports: " + (", ".join(free) or "none")
            )
        # a parent port as source or a child port as target, the other side a signal
        p, c, k = (pa, a, ka) if ka else (pb, b, kb)
        raise CosimError(
            f"'{source}' -> '{target}': '{c.name}.{p}' is {kinds[k]}; a TITOP connection goes "
            "from a child port ('parent.Cj') to a parent port ('child.P'), both given whole; "
            f"its variables are {p}.m[1..18] and {p}.W[1..6]"
        )

    @staticmethod
    def valid_names(c: Component, causality: str | None = None) -> list[str]:
        """What a reference to component ``c`` may name: its TITOP ports (for connections) and
        its Real variables of ``causality`` (any when None), arrays by their base name."""
        ports = set(c.child_ports) | set(c.parent_ports)
        out = sorted(ports) if causality is None or causality in ("input", "output") else []
        for n, v in c.variables.items():
            if v.type != "Real" or (causality is not None and v.causality != causality):
                continue
            base = n.split("[", 1)[0]
            if base.rsplit(".", 1)[0] in ports and base.rsplit(".", 1)[-1] in ("m", "W"):
                continue  # a port's own variables: listed as the port
            if base not in out:
                out.append(base)
        return out

    @classmethod
    def _expand_var(cls, c: Component, name: str, causality: str | None, ref: str,
                    what: str = "") -> list[str]:  # fmt: skip
        """FMI names of the variable ``name`` or of the array ``name[...]``, checked to have
        ``causality`` (any when None) and type Real. ``what`` prefixes the messages."""
        where = f"{what}'{ref}'"
        if name in c.variables:
            names = [name]
        else:
            names = sorted(
                (n for n in c.variables if n.startswith(name + "[")),
                key=lambda n: [int(x) for x in n[len(name) + 1 : -1].split(",")],
            )
            if (
                not names and causality is None and name in set(c.child_ports) | set(c.parent_ports)
            ):  # a whole port, recorded: its motion vector and its wrench
                names = [f"{name}.m[{i}]" for i in range(1, 19)]
                names += [f"{name}.W[{i}]" for i in range(1, 7)]
            if not names:
                import difflib

                valid = cls.valid_names(c, causality)
                if name in c.child_ports or name in c.parent_ports:
                    hint = f" ('{name}' is a TITOP port: name its variables '{name}.m', '{name}.W')"
                else:
                    close = difflib.get_close_matches(name, valid, n=1)
                    hint = f" (did you mean '{close[0]}'?)" if close else ""
                kind = f"{causality} " if causality else ""
                raise CosimError(
                    f"{where}: component '{c.name}' has no variable '{name}'{hint}; "
                    f"valid {kind}names: {', '.join(valid) or 'none'}"
                )
        for n in names:
            v = c.variables[n]
            if causality is not None and v.causality != causality:
                raise CosimError(
                    f"{where}: '{c.name}.{n}' has causality '{v.causality}', not '{causality}'"
                )
            if v.type != "Real":
                raise CosimError(
                    f"{where}: '{c.name}.{n}' is of type {v.type}; connections, held inputs and "
                    "recordings take Real variables"
                )
        return names

    def set_input(self, ref: str, value) -> None:
        """Hold an unconnected input (or array of inputs) at a constant value."""
        c, name = self._split(ref)
        names = self._expand_var(c, name, "input", ref)
        vals = np.atleast_1d(np.asarray(value, dtype=float)).reshape(-1)
        if vals.size != len(names):
            raise CosimError(f"'{ref}' has {len(names)} values, got {vals.size}")
        if not np.all(np.isfinite(vals)):
            raise CosimError(f"'{ref}': non-finite value {vals.tolist()}")
        for n, v in zip(names, vals, strict=True):
            if any((lk[2], lk[3]) == (c.name, n) for lk in self.signal_links) or (
                n.startswith(tuple(f"{pp}." for _, _, cb, pp in self.port_links if cb == c.name))
                or n.startswith(tuple(f"{cp}." for ca, cp, _, _ in self.port_links
                                      if ca == c.name))
            ):  # fmt: skip
                raise CosimError(f"input '{c.name}.{n}' is connected; it cannot also be held")
            self.inputs[(c.name, n)] = float(v)
