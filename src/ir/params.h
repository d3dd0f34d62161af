/*
 * params.h — typed parameters of every rlx op (one struct per op, joined in a
 * union), and the kind lists of the ops that have kinds (unary, binary,
 * reduce, pool), each one X-macro list expanded into enum + name table.
 */
#ifndef RLX_PARAMS_H
#define RLX_PARAMS_H

#include "core/core.h"

/* X(ENUM, "name") — unary elementwise kinds. `a`, `b` are scalar parameters
 * for the kinds that take them (leaky_relu slope, elu alpha, hardtanh bounds,
 * softplus beta/threshold, polygamma's order n, mvlgamma's p). Predicates
 * (isnan, isinf, logical_not) output bool, frexp_exponent int32 (frexp's
 * mantissa is frexp_mantissa). The special functions after clamp follow
 * torch's CPU semantics (src/ops/special.h). New kinds go at the end, so
 * the values of the others stay. */
#define RLX_UNARY_LIST(X)                                                                    \
  X(RELU, "relu") X(GELU, "gelu") X(GELU_TANH, "gelu_tanh") X(SILU, "silu")                  \
  X(SIGMOID, "sigmoid") X(TANH, "tanh") X(EXP, "exp") X(EXP2, "exp2") X(EXPM1, "expm1")      \
  X(LOG, "log") X(LOG2, "log2") X(LOG10, "log10") X(LOG1P, "log1p") X(SQRT, "sqrt")          \
  X(RSQRT, "rsqrt") X(NEG, "neg") X(ABS, "abs") X(SIGN, "sign") X(SIN, "sin") X(COS, "cos")  \
  X(TAN, "tan") X(ASIN, "asin") X(ACOS, "acos") X(ATAN, "atan") X(SINH, "sinh")              \
  X(COSH, "cosh") X(ASINH, "asinh") X(ACOSH, "acosh") X(ATANH, "atanh") X(ERF, "erf")        \
  X(ERFC, "erfc") X(ERFINV, "erfinv") X(FLOOR, "floor") X(CEIL, "ceil") X(ROUND, "round")    \
  X(TRUNC, "trunc") X(FRAC, "frac") X(RECIPROCAL, "reciprocal") X(SQUARE, "square")          \
  X(LOGICAL_NOT, "logical_not") X(BITWISE_NOT, "bitwise_not") X(ISNAN, "isnan")              \
  X(ISINF, "isinf") X(ISPOSINF, "isposinf") X(ISNEGINF, "isneginf") X(ISFINITE, "isfinite")  \
  X(LEAKY_RELU, "leaky_relu") X(ELU, "elu") X(CELU, "celu") X(SELU, "selu")                  \
  X(HARDTANH, "hardtanh") X(HARDSIGMOID, "hardsigmoid") X(HARDSWISH, "hardswish")            \
  X(SOFTPLUS, "softplus") X(MISH, "mish") X(LOGSIGMOID, "log_sigmoid")                       \
  X(ROUND_DECIMALS, "round_decimals") X(NAN_TO_NUM, "nan_to_num") X(POW_SCALAR, "pow_scalar") \
  X(RPOW_SCALAR, "rpow_scalar") X(CLAMP, "clamp") X(LGAMMA, "lgamma") X(DIGAMMA, "digamma")   \
  X(POLYGAMMA, "polygamma") X(MVLGAMMA, "mvlgamma") X(ERFCX, "erfcx") X(NDTR, "ndtr")        \
  X(LOG_NDTR, "log_ndtr") X(NDTRI, "ndtri") X(I0, "i0") X(I0E, "i0e") X(I1, "i1")             \
  X(I1E, "i1e") X(BESSEL_J0, "bessel_j0") X(BESSEL_J1, "bessel_j1") X(BESSEL_Y0, "bessel_y0") \
  X(BESSEL_Y1, "bessel_y1") X(BESSEL_K0, "modified_bessel_k0")                                \
  X(BESSEL_K1, "modified_bessel_k1") X(BESSEL_K0E, "scaled_modified_bessel_k0")               \
  X(BESSEL_K1E, "scaled_modified_bessel_k1") X(SPHERICAL_J0, "spherical_bessel_j0")           \
  X(ENTR, "entr") X(SINC, "sinc") X(ANGLE, "angle") X(FREXP_MANTISSA, "frexp_mantissa")      \
  X(FREXP_EXPONENT, "frexp_exponent") X(AIRY_AI, "airy_ai")

