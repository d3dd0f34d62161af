/*
 * test_import.c — the hostile-input boundary: the safetensors reader and the
 * torch-ir.json parser. Every malformed file must come back as a status
 * (RLX_ERR_FORMAT or RLX_ERR_UNSUPPORTED) whose message names the culprit
 * (tensor, JSON path, byte offset), never as a crash or an out-of-bounds read.
 * Images and documents are built in exactly sized heap buffers (fixtures.h)
 * so the sanitizer build catches any read past the end.
 */
#include <stdlib.h>
#include <unistd.h>

#include "fixtures.h"
#include "import/json_util.h"
#include "import/safetensors.h"
#include "import/torch_ir.h"
#include "test.h"

/* ---- safetensors: helpers ---- */

/* Parses `header` + `data_len` bytes of data as t.st; returns the status and
 * leaves the file closed. */
static rlx_status st_try(const char *header, size_t data_len) {
  unsigned char *data = calloc(data_len ? data_len : 1, 1);
  size_t size;
  unsigned char *img = st_image(header, data, data_len, &size);
  rlx_st_file f;
  rlx_status st = rlx_st_parse(img, size, "t.st", &f);
  if (!st) rlx_st_close(&f);
  free(img);
  free(data);
  return st;
}

/* ---- safetensors: valid files ---- */

TEST(st_valid) {
  float w[4] = {1, 2, 3, 4};
  int64_t ids[3] = {7, -8, 9};
  const char *hdr = "{\"__metadata__\":{\"format\":\"pt\"},"
                    "\"w\":{\"dtype\":\"F32\",\"shape\":[2,2],\"data_offsets\":[0,16]},"
                    "\"ids\":{\"dtype\":\"I64\",\"shape\":[3],\"data_offsets\":[16,40]},"
                    "\"s\":{\"dtype\":\"BF16\",\"shape\":[],\"data_offsets\":[40,42]},"
                    "\"e\":{\"dtype\":\"U8\",\"shape\":[0,5],\"data_offsets\":[42,42]}}";
  unsigned char data[42] = {0};
  memcpy(data, w, 16);
  memcpy(data + 16, ids, 24);
  data[40] = 0x80, data[41] = 0x3f; /* bf16 1.0 */
  size_t size;
  unsigned char *img = st_image(hdr, data, sizeof data, &size);
  rlx_st_file f;
  CHECK_OK(rlx_st_parse(img, size, "t.st", &f));
  CHECK(f.n_tensors == 4); /* __metadata__ is not a tensor */
  CHECK(rlx_st_find(&f, "__metadata__") == NULL && rlx_st_find(&f, "nope") == NULL);
  const rlx_st_tensor *t = rlx_st_find(&f, "w");
  CHECK(t && t->dtype == RLX_DTYPE_F32 && t->shape.rank == 2 && t->shape.dims[1] == 2);
  CHECK(t && t->nbytes == 16 && t->offset == 8 + strlen(hdr) && !memcmp(t->data, w, 16));
  t = rlx_st_find(&f, "ids");
  CHECK(t && t->dtype == RLX_DTYPE_I64 && ((const int64_t *)t->data)[1] == -8);
  t = rlx_st_find(&f, "s");
  CHECK(t && t->shape.rank == 0 && t->nbytes == 2 &&
        rlx_bf16_to_f32(*(const uint16_t *)t->data) == 1.0f);
  t = rlx_st_find(&f, "e");
  CHECK(t && t->nbytes == 0 && t->shape.dims[0] == 0);
  rlx_st_close(&f);
  free(img);
}

TEST(st_empty_and_tiny) {
  rlx_st_file f;
  CHECK_OK(rlx_st_parse("", 0, "empty.st", &f)); /* a 0-byte file holds no tensors */
  CHECK(f.n_tensors == 0 && rlx_st_find(&f, "w") == NULL);
  rlx_st_close(&f);
  CHECK_OK(st_try("{}", 0)); /* an empty header */
  CHECK_OK(st_try("{\"__metadata__\":{}}  ", 0));
  /* the same through the mmap path: an empty file on disk */
  char path[] = "/tmp/rlx_test_st_XXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0);
  close(fd);
  CHECK_OK(rlx_st_open(path, &f));
  CHECK(f.n_tensors == 0 && f.map == NULL);
  rlx_st_close(&f);
  unlink(path);
  rlx_st_close(NULL);
}

/* An empty tensor may sit at the boundary of another one, whichever order
 * the header lists them in. */
TEST(st_empty_tensor_at_a_boundary) {
  CHECK_OK(st_try("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                  "\"e\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[0,0]}}", 8));
  CHECK_OK(st_try("{\"e\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[0,0]},"
                  "\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", 8));
  CHECK_OK(st_try("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                  "\"e\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[8,8]}}", 8));
}

TEST(st_open_errors) {
  rlx_st_file f;
  CHECK_ERR(rlx_st_open("/nonexistent/w.safetensors", &f), RLX_ERR_IO, "/nonexistent/w.safetensors");
  CHECK_ERR(rlx_st_open("/tmp", &f), RLX_ERR_IO, "/tmp is a directory");
}

/* ---- safetensors: the length prefix and the header ---- */

TEST(st_truncated) {
  unsigned char img[8] = {2, 0, 0, 0, 0, 0, 0, 0};
  rlx_st_file f;
  for (size_t n = 1; n < 8; n++) {
    unsigned char *b = malloc(n);
    memcpy(b, img, n);
    CHECK_ERR(rlx_st_parse(b, n, "t.st", &f), RLX_ERR_FORMAT, "t.st: truncated");
    free(b);
  }
}

