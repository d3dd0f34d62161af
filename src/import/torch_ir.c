/*
 * torch_ir.c — parses and validates torch-ir.json into rlx_torch_ir (see
 * torch_ir.h for the format). The cJSON tree is converted into pool-owned
 * structs and freed; nothing in the result points into it.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "import/json_util.h"
#include "import/torch_ir.h"

#define MAX_ARG_DEPTH 16

typedef struct parser {
  rlx_torch_ir *ir;
  const char *path;
  char where[512];
  int64_t *hints; /* the symbols' example values */
} parser;

static rlx_status oom(void) { return rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "out of memory reading torch-ir.json"); }

static rlx_status dup_str(parser *p, const char *s, const char **out) {
  *out = rlx_pool_strdup(&p->ir->pool, s);
  return *out ? RLX_OK : oom();
}

static rlx_status parse_arg(parser *p, const cJSON *j, rlx_arg *a, int depth);

static rlx_status parse_list(parser *p, const cJSON *arr, rlx_arg **items, int32_t *n, int depth) {
  int cnt = cJSON_GetArraySize(arr);
  *n = cnt;
  *items = rlx_pool_alloc(&p->ir->pool, sizeof(rlx_arg) * (size_t)(cnt ? cnt : 1));
  if (!*items) return oom();
  int i = 0;
  const cJSON *e;
  cJSON_ArrayForEach(e, arr) {
    rlx_status st = parse_arg(p, e, &(*items)[i++], depth + 1);
    if (st) return st;
  }
  return RLX_OK;
}

static rlx_status parse_float(const cJSON *v, const char *where, double *out) {
  if (cJSON_IsNumber(v)) {
    *out = v->valuedouble;
    return RLX_OK;
  }
  if (cJSON_IsString(v)) {
    if (!strcmp(v->valuestring, "inf")) return *out = INFINITY, RLX_OK;
    if (!strcmp(v->valuestring, "-inf")) return *out = -INFINITY, RLX_OK;
    if (!strcmp(v->valuestring, "nan")) return *out = NAN, RLX_OK;
  }
  return rlx_errorf(RLX_ERR_FORMAT, "%s: a float must be a number or \"inf\", \"-inf\", \"nan\"", where);
}


/* The component dtype of a complex dtype token ("c64" -> f32, "c128" ->
 * f64), or -1 for any other token (docs/design.md, "Complex numbers"). */
static int complex_component(const char *tok) {
  if (!strcmp(tok, "c64")) return RLX_DTYPE_F32;
  if (!strcmp(tok, "c128")) return RLX_DTYPE_F64;
  return -1;
}

/* obj's "dtype": a real token, or with *complex set a complex one (the
 * component into *dtype). complex NULL: a complex token is refused, naming
 * `what` (program inputs and states are real). */
static rlx_status parse_dtype(const cJSON *obj, const char *where, const char *what, rlx_dtype *dtype,
                              bool *complex) {
  const char *tok = NULL;
  if (rlx_json_str(obj, "dtype", where, &tok)) return RLX_ERR_FORMAT;
  int c = complex_component(tok);
  if (c >= 0 && !complex)
    return rlx_errorf(RLX_ERR_UNSUPPORTED, "%s: %s is complex (%s); rlx computes with complex values inside a "
                      "program, but its inputs and states are real (pass torch.view_as_real of it)", where, what, tok);
  if (complex) *complex = c >= 0;
  if (c >= 0) return *dtype = (rlx_dtype)c, RLX_OK;
  return rlx_json_dtype(obj, "dtype", where, dtype);
}