typedef enum rlx_unary_kind {
#define RLX_X_(e, s) RLX_UNARY_##e,
  RLX_UNARY_LIST(RLX_X_)
#undef RLX_X_
      RLX_UNARY_COUNT
} rlx_unary_kind;

/* X(ENUM, "name") — binary elementwise kinds (NumPy broadcasting). Both
 * inputs have the compute dtype; compare and logical kinds (logical_and to
 * ge) output bool. xlogy to nextafter, the orthogonal polynomials and ldexp
 * are float-only, gcd and lcm integer-only. New kinds go at the end. */
#define RLX_BINARY_LIST(X)                                                                    \
  X(ADD, "add") X(SUB, "sub") X(MUL, "mul") X(DIV, "div") X(DIV_FLOOR, "div_floor")          \
  X(DIV_TRUNC, "div_trunc") X(POW, "pow") X(MAXIMUM, "maximum") X(MINIMUM, "minimum")        \
  X(FMAX, "fmax") X(FMIN, "fmin") X(REMAINDER, "remainder") X(FMOD, "fmod") X(ATAN2, "atan2") \
  X(HYPOT, "hypot") X(COPYSIGN, "copysign") X(BITAND, "bitwise_and") X(BITOR, "bitwise_or") X(BITXOR, "bitwise_xor") \
  X(SHL, "shift_left") X(SHR, "shift_right") X(LOGICAL_AND, "logical_and")                   \
  X(LOGICAL_OR, "logical_or") X(LOGICAL_XOR, "logical_xor") X(EQ, "eq") X(NE, "ne")          \
  X(LT, "lt") X(LE, "le") X(GT, "gt") X(GE, "ge") X(XLOGY, "xlogy") X(XLOG1PY, "xlog1py")    \
  X(ZETA, "zeta") X(IGAMMA, "igamma") X(IGAMMAC, "igammac") X(NEXTAFTER, "nextafter")        \
  X(GCD, "gcd") X(LCM, "lcm")                                                               \
  /* orthogonal polynomials p(x, n), float-only (ops/special_poly.c) */                     \
  X(CHEBYSHEV_T, "chebyshev_polynomial_t") X(CHEBYSHEV_U, "chebyshev_polynomial_u")          \
  X(CHEBYSHEV_V, "chebyshev_polynomial_v") X(CHEBYSHEV_W, "chebyshev_polynomial_w")          \
  X(SHIFTED_CHEBYSHEV_T, "shifted_chebyshev_polynomial_t")                                   \
  X(SHIFTED_CHEBYSHEV_U, "shifted_chebyshev_polynomial_u")                                   \
  X(SHIFTED_CHEBYSHEV_V, "shifted_chebyshev_polynomial_v")                                   \
  X(SHIFTED_CHEBYSHEV_W, "shifted_chebyshev_polynomial_w")                                   \
  X(HERMITE_H, "hermite_polynomial_h") X(HERMITE_HE, "hermite_polynomial_he")                \
  X(LAGUERRE_L, "laguerre_polynomial_l") X(LEGENDRE_P, "legendre_polynomial_p")             \
  /* a * 2^b for an integer-valued b, exactly (C's ldexp), float-only */                     \
  X(LDEXP, "ldexp")

typedef enum rlx_binary_kind {
#define RLX_X_(e, s) RLX_BINARY_##e,
  RLX_BINARY_LIST(RLX_X_)
#undef RLX_X_
      RLX_BINARY_COUNT
} rlx_binary_kind;

static inline bool rlx_binary_is_predicate(rlx_binary_kind k) { return k >= RLX_BINARY_LOGICAL_AND && k <= RLX_BINARY_GE; }

