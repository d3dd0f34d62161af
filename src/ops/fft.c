/*
 * fft.c — the discrete Fourier transform along one axis, on real tensors
 * (docs/design.md, "Complex numbers"): a complex value is its real pairs, a
 * trailing axis of 2 (real, imaginary).
 *
 *   c2c  x [*A, n, *B, 2]       -> y [*A, n, *B, 2]
 *   r2c  x [*A, n, *B]          -> y [*A, n/2 + 1 (onesided) or n, *B, 2]
 *   c2r  x [*A, n/2 + 1, *B, 2] -> y [*A, n, *B]
 *
 *   y[k] = scale * sum_j x[j] exp(s 2 pi i j k / n),  s = -1 forward, +1 inverse,
 *   scale = 1, 1/sqrt(n) or 1/n (norm 0, 1, 2: torch's fft_norm_mode)
 *
 * The axis is an axis of the complex tensor (never the trailing 2). c2r reads
 * a Hermitian half spectrum, as torch's (pocketfft's) c2r: x[0] and, for even
 * n, x[n/2] are taken as real (their imaginary parts are ignored), x[n - k]
 * is conj(x[k]), and the output is the real part. Padding or trimming to n,
 * the choice of scale (torch's norm modes) and several axes are the
 * lowering's (import/lower/complex_fft.c). f32 and f64 components. n may be
 * symbolic (docs/design.md, "Shapes"): the op is planned at every binding.
 *
 * The reference kernel computes every line in double: a power of two with an
 * iterative radix-2 FFT, lengths up to 16 with the direct sum, any other
 * length with Bluestein's algorithm (a chirp convolution through a radix-2
 * FFT of length m >= 2n - 1). Twiddles are cos/sin of exact multiples of
 * 2 pi / n (the index product reduced mod n, the chirp's j^2 mod 2n kept as
 * an integer), so the error is a few ulp of double times log2 m: far below
 * float32 rounding, and below torch's own float64 error bar. The tables are
 * built once per run, then each line is transformed on its own (ops/fft.h),
 * which is what the CPU's threaded kernel (cpu/fft.c) runs too.
 */
#include <math.h>

#include "ops/fft.h"
#include "ops/ops_util.h"

static const char *const fft_kind_names[] = {"c2c", "r2c", "c2r"};

/* Lengths below this use the direct sum; above, a non-power of two uses Bluestein. */
#define FFT_DIRECT_MAX 16

static bool is_pow2(int64_t n) { return n > 0 && (n & (n - 1)) == 0; }

/* The radix-2 length Bluestein convolves over: the least power of two >= 2n - 1. */
static int64_t bluestein_len(int64_t n) {
  int64_t m = 1;
  while (m < 2 * n - 1) m <<= 1;
  return m;
}

static rlx_fft_algo fft_algo_of(int64_t n) {
  if (is_pow2(n)) return FFT_POW2;
  return n <= FFT_DIRECT_MAX ? FFT_DIRECT : FFT_BLUESTEIN;
}

/* Doubles of the per-node tables: the twiddles (pow2: [n/2, 2]; direct:
 * [n, 2]) or Bluestein's chirp [n, 2], transformed kernel [m, 2] and
 * length-m twiddles [m/2, 2]. */
static int64_t tables_doubles(int64_t n) {
  switch (fft_algo_of(n)) {
    case FFT_POW2: return n;
    case FFT_DIRECT: return 2 * n;
    default: {
      int64_t m = bluestein_len(n);
      return 2 * n + 2 * m + m;
    }
  }
}

/* Doubles one line's transform works in: the line [n, 2] and, for
 * Bluestein, the convolution's line [m, 2]. */
static int64_t work_doubles(int64_t n) { return 2 * n + (fft_algo_of(n) == FFT_BLUESTEIN ? 2 * bluestein_len(n) : 0); }

/* Bytes rounded up to a cache line, so each part of scratch starts aligned. */
static size_t aligned_bytes(int64_t doubles) { return ((size_t)doubles * sizeof(double) + 63) & ~(size_t)63; }

size_t rlx_fft_tables_bytes(int64_t n) { return aligned_bytes(tables_doubles(n)); }
size_t rlx_fft_work_bytes(int64_t n) { return aligned_bytes(work_doubles(n)); }

/* At most what any length up to n needs (Bluestein's sizes bound the
 * others'), so the scratch planned at a symbol's largest binding holds every
 * binding's (the runtime requires it to be monotone). */
size_t rlx_fft_tables_bound(int64_t n) { return aligned_bytes(n < 1 ? 1 : 2 * n + 3 * bluestein_len(n)); }
size_t rlx_fft_work_bound(int64_t n) { return aligned_bytes(n < 1 ? 1 : 2 * n + 2 * bluestein_len(n)); }

