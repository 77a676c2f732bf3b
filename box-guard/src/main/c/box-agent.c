/*
 * box-agent: starts the processes of one Box sandbox on the server's request.
 *
 *   box-agent SOCKET
 *
 * Runs inside the sandbox as its PID 1 (bubblewrap, nsjail) or as the child of its init
 * (containers), as the sandbox user, under box-guard's seccomp filter: everything it forks inherits
 * the user, the filter and no-new-privileges. It connects to SOCKET, a Unix socket the server
 * listens on and mounts into this sandbox only, says hello, and then serves requests until the
 * server closes the connection, when it exits (as PID 1 that ends the sandbox).
 *
 * The agent is not trusted by the server: code in the sandbox runs as the same user and may kill
 * or replace it. The server bounds every frame, puts every process into its cgroup itself before
 * letting it run, and kills by cgroup. The agent never carries output: a process's stdout and
 * stderr (and stdin, when asked) are connections of their own to the same socket, which the
 * server reads and writes directly.
 *
 * Frames, both ways: u32 length (big-endian, of what follows), u8 type, payload; integers
 * big-endian.
 *   server -> agent, on the agent's connection
 *     'S' spawn: u32 id, u64 token, u8 flags (1: stdin is a connection too, else /dev/null),
 *                u32 argc, argc strings, u32 envc, envc strings; a string is u32 length and
 *                bytes (no NUL inside)
 *     'G' go:    u32 id    the process is in its cgroup: let it exec
 *     'C' cancel: u32 id   do not run it: it is killed
 *   agent -> server, on the agent's connection
 *     'H' hello: u32 version, u32 own pid
 *     'P' pid:   u32 id, u32 pid   forked, waiting for go (pid as the sandbox sees it)
 *     'F' failed: u32 id, u32 errno  could not connect its streams or fork
 *     'X' exit:  u32 id, u32 wait status
 *   agent -> server, first on each stream connection
 *     'O' stream: u32 id, u64 token, u8 fd (0, 1 or 2)
 *
 * A forked process waits for its go byte before anything else; if the agent dies first, it exits
 * with 127 without running. The agent keeps nothing of its streams once it has forked it.
 *
 * Any malformed request ends the agent (status 2). Built statically so that it runs in any image.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#define AGENT_VERSION 1
#define MAX_FRAME (16u << 20)
#define MAX_WORDS 65536u
#define MAX_PROCS 4096

struct proc {
  uint32_t id;
  pid_t pid;
  int go;
};

static struct proc procs[MAX_PROCS];
static int nprocs;
static int sock = -1;
static struct sockaddr_un addr = {.sun_family = AF_UNIX};

static void die(const char *what) {
  fprintf(stderr, "box-agent: %s: %s\n", what, strerror(errno));
  _exit(2);
}

static void bad(const char *what) {
  fprintf(stderr, "box-agent: bad request: %s\n", what);
  _exit(2);
}

static void put32(unsigned char *p, uint32_t v) {
  p[0] = v >> 24;
  p[1] = v >> 16;
  p[2] = v >> 8;
  p[3] = v;
}

static uint32_t get32(const unsigned char *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void write_all(const unsigned char *buf, size_t len) {
  while (len > 0) {
    ssize_t n = write(sock, buf, len);
    if (n < 0) {
      if (errno == EINTR) continue;
      /* The server is gone: so is this sandbox. */
      _exit(0);
    }
    buf += n;
    len -= (size_t)n;
  }
}

/* A frame of type t with two u32 fields. */
static void send2(char t, uint32_t a, uint32_t b) {
  unsigned char f[13];
  put32(f, 9);
  f[4] = (unsigned char)t;
  put32(f + 5, a);
  put32(f + 9, b);
  write_all(f, sizeof f);
}

/* A new connection to the server that says it is stream `fd` of process `id`; -1 on failure. */
static int stream(uint32_t id, const unsigned char *token, unsigned char fd) {
  int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s < 0) return -1;
  if (connect(s, (struct sockaddr *)&addr, sizeof addr) < 0) {
    int e = errno;
    close(s);
    errno = e;
    return -1;
  }
  unsigned char h[18];
  put32(h, 14);
  h[4] = 'O';
  put32(h + 5, id);
  memcpy(h + 9, token, 8);
  h[17] = fd;
  const unsigned char *p = h;
  size_t left = sizeof h;
  while (left > 0) {
    ssize_t n = write(s, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      int e = errno;
      close(s);
      errno = e;
      return -1;
    }
    p += n;
    left -= (size_t)n;
  }
  return s;
}