#define RLX_REDUCE_LIST(X)                                                                   \
  X(SUM, "sum") X(MEAN, "mean") X(MAX, "max") X(MIN, "min") X(PROD, "prod") X(ANY, "any")   \
  X(ALL, "all") X(VAR, "var") X(STD, "std") X(NORM2, "norm2") X(LOGSUMEXP, "logsumexp")     \
  X(NANSUM, "nansum") X(HASH_XOR, "hash_xor")

typedef enum rlx_reduce_kind {
#define RLX_X_(e, s) RLX_REDUCE_##e,
  RLX_REDUCE_LIST(RLX_X_)
#undef RLX_X_
      RLX_REDUCE_COUNT
} rlx_reduce_kind;

typedef enum rlx_pool_kind { RLX_POOL_MAX, RLX_POOL_AVG } rlx_pool_kind;
typedef enum rlx_pad_mode { RLX_PAD_CONSTANT, RLX_PAD_REFLECT, RLX_PAD_REPLICATE, RLX_PAD_CIRCULAR } rlx_pad_mode;

extern const char *const rlx_unary_names[RLX_UNARY_COUNT];
extern const char *const rlx_binary_names[RLX_BINARY_COUNT];
extern const char *const rlx_reduce_names[RLX_REDUCE_COUNT];

#define RLX_MAX_SPATIAL 3

typedef struct rlx_unary_params {
  rlx_unary_kind kind;
  double a, b, c; /* kind-specific scalars (see RLX_UNARY_LIST) */
} rlx_unary_params;

typedef struct rlx_binary_params {
  rlx_binary_kind kind;
} rlx_binary_params;

typedef struct rlx_cast_params {
  rlx_dtype to;
} rlx_cast_params;

/* What the fusion passes fold into a matmul or conv: after the bias, add the
 * optional residual input (same shape as the output), then apply `act`. */
typedef struct rlx_epilogue {
  bool has_act;
  rlx_unary_params act;
} rlx_epilogue;

typedef struct rlx_matmul_params {
  bool trans_b;     /* b is [.., N, K] (a linear layer's weight) */
  double alpha;     /* out = alpha * (a @ b) + beta * bias */
  double beta;
  rlx_epilogue ep;  /* inputs: a, b, bias?, residual? */
} rlx_matmul_params;

typedef struct rlx_conv_params {
  int nd; /* spatial dims: 1, 2 or 3 */
  int64_t stride[RLX_MAX_SPATIAL], pad[RLX_MAX_SPATIAL], dilation[RLX_MAX_SPATIAL];
  int64_t out_pad[RLX_MAX_SPATIAL]; /* transposed only */
  int64_t groups;
  bool transposed;
  /* 2-D, not transposed: x [N, H, W, C], y (and the residual) [N, OH, OW, O];
   * w stays [O, C/g, kh, kw]. Set by the layout pass (docs/design.md,
   * "Layout"), never by lowering. */
  bool channels_last;
  /* With channels_last: x stays [N, C, H, W] (a stem on the network's
   * image, whose few channels make short runs channels-last); y and the
   * residual are channels-last. */
  bool x_nchw;
  /* inputs: x, w, bias?, residual?, gate?, pw?, pw_bias?, bn_mean?, bn_var?,
   * bn_w?, bn_b?. The gate
   * (fuse_gate, channels-last only, not x_nchw): [N or 1, 1, 1, C], the conv
   * reads x * gate (a squeeze-excite block's channel scale), each product
   * rounded to x's dtype as the binary mul it replaces. pw (fuse_expand,
   * channels-last only, not x_nchw, no gate): [C, C0, 1, 1] with x
   * [N, H, W, C0] — the conv reads pre_ep(conv1x1(x, pw, pw_bias)), the
   * expansion conv before a depthwise one, computed a band of rows at a
   * time (docs/design.md, "Passes and fusion"). bn_* (fuse_preact,
   * channel-major only: not channels_last, not transposed, no gate, no pw):
   * [C] each, mean and var both present — the conv reads
   * pre_ep(batch_norm(x, bn_mean, bn_var, bn_w, bn_b, pre_eps)), an
   * inference batch norm (and its activation) applied as x is packed. */
  rlx_epilogue ep;
  rlx_epilogue pre_ep; /* the pointwise conv's or the batch norm's activation (with pw or bn_mean only) */
  double pre_eps;      /* the batch norm's eps (with bn_mean only) */
} rlx_conv_params;

