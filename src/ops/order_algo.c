/*
 * order_algo.c — libstdc++'s std::sort, std::nth_element and
 * std::partial_sort, torch's
 * quickselect, and a stable merge sort, over ord_item rows (order_algo.h
 * says why rlx reproduces the first three exactly).
 *
 * The libstdc++ functions follow bits/stl_algo.h and bits/stl_heap.h
 * (GCC 4.x to 14 agree): introsort loops while a range holds more than 16
 * items, pivots on the median of (first + 1, mid, last - 1) moved to first,
 * partitions unguarded, and falls back to heapsort after 2 floor(log2 n)
 * levels; a final insertion sort finishes. nth_element's introselect loops
 * while more than 3 items remain, then insertion-sorts. Each unguarded scan
 * here carries a bounds check, which a strict weak order never trips.
 */
#include "ops/order_algo.h"

#include <string.h>

static int64_t lg2(int64_t n) { return 63 - __builtin_clzll((unsigned long long)n); }

static void swap_items(ord_item *a, ord_item *b) {
  ord_item t = *a;
  *a = *b;
  *b = t;
}

typedef struct ord_cmp {
  ord_less_fn less;
  const void *ctx;
} ord_cmp;

static bool lt(const ord_cmp *c, const ord_item *a, const ord_item *b) { return c->less(a, b, c->ctx); }

/* __move_median_to_first(result, a, b, c) */
static void median_to_first(ord_item *r, ord_item *a, ord_item *b, ord_item *c, const ord_cmp *k) {
  if (lt(k, a, b)) {
    if (lt(k, b, c)) swap_items(r, b);
    else if (lt(k, a, c)) swap_items(r, c);
    else swap_items(r, a);
  } else if (lt(k, a, c)) swap_items(r, a);
  else if (lt(k, b, c)) swap_items(r, c);
  else swap_items(r, b);
}

/* __unguarded_partition(first, last, pivot): v[lo..hi) around *pivot. */
static int64_t partition(ord_item *v, int64_t lo, int64_t hi, const ord_item *pivot, const ord_cmp *k) {
  int64_t first = lo, last = hi;
  for (;;) {
    while (first < hi - 1 && lt(k, &v[first], pivot)) first++;
    last--;
    while (last > lo && lt(k, pivot, &v[last])) last--;
    if (!(first < last)) return first;
    swap_items(&v[first], &v[last]);
    first++;
  }
}

/* __unguarded_partition_pivot(first, last) */
static int64_t partition_pivot(ord_item *v, int64_t first, int64_t last, const ord_cmp *k) {
  int64_t mid = first + (last - first) / 2;
  median_to_first(&v[first], &v[first + 1], &v[mid], &v[last - 1], k);
  return partition(v, first + 1, last, &v[first], k);
}

/* __unguarded_linear_insert(last), never below `floor` */
static void linear_insert(ord_item *v, int64_t floor, int64_t last, const ord_cmp *k) {
  ord_item val = v[last];
  int64_t next = last - 1;
  while (next >= floor && lt(k, &val, &v[next])) {
    v[last] = v[next];
    last = next--;
  }
  v[last] = val;
}

/* __insertion_sort(first, last) */
static void insertion_sort(ord_item *v, int64_t first, int64_t last, const ord_cmp *k) {
  if (first == last) return;
  for (int64_t i = first + 1; i < last; i++) {
    if (lt(k, &v[i], &v[first])) {
      ord_item val = v[i];
      memmove(&v[first + 1], &v[first], sizeof(ord_item) * (size_t)(i - first));
      v[first] = val;
    } else {
      linear_insert(v, first, i, k);
    }
  }
}

/* __adjust_heap(first, hole, len, value) with __push_heap */
static void adjust_heap(ord_item *f, int64_t hole, int64_t len, ord_item val, const ord_cmp *k) {
  int64_t top = hole, child = hole;
  while (child < (len - 1) / 2) {
    child = 2 * (child + 1);
    if (lt(k, &f[child], &f[child - 1])) child--;
    f[hole] = f[child];
    hole = child;
  }
  if ((len & 1) == 0 && child == (len - 2) / 2) {
    child = 2 * (child + 1);
    f[hole] = f[child - 1];
    hole = child - 1;
  }
  int64_t parent = (hole - 1) / 2;
  while (hole > top && lt(k, &f[parent], &val)) {
    f[hole] = f[parent];
    hole = parent;
    parent = (hole - 1) / 2;
  }
  f[hole] = val;
}

static void make_heap(ord_item *f, int64_t len, const ord_cmp *k) {
  if (len < 2) return;
  for (int64_t parent = (len - 2) / 2;; parent--) {
    adjust_heap(f, parent, len, f[parent], k);
    if (parent == 0) return;
  }
}

/* __pop_heap(first, last, result) */
static void pop_heap(ord_item *f, int64_t len, ord_item *result, const ord_cmp *k) {
  ord_item val = *result;
  *result = f[0];
  adjust_heap(f, 0, len, val, k);
}