static int read_all(unsigned char *buf, size_t len) {
  while (len > 0) {
    ssize_t n = read(sock, buf, len);
    if (n == 0) return 0;
    if (n < 0) {
      if (errno == EINTR) continue;
      return 0;
    }
    buf += n;
    len -= (size_t)n;
  }
  return 1;
}

static struct proc *find(uint32_t id) {
  for (int i = 0; i < nprocs; i++) {
    if (procs[i].id == id) return &procs[i];
  }
  return NULL;
}

static void forget(struct proc *p) { *p = procs[--nprocs]; }

/* Reads count strings from the payload at *at into a NULL-terminated vector. */
static char **words(unsigned char *payload, uint32_t len, uint32_t *at) {
  if (len - *at < 4) bad("truncated count");
  uint32_t count = get32(payload + *at);
  *at += 4;
  if (count > MAX_WORDS) bad("too many words");
  char **v = calloc((size_t)count + 1, sizeof *v);
  if (v == NULL) die("calloc");
  for (uint32_t i = 0; i < count; i++) {
    if (len - *at < 4) bad("truncated length");
    uint32_t n = get32(payload + *at);
    *at += 4;
    if (n > len - *at) bad("truncated word");
    if (memchr(payload + *at, 0, n) != NULL) bad("NUL in a word");
    v[i] = strndup((char *)payload + *at, n);
    if (v[i] == NULL) die("strndup");
    *at += n;
  }
  return v;
}

static void free_words(char **v) {
  for (char **w = v; *w != NULL; w++) free(*w);
  free(v);
}

/* Closes every descriptor from `first` on; false when that cannot be done. */
static int close_from(unsigned first) {
  if (syscall(SYS_close_range, first, ~0u, 0u) == 0) return 1;
  if (errno != ENOSYS) return 0;
  /* A kernel older than 5.9: close one by one, up to the limit. */
  long max = sysconf(_SC_OPEN_MAX);
  for (long fd = first; fd < (max > 0 ? max : 1024); fd++) close((int)fd);
  return 1;
}

/* In the child: stdio in place, then wait for go on fd `gate`, then exec. Never returns. */
static void child(char **argv, char **envp, int in, int out, int err, int gate) {
  sigset_t none;
  sigemptyset(&none);
  if (sigprocmask(SIG_SETMASK, &none, NULL) < 0) _exit(127);
  signal(SIGPIPE, SIG_DFL);
  setsid();
  /* Above 3 first: when the agent started with 0-2 closed, a stream may be 0-3 itself, and a
   * dup2 onto its own number keeps close-on-exec. Then each onto its place, from a copy that no
   * other dup2 overwrites. */
  int from[4] = {in, out, err, gate};
  for (int i = 0; i < 4; i++) {
    from[i] = fcntl(from[i], F_DUPFD_CLOEXEC, 4);
    if (from[i] < 0) _exit(127);
  }
  for (int i = 0; i < 4; i++) {
    if (dup2(from[i], i) < 0) _exit(127);
  }
  if (!close_from(4)) _exit(127);
  char go;
  ssize_t n;
  do {
    n = read(3, &go, 1);
  } while (n < 0 && errno == EINTR);
  if (n != 1) _exit(127);
  close(3);
  execve(argv[0], argv, envp);
  _exit(127);
}

