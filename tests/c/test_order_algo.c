/*
 * test_order_algo.c — the sorting and selection algorithms of
 * src/ops/order_algo.c against plain oracles: ord_std_sort sorts (equal
 * values in some order, every index kept), ord_std_nth_element and
 * ord_quickselect put the k-th value at k with nothing larger before and
 * nothing smaller after, ord_stable_sort keeps input order among equal
 * values with NaN last; over seeded random rows with many ties, at the sizes
 * where the algorithms change (insertion sort at 16 and 3), and on
 * McIlroy's adversary ("A killer adversary for quicksort", 1999), which
 * drives introsort and introselect into their heap fallbacks. Which index
 * torch returns among ties is checked against torch by the conformance suite
 * (tests/conformance/test_order_stat.py).
 */
#include <stdlib.h>

#include "ops/order_algo.h"
#include "test.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static int64_t next_int(int64_t range) {
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return (int64_t)(rng % (uint64_t)range);
}

static bool less_int(const ord_item *a, const ord_item *b, const void *ctx) {
  (void)ctx;
  return a->key.i < b->key.i;
}

/* v holds a permutation of the row's indices, each item carrying its own value. */
static bool is_permutation(const ord_item *v, int64_t n) {
  static uint8_t seen[4096];
  if (n < 0 || n > 4096) return false;
  memset(seen, 0, sizeof seen);
  for (int64_t i = 0; i < n; i++) {
    if (v[i].idx < 0 || v[i].idx >= n || seen[v[i].idx]) return false;
    seen[v[i].idx] = 1;
  }
  return true;
}

static void fill(ord_item *v, int64_t n, int64_t range) {
  for (int64_t i = 0; i < n; i++) v[i].key.i = next_int(range), v[i].idx = i;
}

static bool sorted_int(const ord_item *v, int64_t n) {
  for (int64_t i = 1; i < n; i++)
    if (v[i - 1].key.i > v[i].key.i) return false;
  return true;
}

/* v[k] is the k-th value: nothing before it larger, nothing after it smaller. */
static bool selected_int(const ord_item *v, int64_t n, int64_t k) {
  for (int64_t i = 0; i < n; i++)
    if ((i < k && v[i].key.i > v[k].key.i) || (i > k && v[i].key.i < v[k].key.i)) return false;
  return true;
}

TEST(random_rows_with_ties) {
  static ord_item v[600];
  const int64_t sizes[] = {0, 1, 2, 3, 4, 5, 15, 16, 17, 33, 100, 257, 600};
  for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
    for (int64_t range = 1; range <= 1000; range *= 10)
      for (int rep = 0; rep < 4; rep++) {
        int64_t n = sizes[s];
        fill(v, n, range);
        ord_std_sort(v, n, less_int, NULL);
        CHECK(sorted_int(v, n) && is_permutation(v, n));
        if (n == 0) continue;
        int64_t k = next_int(n);
        fill(v, n, range);
        ord_std_nth_element(v, k, n, less_int, NULL);
        CHECK(selected_int(v, n, k) && is_permutation(v, n));
        fill(v, n, range);
        ord_quickselect(v, n, k, false);
        CHECK(selected_int(v, n, k) && is_permutation(v, n));
      }
}

/* ord_std_partial_sort(v, m, n): v[0..m) are the m smallest, in order, and
 * nothing after them is smaller than v[m - 1]. The heap's order among ties
 * is checked on 5 items run through libstdc++'s heap select by hand. */