/* __heap_select(first, middle, last) */
static void heap_select(ord_item *v, int64_t first, int64_t middle, int64_t last, const ord_cmp *k) {
  make_heap(v + first, middle - first, k);
  for (int64_t i = middle; i < last; i++)
    if (lt(k, &v[i], &v[first])) pop_heap(v + first, middle - first, &v[i], k);
}

/* __partial_sort(first, middle, last): __heap_select, then __sort_heap of
 * [first, middle). */
static void partial_sort(ord_item *v, int64_t first, int64_t middle, int64_t last, const ord_cmp *k) {
  heap_select(v, first, middle, last, k);
  for (int64_t end = middle; end - first > 1;) {
    end--;
    pop_heap(v + first, end - first, &v[end], k);
  }
}

static void introsort_loop(ord_item *v, int64_t first, int64_t last, int64_t depth, const ord_cmp *k) {
  while (last - first > 16) {
    if (depth == 0) { /* __partial_sort(first, last, last): heapsort */
      partial_sort(v, first, last, last, k);
      return;
    }
    depth--;
    int64_t cut = partition_pivot(v, first, last, k);
    introsort_loop(v, cut, last, depth, k);
    last = cut;
  }
}

void ord_std_sort(ord_item *v, int64_t n, ord_less_fn less, const void *ctx) {
  ord_cmp k = {less, ctx};
  if (n <= 0) return;
  introsort_loop(v, 0, n, 2 * lg2(n), &k);
  if (n > 16) { /* __final_insertion_sort */
    insertion_sort(v, 0, 16, &k);
    for (int64_t i = 16; i < n; i++) linear_insert(v, 0, i, &k);
  } else {
    insertion_sort(v, 0, n, &k);
  }
}

void ord_std_nth_element(ord_item *v, int64_t nth, int64_t n, ord_less_fn less, const void *ctx) {
  ord_cmp k = {less, ctx};
  if (n <= 0 || nth >= n) return;
  int64_t first = 0, last = n, depth = 2 * lg2(n);
  while (last - first > 3) {
    if (depth == 0) {
      heap_select(v, first, nth + 1, last, &k);
      swap_items(&v[first], &v[nth]);
      return;
    }
    depth--;
    int64_t cut = partition_pivot(v, first, last, &k);
    if (cut <= nth) first = cut;
    else last = cut;
  }
  insertion_sort(v, first, last, &k);
}

void ord_std_partial_sort(ord_item *v, int64_t middle, int64_t n, ord_less_fn less, const void *ctx) {
  ord_cmp k = {less, ctx};
  if (middle <= 0 || middle > n) return;
  partial_sort(v, 0, middle, n, &k);
}

/* torch's gt_or_nan(x, y): x > y, NaN above every number. */
static bool gt_or_nan(const ord_item *x, const ord_item *y, bool fl) {
  if (!fl) return x->key.i > y->key.i;
  bool nx = x->key.f != x->key.f, ny = y->key.f != y->key.f;
  return (nx && !ny) || x->key.f > y->key.f;
}

void ord_quickselect(ord_item *v, int64_t n, int64_t k, bool fl) {
  int64_t L = 0, R = n - 1;
  for (;;) {
    if (R <= L) return;
    if (R == L + 1) {
      if (gt_or_nan(&v[L], &v[R], fl)) swap_items(&v[L], &v[R]);
      return;
    }
    int64_t P = (L + R) >> 1; /* median of three for the pivot */
    swap_items(&v[P], &v[L + 1]);
    if (gt_or_nan(&v[L + 1], &v[R], fl)) swap_items(&v[L + 1], &v[R]);
    if (gt_or_nan(&v[L], &v[R], fl)) swap_items(&v[L], &v[R]);
    if (gt_or_nan(&v[L + 1], &v[L], fl)) swap_items(&v[L + 1], &v[L]);
    int64_t i = L + 1, j = R;
    ord_item piv = v[L];
    for (;;) {
      do i++; while (i < R && gt_or_nan(&piv, &v[i], fl));
      do j--; while (j > L && gt_or_nan(&v[j], &piv, fl));
      if (j < i) break;
      swap_items(&v[i], &v[j]);
    }
    swap_items(&v[L], &v[j]);
    if (j <= k) L = i;
    if (j >= k) R = j - 1;
  }
}

/* a before b ascending: NaN after every number. */
static bool stable_before(const ord_item *a, const ord_item *b, bool fl) {
  if (!fl) return a->key.i < b->key.i;
  bool na = a->key.f != a->key.f, nb = b->key.f != b->key.f;
  if (na || nb) return !na && nb;
  return a->key.f < b->key.f;
}

void ord_stable_sort(ord_item *v, ord_item *tmp, int64_t n, bool fl) {
  for (int64_t w = 1; w < n; w *= 2) {
    for (int64_t lo = 0; lo < n; lo += 2 * w) {
      int64_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
      int64_t i = lo, j = mid, o = lo;
      while (i < mid && j < hi) tmp[o++] = stable_before(&v[j], &v[i], fl) ? v[j++] : v[i++];
      while (i < mid) tmp[o++] = v[i++];
      while (j < hi) tmp[o++] = v[j++];
    }
    memcpy(v, tmp, sizeof(ord_item) * (size_t)n);
  }
}