static rlx_status parse_arg(parser *p, const cJSON *j, rlx_arg *a, int depth) {
  const char *w = p->where;
  if (depth > MAX_ARG_DEPTH) return rlx_errorf(RLX_ERR_FORMAT, "%s: arguments nest too deeply", w);
  if (!cJSON_IsObject(j) || !j->child || j->child->next)
    return rlx_errorf(RLX_ERR_FORMAT, "%s: an argument must be an object with one tag key", w);
  const cJSON *v = j->child;
  const char *tag = v->string;
  memset(a, 0, sizeof *a);
  if (!strcmp(tag, "ref") || !strcmp(tag, "str") || !strcmp(tag, "sym")) {
    if (!cJSON_IsString(v)) return rlx_errorf(RLX_ERR_FORMAT, "%s: '%s' must hold a string", w, tag);
    a->kind = tag[0] == 'r' ? RLX_ARG_REF : tag[1] == 't' ? RLX_ARG_STR : RLX_ARG_SYM;
    return dup_str(p, v->valuestring, &a->u.s);
  }
  if (!strcmp(tag, "int")) {
    a->kind = RLX_ARG_INT;
    return rlx_json_int(v, w, &a->u.i);
  }
  if (!strcmp(tag, "float")) {
    a->kind = RLX_ARG_FLOAT;
    return parse_float(v, w, &a->u.f);
  }
  if (!strcmp(tag, "bool")) {
    if (!cJSON_IsBool(v)) return rlx_errorf(RLX_ERR_FORMAT, "%s: 'bool' must hold true/false", w);
    a->kind = RLX_ARG_BOOL;
    a->u.b = cJSON_IsTrue(v);
    return RLX_OK;
  }
  if (!strcmp(tag, "dtype")) {
    if (!cJSON_IsString(v)) return rlx_errorf(RLX_ERR_FORMAT, "%s: 'dtype' must hold a string", w);
    int t = complex_component(v->valuestring);
    a->complex = t >= 0;
    if (t < 0) t = rlx_dtype_from_token(v->valuestring);
    if (t < 0) return rlx_errorf(RLX_ERR_UNSUPPORTED, "%s: unknown dtype '%s'", w, v->valuestring);
    a->kind = RLX_ARG_DTYPE;
    a->u.dt = (rlx_dtype)t;
    return RLX_OK;
  }
  if (!strcmp(tag, "none")) {
    a->kind = RLX_ARG_NONE;
    return RLX_OK;
  }
  if (!strcmp(tag, "list")) {
    if (!cJSON_IsArray(v)) return rlx_errorf(RLX_ERR_FORMAT, "%s: 'list' must hold an array", w);
    a->kind = RLX_ARG_LIST;
    return parse_list(p, v, &a->u.list.items, &a->u.list.n, depth);
  }
  return rlx_errorf(RLX_ERR_FORMAT, "%s: unknown argument tag '%s'", w, tag);
}

/* One dim written as an int or an expression (sym.h's grammar). */
static rlx_status parse_dim(parser *p, const cJSON *v, const char *where, rlx_dim *out) {
  if (cJSON_IsString(v)) {
    rlx_status st = rlx_sym_parse(&p->ir->syms, v->valuestring, out);
    if (st) rlx_error_prefix("%s: ", where);
    return st;
  }
  int64_t x;
  if (rlx_json_int(v, where, &x)) return RLX_ERR_FORMAT;
  if (x < -((int64_t)1 << 62) || x > RLX_MAX_NUMEL)
    return rlx_errorf(RLX_ERR_FORMAT, "%s: %lld is out of range", where, (long long)x);
  *out = x;
  return RLX_OK;
}

/* "sym_shape" of an object whose "shape" is `example`: the symbolic dims
 * into *shape, each checked to be the example value at the hints. Absent:
 * the example itself. */