static rlx_status fft_infer(const rlx_graph *g, const rlx_node *n, rlx_shape *os, rlx_dtype *od) {
  const rlx_value *x = rlx_in(g, n, 0);
  const rlx_fft_params *p = &n->p.fft;
  if (x->dtype != RLX_DTYPE_F32 && x->dtype != RLX_DTYPE_F64)
    RLX_INFER_FAIL("fft takes f32 or f64 components, got %s", rlx_dtype_name(x->dtype));
  if (p->kind < RLX_FFT_C2C || p->kind > RLX_FFT_C2R) RLX_INFER_FAIL("fft: unknown kind %d", (int)p->kind);
  bool sym = rlx_dim_is_sym(p->n);
  if (!sym && (p->n < 1 || p->n > RLX_MAX_PARAM))
    RLX_INFER_FAIL("fft: length %lld must be in [1, 2^31]", (long long)p->n);
  if (p->norm < 0 || p->norm > 2) RLX_INFER_FAIL("fft: unknown norm %d", p->norm);
  bool pairs_in = p->kind != RLX_FFT_R2C;
  int rank = x->shape.rank - (pairs_in ? 1 : 0); /* the complex (or real) tensor's rank */
  if (pairs_in && (x->shape.rank < 2 || x->shape.dims[x->shape.rank - 1] != 2))
    RLX_INFER_FAIL("fft %s: the input must be real pairs [..., 2], got rank %d", fft_kind_names[p->kind],
                   x->shape.rank);
  if (p->axis < 0 || p->axis >= rank) RLX_INFER_FAIL("fft: axis %d is out of range for rank %d", p->axis, rank);
  rlx_dim half = p->n / 2 + 1;
  if (sym) {
    rlx_symtab *t = rlx_graph_syms(g);
    if (rlx_dim_floordiv(t, p->n, 2, &half) || rlx_dim_add(t, half, 1, &half)) return rlx_last_status();
  }
  rlx_dim want = p->kind == RLX_FFT_C2R ? half : p->n;
  if (x->shape.dims[p->axis] != want) {
    char a[96], b[96], c[96];
    RLX_INFER_FAIL("fft %s: axis %d has %s elements; length %s needs %s", fft_kind_names[p->kind], p->axis,
                   rlx_dim_str(&g->syms, x->shape.dims[p->axis], a, sizeof a), rlx_dim_str(&g->syms, p->n, b, sizeof b),
                   rlx_dim_str(&g->syms, want, c, sizeof c));
  }
  os[0] = x->shape;
  od[0] = x->dtype;
  if (p->kind == RLX_FFT_R2C) {
    if (x->shape.rank >= RLX_MAX_RANK) RLX_INFER_FAIL("fft r2c: rank %d output is over the limit", x->shape.rank + 1);
    os[0].dims[p->axis] = p->onesided ? half : p->n;
    os[0].dims[os[0].rank++] = 2;
  } else if (p->kind == RLX_FFT_C2R) {
    os[0].rank--;
    os[0].dims[p->axis] = p->n;
  }
  return RLX_OK;
}

static size_t fft_scratch(const rlx_graph *g, const rlx_node *n) {
  (void)g;
  return rlx_fft_tables_bound(n->p.fft.n) + rlx_fft_work_bound(n->p.fft.n);
}

static void fft_concretize(rlx_params *p, const int64_t *ev) { p->fft.n = rlx_dim_value(p->fft.n, ev); }

/* w[k] = exp(s 2 pi i k / n), k < count (interleaved re, im). */
static void twiddles(double *w, int64_t n, int64_t count, double s) {
  for (int64_t k = 0; k < count; k++) {
    double t = 2.0 * M_PI * (double)k / (double)n;
    w[2 * k] = cos(t), w[2 * k + 1] = s * sin(t);
  }
}

/* In-place radix-2 FFT of z [m, 2] with twiddles w [m/2, 2] of sign s. */
static void fft_pow2(double *z, int64_t m, const double *w) {
  for (int64_t i = 1, j = 0; i < m; i++) { /* bit reversal */
    int64_t bit = m >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j |= bit;
    if (i < j) {
      double tr = z[2 * i], ti = z[2 * i + 1];
      z[2 * i] = z[2 * j], z[2 * i + 1] = z[2 * j + 1];
      z[2 * j] = tr, z[2 * j + 1] = ti;
    }
  }
  for (int64_t len = 2; len <= m; len <<= 1) {
    int64_t half = len >> 1, step = m / len;
    for (int64_t i = 0; i < m; i += len)
      for (int64_t k = 0; k < half; k++) {
        double wr = w[2 * k * step], wi = w[2 * k * step + 1];
        double *a = &z[2 * (i + k)], *b = &z[2 * (i + k + half)];
        double br = b[0] * wr - b[1] * wi, bi = b[0] * wi + b[1] * wr;
        b[0] = a[0] - br, b[1] = a[1] - bi;
        a[0] += br, a[1] += bi;
      }
  }
}

