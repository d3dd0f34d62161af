/*
 * generate.c — the generator (include/rlx.h, "text generation"; docs/
 * design.md, "Text generation"): a session of an rlx.export_llm program,
 * whose state is the KV cache, the token history and the sampling chain.
 *
 * One step binds input_ids [1, n] (the new tokens), position_ids [1, n]
 * (pos .. pos+n-1) and attention_mask [1, pos+n] (ones): the program writes
 * the n new rows of every layer's cache in place and attends over the first
 * pos+n rows. Each step is a new binding of the symbols (T, L), planned by
 * the session's reshape stage without allocating.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "gen/sample.h"
#include "import/json_util.h"
#include "runtime/runtime.h"

#define GEN_JSON_MAX ((size_t)1 << 20)
#define MAX_STOP 64

struct rlx_generator {
  const rlx_compiled *c;
  rlx_session *s;
  char names[3][64]; /* tokens, positions, mask inputs */
  int32_t logits_output;
  int32_t vocab;
  int64_t max_seq, pos;
  int64_t *tok, *posv, *mask; /* i64 input buffers, max_seq each (mask: all ones) */
  int32_t *history;           /* the tokens of the context, pos of them */
  const float *logits;        /* the last step's last row, NULL before the first */
  float *work;                /* logits with the repetition penalty */
  rlx_sample_ws ws;
  rlx_rng rng;
  int32_t stop[MAX_STOP];
  int32_t n_stop;
  rlx_generate_options defaults;
};

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

void rlx_sampling_init(rlx_sampling *s) {
  memset(s, 0, sizeof *s);
  s->size = sizeof *s;
  s->top_p = 1.0f;
  s->repetition_penalty = 1.0f;
}

static rlx_status json_num(const cJSON *obj, const char *key, const char *path, double lo, double hi, double *out) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (!v || cJSON_IsNull(v)) return RLX_OK; /* keep the default */
  if (!cJSON_IsNumber(v) || !(v->valuedouble >= lo && v->valuedouble <= hi))
    return rlx_errorf(RLX_ERR_FORMAT, "%s: '%s' must be a number in [%g, %g]", path, key, lo, hi);
  *out = v->valuedouble;
  return RLX_OK;
}

/* generation.json (python/rlx/export_llm.py) */
static rlx_status read_meta(rlx_generator *g, const char *dir) {
  char path[4096];
  snprintf(path, sizeof path, "%s/generation.json", dir);
  char *text = NULL;
  size_t len = 0;
  rlx_status st = rlx_read_file(path, GEN_JSON_MAX, &text, &len);
  if (st) {
    rlx_error_prefix("not an rlx.export_llm export (python3 -m rlx.export_llm writes generation.json): ");
    return st;
  }
  cJSON *root = NULL;
  st = rlx_json_parse(text, len, path, &root);
  rlx_free(text);
  if (st) return st;
  const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(root, "format");
  const cJSON *ins = cJSON_GetObjectItemCaseSensitive(root, "inputs");
  double vocab = 0, max_seq = 0, lo = 0;
  if (!cJSON_IsString(fmt) || strcmp(fmt->valuestring, "rlx-llm"))
    st = rlx_errorf(RLX_ERR_FORMAT, "%s: 'format' must be \"rlx-llm\"", path);
  else if (!cJSON_IsObject(ins))
    st = rlx_errorf(RLX_ERR_FORMAT, "%s: 'inputs' must be an object", path);
  const char *keys[3] = {"tokens", "positions", "mask"};
  for (int i = 0; !st && i < 3; i++) {
    const char *s;
    if ((st = rlx_json_str(ins, keys[i], path, &s))) break;
    if (strlen(s) >= sizeof g->names[i]) st = rlx_errorf(RLX_ERR_FORMAT, "%s: inputs.%s is too long", path, keys[i]);
    else snprintf(g->names[i], sizeof g->names[i], "%s", s);
  }
  if (!st) st = json_num(root, "vocab_size", path, 1, 2147483647.0, &vocab);
  if (!st) st = json_num(root, "max_seq", path, 1, 1e12, &max_seq);
  if (!st) st = json_num(root, "logits_output", path, 0, 1e6, &lo);
  if (!st && (vocab < 1 || max_seq < 1)) st = rlx_errorf(RLX_ERR_FORMAT, "%s: needs 'vocab_size' and 'max_seq'", path);
  if (!st) g->vocab = (int32_t)vocab, g->max_seq = (int64_t)max_seq, g->logits_output = (int32_t)lo;
  const cJSON *eos = cJSON_GetObjectItemCaseSensitive(root, "eos_token_ids"), *e;
  if (!st && eos && !cJSON_IsArray(eos)) st = rlx_errorf(RLX_ERR_FORMAT, "%s: 'eos_token_ids' must be a list", path);
  const cJSON *eos_list = st ? NULL : eos;
  cJSON_ArrayForEach(e, eos_list) {
    if (!cJSON_IsNumber(e) || e->valuedouble < 0 || e->valuedouble >= vocab || e->valuedouble != floor(e->valuedouble)) {
      st = rlx_errorf(RLX_ERR_FORMAT, "%s: eos_token_ids holds a value that is not a token id", path);
      break;
    }
    if (g->n_stop < MAX_STOP) g->stop[g->n_stop++] = (int32_t)e->valuedouble;
  }
  rlx_generate_options *d = &g->defaults;
  memset(d, 0, sizeof *d);
  d->size = sizeof *d;
  rlx_sampling_init(&d->sampling);
  d->max_new_tokens = 128;
  const cJSON *df = cJSON_GetObjectItemCaseSensitive(root, "defaults");
  if (!st && cJSON_IsObject(df)) {
    const cJSON *ds = cJSON_GetObjectItemCaseSensitive(df, "do_sample");
    double t = 1, k = 0, p = 1, mp = 0, rp = 1, mn = 128;
    if (!(st = json_num(df, "temperature", path, 0, 1e6, &t)) && !(st = json_num(df, "top_k", path, 0, 2147483647.0, &k)) &&
        !(st = json_num(df, "top_p", path, 0, 1, &p)) && !(st = json_num(df, "min_p", path, 0, 1, &mp)) &&
        !(st = json_num(df, "repetition_penalty", path, 1e-6, 1e6, &rp)) &&
        !(st = json_num(df, "max_new_tokens", path, 1, 2147483647.0, &mn))) {
      bool sample = cJSON_IsTrue(ds);
      d->sampling.temperature = sample ? (float)t : 0.0f;
      d->sampling.top_k = sample ? (int32_t)k : 0;
      d->sampling.top_p = sample ? (float)p : 1.0f;
      d->sampling.min_p = sample ? (float)mp : 0.0f;
      d->sampling.repetition_penalty = (float)rp;
      d->max_new_tokens = (int32_t)mn;
    }
  }
  d->stop_tokens = g->stop, d->n_stop_tokens = g->n_stop;
  cJSON_Delete(root);
  return st;
}

