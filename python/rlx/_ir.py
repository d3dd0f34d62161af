"""FX graph -> torch-ir.json (format "rlx-torch-ir", version 1).

This module owns the translation of an ``ExportedProgram`` into the JSON
dictionary that the C importer reads, and the graph-level facts the exporter
needs besides the JSON: which placeholders are user inputs and which are
weights (and where their tensors live), the flat argument list in placeholder
order (for replaying the graph), and the graph's flattened outputs.

It does no file I/O and never calls ``torch.export``; see ``export.py``.
The JSON schema is described in docs/design.md ("Formats", "Shapes"), with
additions made by export.py: ``omitted_outputs``, the positions (in the eager
model's flattened outputs) of None outputs, which the program leaves out, and
``reference_bindings``.

A program with shape symbols also gets "symbols" and "guards" (``_shapes.py``)
and, wherever a value depends on a symbol, its expression in the grammar of
src/ir/sym.h (``_sym.py``): ``sym_shape`` on tensors, ``sym`` on integer
scalars, ``sym_rel`` (``{"lhs", "rel", "rhs"}``) on boolean scalars that are
one relation.  ``build_ir`` checks that every expression evaluates to the
recorded example value at the hints.
"""

from __future__ import annotations

import json
import math
import operator
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.fx
from torch.utils import _pytree as pytree

FORMAT = "rlx-torch-ir"
VERSION = 1

# torch dtype -> rlx dtype token.  Anything else is rejected.
DTYPE_TOKENS: dict[torch.dtype, str] = {
    torch.float32: "f32",
    torch.float16: "f16",
    torch.bfloat16: "bf16",
    torch.float64: "f64",
    torch.int64: "i64",
    torch.int32: "i32",
    torch.int16: "i16",
    torch.int8: "i8",
    torch.uint8: "u8",
    torch.bool: "bool",
    # the unsigned dtypes torch added in 2.3 (few CPU ops; hash_tensor returns uint64)
    torch.uint16: "u16",
    torch.uint32: "u32",
    torch.uint64: "u64",
}

# Complex dtypes (docs/design.md, "Complex numbers"): values inside the
# program, weights and dtype arguments may be complex; a complex weight is
# stored in weights.safetensors as its real pairs (view_as_real: the
# component dtype, shape + [2]) and its entry says "storage": "real_pairs".
# Program inputs, outputs and states stay real.
COMPLEX_TOKENS: dict[torch.dtype, str] = {
    torch.complex64: "c64",
    torch.complex128: "c128",
}

# Non-OpOverload callables that appear in dynamic-shape graphs (arithmetic on
# SymInts).  Written with a stable name instead of "<built-in function add>".
_SYM_OP_NAMES: dict[Any, str] = {
    operator.add: "sym_add",
    operator.sub: "sym_sub",
    operator.mul: "sym_mul",
    operator.floordiv: "sym_floordiv",
    operator.truediv: "sym_truediv",
    operator.mod: "sym_mod",
    operator.pow: "sym_pow",
    operator.neg: "sym_neg",
    operator.eq: "sym_eq",
    operator.ne: "sym_ne",
    operator.lt: "sym_lt",
    operator.le: "sym_le",
    operator.gt: "sym_gt",
    operator.ge: "sym_ge",
    operator.and_: "sym_and",
    operator.or_: "sym_or",
    operator.not_: "sym_not",
    math.ceil: "sym_ceil",
    math.floor: "sym_floor",
    math.trunc: "sym_trunc",
}
for _n in ("sym_max", "sym_min", "sym_not", "sym_float", "sym_int", "sym_ite", "sym_sqrt",
           "sym_sum"):
    if hasattr(torch, _n):
        _SYM_OP_NAMES[getattr(torch, _n)] = _n


class ExportError(Exception):
    """A problem with the model or its export; reported to the user as is."""


