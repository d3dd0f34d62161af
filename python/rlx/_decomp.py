"""Decomposition tables and the rlx support check.

This module owns which ATen ops survive ``run_decompositions`` in each mode
(aten, high, core, plus ops forced to decompose), and the pieces of the
auto-decompose loop that talk to the rlx binary: finding it, running
``rlx inspect OUT --check``, and reading the ops it reports as unsupported.
The loop itself is in ``export.py``.
"""

from __future__ import annotations

import functools
import re
import subprocess
from pathlib import Path
from typing import Iterable

import torch

from . import _paths
from ._ir import ExportError

DECOMPOSITIONS = ("aten", "high", "core")

# Ops kept whole under "high" (every overload of each that torch has).
PRESERVED_OPS = (
    "scaled_dot_product_attention",
    # torch's decomposition of these returns the attention weights as the second
    # output where eager returns logsumexp (a [B, H, L, S] tensor for a [B, H, L]
    # one): kept whole, rlx computes both (src/import/lower/linalg.c)
    "_scaled_dot_product_flash_attention", "_scaled_dot_product_flash_attention_for_cpu",
    "layer_norm", "native_layer_norm", "group_norm",
    "native_group_norm", "batch_norm", "native_batch_norm", "_native_batch_norm_legit",
    "_native_batch_norm_legit_no_training", "rms_norm", "convolution", "conv1d", "conv2d",
    "linear", "gelu", "silu", "_softmax", "softmax", "_log_softmax", "log_softmax", "embedding",
    # interpolation: torch's decompositions compute the scale as a float of the
    # sizes, which a symbolic output size turns into float arithmetic on shape
    # symbols; rlx lowers them whole (src/import/lower/resize.c)
    "upsample_nearest1d", "upsample_nearest2d", "upsample_nearest3d", "_upsample_nearest_exact1d",
    "_upsample_nearest_exact2d", "_upsample_nearest_exact3d", "upsample_linear1d", "upsample_bilinear2d",
    "upsample_trilinear3d", "upsample_bicubic2d", "_upsample_bilinear2d_aa", "_upsample_bicubic2d_aa",
)

CHECK_TIMEOUT_S = 600


# --------------------------------------------------------------------------
# Decomposition tables


def _overloads(packet) -> list:
    return [getattr(packet, o) for o in packet.overloads()]


def resolve_op(name: str) -> list:
    """OpOverloads for ``aten.roll.default`` (one) or ``aten.roll`` (all overloads)."""
    parts = name.split(".")
    if len(parts) < 2 or parts[0] != "aten":
        return []
    packet = getattr(torch.ops.aten, parts[1], None)
    if packet is None or not hasattr(packet, "overloads"):
        return []
    if len(parts) == 2:
        return _overloads(packet)
    ov = getattr(packet, ".".join(parts[2:]), None) if len(parts) == 3 else None
    return [ov] if isinstance(ov, torch._ops.OpOverload) else []


@functools.lru_cache(maxsize=1)
def _decomp_sources() -> tuple[dict, ...]:
    """Where torch's decompositions live (read only)."""
    import torch._decomp as D
    return (D.decomposition_table, dict(D.core_aten_decompositions().items()))


def decomposable(name: str) -> list:
    """The overloads named by ``name`` that torch has a decomposition for."""
    srcs = _decomp_sources()
    return [op for op in resolve_op(name) if any(op in s for s in srcs)]


def _decomp_fn(op):
    for s in _decomp_sources():
        if op in s:
            return s[op]
    raise ExportError(f"torch has no decomposition for {op}")


def force_ops(names: Iterable) -> list:
    ops = []
    for n in names:
        if isinstance(n, torch._ops.OpOverload):
            ops.append(n)
            continue
        found = decomposable(str(n))
        if not found:
            raise ExportError(f"cannot force-decompose '{n}': torch has no decomposition for it")
        ops.extend(found)
    return ops


def decomposition_table(mode: str, force: Iterable = ()) -> dict | None:
    """The table for ``run_decompositions``; None means "do not decompose"
    (aten) or "full Core ATen" (core), see ``decompose``."""
    forced = force_ops(force)
    if mode == "aten":
        return {op: _decomp_fn(op) for op in forced} if forced else None
    if mode == "core":
        if not forced:
            return None
        table = torch.export.default_decompositions()
    elif mode == "high":
        table = torch.export.default_decompositions()
        for name in PRESERVED_OPS:
            packet = getattr(torch.ops.aten, name, None)
            if packet is None:
                continue
            for op in _overloads(packet):
                if op in table:
                    table.pop(op)
    else:
        raise ExportError(f"unknown decomposition '{mode}' "
                          f"(choose from {', '.join(DECOMPOSITIONS)})")
    for op in forced:
        table[op] = _decomp_fn(op)
    return table


def decompose(ep, mode: str, force: Iterable = ()):
    table = decomposition_table(mode, force)
    if mode == "aten" and table is None:
        out = ep
    elif mode == "core" and table is None:
        out = ep.run_decompositions()
    else:
        out = ep.run_decompositions(table)
    out = remove_effect_tokens(out)
    drop_runtime_asserts(out)
    return out