typedef struct rlx_pool_params {
  rlx_pool_kind kind;
  int nd;
  int64_t kernel[RLX_MAX_SPATIAL], stride[RLX_MAX_SPATIAL], pad[RLX_MAX_SPATIAL],
      dilation[RLX_MAX_SPATIAL];
  bool ceil_mode, count_include_pad;
  int64_t divisor_override; /* 0: none */
  bool channels_last;       /* 2-D, one output: x [N, H, W, C] -> y [N, OH, OW, C] (the layout pass's) */
} rlx_pool_params;

typedef struct rlx_adaptive_pool_params {
  rlx_pool_kind kind;
  int nd;
  int64_t out[RLX_MAX_SPATIAL];
} rlx_adaptive_pool_params;

typedef struct rlx_reduce_params {
  rlx_reduce_kind kind;
  uint32_t axes; /* bit i: reduce axis i */
  bool keepdim;
  double correction; /* var/std */
} rlx_reduce_params;

typedef struct rlx_arg_reduce_params {
  bool is_max; /* argmax vs argmin */
  int axis;    /* -1: over the flattened tensor */
  bool keepdim;
} rlx_arg_reduce_params;

/* What fuse_softmax folds in front of a softmax over the last axis:
 * softmax(x op scale + mask), each step rounded to the dtype as the binary
 * nodes it replaces were; the mask (additive, broadcast to x) is input 1. */
typedef enum rlx_softmax_pre { RLX_SOFTMAX_PRE_NONE, RLX_SOFTMAX_PRE_MUL, RLX_SOFTMAX_PRE_DIV } rlx_softmax_pre;

typedef struct rlx_softmax_params {
  int axis;
  bool log;
  rlx_softmax_pre pre; /* x * scale or x / scale first */
  double scale;        /* the scalar constant, as its dtype holds it */
} rlx_softmax_params;

typedef struct rlx_norm_params {
  int n_axes;     /* layer/rms norm: trailing axes normalized */
  int64_t groups; /* group norm */
  double eps;
  rlx_epilogue ep; /* an activation after the affine part (fuse_epilogue); norms take no residual */
} rlx_norm_params;

/* rlx_attention_params.rows_lh: which of q, k, v and the output hold their
 * heads inside each row, [*B, L, H, D] in memory and in their shape, instead
 * of [*B, H, L, D] (set by the attention_layout pass, never by lowering). */
#define RLX_ATTN_Q_LH 1u
#define RLX_ATTN_K_LH 2u
#define RLX_ATTN_V_LH 4u
#define RLX_ATTN_OUT_LH 8u

typedef struct rlx_attention_params {
  bool causal;
  double scale;     /* 0: 1/sqrt(E) */
  uint8_t rows_lh;  /* RLX_ATTN_*_LH bits */
} rlx_attention_params;

/* reshape and expand: the target shape. */
typedef struct rlx_shape_params {
  rlx_shape shape;
} rlx_shape_params;

typedef struct rlx_permute_params {
  int32_t perm[RLX_MAX_RANK]; /* entries past the rank are -1 */
} rlx_permute_params;

typedef struct rlx_slice_params {
  int axis;
  int64_t start, end, step; /* 0 <= start <= end <= dim; step > 0 */
} rlx_slice_params;

typedef struct rlx_axis_params {
  int axis;
} rlx_axis_params;

typedef struct rlx_pad_params {
  rlx_pad_mode mode;
  int64_t lo[RLX_MAX_RANK], hi[RLX_MAX_RANK]; /* per axis; negative crops (constant) */
  double value;
} rlx_pad_params;

typedef struct rlx_gather_params {
  int axis;
  bool wrap_negative; /* negative indices count from the end (aten.index) */
} rlx_gather_params;

typedef struct rlx_index_params {
  uint32_t indexed; /* bit i: axis i of x is indexed by the next index input */
} rlx_index_params;

typedef struct rlx_scan_params {
  int axis;
  bool prod; /* cumprod instead of cumsum */
} rlx_scan_params;

