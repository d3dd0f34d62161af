/*
 * pool.h — the vectorized interior of a 2-D f32 pooling (pool_avx512.c),
 * called by pool.c for every output row of an NCHW average pooling and
 * every plane of a max pooling.
 * docs/design.md, "Pooling".
 */
#ifndef RLX_CPU_POOL_H
#define RLX_CPU_POOL_H

#include <stdbool.h>
#include <stdint.h>

/* One output row of an average pooling, columns [0, OW): y[ox] over the
 * input rows rows[0..nrows) (offsets into x, in kernel-row order; the rows
 * outside the image are not listed) and, of each, the columns ox * sw - pw
 * + b (b < kw) inside [0, W), each row's columns in turn — the reference
 * kernel's order (src/ops/pool.c): the sum in double, divided in double,
 * one rounding. The divisor: divisor if nonzero, else with include_pad
 * hrows * (min(x0 + kw, W + pw) - x0) (x0 = ox * sw - pw; hrows: the
 * window's rows up to the bottom padding's end), else nrows * (its columns
 * inside the row); a zero divisor gives NaN. Columns [ox0, ox1) are the
 * interior: every window column inside the row. (dw is 1; the field is
 * there for the column arithmetic shared with max pooling.) */
typedef struct rlx_pool_row {
  const float *x; /* the plane [H][W] */
  float *y;       /* the output row */
  const int64_t *rows;
  int nrows;
  int64_t W, OW, ox0, ox1;
  int64_t sw, pw, kw, dw;
  bool include_pad;
  int64_t divisor, hrows;
} rlx_pool_row;

void rlx_pool_row_avx512(const rlx_pool_row *r);

/* Max pooling runs in two passes, each in order — the reference's max step
 * (b replaces a where b > a or b is NaN, unless a is NaN) is associative on
 * partial results: the first NaN of a window, else the first of its
 * largest values — so a window's max is its rows' maxima combined in row
 * order, exactly the reference's row-major result (NaN payload and the
 * sign of a zero included):
 *   hmax: h[iy][ox] = the max over b < kw of the columns ox * sw - pw +
 *         b * dw of input row iy that are inside [0, W) (-inf if none);
 *   vmax: y[oy][ox] = the rows of h in oy's window combined in order (-inf
 *         if none is inside the image). */

/* The two passes over a whole plane x [H][W] into y [OH][OW], h [H][OW] the
 * window-row maxima between them: the edge masks made once a plane, the
 * rows in loops instead of a call each. h: 64-byte aligned, H x RLX_POOL_HSTRIDE(OW) floats. Where the plane holds no NaN the
 * steps are vmaxps (b > a ? b : a: the reference's step, whose NaN rule is
 * then moot, and which keeps the first of equal values, the sign of a zero
 * included); a plane with a NaN is redone with the reference's step.
 * kernel rows <= RLX_POOL_ROWS_MAX, columns <= RLX_POOL_COLS_MAX. */
/* h's rows are RLX_POOL_HSTRIDE(OW) floats apart (whole vectors, stored and loaded unmasked: a masked store
 * does not forward to the load after it, and small planes read h right after writing it), 64-byte aligned. */
#define RLX_POOL_HSTRIDE(OW) (((OW) + 15) / 16 * 16)
#define RLX_POOL_ROWS_MAX 64
#define RLX_POOL_COLS_MAX 64
typedef struct rlx_pool_plane {
  int64_t H, W, OH, OW, kh, kw, sh, sw, ph, pw, dh, dw;
} rlx_pool_plane;
void rlx_pool_max_plane_avx512(const float *x, float *h, float *y, const rlx_pool_plane *g);

/* A "same" max pooling over small planes (stride 1, dilation 1, OH = H, OW = W: googlenet's 3x3 branch
 * pools at 14x14 and 7x7, whose rows fill a vector by half) runs the planes as one flat array, 16 elements a
 * vector whatever the rows: hmax takes each element's window columns at offsets b - pw, vmax its window
 * rows at offsets (a - ph) * W, each load masked to the lanes whose column (row) is inside the plane, -inf
 * in the others. The masks repeat every `period` vectors (lcm(H * W, 16) / 16), made once at compile time;
 * a run starts at a multiple of the period. The same steps, in the same order, as the plane passes above. */
#define RLX_POOL_FLAT_MAX 1024 /* H * W at most: the period's masks stay small */
typedef struct rlx_pool_flat {
  int64_t H, W, kh, kw, ph, pw;
  int64_t period;        /* vectors */
  const uint16_t *hmask; /* [period][kw]: lanes whose column + b - pw is inside [0, W) */
  const uint16_t *vmask; /* [period][kh]: lanes whose row + a - ph is inside [0, H) */
} rlx_pool_flat;
/* Elements [0, n) of x (a run of whole planes) into y, h scratch of n floats rounded up to 16; returns
 * whether a NaN was read (y is then unfinished: the caller redoes the planes with the plane passes). */
bool rlx_pool_max_flat_avx512(const float *x, float *h, float *y, int64_t n, const rlx_pool_flat *f);
/* The same run of a "same" average pool (inception's 3x3 branch pools at 25x25 down to 5x5, whose rows
 * filled a third of a vector): one pass, each element's window in row-major order with the lanes outside
 * the plane masked (they add +0.0, which leaves the sum unchanged: it starts at +0.0 and is never -0.0),
 * summed in double, divided by `divisor` where it is not 0 (divisor_override; count_include_pad, whose
 * windows all lie inside the padded plane when OH = H at stride 1: kh * kw), else by the lane's count of
 * rows times columns inside (the masks'); a divisor of 0 gives NaN. The reference's sums and quotients to
 * the bit. */
/* One output row of a channels-last max pool (x [H][W][C] of one image; rows: the offsets, in floats, of
 * the window's rows inside the image, in order), 64 channels at a time: b > a ? b : a from -inf over the
 * taps in row-major order (the reference's step where neither is NaN). Returns whether a NaN was read (the
 * row is then to be redone with the reference's step). */
typedef struct rlx_pool_nhwc_row {
  const int64_t *rows;
  int nrows;
  int64_t W, C, OW, sw, pw, kw, dw;
} rlx_pool_nhwc_row;
bool rlx_pool_max_nhwc_row_avx512(const float *img, float *y, const rlx_pool_nhwc_row *r);
void rlx_pool_avg_flat_avx512(const float *x, float *y, int64_t n, const rlx_pool_flat *f, int64_t divisor);

#endif