static rlx_status parse_sym_shape(parser *p, const cJSON *obj, const rlx_shape *example, rlx_shape *shape) {
  *shape = *example;
  const cJSON *ss = cJSON_GetObjectItemCaseSensitive(obj, "sym_shape");
  if (!ss || cJSON_IsNull(ss)) return RLX_OK;
  if (!cJSON_IsArray(ss) || cJSON_GetArraySize(ss) != example->rank)
    return rlx_errorf(RLX_ERR_FORMAT, "%s: 'sym_shape' must list one entry per axis of 'shape'", p->where);
  int i = 0;
  const cJSON *e;
  cJSON_ArrayForEach(e, ss) {
    char w[640];
    snprintf(w, sizeof w, "%s.sym_shape[%d]", p->where, i);
    rlx_dim d;
    int64_t at_hints;
    rlx_status st = parse_dim(p, e, w, &d);
    if (!st) st = rlx_dim_eval(&p->ir->syms, d, p->hints, &at_hints);
    if (st) return st;
    if (at_hints != example->dims[i])
      return rlx_errorf(RLX_ERR_FORMAT, "%s is %lld at the symbols' example values, but 'shape' records %lld", w,
                        (long long)at_hints, (long long)example->dims[i]);
    shape->dims[i++] = d;
  }
  return RLX_OK;
}

static rlx_status parse_tinfo(parser *p, const cJSON *j, rlx_tinfo *t) {
  memset(t, 0, sizeof *t);
  if (cJSON_IsNull(j)) return RLX_OK;
  if (!cJSON_IsObject(j)) return rlx_errorf(RLX_ERR_FORMAT, "%s: a tensor type must be an object", p->where);
  char w[600];
  snprintf(w, sizeof w, "%s.shape", p->where);
  rlx_status st = rlx_json_shape(cJSON_GetObjectItemCaseSensitive(j, "shape"), w, &t->example);
  if (!st) st = parse_dtype(j, p->where, "the tensor", &t->dtype, &t->complex);
  if (!st) st = parse_sym_shape(p, j, &t->example, &t->shape);
  t->present = st == RLX_OK;
  return st;
}

static rlx_status parse_out(parser *p, const cJSON *j, rlx_aten_node *n) {
  if (!j || cJSON_IsNull(j)) {
    n->out_kind = RLX_OUT_NONE;
    return RLX_OK;
  }
  if (cJSON_IsArray(j)) {
    n->out_kind = RLX_OUT_LIST;
    n->n_outs = cJSON_GetArraySize(j);
    n->outs = rlx_pool_alloc(&p->ir->pool, sizeof(rlx_tinfo) * (size_t)(n->n_outs ? n->n_outs : 1));
    if (!n->outs) return oom();
    int i = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, j) {
      rlx_status st = parse_tinfo(p, e, &n->outs[i++]);
      if (st) return st;
    }
    return RLX_OK;
  }
  const cJSON *sc = cJSON_GetObjectItemCaseSensitive(j, "scalar");
  if (sc) {
    n->out_kind = RLX_OUT_SCALAR;
    rlx_status st = parse_arg(p, sc, &n->scalar, 0);
    const cJSON *sy = cJSON_GetObjectItemCaseSensitive(j, "sym");
    if (st || !sy || cJSON_IsNull(sy)) return st;
    char w[600];
    snprintf(w, sizeof w, "%s.sym", p->where);
    int64_t at_hints;
    if ((st = parse_dim(p, sy, w, &n->scalar_dim)) ||
        (st = rlx_dim_eval(&p->ir->syms, n->scalar_dim, p->hints, &at_hints)))
      return st;
    if (n->scalar.kind == RLX_ARG_INT && at_hints != n->scalar.u.i)
      return rlx_errorf(RLX_ERR_FORMAT, "%s is %lld at the symbols' example values, but the scalar records %lld", w,
                        (long long)at_hints, (long long)n->scalar.u.i);
    n->has_scalar_dim = true;
    return RLX_OK;
  }
  n->out_kind = RLX_OUT_TENSOR;
  n->n_outs = 1;
  n->outs = rlx_pool_alloc(&p->ir->pool, sizeof(rlx_tinfo));
  if (!n->outs) return oom();
  return parse_tinfo(p, j, &n->outs[0]);
}