/* The inputs and output are what export_llm writes. */
static rlx_status check_io(rlx_generator *g) {
  const rlx_model *m = g->c->model;
  for (int k = 0; k < 3; k++) {
    bool found = false;
    for (int i = 0; i < rlx_model_input_count(m); i++) {
      rlx_io_info in;
      rlx_model_input_info(m, i, &in);
      if (strcmp(in.name, g->names[k])) continue;
      found = true;
      if (in.dtype != RLX_DTYPE_I64 || in.rank != 2)
        return rlx_errorf(RLX_ERR_SHAPE, "input '%s' is %s rank %d; the generator binds i64 [1, n]", in.name,
                          rlx_dtype_name(in.dtype), (int)in.rank);
      if (in.dim_max[1] < g->max_seq)
        return rlx_errorf(RLX_ERR_SHAPE, "input '%s' takes at most %lld tokens but generation.json says max_seq %lld",
                          in.name, (long long)in.dim_max[1], (long long)g->max_seq);
    }
    if (!found) return rlx_errorf(RLX_ERR_NOT_FOUND, "the model has no input '%s' (generation.json)", g->names[k]);
  }
  if (rlx_model_input_count(m) != 3)
    return rlx_errorf(RLX_ERR_SHAPE, "the model has %d inputs; a generation step has 3", rlx_model_input_count(m));
  rlx_io_info out;
  if (rlx_model_output_info(m, g->logits_output, &out))
    return rlx_errorf(RLX_ERR_NOT_FOUND, "the model has no output %d (the logits)", (int)g->logits_output);
  if (out.dtype != RLX_DTYPE_F32 || out.rank != 3 || out.dims[2] != g->vocab || out.dim_names[2])
    return rlx_errorf(RLX_ERR_SHAPE, "output %d is not the f32 logits [1, n, %d]", (int)g->logits_output, (int)g->vocab);
  return RLX_OK;
}

void rlx_generator_destroy(rlx_generator *g) {
  if (!g) return;
  rlx_session_destroy(g->s);
  rlx_free(g->tok);
  rlx_free(g->posv);
  rlx_free(g->mask);
  rlx_free(g->history);
  rlx_free(g->work);
  rlx_sample_ws_free(&g->ws);
  rlx_free(g);
}