static void spawn(unsigned char *payload, uint32_t len) {
  if (len < 13) bad("short spawn");
  uint32_t id = get32(payload);
  const unsigned char *token = payload + 4;
  unsigned char flags = payload[12];
  uint32_t at = 13;
  if (find(id) != NULL) bad("id in use");
  char **argv = words(payload, len, &at);
  char **envp = words(payload, len, &at);
  if (at != len) bad("trailing bytes");
  if (argv[0] == NULL) bad("empty argv");
  int gate[2] = {-1, -1}, out = -1, err = -1, in = -1;
  int failed = 0;
  if (nprocs == MAX_PROCS) {
    failed = EAGAIN;
  } else if (pipe2(gate, O_CLOEXEC) < 0) {
    failed = errno;
  } else if ((out = stream(id, token, 1)) < 0 || (err = stream(id, token, 2)) < 0) {
    failed = errno;
  } else if (flags & 1) {
    if ((in = stream(id, token, 0)) < 0) failed = errno;
  } else if ((in = open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0) {
    failed = errno;
  }
  pid_t pid = -1;
  if (!failed) {
    pid = fork();
    if (pid < 0) failed = errno;
    if (pid == 0) child(argv, envp, in, out, err, gate[0]);
  }
  int fds[] = {gate[0], out, err, in};
  for (size_t i = 0; i < sizeof fds / sizeof fds[0]; i++) {
    if (fds[i] >= 0) close(fds[i]);
  }
  free_words(argv);
  free_words(envp);
  if (failed) {
    if (gate[1] >= 0) close(gate[1]);
    send2('F', id, (uint32_t)failed);
    return;
  }
  procs[nprocs++] = (struct proc){.id = id, .pid = pid, .go = gate[1]};
  send2('P', id, (uint32_t)pid);
}

static void gate(unsigned char *payload, uint32_t len, int go) {
  if (len != 4) bad("short go or cancel");
  struct proc *p = find(get32(payload));
  if (p == NULL || p->go < 0) {
    /* It may have ended already (cancelled, killed): nothing to do. */
    return;
  }
  if (go) {
    ssize_t n;
    do {
      n = write(p->go, "g", 1);
    } while (n < 0 && errno == EINTR);
  } else {
    kill(p->pid, SIGKILL);
  }
  close(p->go);
  p->go = -1;
}

static void request(void) {
  unsigned char head[5];
  if (!read_all(head, sizeof head)) _exit(0);
  uint32_t len = get32(head);
  if (len < 1 || len > MAX_FRAME) bad("frame length");
  len -= 1;
  unsigned char *payload = malloc(len ? len : 1);
  if (payload == NULL) die("malloc");
  if (!read_all(payload, len)) _exit(0);
  switch (head[4]) {
    case 'S':
      spawn(payload, len);
      break;
    case 'G':
      gate(payload, len, 1);
      break;
    case 'C':
      gate(payload, len, 0);
      break;
    default:
      bad("unknown type");
  }
  free(payload);
}

/* Reaps every child that ended: those the server started are reported, orphans only reaped. */
static void reap(int sigfd) {
  struct signalfd_siginfo info;
  while (read(sigfd, &info, sizeof info) > 0) {
  }
  int status;
  pid_t pid;
  while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
    for (int i = 0; i < nprocs; i++) {
      if (procs[i].pid == pid) {
        send2('X', procs[i].id, (uint32_t)status);
        if (procs[i].go >= 0) close(procs[i].go);
        forget(&procs[i]);
        break;
      }
    }
  }
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: box-agent SOCKET\n");
    return 2;
  }
  if (strlen(argv[1]) >= sizeof addr.sun_path) {
    fprintf(stderr, "box-agent: socket path too long\n");
    return 2;
  }
  strcpy(addr.sun_path, argv[1]);
  sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (sock < 0) die("socket");
  if (connect(sock, (struct sockaddr *)&addr, sizeof addr) < 0) die("connect");
  signal(SIGPIPE, SIG_IGN);
  /* Other processes of the sandbox user may not read this one's memory (the tokens). */
  if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0) die("prctl");
  sigset_t chld;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  if (sigprocmask(SIG_BLOCK, &chld, NULL) < 0) die("sigprocmask");
  int sigfd = signalfd(-1, &chld, SFD_NONBLOCK | SFD_CLOEXEC);
  if (sigfd < 0) die("signalfd");
  send2('H', AGENT_VERSION, (uint32_t)getpid());
  for (;;) {
    struct pollfd fds[2] = {{.fd = sock, .events = POLLIN}, {.fd = sigfd, .events = POLLIN}};
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      die("poll");
    }
    if (fds[1].revents & POLLIN) reap(sigfd);
    if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) request();
  }
}