static rlx_status parse_node(parser *p, const cJSON *j, int idx, rlx_aten_node *n) {
  snprintf(p->where, sizeof p->where, "%s: nodes[%d]", p->path, idx);
  if (!cJSON_IsObject(j)) return rlx_errorf(RLX_ERR_FORMAT, "%s must be an object", p->where);
  const char *s;
  rlx_status st = rlx_json_str(j, "id", p->where, &s);
  if (st || (st = dup_str(p, s, &n->id))) return st;
  snprintf(p->where, sizeof p->where, "%.200s: nodes[%d] '%.100s'", p->path, idx, n->id);
  if ((st = rlx_json_str(j, "op", p->where, &s)) || (st = dup_str(p, s, &n->op))) return st;
  const cJSON *args = cJSON_GetObjectItemCaseSensitive(j, "args");
  if (!cJSON_IsArray(args)) return rlx_errorf(RLX_ERR_FORMAT, "%s: 'args' must be a list", p->where);
  if ((st = parse_list(p, args, &n->args, &n->n_args, 0))) return st;
  const cJSON *kw = cJSON_GetObjectItemCaseSensitive(j, "kwargs");
  if (kw && !cJSON_IsNull(kw)) {
    if (!cJSON_IsObject(kw)) return rlx_errorf(RLX_ERR_FORMAT, "%s: 'kwargs' must be an object", p->where);
    int cnt = cJSON_GetArraySize(kw);
    n->kw_names = rlx_pool_alloc(&p->ir->pool, sizeof(char *) * (size_t)(cnt ? cnt : 1));
    n->kw_vals = rlx_pool_alloc(&p->ir->pool, sizeof(rlx_arg) * (size_t)(cnt ? cnt : 1));
    if (!n->kw_names || !n->kw_vals) return oom();
    const cJSON *e;
    cJSON_ArrayForEach(e, kw) {
      if ((st = dup_str(p, e->string, &n->kw_names[n->n_kwargs])) ||
          (st = parse_arg(p, e, &n->kw_vals[n->n_kwargs], 0)))
        return st;
      n->n_kwargs++;
    }
  }
  return parse_out(p, cJSON_GetObjectItemCaseSensitive(j, "out"), n);
}

static rlx_status parse_inputs(parser *p, const cJSON *arr) {
  rlx_torch_ir *ir = p->ir;
  ir->n_inputs = cJSON_GetArraySize(arr);
  ir->inputs = rlx_pool_alloc(&ir->pool, sizeof(rlx_ir_input) * (size_t)(ir->n_inputs + 1));
  if (!ir->inputs) return oom();
  int i = 0;
  const cJSON *e;
  cJSON_ArrayForEach(e, arr) {
    rlx_ir_input *in = &ir->inputs[i];
    snprintf(p->where, sizeof p->where, "%s: inputs[%d]", p->path, i);
    const char *s;
    rlx_status st = rlx_json_str(e, "id", p->where, &s);
    if (st || (st = dup_str(p, s, &in->id))) return st;
    char w[600];
    snprintf(w, sizeof w, "%s.shape", p->where);
    if ((st = rlx_json_shape(cJSON_GetObjectItemCaseSensitive(e, "shape"), w, &in->example)) ||
        (st = parse_dtype(e, p->where, "the input", &in->dtype, NULL)) ||
        (st = parse_sym_shape(p, e, &in->example, &in->shape)))
      return st;
    for (int d = 0; d < RLX_MAX_RANK; d++) in->dynamic[d] = -1;
    const cJSON *dyn = cJSON_GetObjectItemCaseSensitive(e, "dynamic");
    if (dyn && !cJSON_IsNull(dyn)) {
      if (!cJSON_IsArray(dyn) || cJSON_GetArraySize(dyn) != in->example.rank)
        return rlx_errorf(RLX_ERR_FORMAT, "%s: 'dynamic' must list one entry per axis", p->where);
      int d = 0;
      const cJSON *x;
      cJSON_ArrayForEach(x, dyn) {
        int64_t v;
        if (rlx_json_int(x, p->where, &v) || v < -1 || v > 1000000)
          return rlx_errorf(RLX_ERR_FORMAT, "%s: dynamic[%d] must be -1 or a symbol id", p->where, d);
        in->dynamic[d++] = (int32_t)v;
        in->has_dynamic |= v >= 0;
      }
    }
    i++;
  }
  return RLX_OK;
}