def dtype_token(dtype: torch.dtype, what: str) -> str:
    """The rlx token for ``dtype``; ``what`` names the tensor in the error."""
    tok = DTYPE_TOKENS.get(dtype) or COMPLEX_TOKENS.get(dtype)
    if tok is None:
        raise ExportError(
            f"{what}: dtype {dtype} is not supported by rlx "
            f"(supported: {', '.join(str(d).replace('torch.', '') for d in [*DTYPE_TOKENS, *COMPLEX_TOKENS])})")
    return tok


def real_io(t: torch.Tensor, what: str, fix: str) -> None:
    """Program inputs, outputs and states are real (docs/design.md, "Complex
    numbers"): a complex one is an export error saying what to do instead."""
    if t.is_complex():
        raise ExportError(f"{what} is {str(t.dtype).replace('torch.', '')}: rlx computes with complex "
                          f"values inside a program, but its inputs, outputs and states are real; {fix}")


def _is_symbolic(x: Any) -> bool:
    return isinstance(x, (torch.SymInt, torch.SymFloat, torch.SymBool))


def concrete(x: Any) -> Any:
    """The example value (hint) of a SymInt/SymFloat/SymBool; plain values unchanged."""
    if not _is_symbolic(x):
        return x
    node = x.node
    hint = getattr(node, "hint", None)
    if hint is None:
        shape_env = getattr(node, "shape_env", None)
        if shape_env is not None:
            try:
                hint = shape_env.size_hint(node.expr)
            except Exception:  # noqa: BLE001 - an unbacked symbol (.item(), nonzero) has no example value
                hint = None
    if hint is None:
        raise ExportError(f"the value {x} depends on tensor data (.item(), nonzero, a boolean mask, ...), "
                          "and rlx compiles static shapes and scalars")
    if isinstance(x, torch.SymInt):
        return int(hint)
    if isinstance(x, torch.SymFloat):
        return float(hint)
    return bool(hint)


def op_name(target: Any) -> str:
    """The ``op`` string for a call_function target."""
    if target is operator.getitem:
        return "_getitem"
    if isinstance(target, (torch._ops.OpOverload, torch._ops.HigherOrderOperator)):
        return str(target)
    name = _SYM_OP_NAMES.get(target)
    if name is not None:
        return name
    return str(target)


def _float_value(x: float) -> Any:
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return x


def encode_arg(a: Any) -> dict:
    """One argument in the tagged encoding of torch-ir.json."""
    if isinstance(a, torch.fx.Node):
        val = a.meta.get("val")
        if _is_symbolic(val) or isinstance(val, (bool, int, float)):
            return {"sym": a.name}
        return {"ref": a.name}
    if a is None:
        return {"none": True}
    if isinstance(a, bool):  # before int: bool is a subclass of int
        return {"bool": a}
    if isinstance(a, int):
        return {"int": a}
    if isinstance(a, float):
        return {"float": _float_value(a)}
    if isinstance(a, str):
        return {"str": a}
    if isinstance(a, torch.dtype):
        return {"dtype": dtype_token(a, "dtype argument")}
    if isinstance(a, (list, tuple)):
        return {"list": [encode_arg(x) for x in a]}
    # torch.device, torch.layout, torch.memory_format, SymInt not bound to a
    # node, and anything unforeseen: its string form.
    return {"str": str(a)}


def _scalar_arg(v: Any) -> dict:
    """A Python or symbolic scalar (an ``out`` or a constant) as a tagged arg."""
    return encode_arg(concrete(v))


def _shape(t: torch.Tensor, what: str = "tensor") -> list[int]:
    dims = []
    for d in t.shape:
        try:
            dims.append(concrete(d))
        except Exception as e:  # noqa: BLE001 - an unbacked size has no example value
            if not _is_symbolic(d):
                raise
            raise ExportError(
                f"{what} has a data-dependent size ({d}, shape {tuple(t.shape)}): its size depends on tensor "
                f"values (nonzero, a boolean mask index, unique, ...), and rlx compiles static shapes. "
                f"Rewrite that step with a fixed size (e.g. torch.where with a mask instead of indexing "
                f"by it).") from e
    return dims


