/*
 * box-mounter: binds workspaces into pre-started sandboxes for the server, without a shell or a
 * mount(8) per request.
 *
 * The server starts one per pool, as root in the host's mount namespace, and keeps its stdin and
 * stdout. Each request is one operation byte and its paths, each path a 4-byte little-endian
 * length and that many bytes (no NUL, absolute, at most PATH_MAX); each answer is the errno of the
 * first failed step (4 bytes, little-endian, 0 when all succeeded) and the number of that step (1
 * byte). It does exactly what these commands did:
 *
 *   'B' SRC STAGE SLOT: mount --rbind -o nosuid,nodev SRC STAGE && mount --move STAGE SLOT
 *   'D' POINT:          umount --lazy POINT
 *   'J' SRC NS TARGET:  a recursive bind of SRC (nosuid,nodev), made here and moved onto TARGET
 *                       in the mount namespace NS (/proc/<pid>/ns/mnt of a running sandbox),
 *                       where TARGET resolves as the sandbox sees it
 *
 * It reads only what the server writes (the pipe is the server's), ends at the end of its input
 * (the server closed it, or died), and never runs anything.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_PATHS 3

/* In the child of join: reports errno and the failed step on the pipe, then exits. */
static void report(int pipe, unsigned char step) {
  int error = errno;
  unsigned char out[5] = {
      (unsigned char)error, (unsigned char)(error >> 8), (unsigned char)(error >> 16),
      (unsigned char)(error >> 24), step};
  ssize_t n;
  do {
    n = write(pipe, out, sizeof out);
  } while (n < 0 && errno == EINTR);
  _exit(1);
}

/* The bind of 'J': cloned here (open_tree), flagged, and attached by a child that joins NS, so
 * that this process never leaves the host's mount namespace. The child reports a failure's errno
 * and step on a pipe, so that no errno is lost to an exit code. Returns 0 or an errno, and the
 * failed step in *step. */
static int join(const char *src, const char *ns, const char *target, unsigned char *step) {
  /* SRC is a real path already: a symbolic link put there since is not followed. */
  int tree =
      open_tree(AT_FDCWD, src, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE | AT_SYMLINK_NOFOLLOW);
  if (tree < 0) {
    *step = 5;
    return errno;
  }
  struct mount_attr attr = {.attr_set = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV};
  if (mount_setattr(tree, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof attr) != 0) {
    int error = errno;
    close(tree);
    *step = 6;
    return error;
  }
  int nsfd = open(ns, O_RDONLY | O_CLOEXEC);
  if (nsfd < 0) {
    int error = errno;
    close(tree);
    *step = 7;
    return error;
  }
  int report_pipe[2];
  if (pipe2(report_pipe, O_CLOEXEC) != 0) {
    int error = errno;
    close(nsfd);
    close(tree);
    *step = 7;
    return error;
  }
  pid_t child = fork();
  if (child == 0) {
    close(report_pipe[0]);
    if (setns(nsfd, CLONE_NEWNS) != 0) {
      report(report_pipe[1], 7);
    }
    if (move_mount(tree, "", AT_FDCWD, target, MOVE_MOUNT_F_EMPTY_PATH) != 0) {
      report(report_pipe[1], 8);
    }
    _exit(0);
  }
  int fork_error = errno;
  close(report_pipe[1]);
  int error = 0;
  if (child < 0) {
    error = fork_error;
    *step = 7;
  } else {
    int status = 0;
    pid_t waited;
    while ((waited = waitpid(child, &status, 0)) < 0 && errno == EINTR) {
    }
    int wait_error = waited < 0 ? errno : 0;
    unsigned char in[5];
    ssize_t n;
    do {
      n = read(report_pipe[0], in, sizeof in);
    } while (n < 0 && errno == EINTR);
    if (n == (ssize_t)sizeof in) {
      error = (int)((uint32_t)in[0] | (uint32_t)in[1] << 8 | (uint32_t)in[2] << 16
          | (uint32_t)in[3] << 24);
      *step = in[4];
    } else if (waited < 0) {
      error = wait_error;
      *step = 8;
    } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      /* Killed, or ended without a word: nothing says why. */
      error = EIO;
      *step = 8;
    }
  }
  close(report_pipe[0]);
  close(nsfd);
  close(tree); /* a tree never attached goes with its last descriptor */
  return error;
}

/* Reads (from stdin) or writes (to stdout) all len bytes; -1 on an error or the end of input. */
static int transfer(int writing, void *buf, size_t len) {
  char *p = buf;
  while (len > 0) {
    ssize_t n = writing ? write(1, p, len) : read(0, p, len);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      return -1;
    }
    p += n;
    len -= (size_t)n;
  }
  return 0;
}

static int read_full(void *buf, size_t len) { return transfer(0, buf, len); }

static int write_full(const void *buf, size_t len) { return transfer(1, (void *)buf, len); }

/* Reads one path into buf (PATH_MAX + 1 bytes); -1 ends the program (a broken request stream). */
static int read_path(char *buf) {
  unsigned char len[4];
  if (read_full(len, sizeof len) != 0) {
    return -1;
  }
  uint32_t n = (uint32_t)len[0] | (uint32_t)len[1] << 8 | (uint32_t)len[2] << 16
      | (uint32_t)len[3] << 24;
  if (n == 0 || n > PATH_MAX || read_full(buf, n) != 0) {
    return -1;
  }
  buf[n] = '\0';
  if (buf[0] != '/' || strlen(buf) != n) {
    return -1;
  }
  return 0;
}

static int answer(int error, unsigned char step) {
  uint32_t e = (uint32_t)error;
  unsigned char out[5] = {
      (unsigned char)e, (unsigned char)(e >> 8), (unsigned char)(e >> 16),
      (unsigned char)(e >> 24), step};
  return write_full(out, sizeof out);
}

int main(void) {
  static char paths[MAX_PATHS][PATH_MAX + 1];
  /* No parent-death signal: the kernel sends it when the thread that started this program ends,
   * and the server's threads come and go. When the server dies its end of the pipe closes, and the
   * read below ends the program. */
  for (;;) {
    unsigned char op;
    if (read_full(&op, 1) != 0) {
      return 0;
    }
    int count = op == 'B' || op == 'J' ? 3 : op == 'D' ? 1 : -1;
    if (count < 0) {
      return 2;
    }
    for (int i = 0; i < count; i++) {
      if (read_path(paths[i]) != 0) {
        return 2;
      }
    }
    int rc;
    if (op == 'B') {
      unsigned long flags = MS_NOSUID | MS_NODEV;
      if (mount(paths[0], paths[1], NULL, flags | MS_BIND | MS_REC, NULL) != 0) {
        rc = answer(errno, 1);
      } else if (mount("none", paths[1], NULL, flags | MS_REMOUNT | MS_BIND | MS_REC, NULL) != 0) {
        int error = errno;
        umount2(paths[1], MNT_DETACH);
        rc = answer(error, 2);
      } else if (mount(paths[1], paths[2], NULL, MS_MOVE, NULL) != 0) {
        int error = errno;
        umount2(paths[1], MNT_DETACH);
        rc = answer(error, 3);
      } else {
        rc = answer(0, 0);
      }
    } else if (op == 'J') {
      unsigned char step = 0;
      int error = join(paths[0], paths[1], paths[2], &step);
      rc = answer(error, error != 0 ? step : 0);
    } else {
      int error = umount2(paths[0], MNT_DETACH) != 0 ? errno : 0;
      rc = answer(error, error != 0 ? 4 : 0);
    }
    if (rc != 0) {
      return 0;
    }
  }
}
