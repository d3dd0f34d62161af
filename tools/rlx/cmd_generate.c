/*
 * cmd_generate.c — `rlx generate DIR`: text generation with an export of
 * `python3 -m rlx.export_llm` (docs/design.md, "Text generation").
 *
 *   rlx generate DIR (--prompt TEXT | --prompt-ids 1,2,3) [--max-new-tokens N] [--temperature T] [--top-k K]
 *                [--top-p P] [--min-p P] [--repetition-penalty R] [--seed S] [--no-stop]
 *                [--force-ids 4,5,...] [--logits-out FILE.npy] [--warmup N] [--threads N]
 *
 * Streams the generated text (decoded with the export's tokenizer.json, whose
 * encoding of --prompt, special tokens added, is the prompt; without one,
 * the ids), then prints the ids on one line starting "ids:", and the prefill and
 * decode speeds. Greedy unless a sampling option is given (the export's
 * generation.json defaults otherwise apply: max_new_tokens, eos as stop).
 * --force-ids feeds the given tokens instead of the generated ones (teacher
 * forcing: the ids line is still what the model picked at each step), which
 * the parity tests use to follow torch's tokens through a near-tie;
 * --logits-out writes every step's logits as f32 [steps, vocab].
 */
#include <errno.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "npy.h"

/* "1,2,3" -> ids (malloc'd); -1 on a malformed list. */
static int parse_ids(const char *s, int32_t **out, int32_t *n) {
  int32_t cap = 16, k = 0;
  int32_t *v = malloc(sizeof(int32_t) * (size_t)cap);
  const char *p = s;
  while (v && *p) {
    char *end;
    errno = 0;
    long long x = strtoll(p, &end, 10);
    if (end == p || errno || x < 0 || x > INT32_MAX || (*end && *end != ',')) {
      free(v);
      return -1;
    }
    if (k == cap) {
      int32_t *nv = realloc(v, sizeof(int32_t) * (size_t)(cap *= 2));
      if (!nv) break;
      v = nv;
    }
    v[k++] = (int32_t)x;
    p = *end ? end + 1 : end;
  }
  if (!v || k == 0) {
    free(v);
    return -1;
  }
  *out = v, *n = k;
  return 0;
}

static int number(const char *cmd, const char *opt, const char *val, double lo, double hi, double *out) {
  char *end;
  errno = 0;
  double x = strtod(val, &end);
  if (end == val || *end || errno || !(x >= lo && x <= hi))
    return cli_usage(cmd, "%s %s: expected a number in [%g, %g]", opt, val, lo, hi);
  *out = x;
  return 0;
}

