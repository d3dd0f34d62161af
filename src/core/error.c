/*
 * error.c — status strings and the thread-local last-error message.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core.h"

#define RLX_ERR_CAP 4096

static _Thread_local char err_buf[RLX_ERR_CAP];
static _Thread_local rlx_status err_status;

const char *rlx_status_string(rlx_status s) {
  static const char *const names[RLX_STATUS_COUNT] = {
      [RLX_OK] = "ok",
      [RLX_ERR_INVALID_ARGUMENT] = "invalid argument",
      [RLX_ERR_IO] = "i/o error",
      [RLX_ERR_FORMAT] = "format error",
      [RLX_ERR_UNSUPPORTED] = "unsupported",
      [RLX_ERR_SHAPE] = "shape mismatch",
      [RLX_ERR_NOT_FOUND] = "not found",
      [RLX_ERR_OUT_OF_MEMORY] = "out of memory",
      [RLX_ERR_RUNTIME] = "runtime error",
      [RLX_ERR_INTERNAL] = "internal error",
  };
  if ((unsigned)s >= RLX_STATUS_COUNT) return "unknown status";
  return names[s];
}

const char *rlx_last_error(void) { return err_buf; }

void rlx_error_clear(void) {
  err_buf[0] = '\0';
  err_status = RLX_OK;
}

rlx_status rlx_last_status(void) { return err_status ? err_status : RLX_ERR_INTERNAL; }

rlx_status rlx_errorf(rlx_status s, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err_buf, sizeof err_buf, fmt, ap);
  va_end(ap);
  err_status = s;
  return s;
}

void rlx_error_prefix(const char *fmt, ...) {
  char head[1024];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(head, sizeof head, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  size_t hl = strlen(head), ml = strlen(err_buf);
  if (hl + ml + 1 > sizeof err_buf) ml = sizeof err_buf - hl - 1;
  memmove(err_buf + hl, err_buf, ml);
  memcpy(err_buf, head, hl);
  err_buf[hl + ml] = '\0';
}
