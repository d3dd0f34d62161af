/*
 * test_generate.c — the generator (rlx.h "text generation") on the shipped
 * examples/models/tiny_llm, and the sampling chain on hand-made logits.
 *
 * The generation tests compare rlx with itself (two generators, rewind,
 * stop tokens); tests/py/test_generate.py compares it with transformers.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gen/sample.h"
#include "test.h"

#define MODEL "examples/models/tiny_llm"

static rlx_model *model;
static rlx_compiled *compiled;

static bool open_model(void) {
  if (compiled) return true;
  rlx_compile_options o;
  rlx_compile_options_init(&o);
  o.threads = 2;
  CHECK_OK(rlx_model_load(MODEL, NULL, &model));
  if (model) CHECK_OK(rlx_model_compile(model, &o, &compiled));
  return compiled != NULL;
}

static const int32_t prompt[] = {1, 50, 60, 70, 80};
#define NP ((int32_t)(sizeof prompt / sizeof prompt[0]))

/* n greedy tokens after the prompt, feeding one at a time */
static void greedy(rlx_generator *g, int32_t *out, int n) {
  rlx_sampling s;
  rlx_sampling_init(&s);
  CHECK_OK(rlx_generator_feed(g, prompt, NP));
  for (int i = 0; i < n; i++) {
    CHECK_OK(rlx_generator_sample(g, &s, &out[i]));
    if (i + 1 < n) CHECK_OK(rlx_generator_feed(g, &out[i], 1));
  }
}

TEST(greedy_is_argmax_and_rlx_generate_agrees) {
  if (!open_model()) return;
  rlx_generator *g = NULL;
  CHECK_OK(rlx_generator_create(compiled, &g));
  if (!g) return;
  CHECK(rlx_generator_max_seq(g) == 128);
  int32_t a[12], b[12] = {0};
  greedy(g, a, 12);
  CHECK(rlx_generator_position(g) == NP + 11);
  const float *lg;
  int32_t vocab;
  CHECK_OK(rlx_generator_logits(g, &lg, &vocab));
  CHECK(vocab == 320);
  /* the defaults of generation.json: greedy, eos 2 stops */
  rlx_generate_options o;
  CHECK_OK(rlx_generator_defaults(g, &o));
  CHECK(o.n_stop_tokens == 1 && o.stop_tokens[0] == 2 && o.sampling.temperature == 0);
  /* greedy is the argmax of the logits */
  CHECK_OK(rlx_generator_rewind(g, 0));
  CHECK_OK(rlx_generator_feed(g, prompt, NP));
  CHECK_OK(rlx_generator_logits(g, &lg, &vocab));
  int32_t best = 0;
  for (int32_t i = 1; i < vocab; i++)
    if (lg[i] > lg[best]) best = i;
  CHECK(best == a[0]);
  (void)b;
  rlx_generator_destroy(g);
}

typedef struct rec {
  int32_t tok[64];
  int n, stop_after;
} rec;

static int record(void *ctx, int32_t t) {
  rec *r = ctx;
  r->tok[r->n++] = t;
  return r->stop_after && r->n >= r->stop_after;
}