/* histc: `bins` equal-width bins over [min, max]; min == max: over the
 * data's range, found at run time (torch.histc). */
typedef struct rlx_histc_params {
  int64_t bins; /* >= 1 */
  double min, max;
} rlx_histc_params;

typedef struct rlx_full_params {
  rlx_dtype dtype;
  rlx_shape shape;
  double value;
  int64_t ivalue; /* exact value for integer and bool dtypes */
  bool sym_value; /* ivalue is an rlx_dim (a size used as a number): its value at each binding */
} rlx_full_params;

typedef struct rlx_arange_params {
  rlx_dtype dtype;
  int64_t length;
  double start, step;
  int64_t istart, istep; /* exact values for integer dtypes */
} rlx_arange_params;

/* Which of torch's CPU algorithms a sort node runs: they differ only in
 * where equal elements (ties, NaNs) land, which the indices show. */
typedef enum rlx_sort_algo {
  RLX_SORT_STABLE, /* ties keep input order: sort/argsort with stable=True */
  RLX_SORT_TORCH,  /* torch's sort kernel with stable=False (std::sort; radix for big 1-D ints) */
  RLX_SORT_TOPK,   /* torch's topk: the row's first k positions hold its top k */
} rlx_sort_algo;

typedef struct rlx_sort_params {
  int axis;
  bool descending;    /* NaN sorts as the largest value, as in torch */
  rlx_sort_algo algo;
  bool topk_sorted;   /* RLX_SORT_TOPK: topk(sorted=True) */
  int64_t topk_k;     /* RLX_SORT_TOPK: k, 0 <= k <= the axis's size (checked at run time) */
} rlx_sort_params;

typedef enum rlx_scatter_reduce {
  RLX_SCATTER_NONE, RLX_SCATTER_ADD, RLX_SCATTER_MUL, RLX_SCATTER_MEAN, RLX_SCATTER_AMAX,
  RLX_SCATTER_AMIN
} rlx_scatter_reduce;

/* gather_elements (axis only), scatter. */
typedef struct rlx_scatter_params {
  int axis;
  rlx_scatter_reduce reduce;
  bool include_self; /* scatter_reduce: combine with the values already in x */
} rlx_scatter_params;

typedef struct rlx_index_put_params {
  uint32_t indexed; /* as rlx_index_params */
  bool accumulate;
} rlx_index_put_params;

typedef struct rlx_flip_params {
  uint32_t axes; /* bit i: reverse axis i */
} rlx_flip_params;

typedef struct rlx_as_strided_params {
  rlx_shape size;
  int64_t stride[RLX_MAX_RANK];
  int64_t offset; /* in elements of the input's contiguous storage */
} rlx_as_strided_params;

/* col2im (nn.Fold): [N, C*kh*kw, L] -> [N, C, H, W] */
typedef struct rlx_col2im_params {
  int64_t out[2], kernel[2], dilation[2], pad[2], stride[2];
} rlx_col2im_params;

typedef enum rlx_resize_mode {
  RLX_RESIZE_NEAREST,       /* torch "nearest": floor(dst * scale) */
  RLX_RESIZE_NEAREST_EXACT, /* torch "nearest-exact": floor((dst + 0.5) * scale) */
  RLX_RESIZE_LINEAR,        /* linear / bilinear / trilinear */
  RLX_RESIZE_CUBIC          /* bicubic (Keys, a = -0.75; a = -0.5 when antialiased) */
} rlx_resize_mode;

/* resize over the trailing nd axes of [N, C, *spatial]. */
typedef struct rlx_resize_params {
  rlx_resize_mode mode;
  int nd;
  bool align_corners, antialias;
  double scales[RLX_MAX_SPATIAL]; /* user scale factors (out/in); 0: derive from the sizes */
  int64_t out[RLX_MAX_SPATIAL];
} rlx_resize_params;

typedef struct rlx_grid_sample_params {
  int mode;    /* 0 bilinear, 1 nearest, 2 bicubic (torch's codes) */
  int padding; /* 0 zeros, 1 border, 2 reflection */
  bool align_corners;
} rlx_grid_sample_params;

