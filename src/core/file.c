/*
 * file.c — opening the files an export directory names, which are untrusted:
 * a path may be a FIFO with no writer (open would block forever), a device
 * such as /dev/zero (read until memory runs out), a directory, or a symlink
 * to any of those. rlx opens without blocking, requires a regular file, and
 * bounds what it reads into memory.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/core.h"

static const char *kind_of(mode_t m) {
  if (S_ISDIR(m)) return "a directory";
  if (S_ISFIFO(m)) return "a FIFO";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISSOCK(m)) return "a socket";
  return "not a regular file";
}

rlx_status rlx_file_open(const char *path, int *fd_out, uint64_t *size_out) {
  /* O_NONBLOCK: opening a FIFO with no writer returns at once */
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return rlx_errorf(RLX_ERR_IO, "cannot open %s: %s", path, strerror(errno));
  struct stat sb;
  if (fstat(fd, &sb) != 0) {
    int e = errno;
    close(fd);
    return rlx_errorf(RLX_ERR_IO, "cannot stat %s: %s", path, strerror(e));
  }
  if (!S_ISREG(sb.st_mode)) {
    close(fd);
    return rlx_errorf(RLX_ERR_IO, "%s is %s; rlx reads regular files only", path, kind_of(sb.st_mode));
  }
  int fl = fcntl(fd, F_GETFL);
  if (fl >= 0) (void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
  *fd_out = fd;
  *size_out = (uint64_t)sb.st_size;
  return RLX_OK;
}

rlx_status rlx_read_file(const char *path, size_t max_bytes, char **buf_out, size_t *len_out) {
  int fd;
  uint64_t size;
  rlx_status st = rlx_file_open(path, &fd, &size);
  if (st) return st;
  if (size > max_bytes) {
    close(fd);
    return rlx_errorf(RLX_ERR_FORMAT, "%s is %llu bytes; rlx reads at most %zu bytes of it", path,
                      (unsigned long long)size, max_bytes);
  }
  char *buf = rlx_malloc((size_t)size + 1);
  if (!buf) {
    close(fd);
    return rlx_errorf(RLX_ERR_OUT_OF_MEMORY, "out of memory reading %s (%llu bytes)", path,
                      (unsigned long long)size);
  }
  size_t len = 0;
  while (len < size) { /* a file that shrinks meanwhile reads short; one that grows is cut */
    ssize_t n = read(fd, buf + len, (size_t)size - len);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int e = errno;
      rlx_free(buf);
      close(fd);
      return rlx_errorf(RLX_ERR_IO, "error reading %s: %s", path, strerror(e));
    }
    if (n == 0) break;
    len += (size_t)n;
  }
  close(fd);
  buf[len] = '\0';
  *buf_out = buf;
  *len_out = len;
  return RLX_OK;
}