TEST(generate_callback_stop_tokens_rewind) {
  if (!open_model()) return;
  rlx_generator *g = NULL;
  CHECK_OK(rlx_generator_create(compiled, &g));
  if (!g) return;
  int32_t want[12];
  greedy(g, want, 12);
  rlx_generate_options o;
  rlx_generator_defaults(g, &o);
  o.max_new_tokens = 12, o.n_stop_tokens = 0, o.on_token = record;
  rec r = {0};
  o.ctx = &r;
  rlx_generate_stats st;
  CHECK_OK(rlx_generator_rewind(g, 0));
  CHECK_OK(rlx_generate(g, prompt, NP, &o, &st));
  CHECK(r.n == 12 && !memcmp(r.tok, want, sizeof want));
  /* a stop token: emitted, then generation ends */
  memset(&r, 0, sizeof r);
  int32_t stop = want[4];
  int first = 0;
  while (want[first] != stop) first++;
  o.stop_tokens = &stop, o.n_stop_tokens = 1;
  CHECK_OK(rlx_generator_rewind(g, 0));
  CHECK_OK(rlx_generate(g, prompt, NP, &o, &st));
  CHECK(st.stopped == 1 && r.n == first + 1 && st.n_generated == first + 1);
  /* the callback stops it */
  memset(&r, 0, sizeof r);
  r.stop_after = 3;
  o.n_stop_tokens = 0;
  CHECK_OK(rlx_generator_rewind(g, 0));
  CHECK_OK(rlx_generate(g, prompt, NP, &o, &st));
  CHECK(st.stopped == 2 && r.n == 3);
  /* rewind to the end of the prompt + 2 tokens, then continue: the same tokens */
  CHECK_OK(rlx_generator_rewind(g, 0));
  int32_t again[12];
  greedy(g, again, 12);
  CHECK_OK(rlx_generator_rewind(g, NP + 2));
  rlx_sampling s;
  rlx_sampling_init(&s);
  int32_t t;
  CHECK_ERR(rlx_generator_sample(g, &s, &t), RLX_ERR_INVALID_ARGUMENT, "feed tokens first");
  CHECK_OK(rlx_generator_feed(g, &again[2], 1)); /* re-feed the token at position NP + 2 */
  CHECK_OK(rlx_generator_sample(g, &s, &t));
  CHECK(t == again[3]);
  CHECK_ERR(rlx_generator_rewind(g, 1000), RLX_ERR_INVALID_ARGUMENT, "rewind to 1000");
  rlx_generator_destroy(g);
}

TEST(two_generators_are_independent) {
  if (!open_model()) return;
  rlx_generator *g1 = NULL, *g2 = NULL;
  CHECK_OK(rlx_generator_create(compiled, &g1));
  CHECK_OK(rlx_generator_create(compiled, &g2));
  if (!g1 || !g2) {
    rlx_generator_destroy(g1);
    rlx_generator_destroy(g2);
    return;
  }
  int32_t want[10];
  greedy(g1, want, 10);
  CHECK_OK(rlx_generator_rewind(g1, 0));
  /* interleaved: g1 from the prompt, g2 from another prompt, step by step */
  int32_t other[3] = {1, 200, 201}, a[10], b;
  rlx_sampling s;
  rlx_sampling_init(&s);
  CHECK_OK(rlx_generator_feed(g1, prompt, NP));
  CHECK_OK(rlx_generator_feed(g2, other, 3));
  for (int i = 0; i < 10; i++) {
    CHECK_OK(rlx_generator_sample(g1, &s, &a[i]));
    CHECK_OK(rlx_generator_sample(g2, &s, &b));
    CHECK_OK(rlx_generator_feed(g1, &a[i], 1));
    CHECK_OK(rlx_generator_feed(g2, &b, 1));
  }
  CHECK(!memcmp(a, want, sizeof want));
  rlx_generator_destroy(g1);
  rlx_generator_destroy(g2);
}

