/*
 * print.h — graph dumps for tools: a per-node table and Graphviz dot.
 */
#ifndef RLX_PRINT_H
#define RLX_PRINT_H

#include <stdio.h>

#include "ir/graph.h"

void rlx_graph_print(const rlx_graph *g, FILE *f);
void rlx_graph_dot(const rlx_graph *g, FILE *f);

#endif