/* The fields a weight and a state share: "id", "key", "shape", "dtype"
 * (p->where names the entry). */
static rlx_status parse_tensor_entry(parser *p, const cJSON *e, const char **id, const char **key, rlx_shape *shape,
                                     rlx_dtype *dtype, bool *complex) {
  const char *s;
  rlx_status st;
  if ((st = rlx_json_str(e, "id", p->where, &s)) || (st = dup_str(p, s, id)) ||
      (st = rlx_json_str(e, "key", p->where, &s)) || (st = dup_str(p, s, key)))
    return st;
  char ws[800];
  snprintf(ws, sizeof ws, "%.400s ('%.100s').shape", p->where, *key);
  if ((st = rlx_json_shape(cJSON_GetObjectItemCaseSensitive(e, "shape"), ws, shape))) return st;
  return parse_dtype(e, p->where, complex ? "the weight" : "the state", dtype, complex);
}

static rlx_status parse_weights(parser *p, const cJSON *arr) {
  rlx_torch_ir *ir = p->ir;
  ir->n_weights = cJSON_GetArraySize(arr);
  ir->weights = rlx_pool_alloc(&ir->pool, sizeof(rlx_ir_weight) * (size_t)(ir->n_weights + 1));
  if (!ir->weights) return oom();
  int i = 0;
  const cJSON *e;
  cJSON_ArrayForEach(e, arr) {
    rlx_ir_weight *w = &ir->weights[i];
    snprintf(p->where, sizeof p->where, "%s: weights[%d]", p->path, i);
    rlx_status st = parse_tensor_entry(p, e, &w->id, &w->key, &w->shape, &w->dtype, &w->complex);
    if (st) return st;
    const cJSON *sg = cJSON_GetObjectItemCaseSensitive(e, "storage");
    if (w->complex && (!cJSON_IsString(sg) || strcmp(sg->valuestring, "real_pairs")))
      return rlx_errorf(RLX_ERR_FORMAT, "%s ('%s') is complex and must say \"storage\": \"real_pairs\" (the file "
                        "holds its real and imaginary parts on a trailing axis of 2)", p->where, w->key);
    const cJSON *k = cJSON_GetObjectItemCaseSensitive(e, "kind");
    if ((st = dup_str(p, cJSON_IsString(k) ? k->valuestring : "param", &w->kind))) return st;
    i++;
  }
  return RLX_OK;
}

/* "state": [{"id", "key", "shape", "dtype", "init": "zeros" | "weights", "update": "<node id>"}] */
static rlx_status parse_states(parser *p, const cJSON *arr) {
  rlx_torch_ir *ir = p->ir;
  if (!arr) return RLX_OK;
  if (!cJSON_IsArray(arr)) return rlx_errorf(RLX_ERR_FORMAT, "%s: 'state' must be an array", p->path);
  ir->n_states = cJSON_GetArraySize(arr);
  ir->states = rlx_pool_alloc(&ir->pool, sizeof(rlx_ir_state) * (size_t)(ir->n_states + 1));
  if (!ir->states) return oom();
  int i = 0;
  const cJSON *e;
  cJSON_ArrayForEach(e, arr) {
    rlx_ir_state *w = &ir->states[i];
    snprintf(p->where, sizeof p->where, "%s: state[%d]", p->path, i);
    if (!cJSON_IsObject(e)) return rlx_errorf(RLX_ERR_FORMAT, "%s must be an object", p->where);
    const char *s, *init;
    rlx_status st;
    if ((st = parse_tensor_entry(p, e, &w->id, &w->key, &w->shape, &w->dtype, NULL)) ||
        (st = rlx_json_str(e, "update", p->where, &s)) || (st = dup_str(p, s, &w->update)) ||
        (st = rlx_json_str(e, "init", p->where, &init)))
      return st;
    if (strcmp(init, "zeros") && strcmp(init, "weights"))
      return rlx_errorf(RLX_ERR_FORMAT, "%s ('%s'): 'init' is '%.64s'; expected \"zeros\" or \"weights\"", p->where,
                        w->key, init);
    w->init_zeros = !strcmp(init, "zeros");
    i++;
  }
  return RLX_OK;
}

