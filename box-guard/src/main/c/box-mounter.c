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
 *   'I' SRC TARGET IDS: an idmapped recursive bind of SRC (nosuid,nodev, and read-only when asked)
 *                       attached at TARGET in the host's namespace. IDS follow the paths: the
 *                       folder's owner uid and gid, the sandbox user's host uid and gid (4 bytes
 *                       each), the folder's device and inode (8 bytes each) and the flags (4
 *                       bytes, 1 = read-only), all little-endian. The mount shows the owner's
 *                       files as the sandbox user's, and what the sandbox user writes lands on disk
 *                       as the owner's; any other id is nobody through it. The folder mounted is
 *                       the one opened (a symbolic link is not followed), and only when it is
 *                       still the device, inode, owner and group the server checked: a folder
 *                       swapped in since is refused (ESTALE), never mounted.
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
#include <stdio.h>
#include <string.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_PATHS 3
#define IDMAP_READ_ONLY 1u

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

/* The ids and the identity of the folder of an 'I' request. */
struct idmap_request {
  uint32_t owner_uid, owner_gid, sandbox_uid, sandbox_gid;
  uint64_t dev, ino;
  uint32_t flags;
};

/* Writes all of text to the file path (one write, as the kernel wants a map); 0 or an errno. */
static int write_file(const char *path, const char *text) {
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) {
    return errno;
  }
  size_t len = strlen(text);
  ssize_t n = write(fd, text, len);
  int error = n == (ssize_t)len ? 0 : n < 0 ? errno : EIO;
  close(fd);
  return error;
}

/* A user namespace whose only mapping sends the owner (inside) to the sandbox user (outside):
 * made by a child that unshares and waits while this process writes its maps and opens it, then
 * ends. Returns its descriptor, or -1 with errno set. */
static int mapping_namespace(const struct idmap_request *r) {
  int ready[2], hold[2];
  if (pipe2(ready, O_CLOEXEC) != 0) {
    return -1;
  }
  if (pipe2(hold, O_CLOEXEC) != 0) {
    int error = errno;
    close(ready[0]);
    close(ready[1]);
    errno = error;
    return -1;
  }
  pid_t child = fork();
  if (child == 0) {
    close(ready[0]);
    close(hold[1]);
    char ok = unshare(CLONE_NEWUSER) == 0 ? 1 : 0;
    ssize_t n;
    do {
      n = write(ready[1], &ok, 1);
    } while (n < 0 && errno == EINTR);
    char byte;
    do {
      n = read(hold[0], &byte, 1); /* until the parent closes its end */
    } while (n < 0 && errno == EINTR);
    _exit(0);
  }
  int error = child < 0 ? errno : 0;
  close(ready[1]);
  close(hold[0]);
  int ns = -1;
  if (child > 0) {
    char ok = 0;
    ssize_t n;
    do {
      n = read(ready[0], &ok, 1);
    } while (n < 0 && errno == EINTR);
    char path[64], map[64];
    if (n != 1 || !ok) {
      error = EPERM;
    } else {
      snprintf(path, sizeof path, "/proc/%d/uid_map", (int)child);
      snprintf(map, sizeof map, "%u %u 1\n", r->owner_uid, r->sandbox_uid);
      error = write_file(path, map);
    }
    if (error == 0) {
      snprintf(path, sizeof path, "/proc/%d/gid_map", (int)child);
      snprintf(map, sizeof map, "%u %u 1\n", r->owner_gid, r->sandbox_gid);
      error = write_file(path, map);
    }
    if (error == 0) {
      snprintf(path, sizeof path, "/proc/%d/ns/user", (int)child);
      ns = open(path, O_RDONLY | O_CLOEXEC);
      error = ns < 0 ? errno : 0;
    }
  }
  close(hold[1]);
  close(ready[0]);
  if (child > 0) {
    kill(child, SIGKILL);
    while (waitpid(child, NULL, 0) < 0 && errno == EINTR) {
    }
  }
  errno = error;
  return error == 0 ? ns : -1;
}

/* The mount of 'I'. Returns 0 or an errno, and the failed step in *step. */
static int idmap(const char *src, const char *target, const struct idmap_request *r,
    unsigned char *step) {
  /* SRC is a real path already: a symbolic link put there since is not followed, and the folder
   * opened must be the one the server checked. */
  int tree =
      open_tree(AT_FDCWD, src, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE | AT_SYMLINK_NOFOLLOW);
  if (tree < 0) {
    *step = 5;
    return errno;
  }
  struct stat st;
  if (fstat(tree, &st) != 0) {
    int error = errno;
    close(tree);
    *step = 9;
    return error;
  }
  if (!S_ISDIR(st.st_mode) || (uint64_t)st.st_dev != r->dev || (uint64_t)st.st_ino != r->ino
      || st.st_uid != r->owner_uid || st.st_gid != r->owner_gid) {
    close(tree);
    *step = 9;
    return ESTALE;
  }
  int ns = mapping_namespace(r);
  if (ns < 0) {
    int error = errno;
    close(tree);
    *step = 10;
    return error;
  }
  struct mount_attr attr = {
      .attr_set = MOUNT_ATTR_IDMAP | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV
          | ((r->flags & IDMAP_READ_ONLY) ? MOUNT_ATTR_RDONLY : 0),
      .userns_fd = (uint64_t)ns};
  int error = 0;
  if (mount_setattr(tree, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof attr) != 0) {
    error = errno;
    *step = 11;
  } else if (move_mount(tree, "", AT_FDCWD, target, MOVE_MOUNT_F_EMPTY_PATH) != 0) {
    error = errno;
    *step = 8;
  }
  close(ns);
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

/* Reads an 'I' request's ids (after its paths); -1 ends the program. */
static int read_ids(struct idmap_request *r) {
  unsigned char in[36];
  if (read_full(in, sizeof in) != 0) {
    return -1;
  }
  uint32_t w[9];
  for (int i = 0; i < 9; i++) {
    w[i] = (uint32_t)in[4 * i] | (uint32_t)in[4 * i + 1] << 8 | (uint32_t)in[4 * i + 2] << 16
        | (uint32_t)in[4 * i + 3] << 24;
  }
  r->owner_uid = w[0];
  r->owner_gid = w[1];
  r->sandbox_uid = w[2];
  r->sandbox_gid = w[3];
  r->dev = (uint64_t)w[4] | (uint64_t)w[5] << 32;
  r->ino = (uint64_t)w[6] | (uint64_t)w[7] << 32;
  r->flags = w[8];
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
   * read below ends the program. A Ctrl-C, SIGTERM or hang-up sent to the server's process group
   * is the server's to handle, and its shutdown still detaches workspaces through this program. */
  signal(SIGINT, SIG_IGN);
  signal(SIGTERM, SIG_IGN);
  signal(SIGHUP, SIG_IGN);
  signal(SIGQUIT, SIG_IGN);
  for (;;) {
    unsigned char op;
    if (read_full(&op, 1) != 0) {
      return 0;
    }
    int count = op == 'B' || op == 'J' ? 3 : op == 'I' ? 2 : op == 'D' ? 1 : -1;
    if (count < 0) {
      return 2;
    }
    for (int i = 0; i < count; i++) {
      if (read_path(paths[i]) != 0) {
        return 2;
      }
    }
    struct idmap_request ids = {0};
    if (op == 'I' && read_ids(&ids) != 0) {
      return 2;
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
    } else if (op == 'I') {
      unsigned char step = 0;
      int error = idmap(paths[0], paths[1], &ids, &step);
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