TEST(partial_sort) {
  static ord_item v[600];
  const int64_t sizes[] = {1, 2, 5, 17, 64, 65, 200, 600};
  for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
    for (int64_t range = 1; range <= 1000; range *= 10) {
      int64_t n = sizes[s], m = 1 + next_int(n);
      fill(v, n, range);
      ord_std_partial_sort(v, m, n, less_int, NULL);
      CHECK(sorted_int(v, m) && is_permutation(v, n));
      for (int64_t i = m; i < n; i++) CHECK(v[i].key.i >= v[m - 1].key.i);
    }
  /* keys {1, 0, 0, 1, 0}, m = 2, by hand: make_heap leaves (1:i0, 0:i1);
   * i2 is below the root, so pop_heap sends i0 to position 2 and the heap
   * becomes (0:i1, 0:i2); i3 and i4 are not below the root 0; sort_heap
   * pops i1 to position 1: indices 2, 1, 0, 3, 4. torch.topk(x, 2,
   * largest=False) of these keys followed by 123 ones gives indices [2, 1]. */
  const int64_t keys[5] = {1, 0, 0, 1, 0}, want[5] = {2, 1, 0, 3, 4};
  for (int i = 0; i < 5; i++) v[i].key.i = keys[i], v[i].idx = i;
  ord_std_partial_sort(v, 2, 5, less_int, NULL);
  for (int i = 0; i < 5; i++) CHECK(v[i].idx == want[i]);
}

/* NaN ranks above every number in quickselect, and sorts last, stably. */
TEST(nan_order) {
  ord_item v[9], tmp[9];
  const double x[9] = {2, NAN, -1, 2, NAN, 0, -INFINITY, 2, INFINITY};
  for (int k = 0; k < 9; k++) {
    for (int i = 0; i < 9; i++) v[i].key.f = x[i], v[i].idx = i;
    ord_quickselect(v, 9, k, true);
    const double want[9] = {-INFINITY, -1, 0, 2, 2, 2, INFINITY, NAN, NAN};
    CHECK(v[k].key.f == want[k] || (isnan(v[k].key.f) && isnan(want[k])));
  }
  for (int i = 0; i < 9; i++) v[i].key.f = x[i], v[i].idx = i;
  ord_stable_sort(v, tmp, 9, true);
  const int64_t order[9] = {6, 2, 5, 0, 3, 7, 8, 1, 4};
  for (int i = 0; i < 9; i++) CHECK(v[i].idx == order[i]);
}

/* McIlroy's adversary: values are given out lazily so that each comparison
 * makes the algorithm's pivot as bad as it can be. */
typedef struct adversary {
  int64_t *val, gas, nsolid, candidate;
} adversary;

static bool adversary_less(const ord_item *a, const ord_item *b, const void *ctx) {
  adversary *ad = (adversary *)(uintptr_t)ctx;
  int64_t x = a->idx, y = b->idx;
  if (ad->val[x] == ad->gas && ad->val[y] == ad->gas) ad->val[x == ad->candidate ? x : y] = ad->nsolid++;
  if (ad->val[x] == ad->gas) ad->candidate = x;
  else if (ad->val[y] == ad->gas) ad->candidate = y;
  return ad->val[x] < ad->val[y];
}

static void killer(int64_t n, int64_t nth, bool select, int64_t *val) {
  ord_item v[2048];
  adversary ad = {val, n, 0, 0};
  for (int64_t i = 0; i < n; i++) val[i] = n, v[i].idx = i, v[i].key.i = 0;
  if (select) ord_std_nth_element(v, nth, n, adversary_less, &ad);
  else ord_std_sort(v, n, adversary_less, &ad);
  for (int64_t i = 0; i < n; i++)
    if (val[i] == n) val[i] = ad.nsolid++;
}

TEST(adversary_inputs) {
  static int64_t val[2048];
  static ord_item v[2048];
  const int64_t sizes[] = {64, 500, 2048};
  for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
    int64_t n = sizes[s];
    killer(n, 0, false, val); /* the values the adversary settled on, sorted for real, and with ties */
    for (int half = 0; half < 2; half++) {
      for (int64_t i = 0; i < n; i++) v[i].key.i = half ? val[i] / 2 : val[i], v[i].idx = i;
      ord_std_sort(v, n, less_int, NULL);
      CHECK(sorted_int(v, n) && is_permutation(v, n));
    }
    killer(n, (n - 1) / 2, true, val);
    for (int64_t i = 0; i < n; i++) v[i].key.i = val[i], v[i].idx = i;
    ord_std_nth_element(v, (n - 1) / 2, n, less_int, NULL);
    CHECK(selected_int(v, n, (n - 1) / 2) && v[(n - 1) / 2].key.i == (n - 1) / 2 && is_permutation(v, n));
  }
}

TEST_MAIN(random_rows_with_ties, partial_sort, nan_order, adversary_inputs)