def _sym_shape(t: torch.Tensor, names: dict | None, what: str) -> list | None:
    """One int or expression text per axis; None when no axis is symbolic."""
    if not names or not any(isinstance(d, torch.SymInt) and not _is_constant_symint(d)
                            for d in t.shape):
        return None
    from . import _sym
    try:
        return [_sym.to_int_or_text(d.node.expr, names) if isinstance(d, torch.SymInt) else int(d)
                for d in t.shape]
    except _sym.SymError as e:
        raise ExportError(f"{what}: shape {tuple(t.shape)}: {e}") from None


def tensor_out(t: torch.Tensor, what: str, names: dict | None = None) -> dict:
    """``{shape, dtype}`` of a tensor value, plus ``sym_shape`` where an axis
    depends on a shape symbol (``names``: sympy Symbol -> rlx name)."""
    out = {"shape": _shape(t, what), "dtype": dtype_token(t.dtype, what)}
    sym = _sym_shape(t, names, what)
    if sym is not None:
        out["sym_shape"] = sym
    return out


def _scalar_out(val: Any, what: str, names: dict | None) -> dict:
    out = {"scalar": _scalar_arg(val)}
    if not (names and _is_symbolic(val) and val.node.expr.free_symbols):
        return out
    from . import _sym
    expr = val.node.expr
    try:
        if isinstance(val, torch.SymInt):
            out["sym"] = _sym.to_text(expr, names)
        elif isinstance(val, torch.SymBool):
            rels = _sym.to_relations(expr, names)
            if len(rels) == 1:
                out["sym_rel"] = dict(zip(("lhs", "rel", "rhs"), rels[0]))
        else:
            raise _sym.SymError(f"the float {expr} depends on shape symbols: rlx sizes are "
                                "integers")
    except _sym.SymError as e:
        raise ExportError(f"{what}: {e}") from None
    return out


def encode_out(val: Any, what: str, names: dict | None = None) -> Any:
    """``out`` of a node from its ``meta["val"]``; with ``names`` (a dynamic
    program's symbols), symbolic values carry their expressions."""
    if val is None:
        return None
    if isinstance(val, torch.Tensor):
        return tensor_out(val, what, names)
    if isinstance(val, (list, tuple)):
        return [encode_out(v, f"{what}[{i}]", names) for i, v in enumerate(val)]
    if _is_symbolic(val) or isinstance(val, (bool, int, float)):
        return _scalar_out(val, what, names)
    return None


# --------------------------------------------------------------------------
# Placeholders and weights


@dataclass
class Weight:
    id: str          # FX placeholder (or get_attr node) name
    key: str         # state_dict FQN; the safetensors key
    kind: str        # param | buffer | const
    tensor: torch.Tensor


@dataclass
class GraphIO:
    """What the placeholders of an ExportedProgram are."""
    user_inputs: list[torch.fx.Node] = field(default_factory=list)  # in placeholder order
    weights: list[Weight] = field(default_factory=list)
    # mutated buffers (BUFFER_MUTATION): session state; Weight.kind "state",
    # and update_of[placeholder name] is the node whose value the buffer takes
    states: list[Weight] = field(default_factory=list)
    update_of: dict[str, str] = field(default_factory=dict)
    # placeholder name -> ("user", index into the flat user inputs) or ("weight", Weight)
    by_name: dict[str, tuple[str, Any]] = field(default_factory=dict)


def _lookup_tensor(ep, key: str, what: str) -> torch.Tensor:
    if key in ep.state_dict:
        t = ep.state_dict[key]
    elif key in ep.constants:
        t = ep.constants[key]
    else:
        raise ExportError(f"{what}: tensor '{key}' is neither in the state_dict nor in the "
                          "exported program's constants")
    if not isinstance(t, torch.Tensor):
        raise ExportError(f"{what}: '{key}' is a {type(t).__name__}, not a tensor")
    return t


def _get_attr(root: torch.nn.Module, target: str) -> Any:
    obj: Any = root
    for part in target.split("."):
        obj = getattr(obj, part)
    return obj


