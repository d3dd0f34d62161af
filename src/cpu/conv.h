/*
 * conv.h — what the NCHW f32 convolution kernels share: the geometry of a
 * node (conv.c computes it and chooses the kernel), the stride phase planes,
 * the sgemm convolutions of conv_gemm.c and the Winograd F(4x4, 3x3) kernel
 * of conv_wg4.c.
 */
#ifndef RLX_CPU_CONV_H
#define RLX_CPU_CONV_H

#include "runtime/runtime.h"

/* A 1-D conv is a 2-D one with H = kh = OH = 1. */
typedef struct conv_geo {
  int64_t N, C, H, W, O, G, kh, kw, OH, OW, sh, sw, ph, pw, dh, dw;
} conv_geo;

/* The geometry of a conv node at the shapes of its views, or false. */
bool rlx_cpu_conv_geo(const rlx_node *n, const rlx_tensor_view *in, const rlx_tensor_view *out, conv_geo *c);

/* Whether the conv is a plain product over the input: 1x1, stride 1, no padding. */
bool rlx_conv_direct(const conv_geo *c);

/* ---- stride phase planes (depthwise and strided im2col) ---- */

typedef struct dw_geo {
  int64_t s, QH, QW, L; /* phases per axis (the stride), phase plane size, flat outputs computed */
} dw_geo;

/* The phase planes of a conv with equal strides (1 to 4), or false. */
bool rlx_conv_phase_geo(const conv_geo *c, dw_geo *d);
/* One phase plane: dst[r][q] = x[(r*s + rp) - ph][(q*s + cp) - pw], zero outside. */
void rlx_conv_phase_plane(float *restrict dst, const float *restrict x, const conv_geo *c, const dw_geo *d, int64_t rp,
                          int64_t cp);

/* ---- one sgemm per image and group (conv_gemm.c) ----
 *
 * Channel-major: the weights packed as A (rlx_conv_gemm_pack), B panels from
 * the image; pixel-major: B the weights (rlx_conv_pix_pack), A panels from
 * the image, for images that pad the channel-major product's columns;
 * rlx_conv_pix_pick says where it wins. The runs are rlx_kernel_fn's. */
size_t rlx_conv_gemm_packed_bytes(const conv_geo *c);
void rlx_conv_gemm_pack(const conv_geo *c, const float *w, void *dst);
size_t rlx_conv_gemm_scratch(const conv_geo *c, int threads);
const char *rlx_conv_gemm_name(const conv_geo *c);
rlx_status rlx_conv_gemm_run(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out, const rlx_exec *x);
/* Whether the channel-major way packs its im2col B panels from zero-padded planes with AVX-512 (the active
 * microkernel is AVX-512's), stride 1 included. */
bool rlx_conv_planes_avx512(void);
/* The scratch a conv with a folded batch norm (fuse_preact, inputs 7-10) takes first, before the rest: its
 * per-channel table (conv_gemm.c bn_table), for both ways. */
size_t rlx_conv_bn_table_bytes(int64_t C);
size_t rlx_conv_pix_packed_bytes(const conv_geo *c);
void rlx_conv_pix_pack(const conv_geo *c, const float *w, void *dst);
size_t rlx_conv_pix_scratch(const conv_geo *c, int threads);
bool rlx_conv_pix_pick(const conv_geo *c, int threads);
rlx_status rlx_conv_pix_run(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out, const rlx_exec *x);

/* ---- shared by the Winograd kernels (conv_wg4.c) ---- */

/* Nonzero if x[0, n) holds a NaN or an Inf. */
unsigned rlx_conv_nonfinite(const float *x, int64_t n);

/* Output rows [oy0, oy1) of channel o of a 3x3 stride-1 conv computed
 * directly in float from the raw weights w [O, C, 3, 3] (x: one image;
 * bias, res: or NULL; acc: OW floats), then bias, residual, activation: the
 * Winograd kernels' way for tiles whose patch holds a NaN or an Inf, where
 * the transforms would spread it over the whole tile. */
void rlx_conv3x3_direct_rows(const conv_geo *c, const float *x, const float *w, const float *bias, const float *res,
                             const rlx_epilogue *ep, float *y, int64_t o, int64_t oy0, int64_t oy1, float *acc);

/* ---- Winograd F(4x4, 3x3) (conv_wg4.c) ---- */

/* Tile rows and columns (4x4 outputs each) and tiles of one image. V holds
 * the tiles numbered ty * (TW + 1) + tx, L of them (a junk tile closes each
 * tile row but the last); the GEMMs multiply N columns: all L (S = TW + 1,
 * the junk rides along), or only the T real tiles (S = TW, `compact`: their
 * B panels are packed skipping the junk) where that pads an eighth fewer
 * columns to the microkernel's panel width or better. In M, tile (ty, tx) is
 * column ty * S + tx. */
typedef struct wg4_geo {
  int64_t TH, TW, T, L, N, S;
  bool compact;
} wg4_geo;

/* Whether F(4x4, 3x3) computes this conv: 3x3, stride 1, dilation 1, groups 1. */
bool rlx_conv_wg4_geo(const conv_geo *c, wg4_geo *w);
/* The weights transformed (U = G g G^T, 36 matrices [O, C]) and packed as the sgemm's A. */
size_t rlx_conv_wg4_packed_bytes(const conv_geo *c);
/* Fills dst (rlx_conv_wg4_packed_bytes) from w [O, C, 3, 3]; false when out of memory. */
bool rlx_conv_wg4_pack(const conv_geo *c, const float *w, void *dst);
size_t rlx_conv_wg4_scratch(const conv_geo *c, int threads);
/* The kernel (rlx_kernel_fn); x->packed from rlx_conv_wg4_pack. */
rlx_status rlx_conv_wg4_run(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out, const rlx_exec *x);

#endif