typedef struct rlx_embedding_bag_params {
  int mode; /* 0 sum, 1 mean, 2 max */
  bool include_last_offset;
  int64_t padding_idx; /* -1: none */
} rlx_embedding_bag_params;

typedef struct rlx_dist_params {
  double p;
} rlx_dist_params;

/* order_stat: one order statistic per row along `axis` (src/ops/order_stat.c),
 * values and their i64 indices, as torch's CPU kernels pick them. */
typedef enum rlx_order_stat_kind {
  RLX_ORDER_KTHVALUE,  /* the k-th smallest (NaN largest), torch's quickselect */
  RLX_ORDER_MEDIAN,    /* the lower median; a row with NaN gives its first NaN */
  RLX_ORDER_NANMEDIAN, /* the lower median of the non-NaN values */
  RLX_ORDER_MODE       /* the most frequent value (the smallest of equally frequent ones) */
} rlx_order_stat_kind;

typedef struct rlx_order_stat_params {
  rlx_order_stat_kind kind;
  int axis;     /* a 0-d input is one row of one element (axis 0) */
  bool keepdim;
  int64_t k;    /* kthvalue: 1 <= k <= the axis's size */
} rlx_order_stat_params;

/* cumulative: scans with two outputs or a log-space sum (src/ops/cumulative.c). */
typedef enum rlx_cumulative_kind {
  RLX_CUM_MAX,      /* cummax: values, i64 index of the last maximum (a NaN sticks) */
  RLX_CUM_MIN,      /* cummin */
  RLX_CUM_LOGSUMEXP /* logcumsumexp: floats only, in double */
} rlx_cumulative_kind;

typedef struct rlx_cumulative_params {
  rlx_cumulative_kind kind;
  int axis;
} rlx_cumulative_params;

/* searchsorted(sorted_sequence, values, sorter?) and bucketize
 * (src/ops/search.c): the insertion point of each value. */
typedef struct rlx_searchsorted_params {
  bool right;     /* the last insertion point (upper bound) instead of the first */
  bool out_int32; /* i32 output instead of i64 */
} rlx_searchsorted_params;

/* isin(elements, test_elements) (src/ops/search.c). */
typedef struct rlx_isin_params {
  bool invert;
  bool assume_unique; /* torch's sort-based rule, which differs when the elements repeat */
} rlx_isin_params;

/* nonzero_static(x, size, fill_value) (src/ops/nonzero.c; issue 11). */
typedef struct rlx_nonzero_static_params {
  int64_t size; /* rows of the output */
  int64_t fill; /* the value of the rows past the last nonzero element */
} rlx_nonzero_static_params;

/* histogramdd(x [M, D], edges?, weight?) -> (hist [bins[0], ..., bins[D-1]],
 * edges [sum(bins[d] + 1)]) (src/ops/histogram.c; issue 11): torch.histogram
 * and histogramdd. Edges given (an input: the dims' edges one after the
 * other, binary search) or made as torch's linspace over `range` or the
 * data's range (linear interpolation with local search). */
typedef struct rlx_histogramdd_params {
  int32_t dims;                   /* D, 1..RLX_MAX_RANK */
  int64_t bins[RLX_MAX_RANK];     /* bins per dim (>= 1) */
  bool edges_given;               /* input 1 holds the edges */
  bool has_range;                 /* linspace over range[2d], range[2d + 1]; else the data's min, max */
  bool density;
  double range[2 * RLX_MAX_RANK];
} rlx_histogramdd_params;

/* bitcast(x) to dtype `to` and shape `shape` (src/ops/bitcast.c; issue 11):
 * torch's Tensor.view(dtype), the same bytes read as another dtype. */
typedef struct rlx_bitcast_params {
  rlx_dtype to;
  rlx_shape shape; /* x's shape, the last dim scaled by the ratio of the element sizes */
} rlx_bitcast_params;
/* segment_reduce(data, offsets) (src/ops/segment_reduce.c, issue 11): along
 * `axis`, segment s of each row is [offsets[.., s], offsets[.., s + 1]).
 * `kind` is sum, mean, max, min or prod; `initial` starts every segment when
 * has_initial; `check_sum` (torch's lengths form without unsafe): the last
 * offset of every row must be the axis's size. */