int cmd_generate(int argc, char **argv) {
  rlx_compile_options copts;
  rlx_compile_options_init(&copts);
  const char *dir = NULL, *ids_arg = NULL, *text_arg = NULL, *force_arg = NULL, *logits_out = NULL;
  double max_new = -1, temp = -1, top_k = -1, top_p = -1, min_p = -1, rep = -1, seed = 0;
  bool no_stop = false, quiet = false;
  double warmup = 0;
  for (int i = 0; i < argc; i++) {
    int r = cli_compile_flag("generate", argc, argv, &i, &copts);
    if (r < 0) return 2;
    if (r) continue;
    const char *a = argv[i];
    if (!strcmp(a, "--no-stop")) {
      no_stop = true;
      continue;
    }
    if (!strcmp(a, "--quiet")) {
      quiet = true;
      continue;
    }
    if (a[0] == '-' && a[1] == '-') {
      if (i + 1 >= argc) return cli_usage("generate", "%s needs a value", a);
      const char *v = argv[++i];
      int bad = 0;
      if (!strcmp(a, "--prompt-ids")) ids_arg = v;
      else if (!strcmp(a, "--force-ids")) force_arg = v;
      else if (!strcmp(a, "--logits-out")) logits_out = v;
      else if (!strcmp(a, "--max-new-tokens")) bad = number("generate", a, v, 1, 1e9, &max_new);
      else if (!strcmp(a, "--temperature")) bad = number("generate", a, v, 0, 1e6, &temp);
      else if (!strcmp(a, "--top-k")) bad = number("generate", a, v, 0, 2147483647.0, &top_k);
      else if (!strcmp(a, "--top-p")) bad = number("generate", a, v, 0, 1, &top_p);
      else if (!strcmp(a, "--min-p")) bad = number("generate", a, v, 0, 1, &min_p);
      else if (!strcmp(a, "--repetition-penalty")) bad = number("generate", a, v, 1e-6, 1e6, &rep);
      else if (!strcmp(a, "--seed")) bad = number("generate", a, v, 0, 18446744073709551615.0, &seed);
      else if (!strcmp(a, "--warmup")) bad = number("generate", a, v, 0, 100, &warmup);
      else if (!strcmp(a, "--prompt")) text_arg = v;
      else return cli_usage("generate", "unknown option %s", a);
      if (bad) return bad;
    } else if (!dir) {
      dir = a;
    } else {
      return cli_usage("generate", "more than one directory given");
    }
  }
  if (!dir || (!ids_arg == !text_arg))
    return cli_usage("generate", "usage: rlx generate DIR (--prompt TEXT | --prompt-ids 1,2,3) [--max-new-tokens N] "
                                 "[--temperature T] [--top-k K] [--top-p P] [--min-p P] [--repetition-penalty R] "
                                 "[--seed S]");
  int32_t *prompt = NULL, *force = NULL, n_prompt = 0, n_force = 0;
  if (ids_arg && parse_ids(ids_arg, &prompt, &n_prompt))
    return cli_usage("generate", "--prompt-ids %s: expected ids like 1,2,3", ids_arg);
  /* the export's tokenizer: --prompt text is encoded with it (special tokens
   * added: BOS), and the generated tokens stream out as text */
  rlx_tokenizer *tkz = NULL;
  rlx_token_stream *stream = NULL;
  char tpath[4096];
  snprintf(tpath, sizeof tpath, "%s/tokenizer.json", dir);
  if (access(tpath, F_OK) == 0 || text_arg) {
    if (rlx_tokenizer_load(tpath, &tkz)) {
      fprintf(stderr, "rlx generate: error: %s%s\n", rlx_last_error(),
              text_arg ? " (--prompt needs the export's tokenizer.json; --prompt-ids takes ids)" : "");
      free(prompt);
      return 2;
    }
    if (rlx_token_stream_create(tkz, 1, &stream)) {
      fprintf(stderr, "rlx generate: error: %s\n", rlx_last_error());
      rlx_tokenizer_destroy(tkz);
      free(prompt);
      return 2;
    }
  }
  if (text_arg) {
    size_t n = 0, len = strlen(text_arg);
    if (!rlx_tokenizer_encode(tkz, text_arg, len, 1, NULL, 0, &n) && n > 0 && n <= INT32_MAX &&
        (prompt = malloc(sizeof(int32_t) * n)) && !rlx_tokenizer_encode(tkz, text_arg, len, 1, prompt, n, &n)) {
      n_prompt = (int32_t)n;
    } else {
      fprintf(stderr, "rlx generate: error: --prompt: %s\n", n == 0 ? "the text encodes to no token" : rlx_last_error());
      free(prompt);
      rlx_token_stream_destroy(stream);
      rlx_tokenizer_destroy(tkz);
      return 2;
    }
  }
  if (force_arg && parse_ids(force_arg, &force, &n_force)) {
    free(prompt);
    return cli_usage("generate", "--force-ids %s: expected ids like 1,2,3", force_arg);
  }

  cli_ctx c = {.cmd = "generate"};
  rlx_generator *gen = NULL;
  int rc = 0;
  double t0 = cli_now_ms();
  rc = cli_load_compile(&c, dir, &copts);
  if (!rc && rlx_generator_create(c.compiled, &gen)) rc = cli_error(&c, "cannot create a generator");
  double t_open = cli_now_ms() - t0;
  rlx_generate_options o;
  if (!rc) rlx_generator_defaults(gen, &o);
  bool sampling = temp >= 0 || top_k >= 0 || top_p >= 0 || min_p >= 0 || seed != 0;
  if (!rc && !sampling) o.sampling.temperature = 0; /* greedy unless a sampling option is given */
  if (!rc && sampling) {
    if (temp < 0 && o.sampling.temperature == 0) o.sampling.temperature = 1.0f; /* defaults were greedy */
    if (temp >= 0) o.sampling.temperature = (float)temp;
    if (top_k >= 0) o.sampling.top_k = (int32_t)top_k;
    if (top_p >= 0) o.sampling.top_p = (float)top_p;
    if (min_p >= 0) o.sampling.min_p = (float)min_p;
  }
  if (!rc) {
    if (rep >= 0) o.sampling.repetition_penalty = (float)rep;
    o.sampling.seed = (uint64_t)seed;
    if (max_new > 0) o.max_new_tokens = (int32_t)max_new;
    if (no_stop || force) o.n_stop_tokens = 0;
  }
  int32_t vocab = 0;
  int32_t *out_ids = rc ? NULL : malloc(sizeof(int32_t) * (size_t)o.max_new_tokens);
  float *logits_all = NULL;
  if (!rc && !out_ids) rc = cli_usage("generate", "out of memory");
  double prefill_ms = 0, decode_ms = 0;
  int32_t n_out = 0;
  const char *why = "max_new_tokens";
  if (!rc) {
    /* --warmup N: N untimed prefills and decode steps first (the arena's and
     * the weights' first touch), then back to an empty context */
    for (int w = 0; !rc && w < (int)warmup; w++) {
      int32_t t = prompt[0];
      if (rlx_generator_feed(gen, prompt, n_prompt) || rlx_generator_feed(gen, &t, 1) || rlx_generator_rewind(gen, 0))
        rc = cli_error(&c, "a warm-up step failed");
    }
    /* the loop of rlx_generate, spelled out for --force-ids and --logits-out */
    rlx_generator_seed(gen, o.sampling.seed);
    double a = cli_now_ms();
    if (rlx_generator_feed(gen, prompt, n_prompt)) rc = cli_error(&c, "the prompt's step failed");
    prefill_ms = cli_now_ms() - a;
    a = cli_now_ms();
    const float *lg;
    if (!rc) rlx_generator_logits(gen, &lg, &vocab);
    if (!rc && logits_out && !(logits_all = malloc(sizeof(float) * (size_t)vocab * (size_t)o.max_new_tokens)))
      rc = cli_usage("generate", "out of memory for --logits-out");
    for (int32_t i = 0; !rc && i < o.max_new_tokens; i++) {
      int32_t tok;
      rlx_generator_logits(gen, &lg, NULL);
      if (logits_all) memcpy(logits_all + (size_t)i * (size_t)vocab, lg, sizeof(float) * (size_t)vocab);
      if (rlx_generator_sample(gen, &o.sampling, &tok)) {
        rc = cli_error(&c, "sampling failed");
        break;
      }
      out_ids[n_out++] = tok;
      if (!quiet && !force) { /* streamed as they come: text with a tokenizer, else ids */
        const char *piece;
        size_t plen;
        if (stream && !rlx_token_stream_push(stream, tok, &piece, &plen)) fwrite(piece, 1, plen, stdout);
        else if (!stream) printf("%s%d", i ? " " : "", tok);
        fflush(stdout);
      }
      bool stop = false;
      for (int32_t k = 0; k < o.n_stop_tokens && !stop; k++) stop = o.stop_tokens[k] == tok;
      if (stop) {
        why = "a stop token";
        break;
      }
      if (i + 1 == o.max_new_tokens) break;
      if (force && i >= n_force) {
        why = "the end of --force-ids";
        break;
      }
      if (rlx_generator_position(gen) >= rlx_generator_max_seq(gen)) {
        why = "the context is full";
        break;
      }
      int32_t next = force ? force[i] : tok;
      if (rlx_generator_feed(gen, &next, 1)) rc = cli_error(&c, "a decode step failed");
    }
    decode_ms = cli_now_ms() - a;
    const char *rest;
    size_t rlen;
    if (stream && !quiet && !force && !rlx_token_stream_flush(stream, &rest, &rlen)) fwrite(rest, 1, rlen, stdout);
    if (!quiet && !force && n_out) printf("\n");
  }
  if (!rc) {
    printf("ids:");
    for (int32_t i = 0; i < n_out; i++) printf("%s%d", i ? "," : " ", out_ids[i]);
    printf("\n");
    fflush(stdout);
    int32_t steps = n_out > 1 ? n_out - 1 : 0; /* decode steps fed */
    fprintf(stderr, "rlx generate: load+compile %.1f ms; prefill %d tokens in %.1f ms (%.1f tok/s); decode %d tokens "
            "in %.1f ms (%.1f tok/s); stopped by %s\n", t_open, (int)n_prompt, prefill_ms,
            prefill_ms > 0 ? n_prompt * 1e3 / prefill_ms : 0.0, (int)steps, decode_ms,
            decode_ms > 0 && steps ? steps * 1e3 / decode_ms : 0.0, why);
    if (logits_all) {
      rlx_tensor_view v = {.data = logits_all, .dtype = RLX_DTYPE_F32, .rank = 2, .dims = {n_out, vocab}};
      if (rlx_npy_write(logits_out, &v)) rc = cli_error(&c, "cannot write --logits-out");
    }
  }
  free(logits_all);
  free(out_ids);
  free(prompt);
  free(force);
  rlx_token_stream_destroy(stream);
  rlx_tokenizer_destroy(tkz);
  rlx_generator_destroy(gen);
  rlx_compiled_destroy(c.compiled);
  rlx_model_destroy(c.model);
  return rc;
}