static rlx_status parse_outputs(parser *p, const cJSON *arr) {
  rlx_torch_ir *ir = p->ir;
  ir->n_outputs = cJSON_GetArraySize(arr);
  ir->outputs = rlx_pool_alloc(&ir->pool, sizeof(rlx_ir_output) * (size_t)(ir->n_outputs + 1));
  if (!ir->outputs) return oom();
  int i = 0;
  const cJSON *e;
  cJSON_ArrayForEach(e, arr) {
    rlx_ir_output *o = &ir->outputs[i];
    snprintf(p->where, sizeof p->where, "%s: outputs[%d]", p->path, i);
    if (!cJSON_IsObject(e)) return rlx_errorf(RLX_ERR_FORMAT, "%s must be an object", p->where);
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(e, "const");
    rlx_status st;
    if (c) {
      o->is_const = true;
      if ((st = parse_arg(p, c, &o->value, 0))) return st;
    } else {
      const char *s;
      if ((st = rlx_json_str(e, "ref", p->where, &s)) || (st = dup_str(p, s, &o->ref)) ||
          (st = parse_tinfo(p, e, &o->type)))
        return st;
    }
    i++;
  }
  return RLX_OK;
}

/* "symbols": [{name, min, max, hint}] (optional). */
static rlx_status parse_symbols(parser *p, const cJSON *arr) {
  if (!arr || cJSON_IsNull(arr)) return RLX_OK;
  if (!cJSON_IsArray(arr)) return rlx_errorf(RLX_ERR_FORMAT, "%s: 'symbols' must be a list", p->path);
  int i = 0;
  const cJSON *e;
  cJSON_ArrayForEach(e, arr) {
    snprintf(p->where, sizeof p->where, "%s: symbols[%d]", p->path, i++);
    const char *name;
    int64_t v[3];
    static const char *keys[3] = {"min", "max", "hint"};
    rlx_status st = rlx_json_str(e, "name", p->where, &name);
    for (int k = 0; !st && k < 3; k++) {
      char w[600];
      snprintf(w, sizeof w, "%s: '%s'", p->where, keys[k]);
      st = rlx_json_int(cJSON_GetObjectItemCaseSensitive(e, keys[k]), w, &v[k]);
    }
    if (st) return st;
    bool ident = (*name >= 'a' && *name <= 'z') || (*name >= 'A' && *name <= 'Z') || *name == '_';
    for (const char *c = name; *c && ident; c++)
      ident = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '_';
    static const char *reserved[] = {"floordiv", "mod", "min", "max"};
    for (int k = 0; k < 4 && ident; k++) ident = strcmp(name, reserved[k]) != 0;
    if (!ident || strlen(name) >= 64)
      return rlx_errorf(RLX_ERR_FORMAT, "%s: symbol name '%.80s' must be an identifier (not floordiv, mod, min, "
                        "max) of at most 63 characters", p->where, name);
    if ((st = rlx_sym_declare(&p->ir->syms, name, v[0], v[1], v[2], NULL))) {
      rlx_error_prefix("%s: ", p->where);
      return st;
    }
  }
  return RLX_OK;
}

