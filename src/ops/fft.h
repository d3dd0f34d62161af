/*
 * fft.h — the fft op's line transform, shared by its reference kernel
 * (ops/fft.c) and the CPU's threaded kernel (cpu/fft.c), which run the same
 * code per line and so give the same bits.
 *
 * A run builds the node's tables once (twiddles; Bluestein's chirp and
 * transformed kernel) into a read-only block, then transforms lines, each
 * in a work block of its own: a line is one position of the axes before and
 * after the transformed one.
 */
#ifndef RLX_OPS_FFT_H
#define RLX_OPS_FFT_H

#include "ir/graph.h"

typedef enum { FFT_POW2, FFT_DIRECT, FFT_BLUESTEIN } rlx_fft_algo;

typedef struct rlx_fft_tables {
  rlx_fft_algo algo;
  int64_t n, m;         /* the length; Bluestein's convolution length (else 0) */
  const double *w;      /* pow2: [n/2, 2]; direct: [n, 2]; Bluestein: [m/2, 2] (forward) */
  const double *chirp;  /* Bluestein: [n, 2] */
  const double *kernel; /* Bluestein: [m, 2], transformed */
} rlx_fft_tables;

/* Bytes of the tables and of one line's work block (64-byte multiples). */
size_t rlx_fft_tables_bytes(int64_t n);
size_t rlx_fft_work_bytes(int64_t n);
/* The same, bounded over every length up to n (monotone in n): what scratch
 * is sized by, so a symbolic length's largest binding holds every other. */
size_t rlx_fft_tables_bound(int64_t n);
size_t rlx_fft_work_bound(int64_t n);
/* Builds the tables of node params p into mem (rlx_fft_tables_bytes). */
void rlx_fft_tables_build(rlx_fft_tables *t, const rlx_fft_params *p, void *mem);
/* The number of lines of input x. */
int64_t rlx_fft_lines(const rlx_fft_params *p, const rlx_tensor_view *x);
/* Transforms lines [first, first + count) of x into y, in work
 * (rlx_fft_work_bytes). Lines write disjoint parts of y. */
void rlx_fft_run_lines(const rlx_fft_params *p, const rlx_tensor_view *x, rlx_tensor_view *y,
                       const rlx_fft_tables *t, void *work, int64_t first, int64_t count);

#endif /* RLX_OPS_FFT_H */