def remove_effect_tokens(ep):
    """The program without torch's effect tokens.  An op with a side effect
    (``aten._linalg_check_errors``, which raises on a failed factorization:
    linalg.inv, cholesky, solve, ...) is threaded through a ``with_effects``
    call on a token that torch.export adds as an extra input and output of
    the graph; rlx has no tokens, and the extra input made the graph's user
    inputs outnumber the example inputs.  torch's own pass turns each
    ``with_effects`` back into a plain call of the op (no outputs) and drops
    the tokens; rlx lowers the call (a check on the info tensor)."""
    from torch.export.graph_signature import InputKind
    if not any(s.kind == InputKind.TOKEN for s in ep.graph_signature.input_specs):
        return ep
    from torch.export._remove_effect_tokens_pass import _remove_effect_tokens
    return _remove_effect_tokens(ep)


# torch.export's run-time checks on scalars, and the ops that read a scalar out of a tensor's values
_RUNTIME_ASSERTS = {"aten._assert_scalar.default", "aten.sym_constrain_range.default",
                    "aten.sym_constrain_range_for_size.default"}
_DATA_SCALARS = {"aten._local_scalar_dense.default", "aten.item.default"}


def _scalar_ancestors(node: torch.fx.Node) -> tuple[list, bool]:
    """The scalar (non-tensor) nodes ``node`` is computed from, and whether one
    of them reads a tensor's values (``.item()``)."""
    seen, out, data, stack = set(), [], False, list(node.all_input_nodes)
    while stack:
        x = stack.pop()
        if x in seen or x.op != "call_function":
            continue
        seen.add(x)
        if isinstance(x.meta.get("val"), torch.Tensor):
            continue  # the walk stops at tensors
        out.append(x)
        data |= str(x.target) in _DATA_SCALARS
        stack.extend(x.all_input_nodes)
    return out, data


def drop_runtime_asserts(ep) -> int:
    """Removes the run-time assertions on values read out of tensors
    (``assert lengths.max() <= n`` becomes ``_local_scalar_dense -> le ->
    _assert_scalar``) and the scalar nodes that only fed them; returns how
    many nodes went. Such a data-dependent scalar cannot be compiled by rlx
    although nothing else uses it; rlx does not re-check the model's own
    asserts. Asserts on shapes and on tensors stay (rlx lowers them to no-ops)."""
    g = ep.graph_module.graph
    doomed, feeders = [], []
    for n in g.nodes:
        if n.op == "call_function" and str(n.target) in _RUNTIME_ASSERTS:
            anc, data = _scalar_ancestors(n)
            if data:
                doomed.append(n)
                feeders += anc
    if not doomed:
        return 0
    before = len(g.nodes)
    for n in doomed:
        g.erase_node(n)
    feeders = list(dict.fromkeys(feeders))
    changed = True  # the comparisons and .item() calls that fed only the asserts
    while changed:
        changed = False
        for n in list(feeders):
            if not n.users and not n.is_impure():
                g.erase_node(n)
                feeders.remove(n)
                changed = True
    ep.graph_module.recompile()
    return before - len(g.nodes)


# --------------------------------------------------------------------------
# rlx binary check


def find_rlx_binary() -> str | None:
    """$RLX_BIN, the installed package's own binary, a checkout's build/rlx,
    PATH (``_paths.find_binary``)."""
    return _paths.find_binary(ExportError)


# the list after the marker runs to the end of its paragraph (a blank line) or of the text
_UNSUPPORTED_RE = re.compile(r"does not yet support(.*?)(?:\n[ \t]*\n|\Z)", re.S)
# a qualified op name: aten.roll.default, aten.erfinv, or a library's custom op
# (transformers.grouped_mm_fallback.default); node names in the list have no dots
_OP_RE = re.compile(r"(?<![\w.])[A-Za-z_]\w*(?:\.\w+)+")


def parse_unsupported(text: str) -> list[str]:
    """Op names listed after "does not yet support" in rlx's output: aten ops and
    custom ops of other namespaces alike (only aten ops can be decomposed)."""
    names: list[str] = []
    for m in _UNSUPPORTED_RE.finditer(text):
        for name in _OP_RE.findall(m.group(1)):
            if name not in names:
                names.append(name)
    return names


def decompose_candidates(names: Iterable[str]) -> list[str]:
    """The reported names torch can decompose, as overload names, sorted."""
    out = set()
    for n in names:
        out.update(str(op) for op in decomposable(n))
    return sorted(out)


def run_check(rlx_bin: str, out_dir: Path) -> tuple[int, str]:
    """(exit code, stdout + stderr) of ``rlx inspect OUT --check``."""
    try:
        p = subprocess.run([rlx_bin, "inspect", str(out_dir), "--check"], capture_output=True,
                           encoding="utf-8", errors="replace", timeout=CHECK_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return 124, f"rlx inspect --check timed out after {CHECK_TIMEOUT_S} s"
    except OSError as e:
        raise ExportError(f"cannot run {rlx_bin}: {e}") from None
    return p.returncode, (p.stdout + ("\n" if p.stdout and p.stderr else "") + p.stderr).strip()
