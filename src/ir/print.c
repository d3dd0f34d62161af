/*
 * print.c — human-readable dumps of an rlx graph (the per-node table `rlx
 * inspect` prints) and Graphviz output.
 */
#include <stdio.h>
#include <string.h>

#include "ir/graph.h"
#include "ir/print.h"

static const char *value_desc(const rlx_graph *g, int32_t v, char *buf, size_t cap) {
  if (v < 0) return "-";
  const rlx_value *val = &g->values[v];
  char s[256];
  rlx_graph_shape_str(g, &val->shape, s, sizeof s);
  const char *kind = val->kind == RLX_VALUE_INPUT ? "input " : val->kind == RLX_VALUE_WEIGHT ? "weight "
                     : val->kind == RLX_VALUE_CONST ? "const " : val->kind == RLX_VALUE_STATE ? "state " : "";
  snprintf(buf, cap, "%s%s:%s%s", kind, val->name ? val->name : "?", rlx_dtype_name(val->dtype), s);
  return buf;
}

void rlx_graph_print(const rlx_graph *g, FILE *f) {
  char buf[512], pb[512];
  fprintf(f, "%5s  %-28s %-13s %-34s %s\n", "#", "label (FX node)", "rlx op", "params", "inputs -> outputs");
  for (int32_t i = 0; i < g->n_nodes; i++) {
    const rlx_node *n = &g->nodes[i];
    rlx_node_params_str(g, n, pb, sizeof pb);
    fprintf(f, "%5d  %-28s %-13s %-34s ", i, n->label, rlx_op_table[n->op].name, pb);
    for (int32_t k = 0; k < n->n_in; k++) fprintf(f, "%s%s", k ? ", " : "", value_desc(g, n->in[k], buf, sizeof buf));
    fprintf(f, " -> ");
    for (int32_t k = 0; k < n->n_out; k++) {
      const rlx_value *v = &g->values[n->out[k]];
      char s[256];
      fprintf(f, "%s%s%s", k ? ", " : "", rlx_dtype_name(v->dtype), rlx_graph_shape_str(g, &v->shape, s, sizeof s));
    }
    fprintf(f, "\n");
  }
}

void rlx_graph_dot(const rlx_graph *g, FILE *f) {
  char s[256];
  fprintf(f, "digraph rlx {\n  rankdir=TB;\n  node [shape=box, fontname=\"monospace\", fontsize=10];\n");
  for (int32_t i = 0; i < g->n_inputs; i++) {
    const rlx_value *v = &g->values[g->inputs[i]];
    fprintf(f, "  v%d [label=\"%s\\n%s%s\", shape=ellipse];\n", g->inputs[i], v->name,
            rlx_dtype_name(v->dtype), rlx_graph_shape_str(g, &v->shape, s, sizeof s));
  }
  for (int32_t i = 0; i < g->n_nodes; i++) {
    const rlx_node *n = &g->nodes[i];
    const rlx_value *o = &g->values[n->out[0]];
    fprintf(f, "  n%d [label=\"%s\\n%s\\n%s%s\"];\n", i, n->label, rlx_op_table[n->op].name,
            rlx_dtype_name(o->dtype), rlx_graph_shape_str(g, &o->shape, s, sizeof s));
    for (int32_t k = 0; k < n->n_in; k++) {
      int32_t v = n->in[k];
      if (v < 0) continue;
      const rlx_value *iv = &g->values[v];
      if (iv->kind == RLX_VALUE_NODE && iv->producer >= 0) fprintf(f, "  n%d -> n%d;\n", iv->producer, i);
      else if (iv->kind == RLX_VALUE_INPUT) fprintf(f, "  v%d -> n%d;\n", v, i);
    }
  }
  for (int32_t i = 0; i < g->n_outputs; i++) {
    const rlx_value *v = &g->values[g->outputs[i]];
    fprintf(f, "  out%d [label=\"output %d\", shape=ellipse];\n", i, i);
    if (v->kind == RLX_VALUE_NODE && v->producer >= 0) fprintf(f, "  n%d -> out%d;\n", v->producer, i);
  }
  fprintf(f, "}\n");
}
