/*
 * npy.h — reading and writing NumPy .npy files (format versions 1.0-3.0,
 * little-endian, C order), for `rlx run`.
 *
 *   offset  size  field
 *   0       6     magic "\x93NUMPY"
 *   6       2     major, minor version
 *   8       2|4   header length H (u16 for 1.0, u32 for 2.0/3.0)
 *   10|12   H     ASCII dict {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
 *   ...           raw data
 */
#ifndef RLX_NPY_H
#define RLX_NPY_H

#include "rlx.h"

/* Reads path into a newly allocated view (free view->data with free()).
 * Errors (message in rlx_last_error()): malformed header, unsupported descr,
 * Fortran order, truncated data. */
rlx_status rlx_npy_read(const char *path, rlx_tensor_view *view);
rlx_status rlx_npy_write(const char *path, const rlx_tensor_view *view);

#endif