def classify_placeholders(ep) -> GraphIO:
    sig = ep.graph_signature
    params = dict(sig.inputs_to_parameters)
    buffers = dict(sig.inputs_to_buffers)
    consts = dict(sig.inputs_to_lifted_tensor_constants)
    custom = dict(getattr(sig, "inputs_to_lifted_custom_objs", {}) or {})
    # buffer name -> the output node that holds its new value
    mutated = {buf: out for out, buf in dict(getattr(sig, "buffers_to_mutate", {}) or {}).items()}
    io = GraphIO()
    for node in ep.graph.nodes:
        if node.op == "placeholder":
            name = node.name
            if name in custom:
                raise ExportError(
                    f"input '{name}' is a lifted custom object ({custom[name]}); "
                    "rlx supports only tensor weights")
            kind, key = None, None
            if name in params:
                kind, key = "param", params[name]
            elif name in buffers:
                kind, key = "buffer", buffers[name]
            elif name in consts:
                kind, key = "const", consts[name]
            if kind == "buffer" and key in mutated:
                w = Weight(name, key, "state", _lookup_tensor(ep, key, f"state '{name}'"))
                io.states.append(w)
                io.update_of[name] = mutated[key]
                io.by_name[name] = ("weight", w)
            elif kind is not None:
                w = Weight(name, key, kind, _lookup_tensor(ep, key, f"weight '{name}'"))
                io.weights.append(w)
                io.by_name[name] = ("weight", w)
            else:
                io.by_name[name] = ("user", len(io.user_inputs))
                io.user_inputs.append(node)
        elif node.op == "get_attr":
            obj = _get_attr(ep.graph_module, node.target)
            if isinstance(obj, torch.nn.Module):
                raise ExportError(
                    f"node '{node.name}' refers to the subgraph '{node.target}': control flow "
                    "(torch.cond, while_loop, map) is not supported by rlx")
            if not isinstance(obj, torch.Tensor):
                raise ExportError(f"node '{node.name}' reads attribute '{node.target}' of type "
                                  f"{type(obj).__name__}; rlx supports only tensor constants")
            w = Weight(node.name, str(node.target), "const", obj)
            io.weights.append(w)
            io.by_name[node.name] = ("weight", w)
    return io


def flat_outputs(ep) -> list[Any]:
    """The graph's user outputs, flattened (None kept as a leaf)."""
    out_node = ep.graph.output_node()
    leaves, _ = pytree.tree_flatten(out_node.args[0], is_leaf=lambda v: v is None)
    # The output node also returns mutated buffers / inputs before the user
    # outputs; rlx runs inference, so only user outputs are kept.
    specs = ep.graph_signature.output_specs
    if len(specs) == len(leaves):
        from torch.export.graph_signature import OutputKind
        leaves = [v for v, s in zip(leaves, specs) if s.kind == OutputKind.USER_OUTPUT]
    return leaves


def dropped_outputs(ep) -> list[str]:
    """Names of non-user outputs (input mutations) that flat_outputs drops and
    no state keeps."""
    from torch.export.graph_signature import OutputKind
    # buffer mutations are not dropped: they become the program's state
    return [f"{s.kind.name.lower()}:{s.target}" for s in ep.graph_signature.output_specs
            if s.kind not in (OutputKind.USER_OUTPUT, OutputKind.BUFFER_MUTATION)]


# --------------------------------------------------------------------------
# The JSON document


def _node_out(node: torch.fx.Node, names: dict | None = None) -> Any:
    what = f"node '{node.name}' ({op_name(node.target)})"
    try:
        return encode_out(node.meta.get("val"), what, names)
    except ExportError as e:
        if str(e).startswith(what):
            raise
        raise ExportError(f"{what}: {e}") from e