TEST(st_header_length) {
  unsigned char *b = malloc(12);
  rlx_st_file f;
  memcpy(b, "\x64\0\0\0\0\0\0\0{}  ", 12); /* claims 100 header bytes, has 4 */
  CHECK_ERR(rlx_st_parse(b, 12, "t.st", &f), RLX_ERR_FORMAT, "header length 100 (at offset 0) exceeds");
  memset(b, 0xff, 8); /* 2^64 - 1: must not wrap around */
  CHECK_ERR(rlx_st_parse(b, 12, "t.st", &f), RLX_ERR_FORMAT, "exceeds the file (12 bytes)");
  memcpy(b, "\x05\0\0\0\0\0\0\0", 8); /* one byte more than there is */
  CHECK_ERR(rlx_st_parse(b, 12, "t.st", &f), RLX_ERR_FORMAT, "header length 5");
  free(b);
}

static long json_allocs_left, json_allocs_left_reset;
static void *failing_malloc(size_t n) { return json_allocs_left-- > 0 ? malloc(n) : NULL; }

/* JSON is checked strictly (RFC 8259) before cJSON sees it: cJSON's own
 * leniencies (leading zeros, '+', NUL bytes inside strings, which would cut
 * names short, control bytes as whitespace) are refused; and a well-formed
 * text that cJSON fails on is reported as out of memory, not as a syntax
 * error (issue 8). */