TEST(generator_bad_input) {
  if (!open_model()) return;
  rlx_generator *g = NULL;
  CHECK_OK(rlx_generator_create(compiled, &g));
  if (!g) return;
  int32_t bad[2] = {5, 320};
  CHECK_ERR(rlx_generator_feed(g, bad, 2), RLX_ERR_INVALID_ARGUMENT, "token 320 (at 1 of 2) is not in the vocab of 320");
  CHECK_ERR(rlx_generator_feed(g, bad, 0), RLX_ERR_INVALID_ARGUMENT, "0 tokens");
  int32_t *many = calloc(129, sizeof(int32_t));
  CHECK_ERR(rlx_generator_feed(g, many, 129), RLX_ERR_SHAPE, "pass the context of 128 tokens");
  CHECK_OK(rlx_generator_feed(g, many, 128)); /* exactly full */
  CHECK_ERR(rlx_generator_feed(g, many, 1), RLX_ERR_SHAPE, "at position 128");
  free(many);
  rlx_sampling s;
  rlx_sampling_init(&s);
  s.top_p = -1;
  int32_t t;
  CHECK_ERR(rlx_generator_sample(g, &s, &t), RLX_ERR_INVALID_ARGUMENT, "top_p -1");
  rlx_generate_options o;
  rlx_generator_defaults(g, &o);
  o.max_new_tokens = 0;
  CHECK_ERR(rlx_generate(g, bad, 1, &o, NULL), RLX_ERR_INVALID_ARGUMENT, "max_new_tokens 0");
  rlx_generator_destroy(g);
  /* a model that is not an rlx.export_llm export */
  rlx_model *m = NULL;
  rlx_compiled *c = NULL;
  CHECK_OK(rlx_model_load("examples/models/tiny_llama", NULL, &m));
  if (m) CHECK_OK(rlx_model_compile(m, NULL, &c));
  if (c) CHECK_ERR(rlx_generator_create(c, &g), RLX_ERR_IO, "not an rlx.export_llm export");
  rlx_compiled_destroy(c);
  rlx_model_destroy(m);
}

/* ---- the sampling chain on hand-made logits ---- */

/* How often each token is drawn over a fine grid of u (exact frequencies). */
static void histogram(const float *logits, int32_t n, float temp, int32_t k, float p, float minp, double *freq) {
  rlx_sample_ws w;
  CHECK_OK(rlx_sample_ws_init(&w, n));
  const int draws = 100000;
  for (int i = 0; i < n; i++) freq[i] = 0;
  for (int d = 0; d < draws; d++) {
    int32_t t = rlx_sample(logits, n, temp, k, p, minp, (d + 0.5) / draws, &w);
    CHECK(t >= 0 && t < n);
    if (t >= 0 && t < n) freq[t] += 1.0 / draws;
  }
  rlx_sample_ws_free(&w);
}