def build_ir(ep, *, model_name: str, decomposition: str, producer: str,
             io: GraphIO | None = None, dims: dict | None = None,
             default_max: int | None = None, notes: list[str] | None = None) -> dict:
    """The torch-ir.json document (a plain dict) for ``ep``.

    ``dims``: (flat user input index, axis) -> torch.export.Dim, whose names
    name the symbols (``_shapes.dim_specs``); ``default_max``: the max of a
    symbol torch leaves unbounded (``_shapes.DEFAULT_MAX``); ``notes``
    collects what the user should hear (unbounded symbols, guards rlx
    cannot check)."""
    from . import _shapes
    io = io or classify_placeholders(ep)
    notes = notes if notes is not None else []
    table = _shapes.SymbolTable.build(
        ep, io.user_inputs, dims or {},
        _shapes.DEFAULT_MAX if default_max is None else default_max, notes)
    names = table.names or None

    inputs = []
    sym_ids: dict[str, int] = {}
    for node in io.user_inputs:
        val = node.meta.get("val")
        if not isinstance(val, torch.Tensor):
            if node.users:
                raise ExportError(
                    f"input '{node.name}' is a {type(val).__name__}, not a tensor, and the graph "
                    "uses it; rlx inputs must be tensors")
            continue  # a specialized Python scalar: the graph does not read it
        real_io(val, f"input '{node.name}'", "pass torch.view_as_real(x) and call "
                "torch.view_as_complex on it inside the model")
        entry: dict[str, Any] = {"id": node.name,
                                 **tensor_out(val, f"input '{node.name}'", names)}
        dyn = []
        for d in val.shape:
            if isinstance(d, torch.SymInt) and not _is_constant_symint(d):
                dyn.append(sym_ids.setdefault(str(d.node.expr), len(sym_ids)))
            else:
                dyn.append(-1)
        if any(s >= 0 for s in dyn):
            entry["dynamic"] = dyn
        inputs.append(entry)

    weights = [{"id": w.id, "key": w.key, "shape": list(w.tensor.shape),
                "dtype": dtype_token(w.tensor.dtype, f"weight '{w.key}'"), "kind": w.kind,
                **({"storage": "real_pairs"} if w.tensor.is_complex() else {})}
               for w in io.weights]

    nodes = []
    for node in ep.graph.nodes:
        if node.op != "call_function":
            continue
        nodes.append({
            "id": node.name,
            "op": op_name(node.target),
            "args": [encode_arg(a) for a in node.args],
            "kwargs": {k: encode_arg(v) for k, v in node.kwargs.items()},
            "out": _node_out(node, names),
        })

    outputs = []
    for i, leaf in enumerate(flat_outputs(ep)):
        if isinstance(leaf, torch.fx.Node):
            val = leaf.meta.get("val")
            if isinstance(val, torch.Tensor):
                real_io(val, f"output {i} ('{leaf.name}')", "return torch.view_as_real(y) "
                        "(its real and imaginary parts on a trailing axis of 2)")
                outputs.append({"ref": leaf.name,
                                **tensor_out(val, f"output {i} ('{leaf.name}')", names)})
            elif _is_symbolic(val) or isinstance(val, (bool, int, float)):
                # a symbolic scalar returned by the model: a 0-d tensor for rlx
                dt = {bool: "bool", int: "i64", float: "f64"}[type(concrete(val))]
                outputs.append({"ref": leaf.name, "shape": [], "dtype": dt})
            else:
                raise ExportError(f"output {i} ('{leaf.name}') has no tensor value")
        else:
            outputs.append({"const": _scalar_arg(leaf)})

    ir: dict[str, Any] = {
        "format": FORMAT,
        "version": VERSION,
        "model_name": model_name,
        "producer": producer,
        "decomposition": decomposition,
    }
    if table.symbols:
        ir["symbols"] = table.entries()
        ir["guards"] = _shapes.collect_guards(ep, table, notes)
    ir.update(inputs=inputs, weights=weights, nodes=nodes, outputs=outputs)
    for w in io.states:
        real_io(w.tensor, f"state '{w.key}'", "keep the mutated buffer real (its view_as_real)")
    if io.states:  # docs/design.md, "State"
        ir["state"] = [{"id": w.id, "key": w.key, "shape": list(w.tensor.shape),
                        "dtype": dtype_token(w.tensor.dtype, f"state '{w.key}'"),
                        "init": "zeros" if not w.tensor.any() else "weights",
                        "update": io.update_of[w.id]} for w in io.states]
    if table.symbols:
        check_at_hints(ir)
    return ir