void rlx_fft_tables_build(rlx_fft_tables *tb, const rlx_fft_params *p, void *mem) {
  int64_t n = p->n;
  double s = p->inverse ? 1.0 : -1.0, *t = mem;
  memset(tb, 0, sizeof *tb);
  tb->algo = fft_algo_of(n), tb->n = n;
  if (tb->algo == FFT_POW2 || tb->algo == FFT_DIRECT) {
    tb->w = t;
    twiddles(t, n, tb->algo == FFT_POW2 ? n / 2 : n, s);
    return;
  }
  int64_t m = tb->m = bluestein_len(n);
  double *chirp = t, *kernel = t + 2 * n, *w = t + 2 * n + 2 * m;
  /* chirp c_j = exp(s pi i j^2 / n), with j^2 mod 2n kept exact */
  for (int64_t j = 0, q = 0; j < n; j++) {
    double a = M_PI * (double)q / (double)n;
    chirp[2 * j] = cos(a), chirp[2 * j + 1] = s * sin(a);
    q += 2 * j + 1; /* (j + 1)^2 = j^2 + 2j + 1 */
    q %= 2 * n;
  }
  /* kernel b_j = conj(c_|j|) on the circle of length m, transformed */
  twiddles(w, m, m / 2, -1.0);
  for (int64_t k = 0; k < 2 * m; k++) kernel[k] = 0;
  for (int64_t j = 0; j < n; j++) {
    kernel[2 * j] = chirp[2 * j], kernel[2 * j + 1] = -chirp[2 * j + 1];
    if (j) kernel[2 * (m - j)] = chirp[2 * j], kernel[2 * (m - j) + 1] = -chirp[2 * j + 1];
  }
  fft_pow2(kernel, m, w);
  tb->w = w, tb->chirp = chirp, tb->kernel = kernel;
}

/* z [n, 2] <- its DFT (unscaled); work: Bluestein's [m, 2] line. */
static void fft_line(const rlx_fft_tables *tb, double *z, double *work) {
  int64_t n = tb->n;
  if (tb->algo == FFT_POW2) {
    fft_pow2(z, n, tb->w);
    return;
  }
  if (tb->algo == FFT_DIRECT) {
    double out[2 * FFT_DIRECT_MAX];
    for (int64_t k = 0; k < n; k++) {
      double re = 0, im = 0;
      for (int64_t j = 0; j < n; j++) {
        int64_t e = (j * k) % n;
        double wr = tb->w[2 * e], wi = tb->w[2 * e + 1];
        re += z[2 * j] * wr - z[2 * j + 1] * wi;
        im += z[2 * j] * wi + z[2 * j + 1] * wr;
      }
      out[2 * k] = re, out[2 * k + 1] = im;
    }
    memcpy(z, out, sizeof(double) * 2 * (size_t)n);
    return;
  }
  /* Bluestein: X_k = c_k sum_j (x_j c_j) conj(c_{k-j}), the sum a circular
   * convolution of length m done as IFFT(FFT(a) FFT(b)) / m */
  int64_t m = tb->m;
  double *a = work;
  const double *c = tb->chirp, *K = tb->kernel;
  for (int64_t j = 0; j < n; j++) {
    a[2 * j] = z[2 * j] * c[2 * j] - z[2 * j + 1] * c[2 * j + 1];
    a[2 * j + 1] = z[2 * j] * c[2 * j + 1] + z[2 * j + 1] * c[2 * j];
  }
  for (int64_t j = 2 * n; j < 2 * m; j++) a[j] = 0;
  fft_pow2(a, m, tb->w);
  for (int64_t k = 0; k < m; k++) { /* a *= kernel, then conj so the forward FFT inverts */
    double re = a[2 * k] * K[2 * k] - a[2 * k + 1] * K[2 * k + 1];
    double im = a[2 * k] * K[2 * k + 1] + a[2 * k + 1] * K[2 * k];
    a[2 * k] = re, a[2 * k + 1] = -im;
  }
  fft_pow2(a, m, tb->w);
  double inv_m = 1.0 / (double)m;
  for (int64_t k = 0; k < n; k++) { /* conv_k = conj(a_k) / m; X_k = c_k conv_k */
    double re = a[2 * k] * inv_m, im = -a[2 * k + 1] * inv_m;
    z[2 * k] = re * c[2 * k] - im * c[2 * k + 1];
    z[2 * k + 1] = re * c[2 * k + 1] + im * c[2 * k];
  }
}