TEST(json_strict_and_oom) {
  static const struct {
    const char *text;
    size_t len;
    const char *want;
  } bad[] = {
      {"[01]", 4, "offset 2): ',' or ']' expected"},
      {"[+1]", 4, "offset 1)"},
      {"[1.]", 4, "offset 3): a malformed number"},
      {"[.5]", 4, "offset 1)"},
      {"[\"a\0b\"]", 7, "offset 3): a control character inside a string"},
      {"[\x01 1]", 4, "offset 1)"},
      {"[\"\\x\"]", 6, "an unknown escape"},
      {"[\"\\ud800\"]", 10, "without its low half"},
      {"[\"\\udc00\"]", 10, "lone low surrogate"},
      {"[\"\\u0000\"]", 10, "\\u0000"},
      {"{\"a\" 1}", 7, "':' expected"},
      {"[1 2]", 5, "',' or ']' expected"},
      {"[tru]", 5, "offset 1)"},
      {"[1,]", 4, "offset 3)"},
      {"{\"a\":1,}", 8, "an object key must be a string"},
      {"[", 1, "the text ends inside a value"},
      {"[1", 2, "ends inside a list or object"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    cJSON *j = NULL;
    CHECK_ERR(rlx_json_parse(bad[i].text, bad[i].len, "t.json", &j), RLX_ERR_FORMAT, bad[i].want);
    CHECK(j == NULL);
  }
  char deep[2100];
  for (int i = 0; i < 1050; i++) deep[i] = '[', deep[2099 - i] = ']';
  cJSON *j = NULL;
  CHECK_ERR(rlx_json_parse(deep, 2100, "t.json", &j), RLX_ERR_FORMAT, "nested 1000 levels deep");
  const char *ok = "{\"a\": [1, -0.5e+3, true, false, null, \"\\u00e9\\ud83d\\ude00\\n\"], \"b\": {}}";
  CHECK_OK(rlx_json_parse(ok, strlen(ok), "t.json", &j));
  cJSON_Delete(j);
  /* cJSON running out of memory on a well-formed text (its hooks made to
   * fail after k allocations, for every k until it succeeds) */
  for (json_allocs_left = 0;; json_allocs_left_reset++) {
    json_allocs_left = json_allocs_left_reset;
    cJSON_Hooks h = {failing_malloc, free};
    cJSON_InitHooks(&h);
    rlx_status st = rlx_json_parse(ok, strlen(ok), "t.json", &j);
    cJSON_InitHooks(NULL);
    if (!st) {
      cJSON_Delete(j);
      break;
    }
    CHECK_ERR(st, RLX_ERR_OUT_OF_MEMORY, "t.json: out of memory parsing JSON");
  }
  CHECK(json_allocs_left_reset > 5);
}

TEST(st_header_not_json) {
  /* the bad object key is at offset 1 (cJSON placed it one byte late) */
  CHECK_ERR(st_try("{bad", 0), RLX_ERR_FORMAT,
            "malformed JSON at line 1, column 2 (byte offset 1): an object key must be a string");
  CHECK_ERR(st_try("{bad", 0), RLX_ERR_FORMAT, "safetensors header (bytes 8..12)");
  CHECK_ERR(st_try("{\"w\": [1,,2]}", 0), RLX_ERR_FORMAT, "column 10 (byte offset 9)");
  CHECK_ERR(st_try("{\"w\":{\"dtype\":\"F32\"\n,,}}", 0), RLX_ERR_FORMAT, "malformed JSON at line 2");
  CHECK_ERR(st_try("", 0), RLX_ERR_FORMAT, "malformed JSON"); /* zero-length header */
  CHECK_ERR(st_try("{}{}", 0), RLX_ERR_FORMAT, "(byte offset 2): unexpected data after the JSON value");
  CHECK_ERR(st_try("{}\n\t\r x", 0), RLX_ERR_FORMAT, "line 2, column 4 (byte offset 6)");
  CHECK_OK(st_try("{}\n\t\r ", 0)); /* whitespace padding is fine */
  CHECK_ERR(st_try("[1,2]", 0), RLX_ERR_FORMAT, "t.st: the header must be a JSON object");
  CHECK_ERR(st_try("\"w\"", 0), RLX_ERR_FORMAT, "must be a JSON object");
  CHECK_ERR(st_try("{\"__metadata__\":5}", 0), RLX_ERR_FORMAT, "__metadata__ must be an object");
  CHECK_ERR(st_try("{\"w\":5}", 0), RLX_ERR_FORMAT, "tensor 'w': entry is not an object");
}

/* ---- safetensors: tensor entries ---- */

TEST(st_bad_dtype) {
  CHECK_ERR(st_try("{\"w\":{\"dtype\":\"F8_E4M3\",\"shape\":[1],\"data_offsets\":[0,1]}}", 1),
            RLX_ERR_UNSUPPORTED, "tensor 'w': unknown or unsupported dtype 'F8_E4M3'");
  CHECK_ERR(st_try("{\"w\":{\"dtype\":\"f32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4),
            RLX_ERR_UNSUPPORTED, "dtype 'f32'"); /* safetensors tokens are upper case */
  CHECK_ERR(st_try("{\"w\":{\"dtype\":7,\"shape\":[1],\"data_offsets\":[0,4]}}", 4), RLX_ERR_FORMAT,
            "tensor 'w': field 'dtype' must be a string");
  CHECK_ERR(st_try("{\"w\":{\"shape\":[1],\"data_offsets\":[0,4]}}", 4), RLX_ERR_FORMAT,
            "tensor 'w': field 'dtype'");
}

TEST(st_bad_shape) {
  CHECK_ERR(st_try("{\"w\":{\"dtype\":\"F32\",\"shape\":[-1],\"data_offsets\":[0,4]}}", 4),
            RLX_ERR_FORMAT, "tensor 'w': shape[0] must be a non-negative integer");
  CHECK_ERR(st_try("{\"w\":{\"dtype\":\"F32\",\"shape\":[2,1.5],\"data_offsets\":[0,4]}}", 4),
            RLX_ERR_FORMAT, "tensor 'w': shape[1] must be a non-negative integer");
  CHECK_ERR(st_try("{\"w\":{\"dtype\":\"F32\",\"shape\":[\"2\"],\"data_offsets\":[0,8]}}", 8),
            RLX_ERR_FORMAT, "shape[0]");
  CHECK_ERR(st_try("{\"w\":{\"dtype\":\"F32\",\"shape\":4,\"data_offsets\":[0,16]}}", 16),
            RLX_ERR_FORMAT, "tensor 'w': shape must be a list of dims");
  CHECK_ERR(st_try("{\"w\":{\"dtype\":\"F32\",\"shape\":[1,1,1,1,1,1,1,1,1],\"data_offsets\":[0,4]}}", 4),
            RLX_ERR_UNSUPPORTED, "tensor 'w': shape has rank 9");
  /* 2^62 x 2^62 elements: the product must not wrap to a small number */
  CHECK_ERR(st_try("{\"w\":{\"dtype\":\"F32\",\"shape\":[4611686018427387904,4611686018427387904,0],"
                   "\"data_offsets\":[0,0]}}", 0),
            RLX_ERR_FORMAT, "tensor 'w': shape: element count overflows");
}

TEST(st_bad_offsets) {
  CHECK_ERR(st_try("{\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", 4),
            RLX_ERR_FORMAT, "tensor 'w': data_offsets [0, 8] out of range (data section is 4 bytes");
  CHECK_ERR(st_try("{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[-4,0]}}", 4),
            RLX_ERR_FORMAT, "tensor 'w': data_offsets [-4, 0] out of range");
  CHECK_ERR(st_try("{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[8,4]}}", 8),
            RLX_ERR_FORMAT, "tensor 'w': data_offsets [8, 4]"); /* end < begin */
  CHECK_ERR(st_try("{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,1e30]}}", 4),
            RLX_ERR_FORMAT, "tensor 'w': data_offsets"); /* clamps, then out of range */
  CHECK_ERR(st_try("{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0]}}", 4),
            RLX_ERR_FORMAT, "tensor 'w': 'data_offsets' must be [begin, end] integers");
  CHECK_ERR(st_try("{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4.5]}}", 8),
            RLX_ERR_FORMAT, "tensor 'w'");
  CHECK_ERR(st_try("{\"w\":{\"dtype\":\"F32\",\"shape\":[1]}}", 4), RLX_ERR_FORMAT,
            "tensor 'w': 'data_offsets' must be");
}

TEST(st_size_mismatch) {
  CHECK_ERR(st_try("{\"w\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,8]}}", 8),
            RLX_ERR_FORMAT, "tensor 'w': F32 shape needs 12 bytes but data_offsets span 8");
  CHECK_ERR(st_try("{\"w\":{\"dtype\":\"I64\",\"shape\":[2,0],\"data_offsets\":[0,8]}}", 8),
            RLX_ERR_FORMAT, "needs 0 bytes but data_offsets span 8");
  CHECK_ERR(st_try("{\"w\":{\"dtype\":\"F64\",\"shape\":[65536,65536,65536],\"data_offsets\":[0,8]}}", 8),
            RLX_ERR_FORMAT, "tensor 'w'");
}

TEST(st_overlap_and_duplicates) {
  CHECK_ERR(st_try("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                   "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}", 12),
            RLX_ERR_FORMAT, "tensors 'a' and 'b' overlap");
  CHECK_ERR(st_try("{\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]},"
                   "\"a\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]}}", 16),
            RLX_ERR_FORMAT, "tensors 'a' and 'b' overlap"); /* b inside a */
  CHECK_ERR(st_try("{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
                   "\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", 8),
            RLX_ERR_FORMAT, "tensor 'w' appears twice");
  CHECK_OK(st_try("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]},"
                  "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 8)); /* any order */
}

/* Every truncation of a valid image fails cleanly (or, for the 0-byte
 * prefix, means "no tensors"). */
TEST(st_every_truncation) {
  float w[6] = {1, 2, 3, 4, 5, 6};
  st_spec specs[] = {{"a", "F32", 2, {2, 2}, w}, {"b", "F32", 1, {2}, w + 4}};
  size_t size;
  unsigned char *img = st_build(specs, 2, &size);
  rlx_st_file f;
  for (size_t n = 0; n < size; n++) {
    unsigned char *b = malloc(n ? n : 1);
    memcpy(b, img, n);
    rlx_status st = rlx_st_parse(b, n, "t.st", &f);
    CHECK(n == 0 ? st == RLX_OK : st == RLX_ERR_FORMAT);
    if (!st) rlx_st_close(&f);
    free(b);
  }
  CHECK_OK(rlx_st_parse(img, size, "t.st", &f));
  CHECK(f.n_tensors == 2);
  rlx_st_close(&f);
  free(img);
}

/* ---- torch-ir.json: helpers ---- */

/* A document whose parts are written with single quotes (see jq). */
static char *ir_doc(const char *inputs, const char *nodes, const char *outputs) {
  char buf[16384];
  snprintf(buf, sizeof buf,
           "{'format': 'rlx-torch-ir', 'version': 1, 'model_name': 'm', 'producer': 'test',"
           " 'decomposition': 'aten', 'inputs': [%s], 'weights': [], 'nodes': [%s], 'outputs': [%s]}",
           inputs, nodes, outputs);
  return jq(buf);
}

/* Parses text from an exactly sized buffer (no NUL terminator). */
static rlx_status ir_parse(const char *text, rlx_torch_ir *ir) {
  size_t len;
  char *b = exact_copy(text, &len);
  rlx_status st = rlx_torch_ir_parse(b, len, "m.json", ir);
  free(b);
  return st;
}

/* Parses a document with one input x f32[2] and one node whose JSON is given;
 * returns the status (the IR is freed). */
static rlx_status ir_try_node(const char *node) {
  char *d = ir_doc("{'id': 'x', 'shape': [2], 'dtype': 'f32'}", node, "");
  rlx_torch_ir ir;
  rlx_status st = ir_parse(d, &ir);
  if (!st) rlx_torch_ir_free(&ir);
  free(d);
  return st;
}

static rlx_status ir_try(const char *single_quoted) {
  char *d = jq(single_quoted);
  rlx_torch_ir ir;
  rlx_status st = ir_parse(d, &ir);
  if (!st) rlx_torch_ir_free(&ir);
  free(d);
  return st;
}

#define RELU_NODE "{'id': 'r', 'op': 'aten.relu.default', 'args': [{'ref': 'x'}], 'kwargs': {}, "

/* ---- torch-ir.json: valid documents ---- */

TEST(ir_minimal) {
  char *d = ir_doc("{'id': 'x', 'shape': [2, 3], 'dtype': 'f32', 'dynamic': [0, -1]}",
                   RELU_NODE "'out': {'shape': [2, 3], 'dtype': 'f32'}}",
                   "{'ref': 'r', 'shape': [2, 3], 'dtype': 'f32'}, {'const': {'float': 0.5}}");
  rlx_torch_ir ir;
  CHECK_OK(ir_parse(d, &ir));
  CHECK(!strcmp(ir.model_name, "m") && !strcmp(ir.producer, "test") && !strcmp(ir.decomposition, "aten"));
  CHECK(ir.n_inputs == 1 && !strcmp(ir.inputs[0].id, "x") && ir.inputs[0].dtype == RLX_DTYPE_F32);
  CHECK(ir.inputs[0].shape.rank == 2 && ir.inputs[0].shape.dims[1] == 3);
  CHECK(ir.inputs[0].has_dynamic && ir.inputs[0].dynamic[0] == 0 && ir.inputs[0].dynamic[1] == -1);
  CHECK(ir.n_weights == 0 && ir.n_nodes == 1 && ir.n_outputs == 2);
  const rlx_aten_node *n = &ir.nodes[0];
  CHECK(!strcmp(n->id, "r") && !strcmp(n->op, "aten.relu.default") && n->n_args == 1);
  CHECK(n->args[0].kind == RLX_ARG_REF && !strcmp(n->args[0].u.s, "x"));
  CHECK(n->out_kind == RLX_OUT_TENSOR && n->n_outs == 1 && n->outs[0].present);
  CHECK(!ir.outputs[0].is_const && !strcmp(ir.outputs[0].ref, "r") && ir.outputs[0].type.present);
  CHECK(ir.outputs[1].is_const && ir.outputs[1].value.kind == RLX_ARG_FLOAT &&
        ir.outputs[1].value.u.f == 0.5);
  rlx_torch_ir_free(&ir);
  free(d);
}

TEST(ir_weights) {
  rlx_torch_ir ir;
  char *d = jq("{'format': 'rlx-torch-ir', 'version': 1, 'inputs': [], 'nodes': [], 'outputs': [],"
               " 'weights': [{'id': 'p_w', 'key': 'fc.weight', 'shape': [4, 2], 'dtype': 'bf16',"
               " 'kind': 'buffer'}, {'id': 'c', 'key': 'c0', 'shape': [], 'dtype': 'i64'}]}");
  CHECK_OK(ir_parse(d, &ir));
  CHECK(ir.n_weights == 2 && !strcmp(ir.weights[0].key, "fc.weight") && !strcmp(ir.weights[0].id, "p_w"));
  CHECK(ir.weights[0].dtype == RLX_DTYPE_BF16 && !strcmp(ir.weights[0].kind, "buffer"));
  CHECK(!strcmp(ir.weights[1].kind, "param") && ir.weights[1].shape.rank == 0); /* defaults */
  CHECK(!strcmp(ir.model_name, "model")); /* absent model_name */
  rlx_torch_ir_free(&ir);
  free(d);
  CHECK_ERR(ir_try("{'format': 'rlx-torch-ir', 'version': 1, 'inputs': [], 'nodes': [], 'outputs': [],"
                   " 'weights': [{'id': 'p_w', 'key': 'fc.weight', 'shape': [4, -2], 'dtype': 'f32'}]}"),
            RLX_ERR_FORMAT, "weights[0] ('fc.weight').shape[1] must be a non-negative integer");
  CHECK_ERR(ir_try("{'format': 'rlx-torch-ir', 'version': 1, 'inputs': [], 'nodes': [], 'outputs': [],"
                   " 'weights': [{'id': 'p_w', 'shape': [4], 'dtype': 'f32'}]}"),
            RLX_ERR_FORMAT, "weights[0]: field 'key' must be a string");
}

TEST(ir_special_floats_and_big_ints) {
  rlx_torch_ir ir;
  char *d = ir_doc("{'id': 'x', 'shape': [2], 'dtype': 'f32'}",
                   "{'id': 'n', 'op': 'aten.foo.default', 'args': [{'float': 'inf'}, {'float': '-inf'},"
                   " {'float': 'nan'}, {'float': -2.5}, {'int': 9223372036854775807},"
                   " {'int': 1e30}, {'int': -1e30}, {'int': -9223372036854775808}, {'int': 42}],"
                   " 'kwargs': {}, 'out': null}", "");
  CHECK_OK(ir_parse(d, &ir));
  const rlx_arg *a = ir.nodes[0].args;
  CHECK(ir.nodes[0].n_args == 9 && ir.nodes[0].out_kind == RLX_OUT_NONE);
  CHECK(a[0].kind == RLX_ARG_FLOAT && isinf(a[0].u.f) && a[0].u.f > 0);
  CHECK(isinf(a[1].u.f) && a[1].u.f < 0);
  CHECK(isnan(a[2].u.f) && a[3].u.f == -2.5);
  CHECK(a[4].kind == RLX_ARG_INT && a[4].u.i == INT64_MAX); /* the slice-end sentinel */
  CHECK(a[5].u.i == INT64_MAX && a[6].u.i == INT64_MIN && a[7].u.i == INT64_MIN);
  CHECK(a[8].u.i == 42);
  rlx_torch_ir_free(&ir);
  free(d);
  CHECK_ERR(ir_try_node("{'id': 'n', 'op': 'aten.foo.default', 'args': [{'float': 'infinity'}], 'out': null}"),
            RLX_ERR_FORMAT, "nodes[0] 'n': a float must be a number or \"inf\"");
  CHECK_ERR(ir_try_node("{'id': 'n', 'op': 'aten.foo.default', 'args': [{'int': 1.5}], 'out': null}"),
            RLX_ERR_FORMAT, "nodes[0] 'n' must be an integer");
  CHECK_ERR(ir_try_node("{'id': 'n', 'op': 'aten.foo.default', 'args': [{'int': '3'}], 'out': null}"),
            RLX_ERR_FORMAT, "must be an integer");
  /* cJSON rounds 2^53 + 1 to 2^53: a literal a double cannot hold is refused, not read wrong;
   * exact ones (2^62, 2^62 + 2048) and those rounding to the int64 extremes are read */
  CHECK_ERR(ir_try_node("{'id': 'n', 'op': 'aten.foo.default', 'args': [{'int': 9007199254740993}], 'out': null}"),
            RLX_ERR_FORMAT, "an integer of 2^53 or more that a double cannot hold exactly");
  CHECK_ERR(ir_try_node("{'id': 'n', 'op': 'aten.foo.default', 'args': [{'int': -4611686018427387905}], 'out': null}"),
            RLX_ERR_FORMAT, "cannot hold exactly");
  CHECK_OK(ir_try_node("{'id': 'n', 'op': 'aten.foo.default', 'args': [{'int': 4611686018427389952}], 'out': null}"));
  CHECK_OK(ir_try_node("{'id': 'n', 'op': 'aten.foo.default', 'args': [{'int': 9223372036854775806}], 'out': null}"));
  CHECK_OK(ir_try_node("{'id': 'n', 'op': 'aten.foo.default', 'args': [{'int': 9007199254740991}], 'out': null}"));
}

TEST(ir_arguments) {
  rlx_torch_ir ir;
  char *d = ir_doc("{'id': 'x', 'shape': [2], 'dtype': 'f32'}",
                   "{'id': 'n', 'op': 'aten.foo.default', 'args': [{'list': [{'list': [{'int': 1},"
                   " {'int': 2}]}, {'list': []}, {'none': true}, {'ref': 'x'}]}, {'bool': false},"
                   " {'str': 'floor'}, {'dtype': 'bf16'}, {'sym': 's0'}, {'none': true}],"
                   " 'kwargs': {'dim': {'int': -1}, 'keepdim': {'bool': true}}, 'out': null}", "");
  CHECK_OK(ir_parse(d, &ir));
  const rlx_aten_node *n = &ir.nodes[0];
  const rlx_arg *l = &n->args[0];
  CHECK(l->kind == RLX_ARG_LIST && l->u.list.n == 4);
  CHECK(l->u.list.items[0].kind == RLX_ARG_LIST && l->u.list.items[0].u.list.n == 2 &&
        l->u.list.items[0].u.list.items[1].u.i == 2);
  CHECK(l->u.list.items[1].kind == RLX_ARG_LIST && l->u.list.items[1].u.list.n == 0);
  CHECK(l->u.list.items[2].kind == RLX_ARG_NONE && l->u.list.items[3].kind == RLX_ARG_REF);
  CHECK(n->args[1].kind == RLX_ARG_BOOL && !n->args[1].u.b);
  CHECK(n->args[2].kind == RLX_ARG_STR && !strcmp(n->args[2].u.s, "floor"));
  CHECK(n->args[3].kind == RLX_ARG_DTYPE && n->args[3].u.dt == RLX_DTYPE_BF16);
  CHECK(n->args[4].kind == RLX_ARG_SYM && !strcmp(n->args[4].u.s, "s0"));
  CHECK(n->n_kwargs == 2 && !strcmp(n->kw_names[0], "dim"));
  CHECK(rlx_aten_arg(n, 9, "keepdim") && rlx_aten_arg(n, 9, "keepdim")->u.b);
  CHECK(rlx_aten_arg(n, 5, "dim")->kind == RLX_ARG_NONE); /* positional wins */
  CHECK(rlx_aten_arg(n, 7, "missing") == NULL && rlx_aten_arg(n, -1, "dim")->u.i == -1);
  rlx_torch_ir_free(&ir);
  free(d);
}

TEST(ir_bad_arguments) {
  CHECK_ERR(ir_try_node("{'id': 'n', 'op': 'aten.foo.default', 'args': [{'int': 1, 'float': 2.0}], 'out': null}"),
            RLX_ERR_FORMAT, "nodes[0] 'n': an argument must be an object with one tag key");
  CHECK_ERR(ir_try_node("{'id': 'n', 'op': 'aten.foo.default', 'args': [{}], 'out': null}"),
            RLX_ERR_FORMAT, "one tag key");
  CHECK_ERR(ir_try_node("{'id': 'n', 'op': 'aten.foo.default', 'args': [3], 'out': null}"),
            RLX_ERR_FORMAT, "one tag key");
  CHECK_ERR(ir_try_node("{'id': 'n', 'op': 'aten.foo.default', 'args': [{'tuple': []}], 'out': null}"),
            RLX_ERR_FORMAT, "nodes[0] 'n': unknown argument tag 'tuple'");
  CHECK_ERR(ir_try_node("{'id': 'n', 'op': 'aten.foo.default', 'args': [{'ref': 3}], 'out': null}"),
            RLX_ERR_FORMAT, "'ref' must hold a string");
  CHECK_ERR(ir_try_node("{'id': 'n', 'op': 'aten.foo.default', 'args': [{'bool': 1}], 'out': null}"),
            RLX_ERR_FORMAT, "'bool' must hold true/false");
  CHECK_ERR(ir_try_node("{'id': 'n', 'op': 'aten.foo.default', 'args': [{'list': {}}], 'out': null}"),
            RLX_ERR_FORMAT, "'list' must hold an array");
  CHECK_ERR(ir_try_node("{'id': 'n', 'op': 'aten.foo.default', 'args': [{'dtype': 'c32'}], 'out': null}"),
            RLX_ERR_UNSUPPORTED, "nodes[0] 'n': unknown dtype 'c32'");
  CHECK_ERR(ir_try_node("{'id': 'n', 'op': 'aten.foo.default', 'args': {}, 'out': null}"),
            RLX_ERR_FORMAT, "nodes[0] 'n': 'args' must be a list");
  CHECK_ERR(ir_try_node("{'id': 'n', 'op': 'aten.foo.default', 'args': [], 'kwargs': [], 'out': null}"),
            RLX_ERR_FORMAT, "'kwargs' must be an object");
  CHECK_ERR(ir_try_node("{'id': 'n', 'op': 'aten.foo.default', 'args': [], 'kwargs': {'k': 5}}"),
            RLX_ERR_FORMAT, "one tag key");
  CHECK_ERR(ir_try_node("{'op': 'aten.foo.default', 'args': []}"), RLX_ERR_FORMAT,
            "nodes[0]: field 'id' must be a string");
  CHECK_ERR(ir_try_node("{'id': 'n', 'args': []}"), RLX_ERR_FORMAT, "nodes[0] 'n': field 'op'");
  CHECK_ERR(ir_try_node("7"), RLX_ERR_FORMAT, "nodes[0] must be an object");
  /* nesting is bounded: 40 nested lists */
  char node[1024] = "{'id': 'n', 'op': 'aten.foo.default', 'args': [";
  for (int i = 0; i < 40; i++) strcat(node, "{'list': [");
  for (int i = 0; i < 40; i++) strcat(node, "]}");
  strcat(node, "], 'out': null}");
  CHECK_ERR(ir_try_node(node), RLX_ERR_FORMAT, "nodes[0] 'n': arguments nest too deeply");
}

TEST(ir_outs) {
  rlx_torch_ir ir;
  char *d = ir_doc("{'id': 'x', 'shape': [2], 'dtype': 'f32'}",
                   "{'id': 'm', 'op': 'aten.max.dim', 'args': [], 'out': [{'shape': [2], 'dtype': 'f32'},"
                   " null, {'shape': [], 'dtype': 'i64'}]},"
                   " {'id': 's', 'op': 'sym_size', 'args': [], 'out': {'scalar': {'sym': 's0'}}},"
                   " {'id': 'k', 'op': 'aten.item.default', 'args': [], 'out': {'scalar': {'int': 3}}},"
                   " {'id': 'e', 'op': 'aten.foo.default', 'args': [], 'out': []},"
                   " {'id': 'z', 'op': 'aten._assert_async.msg', 'args': []}", "");
  CHECK_OK(ir_parse(d, &ir));
  const rlx_aten_node *n = ir.nodes;
  CHECK(n[0].out_kind == RLX_OUT_LIST && n[0].n_outs == 3);
  CHECK(n[0].outs[0].present && !n[0].outs[1].present && n[0].outs[2].present);
  CHECK(n[0].outs[2].dtype == RLX_DTYPE_I64 && n[0].outs[2].shape.rank == 0);
  CHECK(n[1].out_kind == RLX_OUT_SCALAR && n[1].scalar.kind == RLX_ARG_SYM);
  CHECK(n[2].out_kind == RLX_OUT_SCALAR && n[2].scalar.kind == RLX_ARG_INT && n[2].scalar.u.i == 3);
  CHECK(n[3].out_kind == RLX_OUT_LIST && n[3].n_outs == 0);
  CHECK(n[4].out_kind == RLX_OUT_NONE); /* absent out */
  rlx_torch_ir_free(&ir);
  free(d);
  CHECK_ERR(ir_try_node(RELU_NODE "'out': 5}"), RLX_ERR_FORMAT, "nodes[0] 'r': a tensor type must be an object");
  CHECK_ERR(ir_try_node(RELU_NODE "'out': [{'shape': [2], 'dtype': 'f32'}, 3]}"), RLX_ERR_FORMAT,
            "a tensor type must be an object");
  CHECK_ERR(ir_try_node(RELU_NODE "'out': {'scalar': 3}}"), RLX_ERR_FORMAT, "one tag key");
  CHECK_ERR(ir_try_node(RELU_NODE "'out': {'shape': [2], 'dtype': 'q8'}}"), RLX_ERR_UNSUPPORTED,
            "nodes[0] 'r': unknown dtype 'q8'");
  CHECK_ERR(ir_try_node(RELU_NODE "'out': {'shape': [2, -3], 'dtype': 'f32'}}"), RLX_ERR_FORMAT,
            "nodes[0] 'r'.shape[1] must be a non-negative integer");
  CHECK_ERR(ir_try_node(RELU_NODE "'out': {'dtype': 'f32'}}"), RLX_ERR_FORMAT,
            "nodes[0] 'r'.shape must be a list of dims");
}

/* ---- torch-ir.json: malformed documents ---- */

TEST(ir_malformed_json) {
  rlx_torch_ir ir;
  CHECK_ERR(ir_parse("{\n  \"format\": \"rlx-torch-ir\",\n  \"version\": ,\n}", &ir), RLX_ERR_FORMAT,
            "m.json: malformed JSON at line 3, column 14");
  CHECK_ERR(ir_parse("", &ir), RLX_ERR_FORMAT, "malformed JSON at line 1, column 1 (byte offset 0)");
  CHECK_ERR(ir_parse("{\"a\": [1, 2}", &ir), RLX_ERR_FORMAT, "byte offset 11");
  CHECK_ERR(ir_parse("{} x", &ir), RLX_ERR_FORMAT, "malformed JSON at line 1, column 4");
  CHECK_ERR(ir_parse("{}\n{}", &ir), RLX_ERR_FORMAT, "line 2, column 1 (byte offset 3): unexpected data");
  CHECK_ERR(ir_parse("[]", &ir), RLX_ERR_FORMAT, "m.json: the top level must be an object");
  CHECK_ERR(rlx_torch_ir_load("/nonexistent/torch-ir.json", &ir), RLX_ERR_IO,
            "/nonexistent/torch-ir.json");
  CHECK_ERR(rlx_torch_ir_load("/tmp", &ir), RLX_ERR_IO, "/tmp"); /* a directory */
}

TEST(ir_header_fields) {
  CHECK_ERR(ir_try("{'format': 'onnx', 'version': 1, 'inputs': [], 'weights': [], 'nodes': [], 'outputs': []}"),
            RLX_ERR_FORMAT, "m.json: 'format' must be \"rlx-torch-ir\"");
  CHECK_ERR(ir_try("{'version': 1, 'inputs': [], 'weights': [], 'nodes': [], 'outputs': []}"),
            RLX_ERR_FORMAT, "'format'");
  CHECK_ERR(ir_try("{'format': 'rlx-torch-ir', 'version': 2, 'inputs': [], 'weights': [], 'nodes': [], 'outputs': []}"),
            RLX_ERR_UNSUPPORTED, "m.json: unsupported 'version'");
  CHECK_ERR(ir_try("{'format': 'rlx-torch-ir', 'version': '1', 'inputs': [], 'weights': [], 'nodes': [], 'outputs': []}"),
            RLX_ERR_UNSUPPORTED, "'version'");
  CHECK_ERR(ir_try("{'format': 'rlx-torch-ir', 'inputs': [], 'weights': [], 'nodes': [], 'outputs': []}"),
            RLX_ERR_UNSUPPORTED, "'version'");
  CHECK_ERR(ir_try("{'format': 'rlx-torch-ir', 'version': 1, 'inputs': [], 'weights': [], 'outputs': []}"),
            RLX_ERR_FORMAT, "m.json: field 'nodes' must be a list");
  CHECK_ERR(ir_try("{'format': 'rlx-torch-ir', 'version': 1, 'inputs': [], 'weights': [], 'nodes': {}, 'outputs': []}"),
            RLX_ERR_FORMAT, "field 'nodes' must be a list");
  CHECK_ERR(ir_try("{'format': 'rlx-torch-ir', 'version': 1, 'weights': [], 'nodes': [], 'outputs': []}"),
            RLX_ERR_FORMAT, "field 'inputs' must be a list");
  CHECK_ERR(ir_try("{'format': 'rlx-torch-ir', 'version': 1, 'inputs': [], 'weights': [], 'nodes': []}"),
            RLX_ERR_FORMAT, "field 'outputs' must be a list");
}

TEST(ir_bad_inputs) {
  char *d;
  rlx_torch_ir ir;
#define INPUT_ERR(json, status, text)        \
  d = ir_doc(json, "", "");                  \
  CHECK_ERR(ir_parse(d, &ir), status, text); \
  free(d)
  INPUT_ERR("{'id': 'x', 'shape': [2], 'dtype': 'c32'}", RLX_ERR_UNSUPPORTED, "inputs[0]: unknown dtype 'c32'");
  INPUT_ERR("{'id': 'x', 'shape': [2], 'dtype': 'c64'}", RLX_ERR_UNSUPPORTED, "inputs[0]: the input is complex (c64)");
  INPUT_ERR("{'id': 'x', 'shape': [2], 'dtype': 32}", RLX_ERR_FORMAT, "inputs[0]: field 'dtype' must be a string");
  INPUT_ERR("{'id': 'x', 'shape': [2, -1], 'dtype': 'f32'}", RLX_ERR_FORMAT,
            "inputs[0].shape[1] must be a non-negative integer");
  INPUT_ERR("{'id': 'x', 'shape': [2.5], 'dtype': 'f32'}", RLX_ERR_FORMAT,
            "inputs[0].shape[0] must be a non-negative integer");
  INPUT_ERR("{'id': 'x', 'shape': [true], 'dtype': 'f32'}", RLX_ERR_FORMAT, "inputs[0].shape[0]");
  INPUT_ERR("{'id': 'x', 'shape': [1, 1, 1, 1, 1, 1, 1, 1, 1], 'dtype': 'f32'}", RLX_ERR_UNSUPPORTED,
            "inputs[0].shape has rank 9; rlx handles rank <= 8");
  INPUT_ERR("{'id': 'x', 'shape': [16777216, 16777216, 16777216], 'dtype': 'f32'}", RLX_ERR_FORMAT,
            "inputs[0].shape: element count overflows");
  INPUT_ERR("{'id': 'x', 'shape': [2, 2], 'dtype': 'f32', 'dynamic': [0]}", RLX_ERR_FORMAT,
            "inputs[0]: 'dynamic' must list one entry per axis");
  INPUT_ERR("{'id': 'x', 'shape': [2], 'dtype': 'f32', 'dynamic': [-2]}", RLX_ERR_FORMAT,
            "inputs[0]: dynamic[0] must be -1 or a symbol id");
  INPUT_ERR("{'shape': [2], 'dtype': 'f32'}", RLX_ERR_FORMAT, "inputs[0]: field 'id' must be a string");
  INPUT_ERR("{'id': 'x', 'shape': [2], 'dtype': 'f32'}, 5", RLX_ERR_FORMAT, "inputs[1]: field 'id'");
#undef INPUT_ERR
  CHECK_OK(ir_try("{'format': 'rlx-torch-ir', 'version': 1, 'weights': [], 'nodes': [], 'outputs': [],"
                  " 'inputs': [{'id': 'x', 'shape': [1, 1, 1, 1, 1, 1, 1, 1], 'dtype': 'bool'}]}"));
}

TEST(ir_bad_outputs) {
  char *d;
  rlx_torch_ir ir;
  d = ir_doc("", "", "{'ref': 'r', 'shape': [2], 'dtype': 'x32'}");
  CHECK_ERR(ir_parse(d, &ir), RLX_ERR_UNSUPPORTED, "outputs[0]: unknown dtype 'x32'");
  free(d);
  d = ir_doc("", "", "{'shape': [2], 'dtype': 'f32'}");
  CHECK_ERR(ir_parse(d, &ir), RLX_ERR_FORMAT, "outputs[0]: field 'ref' must be a string");
  free(d);
  d = ir_doc("", "", "{'const': {'weird': 1}}");
  CHECK_ERR(ir_parse(d, &ir), RLX_ERR_FORMAT, "outputs[0]: unknown argument tag 'weird'");
  free(d);
  d = ir_doc("", "", "[]");
  CHECK_ERR(ir_parse(d, &ir), RLX_ERR_FORMAT, "outputs[0] must be an object");
  free(d);
}

/* Every prefix of a valid document is rejected cleanly. */
TEST(ir_every_truncation) {
  char *d = ir_doc("{'id': 'x', 'shape': [2], 'dtype': 'f32'}",
                   RELU_NODE "'out': {'shape': [2], 'dtype': 'f32'}}",
                   "{'ref': 'r', 'shape': [2], 'dtype': 'f32'}");
  size_t len = strlen(d);
  rlx_torch_ir ir;
  for (size_t n = 0; n < len; n++) {
    char *b = malloc(n ? n : 1);
    memcpy(b, d, n);
    rlx_status st = rlx_torch_ir_parse(b, n, "m.json", &ir);
    CHECK(st == RLX_ERR_FORMAT);
    if (!st) rlx_torch_ir_free(&ir);
    free(b);
  }
  free(d);
}

TEST_MAIN(json_strict_and_oom, st_valid, st_empty_and_tiny, st_empty_tensor_at_a_boundary, st_open_errors, st_truncated,
          st_header_length, st_header_not_json, st_bad_dtype, st_bad_shape, st_bad_offsets,
          st_size_mismatch, st_overlap_and_duplicates, st_every_truncation, ir_minimal, ir_weights,
          ir_special_floats_and_big_ints, ir_arguments, ir_bad_arguments, ir_outs,
          ir_malformed_json, ir_header_fields, ir_bad_inputs, ir_bad_outputs, ir_every_truncation)