TEST(sampling_chain) {
  /* probabilities 0.5, 0.3, 0.15, 0.05 as logits (any offset) */
  float l[4] = {logf(0.5f) + 3, logf(0.3f) + 3, logf(0.15f) + 3, logf(0.05f) + 3};
  double f[4];
  histogram(l, 4, 1.0f, 0, 1.0f, 0.0f, f);
  CHECK_NEAR(f[0], 0.5, 1e-3);
  CHECK_NEAR(f[1], 0.3, 1e-3);
  CHECK_NEAR(f[2], 0.15, 1e-3);
  CHECK_NEAR(f[3], 0.05, 1e-3);
  histogram(l, 4, 1.0f, 2, 1.0f, 0.0f, f); /* top-k 2: 0.5 : 0.3 */
  CHECK_NEAR(f[0], 0.625, 1e-3);
  CHECK_NEAR(f[1], 0.375, 1e-3);
  CHECK(f[2] == 0 && f[3] == 0);
  histogram(l, 4, 1.0f, 0, 0.8f, 0.0f, f); /* top-p 0.8: 0.5 + 0.3 reach it */
  CHECK_NEAR(f[0], 0.625, 1e-3);
  CHECK(f[2] == 0 && f[3] == 0);
  histogram(l, 4, 1.0f, 0, 0.81f, 0.0f, f); /* 0.81: the third joins */
  CHECK_NEAR(f[2], 0.15 / 0.95, 1e-3);
  CHECK(f[3] == 0);
  histogram(l, 4, 1.0f, 0, 1.0f, 0.35f, f); /* min-p 0.35: keep p >= 0.175 */
  CHECK_NEAR(f[0], 0.625, 1e-3);
  CHECK(f[2] == 0 && f[3] == 0);
  histogram(l, 4, 0.5f, 0, 1.0f, 0.0f, f); /* temperature 0.5 squares the odds */
  double z = 0.25 + 0.09 + 0.0225 + 0.0025;
  CHECK_NEAR(f[0], 0.25 / z, 1e-3);
  CHECK_NEAR(f[3], 0.0025 / z, 1e-3);
  /* -inf and NaN logits are never drawn; all of them: -1 */
  float m[3] = {-INFINITY, NAN, 0.0f};
  histogram(m, 3, 1.0f, 0, 1.0f, 0.0f, f);
  CHECK_NEAR(f[2], 1.0, 1e-9);
  rlx_sample_ws w;
  CHECK_OK(rlx_sample_ws_init(&w, 3));
  float none[2] = {-INFINITY, NAN};
  CHECK(rlx_sample(none, 2, 1.0f, 0, 1.0f, 0.0f, 0.5, &w) == -1);
  rlx_sample_ws_free(&w);
  /* a larger vocab through the sorted paths: top-k 3 of 1000 and top-p */
  float big[1000];
  for (int i = 0; i < 1000; i++) big[i] = (float)((i * 7919) % 1000) * 0.01f;
  int32_t best[3] = {0};
  for (int i = 0; i < 1000; i++) { /* the three largest: values 9.99, 9.98, 9.97 */
    int v = (i * 7919) % 1000;
    if (v == 999) best[0] = i;
    if (v == 998) best[1] = i;
    if (v == 997) best[2] = i;
  }
  double fb[1000];
  histogram(big, 1000, 1.0f, 3, 1.0f, 0.0f, fb);
  double z3 = 1 + exp(-0.01) + exp(-0.02);
  CHECK_NEAR(fb[best[0]], 1 / z3, 1e-3);
  CHECK_NEAR(fb[best[2]], exp(-0.02) / z3, 1e-3);
  double kept = 0;
  histogram(big, 1000, 1.0f, 0, 0.5f, 0.0f, fb);
  for (int i = 0; i < 1000; i++) kept += fb[i] > 0;
  /* the nucleus of mass 0.5: the values down to where exp tails sum to half */
  double tot = 0, cum = 0;
  for (int v = 0; v < 1000; v++) tot += exp((v - 999) * 0.01);
  int need = 0;
  for (int v = 999; v >= 0 && cum < 0.5 * tot; v--) cum += exp((v - 999) * 0.01), need++;
  CHECK_NEAR(kept, need, 0);
}

TEST(greedy_and_penalty) {
  float l[5] = {1, 3, 3, -2, NAN};
  CHECK(rlx_argmax(l, 5) == 1); /* the lowest id of a tie, NaN never */
  int32_t hist[4] = {1, 3, 1, 9}; /* 9 is outside the vocab: ignored; 1 counted once */
  rlx_repetition_penalty(l, 5, hist, 4, 2.0f);
  CHECK(l[1] == 1.5f && l[3] == -4.0f && l[2] == 3.0f && l[0] == 1.0f);
  CHECK(rlx_argmax(l, 5) == 2);
  float nan3[3] = {NAN, NAN, NAN};
  CHECK(rlx_argmax(nan3, 3) == 0);
  rlx_rng a, b;
  rlx_rng_seed(&a, 7), rlx_rng_seed(&b, 7);
  for (int i = 0; i < 100; i++) CHECK(rlx_rng_next(&a) == rlx_rng_next(&b));
  double u = rlx_rng_uniform(&a);
  CHECK(u >= 0 && u < 1);
}

TEST(close_model) {
  rlx_compiled_destroy(compiled);
  rlx_model_destroy(model);
}

TEST_MAIN(greedy_is_argmax_and_rlx_generate_agrees, generate_callback_stop_tokens_rewind, two_generators_are_independent,
          generator_bad_input, sampling_chain, greedy_and_penalty, close_model)
