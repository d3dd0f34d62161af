/*
 * order_algo.h — the sorting and selection algorithms torch's CPU kernels
 * run, step for step, so that rlx returns the same index where several
 * elements could be returned (ties, NaN). Internal to src/ops/.
 *
 * torch's median/nanmedian (std::nth_element), mode (std::sort), sort with
 * stable=False (std::sort) and topk (std::partial_sort, or std::nth_element
 * then std::sort) call the C++ standard library, whose algorithms the standard leaves open; torch's
 * Linux wheels are built with GCC, so the answer is libstdc++'s: its
 * introsort and introselect are reproduced here (ord_std_sort,
 * ord_std_nth_element). kthvalue runs torch's own quickselect
 * (ord_quickselect, Sedgewick's, from aten/src/ATen/native/Sorting.cpp).
 * Where a comparator is not a strict weak order (NaN under `<`), libstdc++'s
 * unguarded loops are still followed, with bounds checks that change nothing
 * for a valid comparator and keep rlx inside the row.
 *
 * Also a stable merge sort (ord_stable_sort) for the ops that need one.
 */
#ifndef RLX_ORDER_ALGO_H
#define RLX_ORDER_ALGO_H

#include <stdbool.h>
#include <stdint.h>

/* One element of a row: its value (double for float dtypes, int64 for the
 * others: every element of every rlx dtype is exact in one of them) and its
 * position in the row. */
typedef struct ord_item {
  union {
    double f;
    int64_t i;
  } key;
  int64_t idx;
} ord_item;

/* A strict comparison ("a before b"); ctx is the caller's. */
typedef bool (*ord_less_fn)(const ord_item *a, const ord_item *b, const void *ctx);

/* std::sort(v, v + n, less) as libstdc++ runs it. */
void ord_std_sort(ord_item *v, int64_t n, ord_less_fn less, const void *ctx);
/* std::nth_element(v, v + nth, v + n, less) as libstdc++ runs it. */
void ord_std_nth_element(ord_item *v, int64_t nth, int64_t n, ord_less_fn less, const void *ctx);
/* std::partial_sort(v, v + middle, v + n, less) as libstdc++ runs it
 * (heap select, then heap sort of the first `middle`); topk's path when
 * k * 64 <= n. */
void ord_std_partial_sort(ord_item *v, int64_t middle, int64_t n, ord_less_fn less, const void *ctx);
/* torch's quick_select_template(v, k, gt_or_nan, swap) over n items:
 * afterwards v[k] is the k-th smallest (0-based), NaN ranking largest. */
void ord_quickselect(ord_item *v, int64_t n, int64_t k, bool fl);
/* Stable ascending sort of v[0..n) using tmp[0..n): floats with NaN last
 * (as torch.sort), ints as int64. */
void ord_stable_sort(ord_item *v, ord_item *tmp, int64_t n, bool fl);

#endif /* RLX_ORDER_ALGO_H */