rlx_status rlx_generator_create(const rlx_compiled *c, rlx_generator **out) {
  if (!c || !out) return rlx_errorf(RLX_ERR_INVALID_ARGUMENT, "rlx_generator_create: NULL argument");
  rlx_generator *g = rlx_calloc(1, sizeof *g);
  if (!g) return rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "out of memory");
  g->c = c;
  rlx_status st = read_meta(g, c->model->dir);
  if (!st) st = check_io(g);
  if (!st) {
    size_t n = (size_t)g->max_seq;
    g->tok = rlx_malloc(sizeof(int64_t) * n);
    g->posv = rlx_malloc(sizeof(int64_t) * n);
    g->mask = rlx_malloc(sizeof(int64_t) * n);
    g->history = rlx_malloc(sizeof(int32_t) * n);
    g->work = rlx_malloc(sizeof(float) * (size_t)g->vocab);
    if (!g->tok || !g->posv || !g->mask || !g->history || !g->work)
      st = rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "out of memory for a generator of %lld tokens", (long long)g->max_seq);
  }
  if (!st) st = rlx_sample_ws_init(&g->ws, g->vocab);
  if (!st) st = rlx_session_create(c, &g->s);
  if (st) {
    rlx_generator_destroy(g);
    return st;
  }
  for (int64_t i = 0; i < g->max_seq; i++) g->mask[i] = 1;
  rlx_rng_seed(&g->rng, 0);
  *out = g;
  return RLX_OK;
}

rlx_status rlx_generator_defaults(const rlx_generator *g, rlx_generate_options *o) {
  if (!g || !o) return rlx_errorf(RLX_ERR_INVALID_ARGUMENT, "rlx_generator_defaults: NULL argument");
  *o = g->defaults;
  return RLX_OK;
}

int64_t rlx_generator_position(const rlx_generator *g) { return g ? g->pos : 0; }
int64_t rlx_generator_max_seq(const rlx_generator *g) { return g ? g->max_seq : 0; }
void rlx_generator_seed(rlx_generator *g, uint64_t seed) {
  if (g) rlx_rng_seed(&g->rng, seed);
}

rlx_status rlx_generator_rewind(rlx_generator *g, int64_t pos) {
  if (!g) return rlx_errorf(RLX_ERR_INVALID_ARGUMENT, "rlx_generator_rewind: NULL generator");
  if (pos < 0 || pos > g->pos)
    return rlx_errorf(RLX_ERR_INVALID_ARGUMENT, "rewind to %lld: the context holds %lld tokens", (long long)pos,
                      (long long)g->pos);
  g->pos = pos;
  g->logits = NULL; /* they were the logits of a later token */
  return RLX_OK;
}

rlx_status rlx_generator_feed(rlx_generator *g, const int32_t *tokens, int32_t n) {
  if (!g || (!tokens && n)) return rlx_errorf(RLX_ERR_INVALID_ARGUMENT, "rlx_generator_feed: NULL argument");
  if (n < 1) return rlx_errorf(RLX_ERR_INVALID_ARGUMENT, "rlx_generator_feed: %d tokens (at least 1)", (int)n);
  if (n > g->max_seq - g->pos)
    return rlx_errorf(RLX_ERR_SHAPE, "%d tokens at position %lld pass the context of %lld tokens (max_seq of the "
                      "export: rlx.export_llm --max-seq)", (int)n, (long long)g->pos, (long long)g->max_seq);
  for (int32_t i = 0; i < n; i++) {
    if (tokens[i] < 0 || tokens[i] >= g->vocab)
      return rlx_errorf(RLX_ERR_INVALID_ARGUMENT, "token %d (at %d of %d) is not in the vocab of %d", (int)tokens[i],
                        (int)i, (int)n, (int)g->vocab);
    g->tok[i] = tokens[i];
    g->posv[i] = g->pos + i;
  }
  rlx_tensor_view tv = {.data = g->tok, .dtype = RLX_DTYPE_I64, .rank = 2, .dims = {1, n}};
  rlx_tensor_view pv = {.data = g->posv, .dtype = RLX_DTYPE_I64, .rank = 2, .dims = {1, n}};
  rlx_tensor_view mv = {.data = g->mask, .dtype = RLX_DTYPE_I64, .rank = 2, .dims = {1, g->pos + n}};
  rlx_status st = rlx_session_bind_input(g->s, g->names[0], &tv);
  if (!st) st = rlx_session_bind_input(g->s, g->names[1], &pv);
  if (!st) st = rlx_session_bind_input(g->s, g->names[2], &mv);
  if (!st) st = rlx_session_run(g->s);
  g->logits = NULL;
  if (st) return st;
  rlx_tensor_view out;
  if ((st = rlx_session_output(g->s, g->logits_output, &out))) return st;
  int64_t rows = out.dims[1];
  g->logits = (const float *)out.data + (size_t)(rows - 1) * (size_t)g->vocab;
  memcpy(g->history + g->pos, tokens, sizeof(int32_t) * (size_t)n);
  g->pos += n;
  return RLX_OK;
}

