/*
 * complex.h — what the complex lowering files share (complex.c: values and
 * dispatch; complex_ops.c: arithmetic and shape ops; complex_fft.c: the
 * Fourier transforms). docs/design.md, "Complex numbers".
 *
 * A complex value of shape S is an rlx value of shape S + [2] (real pairs);
 * "the complex rank" below is S's rank, one less than the rlx value's.
 */
#ifndef RLX_LOWER_COMPLEX_H
#define RLX_LOWER_COMPLEX_H

#include "import/lower/lower.h"

/* A tensor argument: its rlx value, and whether that holds complex pairs. */
typedef struct cx_val {
  int32_t v;
  bool complex;
} cx_val;

/* Reads a tensor argument (lw_tensor) and whether it is complex. */
rlx_status cx_tensor(rlx_lower *lw, const rlx_aten_node *n, int pos, const char *name, cx_val *out);
/* The complex rank of a complex value, the rank of a real one. */
int cx_rank(rlx_lower *lw, const cx_val *x);
/* The recorded output type, and the shape rlx computes for it (the pairs'
 * S + [2] for a complex output, S for a real one). */
rlx_status cx_out(const rlx_aten_node *n, const rlx_tinfo **t, rlx_shape *pairs);
/* Part k (0 real, 1 imaginary) of pairs v [..., 2], as [..., 1]. */
int32_t cx_part(rlx_lower *lw, int32_t v, int k);
/* Pairs from parts re, im [..., 1] (broadcast to each other). */
int32_t cx_join(rlx_lower *lw, int32_t re, int32_t im);
/* A real value [...] as a part, [..., 1]. */
int32_t cx_column(rlx_lower *lw, int32_t v);
/* x as pairs of component dtype comp: a real x gets a zero imaginary part. */
int32_t cx_pairs(rlx_lower *lw, const cx_val *x, rlx_dtype comp);

/* complex_ops.c */
rlx_status cx_lower_arith(rlx_lower *lw, const rlx_aten_node *n);   /* mul, add, sub, rsub, div */
rlx_status cx_lower_unary(rlx_lower *lw, const rlx_aten_node *n);   /* neg, conj, positive */
rlx_status cx_lower_abs(rlx_lower *lw, const rlx_aten_node *n);     /* abs, angle */
rlx_status cx_lower_reduce(rlx_lower *lw, const rlx_aten_node *n);  /* sum, mean */
rlx_status cx_lower_reshape(rlx_lower *lw, const rlx_aten_node *n); /* the view family */
rlx_status cx_lower_expand(rlx_lower *lw, const rlx_aten_node *n);
rlx_status cx_lower_permute(rlx_lower *lw, const rlx_aten_node *n); /* permute, transpose, t */
rlx_status cx_lower_slice(rlx_lower *lw, const rlx_aten_node *n);   /* slice, select, narrow */
rlx_status cx_lower_cat(rlx_lower *lw, const rlx_aten_node *n);     /* cat, stack */
rlx_status cx_lower_pad(rlx_lower *lw, const rlx_aten_node *n);     /* constant_pad_nd, pad (constant) */

/* complex_fft.c */
rlx_status cx_lower_fft_prim(rlx_lower *lw, const rlx_aten_node *n); /* _fft_r2c, _fft_c2c, _fft_c2r */
rlx_status cx_lower_fft(rlx_lower *lw, const rlx_aten_node *n);      /* torch.fft's fft_* ops */

#endif /* RLX_LOWER_COMPLEX_H */
