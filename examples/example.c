/*
 * example.c — the smallest complete use of librlx, through include/rlx.h
 * only: load an export directory, compile it for the CPU, bind inputs by
 * name, run, and read the outputs.
 *
 *   ./build/examples/rlx_example examples/models/tiny_llama
 *
 * Inputs are filled with a deterministic pattern (token ids 0, 1, 2, ... for
 * integer inputs; a smooth ramp for float inputs).
 */
#include <stdio.h>
#include <stdlib.h>

#include "rlx.h"

static int fail(const char *what, rlx_status st) {
  fprintf(stderr, "%s failed (%s): %s\n", what, rlx_status_string(st), rlx_last_error());
  return 1;
}

static void fill(const rlx_io_info *in, void *data, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    switch (in->dtype) {
      case RLX_DTYPE_F32: ((float *)data)[i] = (float)((i % 17) - 8) / 8.0f; break;
      case RLX_DTYPE_F64: ((double *)data)[i] = (double)((i % 17) - 8) / 8.0; break;
      case RLX_DTYPE_I64: ((int64_t *)data)[i] = i % 32; break;
      case RLX_DTYPE_I32: ((int32_t *)data)[i] = (int32_t)(i % 32); break;
      case RLX_DTYPE_BOOL: ((unsigned char *)data)[i] = 1; break;
      default: ((unsigned char *)data)[i] = 0; break; /* other dtypes: zero bytes */
    }
  }
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s EXPORT_DIR\n", argv[0]);
    return 2;
  }
  rlx_model *model = NULL;
  rlx_compiled *compiled = NULL;
  rlx_session *session = NULL;
  void *buffers[64] = {0};
  int rc = 1;
  rlx_status st;

  if ((st = rlx_model_load(argv[1], NULL, &model))) return fail("rlx_model_load", st);
  rlx_compile_options opts;
  rlx_compile_options_init(&opts);
  if ((st = rlx_model_compile(model, &opts, &compiled))) { rc = fail("rlx_model_compile", st); goto done; }
  if ((st = rlx_session_create(compiled, &session))) { rc = fail("rlx_session_create", st); goto done; }

  int n_in = rlx_model_input_count(model);
  for (int i = 0; i < n_in && i < 64; i++) {
    rlx_io_info info;
    rlx_model_input_info(model, i, &info);
    rlx_tensor_view v = {.dtype = info.dtype, .rank = info.rank};
    int64_t n = 1;
    for (int d = 0; d < info.rank; d++) n *= (v.dims[d] = info.dims[d]);
    buffers[i] = calloc((size_t)(n ? n : 1), rlx_dtype_size(info.dtype));
    if (!buffers[i]) goto done;
    fill(&info, buffers[i], n);
    v.data = buffers[i];
    printf("input  %-10s %s, %lld elements\n", info.name, rlx_dtype_name(info.dtype), (long long)n);
    if ((st = rlx_session_bind_input(session, info.name, &v))) { rc = fail("rlx_session_bind_input", st); goto done; }
  }
  if ((st = rlx_session_run(session))) { rc = fail("rlx_session_run", st); goto done; }

  for (int i = 0; i < rlx_model_output_count(model); i++) {
    rlx_tensor_view out;
    rlx_session_output(session, i, &out);
    printf("output %d: %s [", i, rlx_dtype_name(out.dtype));
    for (int d = 0; d < out.rank; d++) printf(d ? ", %lld" : "%lld", (long long)out.dims[d]);
    printf("] first values:");
    int64_t n = rlx_view_numel(&out);
    for (int64_t k = 0; k < n && k < 5; k++) {
      if (out.dtype == RLX_DTYPE_F32) printf(" %.5f", ((const float *)out.data)[k]);
      else if (out.dtype == RLX_DTYPE_I64) printf(" %lld", (long long)((const int64_t *)out.data)[k]);
    }
    printf("\n");
  }
  rc = 0;
done:
  rlx_session_destroy(session);
  rlx_compiled_destroy(compiled);
  rlx_model_destroy(model);
  for (int i = 0; i < 64; i++) free(buffers[i]);
  return rc;
}