rlx_status rlx_generator_logits(const rlx_generator *g, const float **logits, int32_t *vocab) {
  if (!g || !logits) return rlx_errorf(RLX_ERR_INVALID_ARGUMENT, "rlx_generator_logits: NULL argument");
  if (!g->logits) return rlx_errorf(RLX_ERR_INVALID_ARGUMENT, "no logits: feed tokens first");
  *logits = g->logits;
  if (vocab) *vocab = g->vocab;
  return RLX_OK;
}

rlx_status rlx_generator_sample(rlx_generator *g, const rlx_sampling *s, int32_t *token) {
  if (!g || !s || !token) return rlx_errorf(RLX_ERR_INVALID_ARGUMENT, "rlx_generator_sample: NULL argument");
  if (!g->logits) return rlx_errorf(RLX_ERR_INVALID_ARGUMENT, "no logits to sample from: feed tokens first");
  if (!(s->temperature >= 0) || !(s->top_p >= 0) || !(s->min_p >= 0 && s->min_p <= 1) || s->top_k < 0 ||
      !(s->repetition_penalty > 0))
    return rlx_errorf(RLX_ERR_INVALID_ARGUMENT, "sampling: temperature %g, top_k %d, top_p %g, min_p %g, "
                      "repetition_penalty %g (need temperature >= 0, top_k >= 0, top_p >= 0, min_p in [0, 1], "
                      "penalty > 0)", s->temperature, (int)s->top_k, s->top_p, s->min_p, s->repetition_penalty);
  const float *l = g->logits;
  if (s->repetition_penalty != 1.0f) {
    memcpy(g->work, l, sizeof(float) * (size_t)g->vocab);
    rlx_repetition_penalty(g->work, g->vocab, g->history, g->pos, s->repetition_penalty);
    l = g->work;
  }
  if (s->temperature == 0.0f) {
    *token = rlx_argmax(l, g->vocab);
    return RLX_OK;
  }
  int32_t t = rlx_sample(l, g->vocab, s->temperature, s->top_k, s->top_p, s->min_p, rlx_rng_uniform(&g->rng), &g->ws);
  if (t < 0) return rlx_errorf(RLX_ERR_RUNTIME, "sampling: no token has a finite logit (NaN or -inf everywhere)");
  *token = t;
  return RLX_OK;
}

rlx_status rlx_generate(rlx_generator *g, const int32_t *prompt, int32_t n_prompt, const rlx_generate_options *o,
                        rlx_generate_stats *stats) {
  if (!g || !o || (!prompt && n_prompt)) return rlx_errorf(RLX_ERR_INVALID_ARGUMENT, "rlx_generate: NULL argument");
  if (o->max_new_tokens < 1)
    return rlx_errorf(RLX_ERR_INVALID_ARGUMENT, "rlx_generate: max_new_tokens %d (at least 1)", (int)o->max_new_tokens);
  rlx_generate_stats st0 = {.n_prompt = n_prompt};
  rlx_generate_stats *sx = stats ? stats : &st0;
  *sx = st0;
  rlx_generator_seed(g, o->sampling.seed);
  double t0 = now_ms();
  rlx_status st = rlx_generator_feed(g, prompt, n_prompt);
  if (st) return st;
  double t1 = now_ms();
  sx->prefill_ms = t1 - t0;
  for (int32_t i = 0; i < o->max_new_tokens; i++) {
    int32_t tok;
    if ((st = rlx_generator_sample(g, &o->sampling, &tok))) break;
    sx->n_generated++;
    bool stop = false;
    for (int32_t k = 0; k < o->n_stop_tokens && !stop; k++) stop = o->stop_tokens[k] == tok;
    if (o->on_token && o->on_token(o->ctx, tok)) {
      sx->stopped = 2;
      break;
    }
    if (stop) {
      sx->stopped = 1;
      break;
    }
    if (i + 1 == o->max_new_tokens) break;
    if (g->pos >= g->max_seq) {
      sx->stopped = 3;
      break;
    }
    if ((st = rlx_generator_feed(g, &tok, 1))) break;
  }
  sx->decode_ms = now_ms() - t1;
  return st;
}