typedef struct rlx_segment_reduce_params {
  rlx_reduce_kind kind;
  int32_t axis;
  bool has_initial, check_sum;
  double initial;
} rlx_segment_reduce_params;

/* An elementwise chain compiled into one loop (passes/fuse_eltwise.c,
 * docs/design.md "Fusion"): the unary and binary f32 nodes of a DAG whose
 * intermediates feed only each other, as a program of steps over the node's
 * inputs. Each input broadcasts to the output shape (NumPy rules, as the
 * nodes it replaces); each step reads inputs or earlier steps' results and
 * is rounded to f32 as the node it replaces was; the last step's result is
 * the output. */
#define RLX_FUSED_MAX_STEPS 24
#define RLX_FUSED_MAX_IN 8

typedef struct rlx_fused_step {
  int32_t op; /* an rlx_op (ir/graph.h): RLX_OP_UNARY or RLX_OP_BINARY */
  union {
    rlx_unary_params unary;
    rlx_binary_params binary;
  } p;
  /* operands (src[1] unused for unary): k >= 0 is input k of the node,
   * k < 0 the result of step -k - 1 (an earlier step) */
  int16_t src[2];
  const char *label; /* the FX node the step was, for printing (pool) */
} rlx_fused_step;

typedef struct rlx_fused_params {
  int32_t n_steps;
  const rlx_fused_step *steps; /* (the graph's pool) */
} rlx_fused_params;

/* Linear algebra (src/ops/linalg.c, docs/design.md "Linear algebra"): one op,
 * a kind per LAPACK-style routine, over the last two axes of each input with
 * equal leading (batch) axes; computed in double, stored in the input's float
 * dtype; pivots and info are i32 (1-based pivots, as LAPACK and torch). */
typedef enum rlx_linalg_kind {
  RLX_LINALG_LU_FACTOR,   /* A [*,m,n] -> LU [*,m,n], pivots [*,min(m,n)], info [*]            (getrf) */
  RLX_LINALG_LU_SOLVE,    /* LU [*,n,n], pivots [*,n], B -> X; left, adjoint (trans)          (getrs) */
  RLX_LINALG_LU_DET,      /* LU [*,n,n], pivots [*,n] -> det [*] | sign [*], logabsdet [*] */
  RLX_LINALG_LU_UNPACK,   /* LU [*,m,n], pivots [*,k] -> P [*,m,m], L [*,m,k], U [*,k,n] */
  RLX_LINALG_CHOLESKY,    /* A [*,n,n] -> L (or U when upper) [*,n,n], info [*]                (potrf) */
  RLX_LINALG_TRI_SOLVE,   /* A [*,n,n], B -> X; upper, left, trans, unit                      (trsm) */
  RLX_LINALG_GEQRF,       /* A [*,m,n] -> QR [*,m,n], tau [*,min(m,n)]                         (geqrf) */
  RLX_LINALG_ORGQR,       /* A [*,m,n], tau [*,k] -> Q [*,m,ncols] (ncols 0: n)               (orgqr) */
  RLX_LINALG_ORMQR,       /* A [*,q,k], tau [*,k], C [*,m,n] -> op(Q) C | C op(Q); left, trans (ormqr) */
  RLX_LINALG_EIGH,        /* A [*,n,n] -> w [*,n] ascending, V [*,n,n] (compute_uv); upper = UPLO 'U' */
  RLX_LINALG_SVD,         /* A [*,m,n] -> U, S [*,min] descending, Vh; full, compute_uv */
  RLX_LINALG_LDL_FACTOR,  /* A [*,n,n] -> LD [*,n,n], pivots [*,n], info [*]                   (sytrf, 'L') */
  RLX_LINALG_LDL_SOLVE,   /* LD [*,n,n], pivots [*,n], B [*,n,k] -> X                          (sytrs, 'L') */
  RLX_LINALG_MATRIX_EXP,  /* A [*,n,n] -> exp(A) */
  RLX_LINALG_KIND_COUNT
} rlx_linalg_kind;

/* What a non-zero info means when the node checks it (torch's
 * _linalg_check_errors): the kernel then fails with RLX_ERR_RUNTIME. */