/* "guards": [{lhs, rel, rhs, source?}] (optional); each must hold at the hints. */
static rlx_status parse_guards(parser *p, const cJSON *arr) {
  if (!arr || cJSON_IsNull(arr)) return RLX_OK;
  if (!cJSON_IsArray(arr)) return rlx_errorf(RLX_ERR_FORMAT, "%s: 'guards' must be a list", p->path);
  rlx_torch_ir *ir = p->ir;
  int n = cJSON_GetArraySize(arr);
  ir->guards = rlx_pool_alloc(&ir->pool, sizeof(rlx_ir_guard) * (size_t)(n ? n : 1));
  if (!ir->guards) return oom();
  static const char *rels[] = {"==", "!=", "<", "<=", ">", ">="};
  const cJSON *e;
  cJSON_ArrayForEach(e, arr) {
    rlx_ir_guard *g = &ir->guards[ir->n_guards];
    snprintf(p->where, sizeof p->where, "%s: guards[%d]", p->path, ir->n_guards);
    if (!cJSON_IsObject(e)) return rlx_errorf(RLX_ERR_FORMAT, "%s must be an object", p->where);
    const char *rel;
    char w[600];
    rlx_status st = rlx_json_str(e, "rel", p->where, &rel);
    if (st) return st;
    g->rel = -1;
    for (int k = 0; k < 6; k++)
      if (!strcmp(rel, rels[k])) g->rel = k;
    if (g->rel < 0) return rlx_errorf(RLX_ERR_FORMAT, "%s: unknown relation '%.20s'", p->where, rel);
    snprintf(w, sizeof w, "%s.lhs", p->where);
    if ((st = parse_dim(p, cJSON_GetObjectItemCaseSensitive(e, "lhs"), w, &g->lhs))) return st;
    snprintf(w, sizeof w, "%s.rhs", p->where);
    if ((st = parse_dim(p, cJSON_GetObjectItemCaseSensitive(e, "rhs"), w, &g->rhs))) return st;
    const cJSON *src = cJSON_GetObjectItemCaseSensitive(e, "source");
    if ((st = dup_str(p, cJSON_IsString(src) ? src->valuestring : "", &g->source))) return st;
    int64_t a, b;
    if ((st = rlx_dim_eval(&ir->syms, g->lhs, p->hints, &a)) || (st = rlx_dim_eval(&ir->syms, g->rhs, p->hints, &b)))
      return st;
    bool holds = g->rel == 0 ? a == b : g->rel == 1 ? a != b : g->rel == 2 ? a < b : g->rel == 3 ? a <= b
                 : g->rel == 4 ? a > b : a >= b;
    if (!holds) return rlx_errorf(RLX_ERR_FORMAT, "%s does not hold at the symbols' example values", p->where);
    ir->n_guards++;
  }
  return RLX_OK;
}

static const cJSON *need_array(const cJSON *root, const char *key, const char *path, rlx_status *st) {
  const cJSON *a = cJSON_GetObjectItemCaseSensitive(root, key);
  if (!cJSON_IsArray(a)) *st = rlx_errorf(RLX_ERR_FORMAT, "%s: field '%s' must be a list", path, key);
  return a;
}

