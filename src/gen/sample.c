/*
 * sample.c — the sampling chain (sample.h). transformers' order and rules:
 * RepetitionPenalty, then Temperature, TopK, TopP, MinP warpers, then a draw
 * from the renormalized probabilities. Only the candidates a filter needs
 * are sorted: top-k selects its k first (quickselect), top-p sorts the
 * tokens that can be in the nucleus (see rlx_sample), so a 128k vocab costs
 * a pass or two over the logits, not a full sort, on peaked distributions.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gen/sample.h"

static uint64_t splitmix64(uint64_t *x) {
  uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

void rlx_rng_seed(rlx_rng *r, uint64_t seed) {
  for (int i = 0; i < 4; i++) r->s[i] = splitmix64(&seed);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t rlx_rng_next(rlx_rng *r) {
  uint64_t *s = r->s, out = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
  s[2] ^= s[0], s[3] ^= s[1], s[1] ^= s[2], s[0] ^= s[3], s[2] ^= t, s[3] = rotl(s[3], 45);
  return out;
}

double rlx_rng_uniform(rlx_rng *r) { return (double)(rlx_rng_next(r) >> 11) * 0x1.0p-53; }

rlx_status rlx_sample_ws_init(rlx_sample_ws *w, int32_t n) {
  w->n = n;
  w->prob = rlx_malloc(sizeof(float) * (size_t)(n > 0 ? n : 1));
  w->idx = rlx_malloc(sizeof(int32_t) * (size_t)(n > 0 ? n : 1));
  if (!w->prob || !w->idx) {
    rlx_sample_ws_free(w);
    return rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "out of memory for the sampler (vocab %d)", (int)n);
  }
  return RLX_OK;
}

void rlx_sample_ws_free(rlx_sample_ws *w) {
  rlx_free(w->prob);
  rlx_free(w->idx);
  w->prob = NULL, w->idx = NULL;
}

void rlx_repetition_penalty(float *logits, int32_t vocab, const int32_t *history, int64_t n_hist, float penalty) {
  if (penalty == 1.0f || !(penalty > 0)) return;
  /* each distinct token once (a bitmap of the seen ones) */
  uint64_t seen[1024];
  int64_t words = ((int64_t)vocab + 63) / 64;
  if (words <= 1024) {
    memset(seen, 0, sizeof(uint64_t) * (size_t)words);
    for (int64_t i = 0; i < n_hist; i++) {
      int32_t t = history[i];
      if (t < 0 || t >= vocab || (seen[t >> 6] >> (t & 63) & 1)) continue;
      seen[t >> 6] |= 1ull << (t & 63);
      logits[t] = logits[t] > 0 ? logits[t] / penalty : logits[t] * penalty;
    }
    return;
  }
  for (int64_t i = 0; i < n_hist; i++) { /* huge vocab: O(n^2) over the history only */
    int32_t t = history[i];
    bool dup = t < 0 || t >= vocab;
    for (int64_t j = 0; j < i && !dup; j++) dup = history[j] == t;
    if (!dup) logits[t] = logits[t] > 0 ? logits[t] / penalty : logits[t] * penalty;
  }
}

int32_t rlx_argmax(const float *logits, int32_t vocab) {
  int32_t best = -1;
  for (int32_t i = 0; i < vocab; i++)
    if (!isnan(logits[i]) && (best < 0 || logits[i] > logits[best])) best = i;
  return best < 0 ? 0 : best;
}

/* candidate order: larger value first, lower index on a tie */
static bool before(const float *v, const int32_t *ix, int32_t a, int32_t b) {
  return v[a] > v[b] || (v[a] == v[b] && ix[a] < ix[b]);
}

static void swap2(float *v, int32_t *ix, int32_t a, int32_t b) {
  float t = v[a];
  v[a] = v[b], v[b] = t;
  int32_t u = ix[a];
  ix[a] = ix[b], ix[b] = u;
}

/* Rearranges v/ix[0..m) so that the first k are the k first in order (unsorted). */
static void select_first(float *v, int32_t *ix, int32_t m, int32_t k) {
  int32_t lo = 0, hi = m - 1;
  uint64_t seed = 0x2545F4914F6CDD1Dull;
  while (lo < hi) {
    int32_t p = lo + (int32_t)(splitmix64(&seed) % (uint64_t)(hi - lo + 1));
    swap2(v, ix, p, hi);
    int32_t store = lo;
    for (int32_t i = lo; i < hi; i++)
      if (before(v, ix, i, hi)) swap2(v, ix, i, store++);
    swap2(v, ix, store, hi);
    if (store == k - 1 || store == k) return;
    if (store < k) lo = store + 1;
    else hi = store - 1;
  }
}