typedef enum rlx_linalg_check {
  RLX_LINALG_CHECK_NONE,
  RLX_LINALG_CHECK_SINGULAR, /* LU / LDL: a zero pivot */
  RLX_LINALG_CHECK_NOT_PD    /* Cholesky: a leading minor is not positive-definite */
} rlx_linalg_check;

typedef struct rlx_linalg_params {
  rlx_linalg_kind kind;
  bool upper, left, trans, unit; /* triangle read or written; B on the left; op(A) = A^T; unit diagonal */
  bool full, compute_uv;         /* SVD: full_matrices, compute_uv (EIGH: compute_v in compute_uv) */
  bool log;                      /* LU_DET: (sign, logabsdet) instead of det */
  bool unpack_data, unpack_pivots; /* LU_UNPACK: P empty unless unpack_pivots; L, U empty unless unpack_data */
  int64_t ncols;                 /* ORGQR: columns of Q (0: those of A) */
  rlx_linalg_check check;
} rlx_linalg_params;
/* fft (src/ops/fft.c): the DFT along one axis of a complex tensor held as
 * real pairs [..., 2] (docs/design.md, "Complex numbers"). */
typedef enum rlx_fft_kind {
  RLX_FFT_C2C, /* pairs [*A, n, *B, 2] -> pairs, same shape */
  RLX_FFT_R2C, /* real [*A, n, *B] -> pairs [*A, n/2 + 1 (onesided) or n, *B, 2] */
  RLX_FFT_C2R  /* pairs [*A, n/2 + 1, *B, 2] (a Hermitian half) -> real [*A, n, *B] */
} rlx_fft_kind;

typedef struct rlx_fft_params {
  rlx_fft_kind kind;
  int axis;      /* an axis of the complex (or real) tensor, never the trailing 2 */
  int64_t n;     /* the transform's length, 1 .. 2^31; an rlx_dim (symbolic: its value at each binding) */
  bool inverse;  /* exp(+2 pi i jk / n) instead of exp(-2 pi i jk / n) */
  bool onesided; /* r2c: only the n/2 + 1 non-redundant outputs */
  int norm;      /* every output times 1 (0), 1/sqrt(n) (1) or 1/n (2): torch's fft_norm_mode */
} rlx_fft_params;

typedef union rlx_params {
  rlx_unary_params unary;
  rlx_binary_params binary;
  rlx_cast_params cast;
  rlx_matmul_params matmul;
  rlx_conv_params conv;
  rlx_pool_params pool;
  rlx_adaptive_pool_params adaptive_pool;
  rlx_reduce_params reduce;
  rlx_arg_reduce_params arg_reduce;
  rlx_softmax_params softmax;
  rlx_norm_params norm;
  rlx_attention_params attention;
  rlx_shape_params shape;
  rlx_permute_params permute;
  rlx_slice_params slice;
  rlx_axis_params axis;
  rlx_pad_params pad;
  rlx_gather_params gather;
  rlx_index_params index;
  rlx_scan_params scan;
  rlx_histc_params histc;
  rlx_sort_params sort;
  rlx_scatter_params scatter;
  rlx_index_put_params index_put;
  rlx_flip_params flip;
  rlx_as_strided_params as_strided;
  rlx_col2im_params col2im;
  rlx_resize_params resize;
  rlx_grid_sample_params grid_sample;
  rlx_embedding_bag_params embedding_bag;
  rlx_dist_params dist;
  rlx_full_params full;
  rlx_arange_params arange;
  rlx_fused_params fused;
  rlx_order_stat_params order_stat;
  rlx_cumulative_params cumulative;
  rlx_searchsorted_params searchsorted;
  rlx_isin_params isin;
  rlx_linalg_params linalg; /* linear algebra (linalg block) */
  /* issue 11 */
  rlx_nonzero_static_params nonzero_static;
  rlx_histogramdd_params histogramdd;
  rlx_bitcast_params bitcast;
  rlx_segment_reduce_params segment_reduce; /* issue 11, branch specials */
  rlx_fft_params fft; /* complex numbers */
} rlx_params;

#endif /* RLX_PARAMS_H */