rlx_status rlx_torch_ir_parse(const char *text, size_t len, const char *path, rlx_torch_ir *ir) {
  memset(ir, 0, sizeof *ir);
  cJSON *root = NULL;
  rlx_status st = rlx_json_parse(text, len, path, &root);
  if (st) return st;
  parser p = {.ir = ir, .path = path};
  const char *s;
  const cJSON *v;
  if (!cJSON_IsObject(root)) {
    st = rlx_errorf(RLX_ERR_FORMAT, "%s: the top level must be an object", path);
    goto done;
  }
  v = cJSON_GetObjectItemCaseSensitive(root, "format");
  if (!cJSON_IsString(v) || strcmp(v->valuestring, "rlx-torch-ir") != 0) {
    st = rlx_errorf(RLX_ERR_FORMAT, "%s: 'format' must be \"rlx-torch-ir\" (is this a torch-ir.json "
                    "written by rlx.export?)", path);
    goto done;
  }
  v = cJSON_GetObjectItemCaseSensitive(root, "version");
  int64_t ver;
  if (rlx_json_int(v, "version", &ver) || ver != 1) {
    st = rlx_errorf(RLX_ERR_UNSUPPORTED, "%s: unsupported 'version' (rlx reads version 1)", path);
    goto done;
  }
  v = cJSON_GetObjectItemCaseSensitive(root, "model_name");
  if ((st = dup_str(&p, cJSON_IsString(v) ? v->valuestring : "model", &ir->model_name))) goto done;
  v = cJSON_GetObjectItemCaseSensitive(root, "producer");
  if ((st = dup_str(&p, cJSON_IsString(v) ? v->valuestring : "", &ir->producer))) goto done;
  v = cJSON_GetObjectItemCaseSensitive(root, "decomposition");
  if ((st = dup_str(&p, cJSON_IsString(v) ? v->valuestring : "", &ir->decomposition))) goto done;
  (void)s;

  const cJSON *ins = need_array(root, "inputs", path, &st), *ws = need_array(root, "weights", path, &st);
  const cJSON *nodes = need_array(root, "nodes", path, &st), *outs = need_array(root, "outputs", path, &st);
  if (st) goto done;
  if ((st = parse_symbols(&p, cJSON_GetObjectItemCaseSensitive(root, "symbols")))) goto done;
  if (!(p.hints = rlx_symtab_hints(&ir->syms))) {
    st = RLX_ERR_OUT_OF_MEMORY;
    goto done;
  }
  if ((st = parse_guards(&p, cJSON_GetObjectItemCaseSensitive(root, "guards")))) goto done;
  if ((st = parse_inputs(&p, ins)) || (st = parse_weights(&p, ws)) || (st = parse_outputs(&p, outs)) ||
      (st = parse_states(&p, cJSON_GetObjectItemCaseSensitive(root, "state"))))
    goto done;
  ir->n_nodes = cJSON_GetArraySize(nodes);
  ir->nodes = rlx_pool_alloc(&ir->pool, sizeof(rlx_aten_node) * (size_t)(ir->n_nodes + 1));
  if (!ir->nodes) {
    st = oom();
    goto done;
  }
  int i = 0;
  cJSON_ArrayForEach(v, nodes) {
    if ((st = parse_node(&p, v, i, &ir->nodes[i]))) goto done;
    i++;
  }
done:
  cJSON_Delete(root);
  rlx_free(p.hints);
  if (st) rlx_torch_ir_free(ir);
  return st;
}

rlx_status rlx_torch_ir_load(const char *path, rlx_torch_ir *ir) {
  char *buf;
  size_t len;
  rlx_status st = rlx_read_file(path, RLX_TORCH_IR_MAX_BYTES, &buf, &len);
  if (st) return st;
  st = rlx_torch_ir_parse(buf, len, path, ir);
  rlx_free(buf);
  return st;
}

void rlx_torch_ir_free(rlx_torch_ir *ir) {
  rlx_symtab_free(&ir->syms);
  rlx_pool_free(&ir->pool);
  memset(ir, 0, sizeof *ir);
}

const rlx_arg *rlx_aten_arg(const rlx_aten_node *n, int pos, const char *name) {
  if (pos >= 0 && pos < n->n_args) return &n->args[pos];
  if (name)
    for (int32_t i = 0; i < n->n_kwargs; i++)
      if (!strcmp(n->kw_names[i], name)) return &n->kw_vals[i];
  return NULL;
}