/* Sorts v/ix[0..m) in candidate order (insertion for short runs, else a heap sort). */
static void sort_first(float *v, int32_t *ix, int32_t m) {
  if (m <= 32) {
    for (int32_t i = 1; i < m; i++)
      for (int32_t j = i; j > 0 && before(v, ix, j, j - 1); j--) swap2(v, ix, j, j - 1);
    return;
  }
  /* heap sort whose root is the element last in candidate order: popping
   * it to the end each time leaves the array in candidate order */
  for (int32_t start = m / 2 - 1; start >= 0; start--)
    for (int32_t r = start;;) {
      int32_t c = 2 * r + 1;
      if (c >= m) break;
      if (c + 1 < m && before(v, ix, c, c + 1)) c++;
      if (!before(v, ix, r, c)) break;
      swap2(v, ix, r, c);
      r = c;
    }
  for (int32_t end = m - 1; end > 0; end--) {
    swap2(v, ix, 0, end);
    for (int32_t r = 0;;) {
      int32_t c = 2 * r + 1;
      if (c >= end) break;
      if (c + 1 < end && before(v, ix, c, c + 1)) c++;
      if (!before(v, ix, r, c)) break;
      swap2(v, ix, r, c);
      r = c;
    }
  }
}

int32_t rlx_sample(const float *logits, int32_t vocab, float temperature, int32_t top_k, float top_p, float min_p,
                   double u, rlx_sample_ws *w) {
  float *v = w->prob;
  int32_t *ix = w->idx, m = 0;
  float mx = -INFINITY;
  for (int32_t i = 0; i < vocab; i++) { /* temperature; -inf and NaN logits are never drawn */
    float x = logits[i];
    if (isnan(x) || x == -INFINITY) continue;
    if (x == INFINITY) return i; /* certain */
    x /= temperature;
    v[m] = x, ix[m] = i, m++;
    if (x > mx) mx = x;
  }
  if (m == 0) return -1;
  bool sorted = false;
  if (top_k > 0 && top_k < m) {
    select_first(v, ix, m, top_k);
    m = top_k;
    sort_first(v, ix, m);
    sorted = true;
  }
  double sum = 0;
  for (int32_t i = 0; i < m; i++) sum += (v[i] = expf(v[i] - mx));
  for (int32_t i = 0; i < m; i++) v[i] = (float)(v[i] / sum);
  if (top_p < 1.0f && m > 1) {
    double tail = 0; /* the mass below the candidates kept so far */
    if (!sorted) {
      /* Only tokens of probability >= eps can be in the nucleus when the
       * tokens at or above eps already hold top_p of the mass: move them
       * to the front and sort those alone; else sort everything. */
      float eps = (1.0f - top_p) / (float)m;
      int32_t f = 0;
      double mass = 0;
      for (int32_t i = 0; i < m; i++)
        if (v[i] >= eps) mass += v[i], swap2(v, ix, i, f++);
      sort_first(v, ix, mass >= top_p ? f : m);
      if (mass >= top_p) { /* the rest cannot be kept, but their mass is the tail's start */
        double all = 0;
        for (int32_t i = 0; i < m; i++) all += v[i];
        tail = all - mass;
        m = f;
      }
      sorted = true;
    }
    /* keep the smallest prefix whose mass reaches top_p (transformers removes
     * the tail whose cumulative mass, from the smallest, is <= 1 - top_p) */
    int32_t keep = m;
    for (int32_t i = m - 1; i > 0; i--) {
      tail += v[i];
      if (tail > 1.0 - (double)top_p) break;
      keep = i;
    }
    m = keep;
  }
  if (min_p > 0.0f) {
    float pmax = 0;
    for (int32_t i = 0; i < m; i++) pmax = v[i] > pmax ? v[i] : pmax;
    int32_t f = 0;
    for (int32_t i = 0; i < m; i++) /* keeps the order */
      if (v[i] >= min_p * pmax) v[f] = v[i], ix[f] = ix[i], f++;
    m = f > 0 ? f : 1;
  }
  double total = 0;
  for (int32_t i = 0; i < m; i++) total += v[i];
  double target = u * total, acc = 0;
  for (int32_t i = 0; i < m; i++) {
    acc += v[i];
    if (target < acc) return ix[i];
  }
  return ix[m - 1];
}
