/*
 * sample.h — the sampling chain of text generation (docs/design.md, "Text
 * generation"): repetition penalty, temperature, top-k, top-p, min-p and a
 * draw, over one step's logits.
 */
#ifndef RLX_GEN_SAMPLE_H
#define RLX_GEN_SAMPLE_H

#include "core/core.h"

/* xoshiro256** seeded through splitmix64: the generator's random stream. */
typedef struct rlx_rng {
  uint64_t s[4];
} rlx_rng;

void rlx_rng_seed(rlx_rng *r, uint64_t seed);
uint64_t rlx_rng_next(rlx_rng *r);
/* Uniform in [0, 1) with 53 random bits. */
double rlx_rng_uniform(rlx_rng *r);

/* Scratch for rlx_sample over a vocab of n: n floats and n int32s. */
typedef struct rlx_sample_ws {
  float *prob;
  int32_t *idx;
  int32_t n;
} rlx_sample_ws;

rlx_status rlx_sample_ws_init(rlx_sample_ws *w, int32_t n);
void rlx_sample_ws_free(rlx_sample_ws *w);

/* Applies the repetition penalty to `logits` in place for every distinct
 * token of history[0..n_hist) (transformers' RepetitionPenaltyLogitsProcessor:
 * a positive logit is divided by `penalty`, a negative one multiplied). */
void rlx_repetition_penalty(float *logits, int32_t vocab, const int32_t *history, int64_t n_hist, float penalty);

/* Greedy: the index of the largest logit, the lowest on a tie; NaN logits are
 * never chosen unless all are NaN (then 0). */
int32_t rlx_argmax(const float *logits, int32_t vocab);

/* Samples with temperature > 0, then top_k (0: off), top_p (>= 1: off) and
 * min_p (<= 0: off) filters, from logits (not modified); -1 when no token
 * has a finite logit. u is a uniform draw in [0, 1). */
int32_t rlx_sample(const float *logits, int32_t vocab, float temperature, int32_t top_k, float top_p, float min_p,
                   double u, rlx_sample_ws *w);

#endif
