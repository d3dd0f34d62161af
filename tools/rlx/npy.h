/*
 * npy.h — reading and writing NumPy .npy files (format versions 1.0-3.0,
 * little-endian, C order), for `rlx run`.
 *
 *   offset  size  field
 *   0       6     magic "\x93NUMPY"
 *   6       2     major, minor version (major 1, 2 or 3)
 *   8       2|4   header length H, little-endian (u16 for 1.x, u32 for 2.x/3.x)
 *   10|12   H     ASCII (3.x: UTF-8) dict, e.g.
 *                 {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
 *   10|12+H ...   raw data, numel x element size bytes (trailing bytes ignored)
 *
 * Supported descrs: <f4 <f2 <f8 <i8 <i4 <i2 |i1 |u1 |b1. Big-endian data,
 * other dtypes, Fortran order and ranks above RLX_MAX_RANK are refused.
 *
 * The reader treats the file as hostile: the header length is checked against
 * the image, the header is at most 1 MiB and NUL-free, the shape's byte size
 * is computed with overflow checks (at most 2^62), and the data must fit in
 * what follows the header. Errors name the path and the problem, with byte
 * offsets where they help.
 */
#ifndef RLX_NPY_H
#define RLX_NPY_H

#include <stddef.h>

#include "rlx.h"

/* Parses an in-memory .npy image (`len` bytes at `buf`; `path` is only used
 * in messages) into *view: dtype and shape from the header, and a malloc'd
 * copy of the data (free view->data with free(); at least one byte is
 * allocated, so data is non-NULL on success even for an empty array).
 * *view is zeroed first and left with data NULL on error.
 * Errors (message in rlx_last_error()): RLX_ERR_FORMAT (bad magic, truncated
 * or malformed header, truncated data, size overflow), RLX_ERR_UNSUPPORTED
 * (version, descr, Fortran order, rank), RLX_ERR_OUT_OF_MEMORY.
 * Thread-safe: no shared state besides the thread's error message. */
rlx_status rlx_npy_parse(const void *buf, size_t len, const char *path, rlx_tensor_view *view);

/* Reads the file at `path` and parses it with rlx_npy_parse. Only regular
 * files are read: the path is opened non-blocking and refused unless fstat
 * says it is a regular file, so a FIFO with no writer, a directory or a
 * device such as /dev/zero is an error, never a hang or an endless read.
 * The whole file is read into a temporary buffer, so reading needs about
 * twice the file's size in memory for a moment.
 * Errors: RLX_ERR_IO (cannot open or read, not a regular file), and those of
 * rlx_npy_parse. */
rlx_status rlx_npy_read(const char *path, rlx_tensor_view *view);

/* Writes `view` as a version 1.0 .npy file (bf16 is widened to f32, since
 * NumPy has no bf16). Errors: RLX_ERR_IO, RLX_ERR_OUT_OF_MEMORY. */
rlx_status rlx_npy_write(const char *path, const rlx_tensor_view *view);

#endif
