"""Conformance: ops as users meet them, through the "high" and "core" decompositions.

The other files call ATen overloads directly and export with no decomposition,
so each case isolates one op.  Here a case calls the user-level function
(``F.layer_norm``, ``F.interpolate``, ``torch.argsort``, ``x[i] = v`` ...),
exports it with the decomposition a user would pick, asserts that the Core ATen
op it lowers to is in the graph, and verifies the whole decomposed program.
These exports run torch's decompositions and are ~10x slower than the direct
cases, so this file keeps to one or two cases per user-level op.
"""

import pytest
import torch
import torch.nn.functional as F

from cases import (INF, aten, bools, case, case_id, distinct, f16, i64, ints, randn, seed,
                   special, uniform)

seed("test_decomposed")


def core(op, name, fn, *inputs, expect=None):
    return case(op, f"core-{name}", fn, *inputs, decomposition="core", expect=expect)


def high(op, name, fn, *inputs, expect=None):
    return case(op, f"high-{name}", fn, *inputs, decomposition="high", expect=expect)


def _setitem(x, i, v):
    y = x.clone()
    y[i] = v
    return y


def _setitem_add(x, i, v):
    y = x.clone()
    y.index_put_((i,), v, accumulate=True)
    return y


CASES = [
    # normalization
    core(aten.native_layer_norm.default, "F.layer_norm", lambda x, w, b: F.layer_norm(
        x, (4, 5), w, b), randn(2, 3, 4, 5), randn(4, 5), randn(4, 5)),
    core(aten.native_group_norm.default, "F.group_norm", lambda x: F.group_norm(x, 2),
         randn(2, 4, 3, 3)),
    high(aten._native_batch_norm_legit.no_stats, "F.instance_norm", lambda x: F.instance_norm(x),
         randn(2, 3, 4, 4)),
    core(aten._native_batch_norm_legit_no_training.default, "F.batch_norm-eval",
         lambda x, m, v, w, b: F.batch_norm(x, m, v, w, b), randn(2, 3, 4, 4), randn(3),
         uniform(0.5, 2, 3), randn(3), randn(3)),
    # convolution and pooling
    core(aten.convolution.default, "F.conv1d", lambda x, w: F.conv1d(x, w, padding=2, dilation=2),
         randn(1, 3, 10), randn(4, 3, 3)),
    core(aten.convolution.default, "F.conv_transpose2d", lambda x, w: F.conv_transpose2d(
        x, w, stride=2, padding=1, output_padding=1), randn(1, 4, 5, 5), randn(4, 2, 3, 3)),
    core(aten.max_pool2d_with_indices.default, "F.max_pool1d", lambda x: F.max_pool1d(
        x, 3, 2, 1, ceil_mode=True), distinct(2, 3, 10)),
    core(aten.max_pool2d_with_indices.default, "F.max_pool2d-dilation", lambda x: F.max_pool2d(
        x, 2, 2, dilation=2), distinct(1, 2, 9, 9)),
    core(aten.avg_pool2d.default, "F.avg_pool1d", lambda x: F.avg_pool1d(
        x, 3, 2, 1, count_include_pad=False), randn(2, 3, 9)),
    core(aten._adaptive_avg_pool2d.default, "F.adaptive_avg_pool1d",
         lambda x: F.adaptive_avg_pool1d(x, 4), randn(2, 3, 10)),
    core(aten._adaptive_avg_pool2d.default, "F.adaptive_avg_pool2d",
         lambda x: F.adaptive_avg_pool2d(x, (3, 5)), randn(1, 2, 7, 9)),
    core(aten.col2im.default, "F.fold", lambda x: F.fold(x, (4, 5), 2), randn(1, 12, 12),
         expect=[aten.index_put.default]),
    # resizing
    core(aten.upsample_nearest2d.vec, "F.interpolate-nearest-2.5", lambda x: F.interpolate(
        x, scale_factor=2.5), randn(1, 2, 3, 4)),
    core(aten.upsample_bilinear2d.vec, "F.interpolate-bilinear-align", lambda x: F.interpolate(
        x, size=(5, 7), mode="bilinear", align_corners=True), randn(1, 2, 3, 4)),
    core(aten._upsample_bicubic2d_aa.default, "F.interpolate-bicubic-aa",
         lambda x: F.interpolate(x, scale_factor=0.5, mode="bicubic", antialias=True),
         randn(1, 2, 8, 8)),
    core(aten._upsample_bilinear2d_aa.default, "F.interpolate-bilinear-aa",
         lambda x: F.interpolate(x, size=(3, 5), mode="bilinear", antialias=True),
         randn(1, 2, 7, 9)),
    core(aten.grid_sampler_2d.default, "F.grid_sample-bilinear-zeros", lambda x, g: F.grid_sample(
        x, g, align_corners=False), randn(1, 2, 4, 5), uniform(-1.2, 1.2, 1, 3, 3, 2)),
    core(aten.grid_sampler_2d.default, "F.grid_sample-bicubic-reflection",
         lambda x, g: F.grid_sample(x, g, mode="bicubic", padding_mode="reflection",
                                    align_corners=True),
         randn(1, 2, 4, 5), uniform(-1.2, 1.2, 1, 3, 3, 2)),
    core(aten.permute.default, "F.pixel_shuffle", lambda x: F.pixel_shuffle(x, 2),
         randn(1, 8, 3, 3)),
    core(aten.index.Tensor, "F.pad-reflect", lambda x: F.pad(x, (1, 2, 2, 1),
                                                                        "reflect"),
         randn(1, 2, 4, 4)),
    core(aten.index.Tensor, "F.pad-replicate", lambda x: F.pad(x, (2, 0, 1, 1),
                                                                           "replicate"),
         randn(1, 2, 4, 4)),
    core(aten.constant_pad_nd.default, "F.pad-negative", lambda x: F.pad(x, (-1, 2, 1, -1)),
         randn(2, 4, 4)),
    # attention
    core(aten.bmm.default, "F.sdpa-causal-scale", lambda q, k, v: F.scaled_dot_product_attention(
        q, k, v, is_causal=True, scale=0.2), randn(1, 2, 4, 8), randn(1, 2, 4, 8),
         randn(1, 2, 4, 8), expect=[aten.bmm.default, aten._softmax.default]),
    core(aten.bmm.default, "F.sdpa-gqa-mask", lambda q, k, v, m: F.scaled_dot_product_attention(
        q, k, v, m, enable_gqa=True), randn(1, 4, 3, 8), randn(1, 2, 5, 8), randn(1, 2, 5, 8),
         torch.cat([torch.ones(3, 1, dtype=torch.bool), bools(3, 4)], 1)),
    high(aten.scaled_dot_product_attention.default, "F.sdpa-float-mask",
         lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, m), randn(2, 2, 3, 4),
         randn(2, 2, 5, 4), randn(2, 2, 5, 4), randn(3, 5)),
    # embedding, one-hot, indexing
    core(aten.embedding.default, "F.embedding-padding-idx", lambda i, w: F.embedding(
        i, w, padding_idx=0), ints(0, 6, 2, 5), randn(6, 4)),
    core(aten._embedding_bag_forward_only.default, "F.embedding_bag-mean",
         lambda i, o, w: F.embedding_bag(i, w, o, mode="mean"), ints(0, 7, 8),
         torch.tensor([0, 3, 3, 5]), randn(7, 3)),
    core(aten.eq.Tensor, "F.one_hot", lambda i: F.one_hot(i, 6), ints(0, 6, 2, 4)),
    core(aten.index_put.default, "setitem", _setitem, randn(5, 3), torch.tensor([4, 0, -2]),
         randn(3, 3)),
    core(aten.index_put.default, "index_put_-accumulate", _setitem_add, randn(5),
         torch.tensor([1, 1, 3, 1]), randn(4)),
    core(aten.index.Tensor, "getitem-advanced", lambda x, i, j: x[i, :, j], randn(4, 3, 5),
         ints(-4, 4, 2, 1), ints(0, 5, 3)),
    core(aten.where.self, "masked_fill-neg-inf", lambda x, m: x.masked_fill(m, -INF), randn(3, 4),
         bools(3, 4)),
    core(aten.where.self, "torch.where-scalar", lambda c, x: torch.where(c, x, 0.5), bools(3, 4),
         randn(3, 4)),
    core(aten.gather.default, "torch.take_along_dim", lambda x, i: torch.take_along_dim(
        x, i, dim=1), randn(3, 5), ints(0, 5, 3, 2)),
    core(aten.scatter_reduce.two, "Tensor.scatter_reduce-amax", lambda x, i, s: x.scatter_reduce(
        0, i, s, "amax", include_self=False), randn(4, 3), ints(0, 4, 6, 3), randn(6, 3)),
    # sorting and selection
    core(aten.sort.default, "torch.argsort", lambda x: torch.argsort(x, dim=0, descending=True),
         distinct(5, 4)),
    core(aten.sort.stable, "torch.sort-stable", lambda x: torch.sort(x, stable=True),
         ints(0, 4, 3, 8)),
    core(aten.topk.default, "torch.topk-smallest", lambda x: torch.topk(x, 2, dim=0,
                                                                         largest=False),
         distinct(6, 3)),
    core(aten.max.dim, "Tensor.max-dim", lambda x: x.max(dim=-1), distinct(3, 5)),
    core(aten.argmax.default, "Tensor.argmax", lambda x: x.argmax(), distinct(3, 5)),
    # shape and data movement
    core(aten.index_select.default, "torch.roll", lambda x: torch.roll(x, (1, -2), (0, 1)),
         randn(3, 5)),
    core(aten.repeat.default, "Tensor.tile", lambda x: x.tile(2, 1, 3), randn(3, 2)),
    core(aten.where.self, "torch.tril", lambda x: torch.tril(x, -1), randn(2, 4, 4)),
    core(aten.unfold.default, "Tensor.unfold", lambda x: x.unfold(1, 3, 2), randn(2, 9)),
    core(aten.flip.default, "torch.flip", lambda x: torch.flip(x, (0, -1)), ints(0, 9, 3, 4)),
    core(aten.slice.Tensor, "getitem-step-neg", lambda x: x[-4::2, 1:-1], randn(7, 5)),
    core(aten.select.int, "getitem-neg-index", lambda x: x[:, -1], randn(3, 4)),
    core(aten.cat.default, "torch.stack", lambda a, b: torch.stack([a, b], -1), randn(2, 3),
         randn(2, 3)),
    core(aten.split_with_sizes.default, "torch.chunk", lambda x: torch.chunk(x, 3, 1),
         randn(2, 8)),
    # reductions and elementwise
    core(aten.var.correction, "torch.std", lambda x: torch.std(x, dim=1, keepdim=True),
         randn(3, 7)),
    core(aten.var_mean.correction, "torch.var_mean", lambda x: torch.var_mean(x, 0), randn(5, 3)),
    core(aten.amax.default, "torch.logsumexp", lambda x: torch.logsumexp(x, 1), randn(3, 6,
                                                                                      scale=5)),
    core(aten.cumsum.default, "torch.cumsum-i32", lambda x: torch.cumsum(x, 0),
         ints(-9, 9, 5, 2, dtype=torch.int32)),
    core(aten._softmax.default, "F.softmax", lambda x: F.softmax(x, -1), randn(3, 5)),
    core(aten._log_softmax.default, "F.log_softmax-dtype", lambda x: F.log_softmax(
        x, 0, dtype=torch.float64), randn(4, 3)),
    core(aten.gelu.default, "F.gelu-tanh", lambda x: F.gelu(x, approximate="tanh"), randn(3, 4)),
    core(aten.sigmoid.default, "F.silu", lambda x: F.silu(x), special(3, 4)),
    core(aten.clamp.default, "F.hardswish", lambda x: F.hardswish(x), uniform(-5, 5, 3, 4)),
    core(aten.div.Tensor_mode, "floor-divide-i64", lambda a, b: a // b, ints(-20, 20, 3, 4),
         torch.tensor([3, -3, 7, -1])),
    core(aten.remainder.Tensor, "mod-f32", lambda a, b: a % b, randn(3, 4, scale=5),
         torch.tensor([1.5, -2.0, 0.7, -0.3])),
    core(aten._to_copy.default, "Tensor.to-f16", lambda x: x.to(f16), special(3, 4)),
    core(aten._to_copy.default, "Tensor.long", lambda x: x.long(), uniform(-9, 9, 5)),
    core(aten.addmm.default, "F.linear", lambda x, w, b: F.linear(x, w, b), randn(3, 8),
         randn(4, 8), randn(4)),
    core(aten.bmm.default, "torch.matmul-batched", lambda a, b: a @ b, randn(2, 3, 4),
         randn(4, 5), expect=[aten.mm.default]),
    core(aten._cdist_forward.default, "torch.cdist", lambda a, b: torch.cdist(a, b),
         randn(5, 3), randn(4, 3)),
    core(aten.pow.Tensor_Scalar, "x-squared-i64", lambda x: x ** 2, ints(-9, 9, 5)),
    core(aten.round.decimals, "torch.round-decimals", lambda x: torch.round(x, decimals=1),
         uniform(-9, 9, 6)),
    core(aten.nan_to_num.default, "torch.nan_to_num", lambda x: torch.nan_to_num(x, posinf=9.0),
         special(3, 4), expect=[aten.where.self]),
    core(aten.any.dim, "Tensor.all", lambda x: x.all(dim=1), bools(3, 4, p=0.8)),
    core(aten.prod.dim_int, "torch.prod-dim-i64", lambda x: torch.prod(x, 1, dtype=i64),
         ints(-3, 4, 3, 4)),
]


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_case(case, conformance):
    conformance(case)