def _tensor_entries(ir: dict):
    """(what, entry) for every tensor entry with a shape: inputs, node outs
    (each element of a list out) and outputs."""
    for e in ir["inputs"]:
        yield f"input '{e['id']}'", e
    for n in ir["nodes"]:
        outs = n["out"] if isinstance(n["out"], list) else [n["out"]]
        for k, o in enumerate(outs):
            if isinstance(o, dict):
                yield f"node '{n['id']}'" + (f" out[{k}]" if isinstance(n["out"], list) else ""), o
    for k, e in enumerate(ir["outputs"]):
        if "shape" in e:
            yield f"output {k}", e


def check_at_hints(ir: dict) -> None:
    """Every sym_shape entry and scalar "sym" of ``ir`` evaluates to the
    recorded example value at the symbols' hints (an exporter invariant)."""
    from . import _sym
    hints = {s["name"]: s["hint"] for s in ir.get("symbols", [])}
    for what, e in _tensor_entries(ir):
        if "sym_shape" in e:
            got = [_sym.evaluate(d, hints) for d in e["sym_shape"]]
            if got != e["shape"]:
                raise ExportError(f"{what}: sym_shape {e['sym_shape']} is {got} at the hints, "
                                  f"not the traced {e['shape']} (an exporter bug)")
        if "sym" in e and _sym.evaluate(e["sym"], hints) != e["scalar"].get("int"):
            raise ExportError(f"{what}: sym {e['sym']} disagrees with its example value "
                              f"{e['scalar']} (an exporter bug)")


def _is_constant_symint(d: torch.SymInt) -> bool:
    try:
        return d.node.expr.is_number
    except AttributeError:
        return False


def op_histogram(ir: dict) -> list[tuple[str, int]]:
    """(op, count) pairs, most frequent first, ties by name."""
    counts: dict[str, int] = {}
    for n in ir["nodes"]:
        counts[n["op"]] = counts.get(n["op"], 0) + 1
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))


# --------------------------------------------------------------------------
# Replaying the graph (for intermediates)


def flat_graph_args(ep, io: GraphIO, user_leaves: list[Any]) -> list[Any]:
    """Arguments for ``ep.graph_module`` in placeholder order."""
    if len(user_leaves) != len(io.user_inputs):
        raise ExportError(f"the graph has {len(io.user_inputs)} user inputs but "
                          f"{len(user_leaves)} example inputs were given")
    args = []
    for node in ep.graph.nodes:
        if node.op != "placeholder":
            continue
        kind, v = io.by_name[node.name]
        if kind == "user":
            args.append(user_leaves[v])
        else:  # a graph that is not functional (aten mode) may update buffers in place
            args.append(v.tensor if v.kind == "param" else v.tensor.clone())
    return args


class _Recorder(torch.fx.Interpreter):
    """Runs the graph and keeps every call_function node's value."""

    def __init__(self, gm: torch.fx.GraphModule):
        super().__init__(gm, garbage_collect_values=False)
        self.values: dict[str, Any] = {}

    def run_node(self, n: torch.fx.Node) -> Any:
        out = super().run_node(n)
        if n.op == "call_function":
            self.values[n.name] = out
        return out


def run_graph_recording(ep, flat_args: list[Any]) -> dict[str, torch.Tensor]:
    """FX node name -> eager tensor value for every call_function node that
    produces a single tensor, in topological order."""
    rec = _Recorder(ep.graph_module)
    with torch.no_grad():
        rec.run(*flat_args)
    return {k: v for k, v in rec.values.items() if isinstance(v, torch.Tensor)}


def dumps(ir: dict) -> str:
    """torch-ir.json text: one line per input, weight, node and output."""
    def one(v: Any) -> str:
        return json.dumps(v, separators=(", ", ": "), allow_nan=False)

    parts = []
    for k, v in ir.items():
        if isinstance(v, list) and v:
            items = ",\n".join("  " + one(x) for x in v)
            parts.append(f" {json.dumps(k)}: [\n{items}\n ]")
        else:
            parts.append(f" {json.dumps(k)}: {one(v)}")
    return "{\n" + ",\n".join(parts) + "\n}\n"
