"""Shape symbols of a dynamic export: names, ranges, hints and guards.

This module owns the "symbols" and "guards" sections of torch-ir.json
(docs/design.md, "Shapes"):

  * ``dim_specs`` reads torch's ``dynamic_shapes`` (as the exporter builds
    it from ``--dynamic`` strings, or as a user passes it) and says which
    ``torch.export.Dim`` stands on which axis of which flat input, so a
    symbol can carry the user's name.
  * ``SymbolTable.build`` collects every free symbol of the program, in
    order of first appearance (inputs, then nodes), and gives each a name,
    an inclusive range from ``ep.range_constraints`` and its example value.
  * ``collect_guards`` gathers the relations torch assumed or asserted
    that ranges do not say: ``_assert_scalar`` conditions, and the shape
    environment's guards over two or more symbols.

Ranges: torch's lower bound (at least 0); an upper bound torch leaves
unbounded becomes ``default_max`` (``DEFAULT_MAX`` = 4096, or the hint if
larger) with a note, since rlx plans memory for the largest binding; no
bound exceeds ``MAX_SIZE`` = 2^48, rlx's element-count limit.

Single-symbol shape-env guards are left out on purpose: torch.export itself
either folds them into the symbol's range or refuses the export (a
constraint violation); the ones it keeps besides, such as ``Ne(s0, 1)``, are
its 0/1-specialization assumptions, which ``range_constraints`` (what
torch.export says the program is valid for) deliberately does not carry.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any

import sympy
import torch
from torch.utils import _pytree as pytree

from . import _sym
from ._ir import ExportError

DEFAULT_MAX = 4096
MAX_SIZE = 1 << 48


# --------------------------------------------------------------------------
# Which Dim is on which input axis


def _params(model: torch.nn.Module) -> list[inspect.Parameter]:
    try:
        return list(inspect.signature(model.forward).parameters.values())
    except (TypeError, ValueError):
        return []


def _per_arg_specs(model: torch.nn.Module, args: tuple, ds) -> list:
    """dynamic_shapes laid out as one spec per positional example input."""
    if isinstance(ds, (tuple, list)):
        return list(ds) + [None] * (len(args) - len(ds))
    if not isinstance(ds, dict):
        return [None] * len(args)
    out: list = []
    for p in _params(model):
        if len(out) >= len(args):
            break
        if p.kind == p.VAR_POSITIONAL:
            rest = ds.get(p.name)
            n = len(args) - len(out)
            out += list(rest)[:n] if isinstance(rest, (tuple, list)) else [None] * n
        elif p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            out.append(ds.get(p.name))
    return out + [None] * (len(args) - len(out))


def _leaf_specs(arg: Any, spec: Any) -> list:
    """One spec per pytree leaf of ``arg`` (None drops, as torch.export flattens)."""
    if arg is None:
        return []
    if isinstance(arg, torch.Tensor):
        return [spec]
    if isinstance(arg, dict):
        return [x for k, v in arg.items()
                for x in _leaf_specs(v, spec.get(k) if isinstance(spec, dict) else None)]
    if isinstance(arg, (tuple, list)):
        subs = list(spec) if isinstance(spec, (tuple, list)) and len(spec) == len(arg) else \
            [None] * len(arg)
        return [x for v, s in zip(arg, subs) for x in _leaf_specs(v, s)]
    return [None] * len(pytree.tree_flatten(arg)[0])


def dim_specs(model: torch.nn.Module, args: tuple, ds) -> dict[tuple[int, int], Any]:
    """(flat user input index, axis) -> the ``torch.export.Dim`` torch's
    ``dynamic_shapes`` ``ds`` puts there (named or derived); hints
    (``Dim.AUTO``) and static axes are left out.  Best effort: a structure it
    cannot align with the inputs gives {} (symbols then keep torch's names)."""
    if not ds:
        return {}
    leaves: list = []
    for a, s in zip(args, _per_arg_specs(model, args, ds)):
        leaves += _leaf_specs(a, s)
    if len(leaves) != len(pytree.tree_flatten(args)[0]):
        return {}
    out = {}
    for i, spec in enumerate(leaves):
        items = spec.items() if isinstance(spec, dict) else \
            enumerate(spec) if isinstance(spec, (tuple, list)) else ()
        for axis, d in items:
            if isinstance(d, torch.export.Dim) and isinstance(axis, int):
                out[(i, axis)] = d
    return out


# --------------------------------------------------------------------------
# The symbol table


@dataclass
class Symbol:
    sym: sympy.Symbol
    name: str
    min: int
    max: int
    hint: int
    where: str  # the first input axis that is this symbol, for messages


@dataclass
class SymbolTable:
    symbols: list[Symbol] = field(default_factory=list)
    names: dict = field(default_factory=dict)  # sympy.Symbol -> name
    shape_env: Any = None

    def entries(self) -> list[dict]:
        return [{"name": s.name, "min": s.min, "max": s.max, "hint": s.hint} for s in self.symbols]

    def hints(self) -> dict[str, int]:
        return {s.name: s.hint for s in self.symbols}

    @classmethod
    def build(cls, ep, user_inputs: list, dims: dict, default_max: int,
              notes: list[str]) -> "SymbolTable":
        table = cls()
        order: dict = {}
        where: dict = {}
        for node in user_inputs:
            val = node.meta.get("val")
            if isinstance(val, torch.Tensor):
                for axis, d in enumerate(val.shape):
                    for s in _free(d, table):
                        order.setdefault(s, None)
                        if d.node.expr == s:
                            where.setdefault(s, f"input '{node.name}' axis {axis}")
        for node in ep.graph.nodes:
            if node.op == "call_function":
                for s in _free_in_val(node.meta.get("val"), table):
                    order.setdefault(s, None)
        env = table.shape_env
        if env is None:
            return table
        backed = getattr(env, "backed_var_to_val", None)
        values = backed if backed is not None else env.var_to_val
        named = _user_names(user_inputs, dims)
        taken = set()
        chosen = {}
        for s in order:
            if s not in values:
                continue  # unbacked (data-dependent): the exporter refuses it where it is used
            name = named.get(s)
            if name is not None and (name in taken or name in _sym.KEYWORDS or
                                     not _sym.NAME_RE.match(name)):
                notes.append(f"Dim name '{name}' cannot name symbol {s} (taken, reserved or not "
                             f"an identifier); it keeps torch's name")
                name = None
            if name is not None:
                chosen[s] = name
                taken.add(name)
        for s in order:
            if s not in values:
                continue
            name = chosen.get(s)
            if name is None:
                name = str(s)
                while name in taken:
                    name += "_"
                taken.add(name)
            table.names[s] = name
            lo, hi = _range(ep, env, s)
            hint = int(values[s])
            w = where.get(s, "a derived size")
            if hi is None:
                hi = max(default_max, hint)
                notes.append(f"symbol '{name}' ({w}) has no upper bound; it gets max {hi} "
                             f"(rlx plans memory for the largest binding): give the range with "
                             f"--dynamic INPUT:AXIS:{name}:MIN:MAX or Dim('{name}', max=N)")
            elif hi > MAX_SIZE:
                notes.append(f"symbol '{name}' ({w}): max {hi} lowered to 2^48")
                hi = MAX_SIZE
            lo, hi = min(lo, hint), max(hi, hint)
            table.symbols.append(Symbol(s, name, lo, hi, hint, w))
        return table


def _free(d: Any, table: SymbolTable) -> list:
    if not isinstance(d, (torch.SymInt, torch.SymBool, torch.SymFloat)):
        return []
    if table.shape_env is None:
        table.shape_env = d.node.shape_env
    return sorted(d.node.expr.free_symbols, key=str)


def _free_in_val(val: Any, table: SymbolTable) -> list:
    if isinstance(val, torch.Tensor):
        return [s for d in val.shape for s in _free(d, table)]
    if isinstance(val, (list, tuple)):
        return [s for v in val for s in _free_in_val(v, table)]
    return _free(val, table)


def _user_names(user_inputs: list, dims: dict) -> dict:
    """sympy Symbol -> the Dim name the user gave it."""
    out = {}
    for (i, axis), dim in dims.items():
        if i >= len(user_inputs):
            continue
        val = user_inputs[i].meta.get("val")
        if not isinstance(val, torch.Tensor) or not -val.dim() <= axis < val.dim():
            continue
        d = val.shape[axis]
        if not isinstance(d, torch.SymInt):
            continue
        expr = d.node.expr
        root = getattr(dim, "root", None)
        if root is None and isinstance(expr, sympy.Symbol):
            out.setdefault(expr, dim.__name__)
        elif root is not None and len(expr.free_symbols) == 1:
            out.setdefault(next(iter(expr.free_symbols)), root.__name__)
    return out


def _range(ep, env, s) -> tuple[int, int | None]:
    vr = ep.range_constraints.get(s)
    if vr is None:
        vr = env.var_to_range.get(s)
    if vr is None:
        return 0, None
    lo = int(vr.lower) if vr.lower.is_Integer else 0
    hi = int(vr.upper) if vr.upper.is_Integer else None
    return max(lo, 0), hi


# --------------------------------------------------------------------------
# Guards


def collect_guards(ep, table: SymbolTable, notes: list[str]) -> list[dict]:
    """The "guards" entries: every ``_assert_scalar`` condition on shape
    symbols, then the shape environment's guards over two or more symbols;
    duplicates dropped, each checked to hold at the hints."""
    out: list[dict] = []
    seen: set = set()
    hints = table.hints()
    syms = set(table.names)

    def add(expr, source: str, optional: bool):
        try:
            rels = _sym.to_relations(expr, table.names)
        except _sym.SymError as e:
            if optional:
                notes.append(f"{source}: {e}; rlx cannot check this guard")
                return
            raise ExportError(f"{source}: {e}") from None
        for lhs, rel, rhs in rels:
            if (lhs, rel, rhs) in seen:
                continue
            seen.add((lhs, rel, rhs))
            if not _sym.holds(lhs, rel, rhs, hints):
                notes.append(f"{source}: {lhs} {rel} {rhs} is false at the example sizes; dropped")
                continue
            out.append({"lhs": lhs, "rel": rel, "rhs": rhs, "source": source})

    for node in ep.graph.nodes:
        if node.op != "call_function" or "_assert_scalar" not in str(node.target) or not node.args:
            continue
        cond = node.args[0]
        val = cond.meta.get("val") if isinstance(cond, torch.fx.Node) else cond
        if isinstance(val, torch.SymBool) and val.node.expr.free_symbols:
            if not val.node.expr.free_symbols <= syms:
                continue  # data-dependent: refused where the value is used
            msg = node.args[1] if len(node.args) > 1 and isinstance(node.args[1], str) else ""
            add(val.node.expr, f"node '{node.name}'" + (f": {msg}" if msg else ""), False)
    env = table.shape_env
    for g in getattr(env, "guards", []) if env is not None else []:
        expr = env.replace(g.expr)  # replaced symbols (folded equalities) out
        if len(getattr(expr, "free_symbols", ())) < 2:
            continue
        try:
            expr = env.simplify(expr)
        except Exception:  # noqa: BLE001 - a guard torch cannot simplify is taken as replaced
            pass
        free = getattr(expr, "free_symbols", set())
        if expr is sympy.true or len(free) < 2 or not free <= syms:
            continue
        add(expr, f"torch guard {str(g.sloc).strip()}", True)
    return out