/* The axes before (A) and after (B) the transformed one, of the complex
 * (or real) shape of x: the lines are A * B. */
static void fft_extent(const rlx_fft_params *p, const rlx_tensor_view *x, int64_t *A, int64_t *B) {
  int rank = p->kind == RLX_FFT_R2C ? x->rank : x->rank - 1;
  *A = 1, *B = 1;
  for (int d = 0; d < p->axis; d++) *A *= x->dims[d];
  for (int d = p->axis + 1; d < rank; d++) *B *= x->dims[d];
}

int64_t rlx_fft_lines(const rlx_fft_params *p, const rlx_tensor_view *x) {
  int64_t A, B;
  fft_extent(p, x, &A, &B);
  return A * B;
}

static double load(const rlx_tensor_view *x, bool f64, int64_t e) {
  return f64 ? ((const double *)x->data)[e] : ((const float *)x->data)[e];
}

void rlx_fft_run_lines(const rlx_fft_params *p, const rlx_tensor_view *x, rlx_tensor_view *y,
                       const rlx_fft_tables *tb, void *work, int64_t first, int64_t count) {
  bool f64 = x->dtype == RLX_DTYPE_F64;
  int64_t N = p->n, A, B;
  fft_extent(p, x, &A, &B);
  int64_t L_in = x->dims[p->axis];                   /* n, or n/2 + 1 for c2r */
  int64_t L_out = p->kind == RLX_FFT_C2R ? N : (p->kind == RLX_FFT_R2C && p->onesided ? N / 2 + 1 : N);
  int in_c = p->kind == RLX_FFT_R2C ? 1 : 2, out_c = p->kind == RLX_FFT_C2R ? 1 : 2; /* components per element */
  double *z = work, *bw = (double *)work + 2 * N;    /* z [n, 2]; Bluestein's line after it */
  double scale = p->norm == 2 ? 1.0 / (double)N : p->norm == 1 ? 1.0 / sqrt((double)N) : 1.0;
  for (int64_t line = first; line < first + count; line++) {
    int64_t a = line / B, b = line % B;
    int64_t in0 = a * L_in * B + b, out0 = a * L_out * B + b; /* element offsets of the line's start */
    if (p->kind == RLX_FFT_C2R) { /* the Hermitian extension of the half spectrum */
      for (int64_t k = 0; k < L_in; k++) {
        int64_t e = (in0 + k * B) * 2;
        z[2 * k] = load(x, f64, e), z[2 * k + 1] = load(x, f64, e + 1);
      }
      z[1] = 0;
      if (N % 2 == 0) z[2 * (N / 2) + 1] = 0;
      for (int64_t k = 1; k < N - N / 2; k++) z[2 * (N - k)] = z[2 * k], z[2 * (N - k) + 1] = -z[2 * k + 1];
    } else {
      for (int64_t j = 0; j < N; j++) {
        int64_t e = (in0 + j * B) * in_c;
        z[2 * j] = load(x, f64, e);
        z[2 * j + 1] = in_c == 1 ? 0.0 : load(x, f64, e + 1);
      }
    }
    fft_line(tb, z, bw);
    for (int64_t k = 0; k < L_out; k++)
      for (int c = 0; c < out_c; c++) {
        int64_t e = (out0 + k * B) * out_c + c;
        double v = z[2 * k + c] * scale;
        if (f64) ((double *)y->data)[e] = v;
        else ((float *)y->data)[e] = (float)v;
      }
  }
}

static rlx_status fft_ref(const rlx_node *n, const rlx_tensor_view *in, rlx_tensor_view *out, void *scratch) {
  const rlx_fft_params *p = &n->p.fft;
  rlx_fft_tables tb;
  rlx_fft_tables_build(&tb, p, scratch);
  rlx_fft_run_lines(p, &in[0], &out[0], &tb, (char *)scratch + rlx_fft_tables_bound(p->n), 0, rlx_fft_lines(p, &in[0]));
  return RLX_OK;
}

static void fft_print(const rlx_node *n, char *buf, size_t cap) {
  const rlx_fft_params *p = &n->p.fft;
  static const char *const norms[] = {"", " norm=1/sqrt(n)", " norm=1/n"};
  rlx_bprintf(buf, cap, "%s axis=%d n=%lld %s%s%s", fft_kind_names[p->kind], p->axis, (long long)p->n,
              p->inverse ? "inverse" : "forward", norms[p->norm >= 0 && p->norm <= 2 ? p->norm : 0],
              p->kind == RLX_FFT_R2C && !p->onesided ? " full" : "");
}

const rlx_op_vtable rlx_op_fft = {.infer = fft_infer, .ref = fft_ref, .scratch = fft_scratch, .print = fft_print,
                                  .symbolic = true, .concretize = fft_concretize};
