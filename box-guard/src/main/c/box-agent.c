/*
 * box-agent: starts the processes of one Box sandbox on the server's request.
 *
 *   box-agent SOCKET                                          Unix mode
 *   box-agent --home DIR SOCKET                               Unix mode, as a sandbox's holder
 *   box-agent --listen PORT SECRET_FILE [--netns USERFD NETFD]   network mode
 *   box-agent --pipe PORT                                     a pipe to a local agent
 *   box-agent --relay SOCKET PORT                             a relay to a forwarded port
 *
 * Runs inside the sandbox as its PID 1 (bubblewrap, nsjail) or as the child of its init
 * (containers, pods), as the sandbox user, under box-guard's seccomp filter: everything it forks
 * inherits the user, the filter and no-new-privileges.
 *
 * The agent is not trusted by the server: code in the sandbox runs as the same user and may kill
 * or replace it. The server bounds every frame it reads from the agent. The agent never carries
 * output on a control: a process's stdout and stderr (and stdin, when asked) are connections of
 * their own, which the server reads and writes directly, or, for a held process (network mode),
 * which the agent relays to and from the process's pipes.
 *
 * Frames, both ways: u32 length (big-endian, of what follows), u8 type, payload; integers
 * big-endian.
 *   server -> agent, on a control connection
 *     'S' spawn: u32 id, u64 token, u8 flags (1: stdin is a connection too, else /dev/null;
 *                2: held, network mode only, see below; 4: a terminal, see below, only with 1
 *                and never with 2), with flag 4 u16 cols and u16 rows, then u32 argc, argc
 *                strings, u32 envc, envc strings; a string is u32 length and bytes (no NUL
 *                inside); at most 65536 strings of each kind, 16 MiB a frame
 *     'G' go:    u32 id    the process is in its cgroup: let it exec
 *     'C' cancel: u32 id   do not run it: it is killed
 *     'K' kill:  u32 id    (network mode only) end the process's whole tree
 *     'A' end all: no payload  (network mode only) end the trees of every process of every control
 *     'I' input end: u32 id  (network mode only) a held process's stdin ends after what came
 *     'R' reattach: u32 id, u64 token  (network mode only) take over an orphaned held process
 *     'Z' size:  u32 id, u16 cols, u16 rows  the terminal of process id has that size now; for
 *                an id that is no live terminal it is ignored
 *   agent -> server, on a control connection
 *     'H' hello: u32 version (1), u32 own pid
 *     'P' pid:   u32 id, u32 pid   forked, waiting for go (pid as the sandbox sees it)
 *     'F' failed: u32 id, u32 errno  could not get its streams or fork
 *     'X' exit:  u32 id, u32 wait status
 *     'Q' quiet: u32 id    (network mode only) its whole tree has ended; the id is forgotten
 *     'L' lost:  u32 id    (network mode only) its tree is no longer accounted for; forgotten
 *     'E' all ended: no payload  (network mode only) every tree 'A' ended has ended or been lost
 *     'W' written: u32 id, u64 offset  (network mode only) a reattached process's stdout goes on
 *                from that offset
 *
 * Unix mode. The agent connects to SOCKET, a Unix socket the server listens on and mounts into
 * this sandbox only, says hello, and serves requests until the server closes the connection, when
 * it exits (as PID 1 that ends the sandbox). The server puts every process into its cgroup itself
 * before letting it run, and kills by cgroup. For each spawn the agent makes the process's stream
 * connections to the same socket, each starting with the frame
 *     'O' stream: u32 id, u64 token, u8 fd (0, 1 or 2)
 * and then forks it. A forked process waits for its go byte before anything else; if the agent
 * dies first, it exits with 127 without running. The agent keeps nothing of its streams once it
 * has forked it. 'C' kills the process (SIGKILL). Any malformed request ends the agent (status 2).
 *
 * Network mode, where the server cannot reach the sandbox's cgroups and connects to the agent.
 * SECRET_FILE holds exactly 32 bytes (else the agent exits with status 2); the agent listens on
 * TCP PORT on all addresses (IPv6 and IPv4, or IPv4 alone) and serves until it is killed. Every
 * connection starts with a header: "BOXA", the 32 secret bytes, u8 kind, which must arrive within
 * 2 s; a header that is wrong in any way closes the connection without a word.
 *   kind 'C': a control connection. At most 8 at once (more are closed); each gets 'H' and is
 *     served as above. Ids are the control's own: a process belongs to the control that spawned
 *     it, and only that control hears of it. A malformed frame, or a frame or write that stalls
 *     for 2 s, closes that control only. When a control ends, its pending spawns are dropped and
 *     its processes that have not had go are cancelled, but its running processes go on: a session
 *     outlives the server (replica) that started them. They are orphans: no control hears of them
 *     again, the agent reaps their keepers, and their ids are forgotten once they end. Only 'A' (or
 *     the sandbox's end) kills them.
 *   kind 'O': a stream connection, followed by u32 id, u64 token, u8 fd: it becomes stream fd of
 *     the pending spawn with that id and token whose stream fd has not come yet; one that matches
 *     nothing is closed.
 * A spawn waits, pending, until its stdout, stderr (and stdin when asked) have come: then the
 * process is forked and 'P' sent. If they have not all come within 10 s: 'F' ETIMEDOUT. At most
 * 64 spawns are pending at once (more: 'F' EAGAIN).
 * The process of 'P' is a keeper: it waits for go, becomes the subreaper of its tree, forks the
 * real process (which gets the streams and execs), keeps no stream itself, and tells the agent the
 * real process's wait status as soon as it has ended ('X'). It then reaps whatever of the tree is
 * left to it and exits when nothing is: 'Q'. On SIGTERM it kills its tree (SIGKILL to each of its
 * children, again and again, as orphans come to it) and exits: 'X' if not sent yet (status 9 when
 * the real process was killed), then 'Q'. A keeper that ends otherwise (killed from within the
 * sandbox) gives 'X' with its own wait status if none was sent, then 'L'.
 *   'C' before go: the keeper exits without running anything: 'X' status 9, then 'Q'.
 *   'K' of a live process: SIGTERM to its keeper (the answer is 'Q' or 'L'); of a pending spawn:
 *     the spawn is dropped, 'F' ECANCELED and 'Q'; of an unknown id: 'Q' at once.
 *   'A': every pending spawn of every control is dropped ('F' ECANCELED to its control), every
 *     keeper, of every control and orphaned, gets SIGTERM as by 'K' (each control hears 'X' and 'Q'
 *     or 'L' of its own), and once none of them is left this control hears 'E' (at once when there
 *     was none). It is bounded by the keepers' own kill; the server bounds its wait anyway.
 * Held processes (network mode; Unix mode ignores flag 2 and knows neither 'I' nor 'R'). A spawn
 * with flag 2 gets pipes for its stdout and stderr, and for its stdin with flag 1 (else /dev/null):
 * the keeper gets their other ends as its 0-2, and the agent keeps its ends and the process's
 * stream connections and relays between them, never blocking: 64 KiB a stream, read from one side
 * only while there is room, so a process whose output nobody drains blocks writing and nothing is
 * dropped. At most 64 processes are held at once (a held spawn beyond: 'F' EAGAIN).
 *   stdout, stderr: what the pipe gives is written to the current stream connection, in order.
 *     The server never writes on it: when a read of it ends or fails, or a write fails, the agent
 *     closes it and keeps what it had not written, detached until a new one comes. Once the pipe
 *     is at its end and all is written, the agent closes the connection: the stream is done. The
 *     agent counts the stdout bytes it has written to connections.
 *   stdin: what the connection gives is written to the pipe. The end of the connection does not
 *     end the process's input (the server may only have gone away): 'I' does, once all that came
 *     on the current connection is in the pipe and the connection has ended (either may come
 *     first); the pipe is closed then and the process reads its end. 'I' of an id that is no held
 *     process with stdin is ignored. Once the pipe cannot be written (the process closed it or
 *     ended), what comes on stdin connections is read and dropped.
 * When a control ends, the current stream connections of its held processes are closed as well
 * (their buffers kept: the process runs on, orphaned). 'R' takes one over: id is a new id of the
 * control (one in use is malformed, as for 'S'), token that of the held process's spawn. When no
 * held process has it: 'F' ENOENT; when a live control owns it: 'F' EBUSY. Else it becomes the
 * control's process id, and the control hears 'P' id and its keeper's pid; 'W' id and the count
 * of stdout bytes written to earlier connections, where the next one goes on; 'X' if the real
 * process has ended, and 'Q' or 'L' if its keeper has, as they were when they happened; never 'G'.
 * The server then connects its streams anew, each 'O' with the new id and the spawn's token, and
 * each becomes the relay's connection for that fd if it has none (else it is closed); the process
 * is the control's from then on, as if it had spawned it. An 'I' that comes before the new stdin
 * connection has been taken waits for that connection's end too. After 'Q' or 'L' its id is free
 * as for any process ('K' of it is answered 'Q' at once, 'I' is ignored), but the agent keeps
 * the held process, its relays running, until its stdout and stderr are done and a live control
 * owns it (an orphan keeps its 'X' and 'Q' or 'L' for 'R'), or, orphaned, once its keeper has
 * ended after an 'A' (nobody reattaches then). 'A' waits for the keepers only, not for the output.
 * Terminals (both modes). A spawn with flag 4 runs on a pseudo-terminal the agent opens in the
 * sandbox (its /dev/ptmx; the process sees /dev/pts/N of the sandbox's devpts): the process has the
 * terminal's slave as its stdin, stdout and stderr and as its controlling terminal (its own
 * session), the size of the spawn is set before it runs, and its environment gets
 * TERM=xterm-256color unless it has a TERM. The agent keeps the master and relays it as it relays
 * a held process's pipes, with the same bounded buffers: what the terminal writes goes to the
 * stdout connection, what the stdin connection gives goes to the terminal; the stderr connection
 * is closed at once and carries nothing. The end of the stdin connection does not end the
 * terminal's input (a terminal has no end of input; its process ends by what it reads, or is
 * killed). The stdout connection ends once every process has closed the terminal and all is
 * written; while there is no stdout connection (the server closed it, or its control ended),
 * what the terminal writes is read and dropped. 'Z' sets the size, and the kernel sends SIGWINCH
 * to the terminal's foreground process group. A terminal is held as far as the bounds go: at most
 * 64 of terminals and held processes at once ('F' EAGAIN beyond). A sandbox where no terminal can
 * be opened (no devpts): 'F' with the errno. Exit, kill and, in network mode, the keeper are those
 * of any spawn; an orphaned terminal is forgotten once its keeper has ended.
 * With --netns, USERFD and NETFD are open descriptors of a user namespace and of a network
 * namespace (box-guard --net-off makes them): every keeper enters both before anything else, and
 * empties its bounding set again (entering a user namespace fills it), so that every process of the
 * sandbox runs in that network (only loopback), with no capability in any set, while the agent
 * stays in the pod's and is reached there. A keeper that cannot enter them exits 1 without running
 * anything: 'X' with that status, then 'L'.
 *
 * Pipe mode, where the server cannot reach the pod's network and reaches the agent through the
 * cluster's API server instead (its exec of this command in the pod): one connection to the agent
 * listening on 127.0.0.1:PORT, its bytes relayed to and from stdin and stdout unchanged (the
 * secret and every frame pass through; the pipe understands none of them). The end of stdin shuts
 * the connection's sending half; the pipe exits 0 once the agent has closed the connection, 1 when
 * a read or write fails, 2 on bad arguments.
 *
 * Relay mode, on the host, where an agent in network mode is reached through a port that listens
 * only inside a network namespace the server is not in (a network-on micro-VM's: QEMU forwards
 * 127.0.0.1:PORT of its namespace to the guest's agent). The relay runs in that namespace, as
 * root, and listens on the Unix socket SOCKET (made with mode 0600, in a directory of the
 * server's; a socket that exists is an error), whose path reaches it from any namespace; then it
 * gives up every capability (and sets no-new-privileges) and writes one byte, '1', on stdout: it
 * is ready. Each connection to SOCKET gets a connection of its own to 127.0.0.1:PORT, and the
 * relay copies bytes both ways unchanged, never reading them (the secret and every frame pass
 * through; what comes from the port is the guest's, untrusted), through a ring of 64 KiB a
 * direction: a side is read only while its ring has room, so a slow reader slows its own
 * connection only. The end of one side's sending is passed on as a shutdown of the other's once
 * all of it is written; a connection that fails, or whose port refuses it, ends its pair. At most
 * 128 pairs at once; more connections wait in the socket's backlog. The relay exits 0 when its
 * stdin ends (the server has gone), 2 on bad arguments or when the socket cannot be made.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/capability.h>
#include <linux/nsfs.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#define AGENT_VERSION 1
#define MAX_FRAME (16u << 20)
#define MAX_WORDS 65536u
#define MAX_PROCS 4096
#define MAX_CONTROLS 8
#define MAX_PENDING 64
#define MAX_HELD 64
#define SPAWN_STDIN 1
#define SPAWN_HELD 2
#define SPAWN_TERMINAL 4
/* The spawns whose stdio the agent relays. */
#define RELAYED (SPAWN_HELD | SPAWN_TERMINAL)
#define RELAY_SIZE 65536u
#define RELAY_PAIRS 128
#define SECRET_SIZE 32
#define HEADER_SIZE (4 + SECRET_SIZE + 1)
#define STALL_SECONDS 2
#define STREAMS_WAIT_MS 10000
/* The wait status of a process killed by SIGKILL, and of one that exited with 127. */
#define KILLED_STATUS ((uint32_t)SIGKILL)
#define FAILED_STATUS ((uint32_t)127 << 8)

/* One stream of a held process: its pipe, its current connection, and what is between them. */
struct relay {
  int pipe;            /* the agent's end of the pipe, non-blocking; -1 once closed */
  int conn;            /* the current stream connection, non-blocking; -1 while there is none */
  unsigned char *data; /* RELAY_SIZE bytes, a ring; NULL for a stdin that is /dev/null */
  size_t head, count;  /* where the bytes not passed on yet start, and how many there are */
};

/* Network mode: what the agent keeps of a held process; in both modes, of a terminal. */
struct held {
  unsigned char token[8];
  unsigned char flags;
  int input_end;    /* 'I' came: close the stdin pipe once all that came is in it */
  int input_due;    /* reattached: its stdin connection is to come, and 'I' waits for its end */
  uint64_t written; /* stdout bytes written to stream connections */
  struct relay io[3];
};

struct proc {
  uint32_t id;
  pid_t pid;       /* the process, or in network mode its keeper; not signalled once reaped */
  int go;          /* the write end of its gate until go or cancel, else -1 */
  int ctl;         /* the control that started or reattached it; -1 while there is none */
  int report;      /* network mode: the read end of the keeper's report pipe until read, else -1 */
  int reported;    /* network mode: 'X' is done, with `status` */
  uint32_t status; /* network mode: the wait status of 'X' */
  int doomed;      /* network mode: 'A' ended it; a control awaits its end */
  int reaped;      /* network mode, held: the keeper was reaped, with 'Q' or 'L' in `end` */
  char end;
  struct held *held; /* network mode: NULL unless held */
};

struct control {
  int fd; /* -1: a free slot */
  int dead;
  int awaits_end; /* it sent 'A' and has not had 'E' yet */
};

/* What a spawn frame asks for. */
struct spawn_req {
  uint32_t id;
  unsigned char token[8];
  unsigned char flags;
  struct winsize size; /* of the terminal, with SPAWN_TERMINAL */
  char **argv;
  char **envp;
};

/* Network mode: a spawn waiting for its stream connections. */
struct pending {
  int ctl;
  struct spawn_req req;
  int fds[3];
  int64_t deadline_ms;
};

static struct proc procs[MAX_PROCS];
static int nprocs;
static struct control controls[MAX_CONTROLS];
static struct pending pendings[MAX_PENDING];
static int npending;
static int network;
static struct sockaddr_un addr = {.sun_family = AF_UNIX};
static unsigned char secret[SECRET_SIZE];
/* Network mode with --netns: the namespaces every keeper enters, else -1. */
static int session_userns = -1;
static int session_netns = -1;

/* What request() says when the connection ended between frames, or failed within one. */
static const char CLOSED[] = "closed";
static const char BROKEN[] = "connection failed or stalled within a frame";

static void die(const char *what) {
  fprintf(stderr, "box-agent: %s: %s\n", what, strerror(errno));
  _exit(2);
}

static void bad(const char *what) {
  fprintf(stderr, "box-agent: bad request: %s\n", what);
  _exit(2);
}

/* Closes fd. Linux releases the descriptor even when close reports an error, and a retry could
 * close another's: there is nothing to do about a failure. */
static void drop_fd(int fd) {
  if (fd >= 0) (void)close(fd);
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

static uint16_t get16(const unsigned char *p) {
  return (uint16_t)(p[0] << 8 | p[1]);
}

/* Whether a and b hold the same n bytes, in time that does not depend on where they differ. */
static int same(const unsigned char *a, const unsigned char *b, size_t n) {
  volatile unsigned char diff = 0;
  for (size_t i = 0; i < n; i++) diff |= a[i] ^ b[i];
  return diff == 0;
}

/* Writes a whole frame to control c. Unix mode: a failure means the server is gone, and so is
 * this sandbox. Network mode: the control is marked dead, to be closed, and hears nothing more. */
static void send_frame(int c, const unsigned char *buf, size_t len) {
  if (c < 0 || controls[c].dead) return;
  while (len > 0) {
    ssize_t n = write(controls[c].fd, buf, len);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (!network) _exit(0);
      fprintf(stderr, "box-agent: control %d: cannot write: %s\n", c, strerror(errno));
      controls[c].dead = 1;
      return;
    }
    buf += n;
    len -= (size_t)n;
  }
}

/* A frame of type t with two u32 fields. */
static void send2(int c, char t, uint32_t a, uint32_t b) {
  unsigned char f[13];
  put32(f, 9);
  f[4] = (unsigned char)t;
  put32(f + 5, a);
  put32(f + 9, b);
  send_frame(c, f, sizeof f);
}

/* A frame of type t with one u32 field. */
static void send1(int c, char t, uint32_t a) {
  unsigned char f[9];
  put32(f, 5);
  f[4] = (unsigned char)t;
  put32(f + 5, a);
  send_frame(c, f, sizeof f);
}

/* Unix mode: a new connection to the server that says it is stream `fd` of process `id`; -1 on
 * failure. */
static int stream(uint32_t id, const unsigned char *token, unsigned char fd) {
  int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s < 0) return -1;
  if (connect(s, (struct sockaddr *)&addr, sizeof addr) < 0) {
    int e = errno;
    drop_fd(s);
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
      drop_fd(s);
      errno = e;
      return -1;
    }
    p += n;
    left -= (size_t)n;
  }
  return s;
}

/* Reads len bytes: 1 when done, 0 when the peer closed before the first, -1 on any failure. */
static int read_all(int fd, unsigned char *buf, size_t len) {
  size_t got = 0;
  while (got < len) {
    ssize_t n = read(fd, buf + got, len - got);
    if (n == 0) return got == 0 ? 0 : -1;
    if (n < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    got += (size_t)n;
  }
  return 1;
}

/* The live process `id` of control c, or NULL; a held process whose keeper was reaped is not. */
static struct proc *find(int c, uint32_t id) {
  for (int i = 0; i < nprocs; i++) {
    if (procs[i].ctl == c && procs[i].id == id && !procs[i].reaped) return &procs[i];
  }
  return NULL;
}

/* The pending spawn `id` of control c, or -1. */
static int find_pending(int c, uint32_t id) {
  for (int i = 0; i < npending; i++) {
    if (pendings[i].ctl == c && pendings[i].req.id == id) return i;
  }
  return -1;
}

/* Closes what held process h keeps and frees it; h may be NULL. */
static void drop_held(struct held *h) {
  if (h == NULL) return;
  for (int fd = 0; fd < 3; fd++) {
    drop_fd(h->io[fd].pipe);
    drop_fd(h->io[fd].conn);
    free(h->io[fd].data);
  }
  free(h);
}

static void forget(struct proc *p) {
  drop_fd(p->go);
  drop_fd(p->report);
  drop_held(p->held);
  *p = procs[--nprocs];
}

static void free_words(char **v) {
  if (v == NULL) return;
  for (char **w = v; *w != NULL; w++) free(*w);
  free(v);
}

/* Reads count strings from the payload at *at into a NULL-terminated vector *out; what was wrong,
 * or NULL. */
static const char *words(const unsigned char *payload, uint32_t len, uint32_t *at, char ***out) {
  *out = NULL;
  if (len - *at < 4) return "truncated count";
  uint32_t count = get32(payload + *at);
  *at += 4;
  if (count > MAX_WORDS) return "too many words";
  char **v = calloc((size_t)count + 1, sizeof *v);
  if (v == NULL) die("calloc");
  for (uint32_t i = 0; i < count; i++) {
    const char *wrong = NULL;
    uint32_t n = 0;
    if (len - *at < 4) {
      wrong = "truncated length";
    } else {
      n = get32(payload + *at);
      *at += 4;
      if (n > len - *at) {
        wrong = "truncated word";
      } else if (memchr(payload + *at, 0, n) != NULL) {
        wrong = "NUL in a word";
      }
    }
    if (wrong != NULL) {
      free_words(v);
      return wrong;
    }
    v[i] = strndup((const char *)payload + *at, n);
    if (v[i] == NULL) die("strndup");
    *at += n;
  }
  *out = v;
  return NULL;
}

static void free_req(struct spawn_req *r) {
  free_words(r->argv);
  free_words(r->envp);
  r->argv = r->envp = NULL;
}

/* Adds TERM=xterm-256color to the NULL-terminated *envp unless it has a TERM. */
static void default_term(char ***envp) {
  size_t n = 0;
  for (; (*envp)[n] != NULL; n++) {
    if (strncmp((*envp)[n], "TERM=", 5) == 0) return;
  }
  char **v = realloc(*envp, (n + 2) * sizeof *v);
  if (v == NULL) die("realloc");
  v[n] = strdup("TERM=xterm-256color");
  if (v[n] == NULL) die("strdup");
  v[n + 1] = NULL;
  *envp = v;
}

/* Parses a spawn frame of control c into *r; what was wrong, or NULL. */
static const char *parse_spawn(int c, const unsigned char *payload, uint32_t len,
                               struct spawn_req *r) {
  *r = (struct spawn_req){0};
  if (len < 13) return "short spawn";
  r->id = get32(payload);
  memcpy(r->token, payload + 4, 8);
  r->flags = payload[12];
  uint32_t at = 13;
  if (find(c, r->id) != NULL || find_pending(c, r->id) >= 0) return "id in use";
  if (r->flags & SPAWN_TERMINAL) {
    if (!(r->flags & SPAWN_STDIN) || (r->flags & SPAWN_HELD)) return "terminal flags";
    if (len < at + 4) return "short terminal size";
    r->size = (struct winsize){.ws_col = get16(payload + at), .ws_row = get16(payload + at + 2)};
    at += 4;
  }
  const char *wrong = words(payload, len, &at, &r->argv);
  if (wrong == NULL) wrong = words(payload, len, &at, &r->envp);
  if (wrong == NULL && at != len) wrong = "trailing bytes";
  if (wrong == NULL && r->argv[0] == NULL) wrong = "empty argv";
  if (wrong != NULL) {
    free_req(r);
  } else if (r->flags & SPAWN_TERMINAL) {
    default_term(&r->envp);
  }
  return wrong;
}

/* Closes every descriptor from `first` on; false when that cannot be done. */
static int close_from(unsigned first) {
  if (syscall(SYS_close_range, first, ~0u, 0u) == 0) return 1;
  if (errno != ENOSYS) return 0;
  /* A kernel older than 5.9: close one by one, up to the limit. */
  long max = sysconf(_SC_OPEN_MAX);
  for (long fd = first; fd < (max > 0 ? max : 1024); fd++) drop_fd((int)fd);
  return 1;
}

/* In a child: puts from[i] onto descriptor i for each of the n, and closes all others. */
static void place(int *from, int n) {
  /* Above n first: when the agent started with 0-2 closed, a stream may be one of 0..n-1 itself,
   * and a dup2 onto its own number keeps close-on-exec. Then each onto its place, from a copy
   * that no other dup2 overwrites. */
  for (int i = 0; i < n; i++) {
    from[i] = fcntl(from[i], F_DUPFD_CLOEXEC, n);
    if (from[i] < 0) _exit(127);
  }
  for (int i = 0; i < n; i++) {
    if (dup2(from[i], i) < 0) _exit(127);
  }
  if (!close_from((unsigned)n)) _exit(127);
}

/* In a child about to exec: no signal blocked, SIGPIPE as usual, a session of its own. */
static void fresh_session(void) {
  sigset_t none;
  if (sigemptyset(&none) < 0 || sigprocmask(SIG_SETMASK, &none, NULL) < 0) _exit(127);
  if (signal(SIGPIPE, SIG_DFL) == SIG_ERR) _exit(127);
  if (setsid() < 0) _exit(127);
}

/* In a child about to exec, in a session of its own, with a terminal's slave as its stdin: makes
 * it its controlling terminal. */
static void take_terminal(void) {
  if (ioctl(0, TIOCSCTTY, 0) < 0) _exit(127);
}

/* Waits for the go byte on `gate`; false when there is none (cancelled, or the agent is gone). */
static int await_go(int gate) {
  char go;
  ssize_t n;
  do {
    n = read(gate, &go, 1);
  } while (n < 0 && errno == EINTR);
  return n == 1;
}

/* Unix mode, in the child: stdio in place, then wait for go on fd `gate`, then exec. Never
 * returns. */
static void child(char **argv, char **envp, int in, int out, int err, int gate, int tty) {
  fresh_session();
  int from[4] = {in, out, err, gate};
  place(from, 4);
  if (tty) take_terminal();
  if (!await_go(3)) _exit(127);
  drop_fd(3);
  execve(argv[0], argv, envp);
  _exit(127);
}

/* In a keeper: tells the agent the real process's wait status. When the agent is gone nobody
 * listens, and there is nothing else to do. */
static void report(int fd, uint32_t status) {
  unsigned char b[4];
  put32(b, status);
  ssize_t n;
  do {
    n = write(fd, b, sizeof b);
  } while (n < 0 && errno == EINTR);
}

/* In a keeper: the parent pid of process `pid` by its /proc/PID/stat, or -1. */
static pid_t parent_of(const char *pid) {
  char path[64], buf[512];
  int len = snprintf(path, sizeof path, "/proc/%s/stat", pid);
  if (len < 0 || (size_t)len >= sizeof path) return -1;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  ssize_t n;
  do {
    n = read(fd, buf, sizeof buf - 1);
  } while (n < 0 && errno == EINTR);
  drop_fd(fd);
  if (n <= 0) return -1;
  buf[n] = 0;
  /* "pid (comm) state ppid ...": comm may hold anything, so read on from its last ')'. */
  char *end = strrchr(buf, ')');
  char state;
  int ppid;
  if (end == NULL || sscanf(end + 1, " %c %d", &state, &ppid) != 2) return -1;
  return ppid;
}

/* In a keeper: sends SIGKILL to each of its children; how many it found, -1 if /proc cannot be
 * read. */
static int kill_children(pid_t self) {
  DIR *dir = opendir("/proc");
  if (dir == NULL) return -1;
  int found = 0;
  struct dirent *e;
  while ((e = readdir(dir)) != NULL) {
    if (e->d_name[0] < '1' || e->d_name[0] > '9' || parent_of(e->d_name) != self) continue;
    found++;
    /* A child stays until this keeper reaps it, so the pid is still that child's. */
    if (kill((pid_t)strtol(e->d_name, NULL, 10), SIGKILL) < 0) return -1;
  }
  if (closedir(dir) < 0) return -1;
  return found;
}

/* In a keeper on SIGTERM: kills the tree, reporting the real process if it ends now, and exits 0
 * when no child is left (1 when the tree cannot be found). */
static void end_tree(pid_t real, int rep) {
  pid_t self = getpid();
  for (;;) {
    int found = kill_children(self);
    if (found < 0) _exit(1);
    int status;
    pid_t pid = waitpid(-1, &status, found > 0 ? 0 : WNOHANG);
    if (pid > 0) {
      if (pid == real) report(rep, (uint32_t)status);
      continue;
    }
    if (pid < 0 && errno == EINTR) continue;
    if (pid < 0) _exit(errno == ECHILD ? 0 : 1);
    /* A child that /proc did not show yet (it is being reparented): look again shortly. */
    struct timespec pause = {.tv_nsec = 10 * 1000 * 1000};
    if (nanosleep(&pause, NULL) < 0 && errno != EINTR) _exit(1);
  }
}

/* Network mode, in the keeper: waits for go, forks the real process, reports it, reaps the tree.
 * Never returns. */
static void keeper(char **argv, char **envp, int in, int out, int err, int gate, int rep,
                   int tty) {
  /* Into the session's network before anything runs; the agent keeps the pod's. */
  if (session_userns >= 0 &&
      (setns(session_userns, CLONE_NEWUSER) < 0 || setns(session_netns, CLONE_NEWNET) < 0)) {
    fprintf(stderr, "box-agent: cannot enter the session's network: %s\n", strerror(errno));
    _exit(1);
  }
  /* Entering a user namespace fills the bounding set (for that namespace): empty it again, as the
   * agent's own is, so that nothing the keeper runs holds a capability there, even a useless one. */
  for (int cap = 0; session_userns >= 0 && cap <= 63; cap++) {
    if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno != EINVAL) {
      fprintf(stderr, "box-agent: cannot empty the bounding set: %s\n", strerror(errno));
      _exit(1);
    }
  }
  int from[5] = {in, out, err, gate, rep};
  place(from, 5);
  gate = 3;
  rep = 4;
  /* SIGTERM was blocked by the agent before the fork, so that none is missed. */
  sigset_t waited;
  if (sigemptyset(&waited) < 0 || sigaddset(&waited, SIGTERM) < 0 ||
      sigaddset(&waited, SIGCHLD) < 0 || sigprocmask(SIG_BLOCK, &waited, NULL) < 0) {
    _exit(127);
  }
  int sigfd = signalfd(-1, &waited, SFD_CLOEXEC);
  if (sigfd < 0) _exit(127);
  struct pollfd before[2] = {{.fd = gate, .events = POLLIN}, {.fd = sigfd, .events = POLLIN}};
  for (;;) {
    if (poll(before, 2, -1) < 0) {
      if (errno == EINTR) continue;
      _exit(127);
    }
    if (before[0].revents != 0) break;
    struct signalfd_siginfo info;
    if (read(sigfd, &info, sizeof info) != (ssize_t)sizeof info || info.ssi_signo == SIGTERM) {
      report(rep, KILLED_STATUS);
      _exit(0);
    }
  }
  if (!await_go(gate)) {
    report(rep, KILLED_STATUS);
    _exit(0);
  }
  drop_fd(gate);
  if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0) {
    report(rep, FAILED_STATUS);
    _exit(0);
  }
  pid_t real = fork();
  if (real < 0) {
    report(rep, FAILED_STATUS);
    _exit(0);
  }
  if (real == 0) {
    fresh_session();
    if (tty) take_terminal();
    if (!close_from(3)) _exit(127);
    execve(argv[0], argv, envp);
    _exit(127);
  }
  for (int fd = 0; fd < 3; fd++) drop_fd(fd);
  for (;;) {
    struct signalfd_siginfo info;
    ssize_t n = read(sigfd, &info, sizeof info);
    if (n < 0 && errno == EINTR) continue;
    if (n != (ssize_t)sizeof info) _exit(1);
    if (info.ssi_signo == SIGTERM) end_tree(real, rep);
    int status;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0 || (pid < 0 && errno == EINTR)) {
      if (pid == real) report(rep, (uint32_t)status);
    }
    if (pid < 0 && errno == ECHILD) _exit(0);
  }
}

/* Forks process r of control c with its stdio (closed here, with r's words), unless `failed`
 * already says why it cannot run, and sends 'P' or 'F'. h is what the agent keeps of a held
 * process (the process's, or dropped here), else NULL. */
static void start(int c, struct spawn_req *r, int in, int out, int err, int failed,
                  struct held *h) {
  int gate[2] = {-1, -1}, rep[2] = {-1, -1};
  if (!failed && nprocs == MAX_PROCS) failed = EAGAIN;
  if (!failed && pipe2(gate, O_CLOEXEC) < 0) failed = errno;
  if (!failed && network && pipe2(rep, O_CLOEXEC | O_NONBLOCK) < 0) failed = errno;
  sigset_t term, before;
  if (!failed && network) {
    /* The keeper must not die of a SIGTERM that comes before it is ready for one. */
    if (sigemptyset(&term) < 0 || sigaddset(&term, SIGTERM) < 0 ||
        sigprocmask(SIG_BLOCK, &term, &before) < 0) {
      failed = errno;
    }
  }
  pid_t pid = -1;
  if (!failed) {
    pid = fork();
    if (pid < 0) failed = errno;
    int tty = (r->flags & SPAWN_TERMINAL) != 0;
    if (pid == 0 && network) keeper(r->argv, r->envp, in, out, err, gate[0], rep[1], tty);
    if (pid == 0) child(r->argv, r->envp, in, out, err, gate[0], tty);
    if (network && sigprocmask(SIG_SETMASK, &before, NULL) < 0) die("sigprocmask");
  }
  int fds[] = {gate[0], rep[1], out, err, in};
  for (size_t i = 0; i < sizeof fds / sizeof fds[0]; i++) drop_fd(fds[i]);
  free_req(r);
  if (failed) {
    drop_fd(gate[1]);
    drop_fd(rep[0]);
    drop_held(h);
    send2(c, 'F', r->id, (uint32_t)failed);
    return;
  }
  procs[nprocs++] = (struct proc){
      .id = r->id, .pid = pid, .go = gate[1], .ctl = c, .report = rep[0], .held = h};
  send2(c, 'P', r->id, (uint32_t)pid);
}

static int64_t now_ms(void) {
  struct timespec t;
  if (clock_gettime(CLOCK_MONOTONIC, &t) < 0) die("clock_gettime");
  return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* Network mode: drops pending spawn i, closing the streams it has. */
static void drop_pending(int i) {
  struct pending *p = &pendings[i];
  for (int fd = 0; fd < 3; fd++) drop_fd(p->fds[fd]);
  free_req(&p->req);
  *p = pendings[--npending];
}

/* How many processes are held or terminals, or pending as such. */
static int held_count(void) {
  int n = 0;
  for (int i = 0; i < nprocs; i++) n += procs[i].held != NULL;
  for (int i = 0; i < npending; i++) n += (pendings[i].req.flags & RELAYED) != 0;
  return n;
}

/* Network mode: a spawn waits for the server to connect its streams. */
static const char *offer(int c, const unsigned char *payload, uint32_t len) {
  struct spawn_req r;
  const char *wrong = parse_spawn(c, payload, len, &r);
  if (wrong != NULL) return wrong;
  if (npending == MAX_PENDING || nprocs + npending >= MAX_PROCS ||
      ((r.flags & RELAYED) && held_count() >= MAX_HELD)) {
    free_req(&r);
    send2(c, 'F', r.id, EAGAIN);
    return NULL;
  }
  pendings[npending++] = (struct pending){
      .ctl = c, .req = r, .fds = {-1, -1, -1}, .deadline_ms = now_ms() + STREAMS_WAIT_MS};
  return NULL;
}

static int nonblocking(int fd) {
  int flags = fcntl(fd, F_GETFL);
  return flags >= 0 && fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0;
}

/* Opens a terminal of r's size in the sandbox: its master, non-blocking, in *master and its slave
 * in *slave. 0, or an errno with nothing left open. */
static int open_terminal(const struct spawn_req *r, int *master, int *slave) {
  *master = *slave = -1;
  int m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (m < 0) return errno;
  char name[64];
  int failed = 0;
  if (grantpt(m) < 0 || unlockpt(m) < 0) {
    failed = errno;
  } else if ((failed = ptsname_r(m, name, sizeof name)) == 0) {
    if (ioctl(m, TIOCSWINSZ, &r->size) < 0 || !nonblocking(m) ||
        (*slave = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC)) < 0) {
      failed = errno;
    }
  }
  if (failed) {
    drop_fd(m);
    return failed;
  }
  *master = m;
  return 0;
}

/* The stdio of held spawn h as pipes: the process's ends (and /dev/null for a stdin without flag
 * 1) in child, the agent's in h. 0, or an errno. */
static int pipes(struct held *h, int child[3]) {
  for (int fd = 0; fd < 3; fd++) {
    int ends[2];
    if (fd == 0 && !(h->flags & SPAWN_STDIN)) {
      if ((child[0] = open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0) return errno;
    } else if (pipe2(ends, O_CLOEXEC) < 0) {
      return errno;
    } else {
      /* The process reads its stdin pipe and writes the others; its ends stay blocking. */
      child[fd] = ends[fd == 0 ? 0 : 1];
      h->io[fd].pipe = ends[fd == 0 ? 1 : 0];
      h->io[fd].data = malloc(RELAY_SIZE);
      if (h->io[fd].data == NULL) die("malloc");
      if (!nonblocking(h->io[fd].pipe) || !nonblocking(h->io[fd].conn)) return errno;
    }
  }
  return 0;
}

/* The stdio of terminal spawn r as a terminal: its slave thrice in child, its master relayed both
 * ways in h; the stderr connection carries nothing and is closed. 0, or an errno. */
static int terminal(const struct spawn_req *r, struct held *h, int child[3]) {
  drop_fd(h->io[2].conn);
  h->io[2].conn = -1;
  int failed = open_terminal(r, &h->io[1].pipe, &child[0]);
  if (failed) return failed;
  if ((h->io[0].pipe = fcntl(h->io[1].pipe, F_DUPFD_CLOEXEC, 0)) < 0 ||
      (child[1] = fcntl(child[0], F_DUPFD_CLOEXEC, 0)) < 0 ||
      (child[2] = fcntl(child[0], F_DUPFD_CLOEXEC, 0)) < 0) {
    return errno;
  }
  for (int fd = 0; fd < 2; fd++) {
    h->io[fd].data = malloc(RELAY_SIZE);
    if (h->io[fd].data == NULL) die("malloc");
    if (!nonblocking(h->io[fd].conn)) return errno;
  }
  return 0;
}

/* What the agent keeps of spawn r, held or a terminal, whose stream connections are conns: the
 * process's stdio goes to child[0..2], the rest and the connections to *out. 0, or an errno when
 * it cannot be done, with the connections closed. */
static int hold(const struct spawn_req *r, const int conns[3], int child[3], struct held **out) {
  struct held *h = calloc(1, sizeof *h);
  if (h == NULL) die("calloc");
  memcpy(h->token, r->token, sizeof h->token);
  h->flags = r->flags;
  for (int fd = 0; fd < 3; fd++) {
    h->io[fd] = (struct relay){.pipe = -1, .conn = conns[fd]};
    child[fd] = -1;
  }
  int failed = h->flags & SPAWN_TERMINAL ? terminal(r, h, child) : pipes(h, child);
  if (failed) {
    drop_held(h);
    for (int fd = 0; fd < 3; fd++) {
      drop_fd(child[fd]);
      child[fd] = -1;
    }
    return failed;
  }
  *out = h;
  return 0;
}

/* Network mode: starts pending spawn i, whose streams have all come. */
static void launch(int i) {
  struct pending p = pendings[i];
  pendings[i] = pendings[--npending];
  int failed = 0;
  struct held *h = NULL;
  int child[3];
  int *io = p.fds;
  if (p.req.flags & RELAYED) {
    failed = hold(&p.req, p.fds, child, &h);
    io = child;
  } else if (!(p.req.flags & 1) && (p.fds[0] = open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0) {
    failed = errno;
  }
  start(p.ctl, &p.req, io[0], io[1], io[2], failed, h);
}

/* Unix mode: connects the streams of the spawn and starts it. */
static const char *spawn(int c, const unsigned char *payload, uint32_t len) {
  struct spawn_req r;
  const char *wrong = parse_spawn(c, payload, len, &r);
  if (wrong != NULL) return wrong;
  int out = -1, err = -1, in = -1;
  int failed = 0;
  if (nprocs == MAX_PROCS || ((r.flags & SPAWN_TERMINAL) && held_count() >= MAX_HELD)) {
    failed = EAGAIN;
  } else if ((out = stream(r.id, r.token, 1)) < 0 || (err = stream(r.id, r.token, 2)) < 0) {
    failed = errno;
  } else if (r.flags & SPAWN_STDIN) {
    if ((in = stream(r.id, r.token, 0)) < 0) failed = errno;
  } else if ((in = open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0) {
    failed = errno;
  }
  int io[3] = {in, out, err};
  struct held *h = NULL;
  if (!failed && (r.flags & SPAWN_TERMINAL)) {
    int conns[3] = {in, out, err};
    failed = hold(&r, conns, io, &h);
  }
  start(c, &r, io[0], io[1], io[2], failed, h);
  return NULL;
}

static const char *gate(int c, const unsigned char *payload, uint32_t len, int go) {
  if (len != 4) return "short go or cancel";
  struct proc *p = find(c, get32(payload));
  if (p == NULL || p->go < 0) {
    /* It may have ended already (cancelled, killed): nothing to do. */
    return NULL;
  }
  if (go) {
    ssize_t n;
    do {
      n = write(p->go, "g", 1);
    } while (n < 0 && errno == EINTR);
    /* Should that fail, the process sees its gate close instead and ends: 'X' tells. */
  } else if (!network && kill(p->pid, SIGKILL) < 0) {
    /* Not reaped yet, so it exists: only a broken kernel lands here. */
    fprintf(stderr, "box-agent: cannot kill %d: %s\n", (int)p->pid, strerror(errno));
  }
  /* A keeper whose gate closes without go exits without running anything. */
  drop_fd(p->go);
  p->go = -1;
  return NULL;
}

/* Network mode: has the keeper of p kill its tree; it is our child until reaped. */
static void end_keeper(const struct proc *p) {
  if (kill(p->pid, SIGTERM) < 0) {
    fprintf(stderr, "box-agent: cannot signal keeper %d: %s\n", (int)p->pid, strerror(errno));
  }
}

/* Network mode: 'E' to each control that awaits it, once no tree that 'A' ended is left. */
static void confirm_ended(void) {
  for (int i = 0; i < nprocs; i++) {
    if (procs[i].doomed && !procs[i].reaped) return;
  }
  for (int c = 0; c < MAX_CONTROLS; c++) {
    if (controls[c].fd >= 0 && controls[c].awaits_end) {
      controls[c].awaits_end = 0;
      unsigned char f[5];
      put32(f, 1);
      f[4] = 'E';
      send_frame(c, f, sizeof f);
    }
  }
}

/* Network mode, 'A' from control c: ends every tree and every pending spawn, of every control. */
static const char *end_all(int c, uint32_t len) {
  if (len != 0) return "end all with a payload";
  for (int i = npending - 1; i >= 0; i--) {
    send2(pendings[i].ctl, 'F', pendings[i].req.id, ECANCELED);
    drop_pending(i);
  }
  for (int i = 0; i < nprocs; i++) {
    if (!procs[i].doomed && !procs[i].reaped) end_keeper(&procs[i]);
    procs[i].doomed = 1;
  }
  controls[c].awaits_end = 1;
  confirm_ended();
  return NULL;
}

static const char *kill_request(int c, const unsigned char *payload, uint32_t len) {
  if (len != 4) return "short kill";
  uint32_t id = get32(payload);
  struct proc *p = find(c, id);
  if (p != NULL) {
    end_keeper(p);
    return NULL;
  }
  int i = find_pending(c, id);
  if (i >= 0) {
    drop_pending(i);
    send2(c, 'F', id, ECANCELED);
  }
  send1(c, 'Q', id);
  return NULL;
}

/* Network mode: the report of p's keeper, if it has come: 'X' (kept for 'R'). */
static void take_report(struct proc *p) {
  if (p->report < 0) return;
  unsigned char b[4];
  ssize_t n;
  do {
    n = read(p->report, b, sizeof b);
  } while (n < 0 && errno == EINTR);
  if (n < 0 && errno == EAGAIN) return;
  /* A pipe write of 4 bytes is atomic: anything but 4 is the keeper gone without a word. */
  if (n == (ssize_t)sizeof b) {
    p->status = get32(b);
    p->reported = 1;
    send2(p->ctl, 'X', p->id, p->status);
  }
  drop_fd(p->report);
  p->report = -1;
}

static void close_conn(struct relay *r) {
  drop_fd(r->conn);
  r->conn = -1;
}

/* Reads from `from` into the room r has: bytes read, 0 at its end, or -1 (errno EAGAIN: none
 * yet). */
static ssize_t fill(struct relay *r, int from) {
  size_t tail = (r->head + r->count) % RELAY_SIZE;
  size_t room = RELAY_SIZE - r->count;
  if (room > RELAY_SIZE - tail) room = RELAY_SIZE - tail;
  ssize_t n;
  do {
    n = read(from, r->data + tail, room);
  } while (n < 0 && errno == EINTR);
  if (n > 0) r->count += (size_t)n;
  return n;
}

/* Writes to `to` what it takes now of what r holds: bytes written, or -1 (errno EAGAIN: none
 * now). */
static ssize_t spill(struct relay *r, int to) {
  size_t len = RELAY_SIZE - r->head;
  if (len > r->count) len = r->count;
  ssize_t n;
  do {
    n = write(to, r->data + r->head, len);
  } while (n < 0 && errno == EINTR);
  if (n > 0) {
    r->count -= (size_t)n;
    r->head = r->count == 0 ? 0 : (r->head + (size_t)n) % RELAY_SIZE;
  }
  return n;
}

/* Reads and drops what r's connection sends; closes it at its end or when it fails. */
static void heed(struct relay *r) {
  unsigned char sink[4096];
  ssize_t n;
  do {
    n = read(r->conn, sink, sizeof sink);
  } while (n < 0 && errno == EINTR);
  if (n == 0 || (n < 0 && errno != EAGAIN)) close_conn(r);
}

/* A held process's stdin: what is buffered into the pipe, and the pipe closed once 'I' came and
 * all before it is in. A pipe that cannot be written drops the buffer and is closed. */
static void flush_in(struct held *h) {
  struct relay *r = &h->io[0];
  while (r->pipe >= 0 && r->count > 0) {
    ssize_t n = spill(r, r->pipe);
    if (n < 0 && errno == EAGAIN) break;
    if (n <= 0) {
      drop_fd(r->pipe);
      r->pipe = -1;
      r->count = r->head = 0;
    }
  }
  if (r->pipe >= 0 && h->input_end && !h->input_due && r->conn < 0 && r->count == 0) {
    drop_fd(r->pipe);
    r->pipe = -1;
  }
}

/* Reads what the stdin connection of h brings while there is room (all of it, dropped, once the
 * pipe is closed); its end closes the connection only. */
static void take_input(struct held *h) {
  struct relay *r = &h->io[0];
  if (r->pipe < 0) {
    heed(r);
  } else if (r->count < RELAY_SIZE) {
    ssize_t n = fill(r, r->conn);
    if (n == 0 || (n < 0 && errno != EAGAIN)) close_conn(r);
  }
}

/* A held process's stdout (fd 1) or stderr (fd 2): what is buffered onto the connection; once
 * the pipe has ended and all is written, the connection is closed. */
static void flush_out(struct held *h, int fd) {
  struct relay *r = &h->io[fd];
  /* A terminal's output is not kept for a later connection: nobody reattaches. */
  if (r->conn < 0 && (h->flags & SPAWN_TERMINAL)) r->count = r->head = 0;
  while (r->conn >= 0 && r->count > 0) {
    ssize_t n = spill(r, r->conn);
    if (n < 0 && errno == EAGAIN) break;
    if (n <= 0) {
      close_conn(r);
      break;
    }
    if (fd == 1) h->written += (uint64_t)n;
  }
  if (r->conn >= 0 && r->pipe < 0 && r->count == 0) close_conn(r);
}

/* Whether stream fd (1 or 2) of h is done: its pipe ended, all written, its connection closed. */
static int done(const struct held *h, int fd) {
  const struct relay *r = &h->io[fd];
  return r->pipe < 0 && r->count == 0 && r->conn < 0;
}

/* The poll entries of h at w[0..5]: pipe and connection of stdin, stdout, stderr. Only what can
 * be acted on is watched, so that a full buffer or a hung-up pipe cannot spin the loop. */
static void watch(const struct held *h, struct pollfd *w) {
  for (int fd = 0; fd < 3; fd++) {
    const struct relay *r = &h->io[fd];
    short pipe_ev, conn_ev;
    if (fd == 0) {
      pipe_ev = r->count > 0 ? POLLOUT : 0;
      conn_ev = r->count < RELAY_SIZE || r->pipe < 0 ? POLLIN : 0;
    } else {
      pipe_ev = r->count < RELAY_SIZE ? POLLIN : 0;
      /* The server never writes here: readable is its end. */
      conn_ev = POLLIN | (r->count > 0 ? POLLOUT : 0);
    }
    w[2 * fd] = (struct pollfd){.fd = pipe_ev ? r->pipe : -1, .events = pipe_ev};
    w[2 * fd + 1] = (struct pollfd){.fd = conn_ev ? r->conn : -1, .events = conn_ev};
  }
}

/* Relays for h what its poll entries w[0..5] (see watch) say can move. */
static void pump(struct held *h, const struct pollfd *w) {
  if (h->io[0].conn >= 0 && w[1].revents != 0) take_input(h);
  flush_in(h);
  for (int fd = 1; fd < 3; fd++) {
    struct relay *r = &h->io[fd];
    if (r->conn >= 0 && w[2 * fd + 1].revents != 0) heed(r);
    if (r->pipe >= 0 && w[2 * fd].revents != 0) {
      ssize_t n = fill(r, r->pipe);
      if (n == 0 || (n < 0 && errno != EAGAIN)) {
        drop_fd(r->pipe);
        r->pipe = -1;
      }
    }
    flush_out(h, fd);
  }
}

/* The poll entries of the relays of up to MAX_HELD held processes and terminals, six each from w
 * on (see watch), and in relayed which they are: procs may be reordered before they are pumped.
 * How many. */
static int watch_all(struct pollfd *w, struct held **relayed) {
  int n = 0;
  for (int i = 0; i < nprocs && n < MAX_HELD; i++) {
    if (procs[i].held == NULL) continue;
    relayed[n] = procs[i].held;
    watch(procs[i].held, &w[6 * n]);
    n++;
  }
  return n;
}

/* Network mode: the control of held process h has ended. What already came on its stdin
 * connection is input too and is taken; then its connections are closed, its buffers kept. */
static void detach(struct held *h) {
  struct relay *in = &h->io[0];
  while (in->conn >= 0 && in->pipe >= 0 && in->count < RELAY_SIZE && fill(in, in->conn) > 0) {
  }
  for (int fd = 0; fd < 3; fd++) close_conn(&h->io[fd]);
  h->input_due = 0;
  flush_in(h);
}

/* Network mode, 'I' from control c: the stdin of its held process ends after what came. */
static const char *input_end(int c, const unsigned char *payload, uint32_t len) {
  if (len != 4) return "short input end";
  struct proc *p = find(c, get32(payload));
  if (p == NULL || p->held == NULL || p->held->io[0].data == NULL) return NULL;
  p->held->input_end = 1;
  flush_in(p->held);
  return NULL;
}

/* Network mode, 'R' from control c: takes over the orphaned held process with the token. */
static const char *reattach(int c, const unsigned char *payload, uint32_t len) {
  if (len != 12) return "short reattach";
  uint32_t id = get32(payload);
  if (find(c, id) != NULL || find_pending(c, id) >= 0) return "id in use";
  struct proc *p = NULL;
  for (int i = 0; i < nprocs; i++) {
    if (procs[i].held != NULL && same(procs[i].held->token, payload + 4, 8)) p = &procs[i];
  }
  if (p == NULL || p->ctl >= 0) {
    send2(c, 'F', id, p == NULL ? ENOENT : EBUSY);
    return NULL;
  }
  /* While nobody owned it, its 'X' may have come unheard: it is kept. */
  take_report(p);
  p->ctl = c;
  p->id = id;
  /* The server may send 'I' before the agent has taken the stdin connection it dials next:
   * what comes on that connection is input all the same. */
  p->held->input_due = p->held->io[0].data != NULL && p->held->io[0].pipe >= 0;
  send2(c, 'P', id, (uint32_t)p->pid);
  unsigned char w[17];
  put32(w, 13);
  w[4] = 'W';
  put32(w + 5, id);
  put32(w + 9, (uint32_t)(p->held->written >> 32));
  put32(w + 13, (uint32_t)p->held->written);
  send_frame(c, w, sizeof w);
  if (p->reported) send2(c, 'X', id, p->status);
  if (p->reaped) send1(c, p->end, id);
  return NULL;
}

/* 'Z' from control c: the terminal of its process has a new size. */
static const char *resize(int c, const unsigned char *payload, uint32_t len) {
  if (len != 8) return "short size";
  struct proc *p = find(c, get32(payload));
  if (p == NULL || p->held == NULL || !(p->held->flags & SPAWN_TERMINAL)) return NULL;
  struct winsize size = {.ws_col = get16(payload + 4), .ws_row = get16(payload + 6)};
  /* Either end of the relay is the master; once both are closed, nothing uses the terminal. */
  int master = p->held->io[1].pipe >= 0 ? p->held->io[1].pipe : p->held->io[0].pipe;
  if (master >= 0 && ioctl(master, TIOCSWINSZ, &size) < 0) {
    fprintf(stderr, "box-agent: cannot size a terminal: %s\n", strerror(errno));
  }
  return NULL;
}

/* Serves one frame of control c: NULL, CLOSED, BROKEN or what was wrong with it. */
static const char *request(int c) {
  unsigned char head[5];
  int got = read_all(controls[c].fd, head, sizeof head);
  if (got <= 0) return got == 0 ? CLOSED : BROKEN;
  uint32_t len = get32(head);
  if (len < 1 || len > MAX_FRAME) return "frame length";
  len -= 1;
  unsigned char *payload = malloc(len ? len : 1);
  if (payload == NULL) die("malloc");
  const char *wrong = NULL;
  if (read_all(controls[c].fd, payload, len) != 1) {
    wrong = BROKEN;
  } else if (head[4] == 'S') {
    wrong = network ? offer(c, payload, len) : spawn(c, payload, len);
  } else if (head[4] == 'G' || head[4] == 'C') {
    wrong = gate(c, payload, len, head[4] == 'G');
  } else if (head[4] == 'K' && network) {
    wrong = kill_request(c, payload, len);
  } else if (head[4] == 'A' && network) {
    wrong = end_all(c, len);
  } else if (head[4] == 'I' && network) {
    wrong = input_end(c, payload, len);
  } else if (head[4] == 'R' && network) {
    wrong = reattach(c, payload, len);
  } else if (head[4] == 'Z') {
    wrong = resize(c, payload, len);
  } else {
    wrong = "unknown type";
  }
  free(payload);
  return wrong;
}

/* Network mode: p's keeper was reaped with `status`: 'X' if not done, then 'Q' or 'L' (kept). */
static void keeper_ended(struct proc *p, int status) {
  take_report(p);
  int quiet = p->reported && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  if (!p->reported) {
    p->status = (uint32_t)status;
    p->reported = 1;
    send2(p->ctl, 'X', p->id, p->status);
  }
  p->end = quiet ? 'Q' : 'L';
  send1(p->ctl, p->end, p->id);
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
      /* A reaped keeper's pid may be another's now. */
      if (procs[i].pid == pid && !procs[i].reaped) {
        if (network) {
          keeper_ended(&procs[i], status);
        } else {
          send2(procs[i].ctl, 'X', procs[i].id, (uint32_t)status);
        }
        if (procs[i].held == NULL) {
          forget(&procs[i]);
        } else {
          /* Its output may not all be out yet: tidy() forgets it. */
          procs[i].reaped = 1;
          drop_fd(procs[i].go);
          procs[i].go = -1;
        }
        break;
      }
    }
  }
  if (network) confirm_ended();
}

/* Network mode: closes control c. Its pending spawns are dropped and its processes that have not
 * had go are cancelled; the others run on, orphaned. */
static void drop_control(int c) {
  drop_fd(controls[c].fd);
  controls[c] = (struct control){.fd = -1};
  for (int i = npending - 1; i >= 0; i--) {
    if (pendings[i].ctl == c) drop_pending(i);
  }
  for (int i = 0; i < nprocs; i++) {
    if (procs[i].ctl == c) {
      procs[i].ctl = -1;
      /* A keeper whose gate closes without go exits without running anything. */
      drop_fd(procs[i].go);
      procs[i].go = -1;
      if (procs[i].held != NULL) detach(procs[i].held);
    }
  }
}

/* Forgets the held processes and terminals that are over: their keepers (Unix mode: themselves)
 * reaped and, with a live owner, their stdout and stderr done, or orphaned after 'A' (a terminal:
 * orphaned at all). */
static void tidy(void) {
  for (int i = nprocs - 1; i >= 0; i--) {
    const struct proc *p = &procs[i];
    if (p->held == NULL || !p->reaped) continue;
    int orphan_over = p->doomed || (p->held->flags & SPAWN_TERMINAL);
    if (p->ctl >= 0 ? done(p->held, 1) && done(p->held, 2) : orphan_over) forget(&procs[i]);
  }
}

/* Network mode: closes the controls that ended or failed. */
static void sweep(void) {
  for (int c = 0; c < MAX_CONTROLS; c++) {
    if (controls[c].fd >= 0 && controls[c].dead) drop_control(c);
  }
}

/* Network mode: serves the frames of control c that have come, up to MAX_PENDING of them so that
 * none of the others waits long; a wrong one closes c. All that came is served before the next
 * stream connection is admitted: the server sends 'S' before it dials that spawn's streams, and a
 * stream that comes before its spawn was read would match nothing. */
static void serve_control(int c) {
  int more = 0;
  for (int n = 0; n < MAX_PENDING && (n == 0 || more > 0); n++) {
    const char *wrong = request(c);
    if (wrong != NULL) {
      if (wrong != CLOSED) fprintf(stderr, "box-agent: control %d closed: %s\n", c, wrong);
      controls[c].dead = 1;
      return;
    }
    if (controls[c].dead || ioctl(controls[c].fd, FIONREAD, &more) < 0) return;
  }
}

static int set_timeout(int s, int option, int seconds) {
  struct timeval t = {.tv_sec = seconds};
  return setsockopt(s, SOL_SOCKET, option, &t, sizeof t);
}

static void open_control(int s) {
  for (int c = 0; c < MAX_CONTROLS; c++) {
    if (controls[c].fd < 0) {
      /* A control that stops reading cannot stall the agent for long either. */
      if (set_timeout(s, SO_SNDTIMEO, STALL_SECONDS) < 0) break;
      controls[c] = (struct control){.fd = s};
      send2(c, 'H', AGENT_VERSION, (uint32_t)getpid());
      return;
    }
  }
  drop_fd(s);
}

/* Gives stream connection s, whose header follows, to the pending spawn it names, or to the
 * relay of the held process of a live control it names when that relay has no connection. */
static void attach_stream(int s) {
  unsigned char h[13];
  if (read_all(s, h, sizeof h) != 1 || set_timeout(s, SO_RCVTIMEO, 0) < 0) {
    drop_fd(s);
    return;
  }
  uint32_t id = get32(h);
  unsigned char fd = h[12];
  for (int i = 0; i < npending; i++) {
    struct pending *p = &pendings[i];
    int fits = same(p->req.token, h + 4, 8);
    if (fits && p->req.id == id && fd <= 2 && p->fds[fd] < 0 && (fd != 0 || p->req.flags & 1)) {
      p->fds[fd] = s;
      if (p->fds[1] >= 0 && p->fds[2] >= 0 && (p->fds[0] >= 0 || !(p->req.flags & 1))) {
        launch(i);
      }
      return;
    }
  }
  for (int i = 0; i < nprocs && fd <= 2; i++) {
    struct held *kept = procs[i].held;
    if (kept == NULL || procs[i].ctl < 0 || procs[i].id != id || !same(kept->token, h + 4, 8)) {
      continue;
    }
    struct relay *r = &kept->io[fd];
    if (r->data != NULL && r->conn < 0 && nonblocking(s)) {
      r->conn = s;
      if (fd == 0) kept->input_due = 0;
      /* What waited goes out now; a stream that is over ends at once. */
      if (fd > 0) flush_out(kept, fd);
      return;
    }
    break;
  }
  drop_fd(s);
}

/* Accepts one connection and reads its header: a control, a stream, or closed. */
static void admit(int listener) {
  int s = accept4(listener, NULL, NULL, SOCK_CLOEXEC);
  if (s < 0) {
    if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED) {
      fprintf(stderr, "box-agent: accept: %s\n", strerror(errno));
    }
    return;
  }
  unsigned char h[HEADER_SIZE];
  if (set_timeout(s, SO_RCVTIMEO, STALL_SECONDS) < 0 || read_all(s, h, sizeof h) != 1) {
    drop_fd(s);
    return;
  }
  int authentic = same(h + 4, secret, SECRET_SIZE);
  if (authentic && memcmp(h, "BOXA", 4) == 0 && h[HEADER_SIZE - 1] == 'C') {
    open_control(s);
  } else if (authentic && memcmp(h, "BOXA", 4) == 0 && h[HEADER_SIZE - 1] == 'O') {
    attach_stream(s);
  } else {
    drop_fd(s);
  }
}

/* Network mode: 'F' ETIMEDOUT for the spawns whose streams did not come in time; the next
 * deadline as a poll timeout. */
static int expire(void) {
  int64_t now = now_ms();
  int64_t next = -1;
  for (int i = npending - 1; i >= 0; i--) {
    if (pendings[i].deadline_ms <= now) {
      send2(pendings[i].ctl, 'F', pendings[i].req.id, ETIMEDOUT);
      drop_pending(i);
    } else if (next < 0 || pendings[i].deadline_ms - now < next) {
      next = pendings[i].deadline_ms - now;
    }
  }
  return (int)next;
}

static int listen_on(int family, uint16_t port) {
  int s = socket(family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (s < 0) return -1;
  int on = 1, off = 0;
  struct sockaddr_in6 six = {.sin6_family = AF_INET6, .sin6_port = htons(port),
                             .sin6_addr = in6addr_any};
  struct sockaddr_in four = {.sin_family = AF_INET, .sin_port = htons(port),
                             .sin_addr = {.s_addr = htonl(INADDR_ANY)}};
  int ok = setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on) == 0;
  if (ok && family == AF_INET6) {
    ok = setsockopt(s, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof off) == 0 &&
         bind(s, (struct sockaddr *)&six, sizeof six) == 0;
  } else if (ok) {
    ok = bind(s, (struct sockaddr *)&four, sizeof four) == 0;
  }
  if (!ok || listen(s, 64) < 0) {
    int e = errno;
    drop_fd(s);
    errno = e;
    return -1;
  }
  return s;
}

static void read_secret(const char *path) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) die(path);
  unsigned char buf[SECRET_SIZE + 1];
  size_t got = 0;
  while (got < sizeof buf) {
    ssize_t n = read(fd, buf + got, sizeof buf - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) die(path);
    if (n == 0) break;
    got += (size_t)n;
  }
  if (close(fd) < 0) die(path);
  if (got != SECRET_SIZE) {
    fprintf(stderr, "box-agent: %s must hold exactly %d bytes\n", path, SECRET_SIZE);
    _exit(2);
  }
  memcpy(secret, buf, SECRET_SIZE);
}

/* Network mode: listens on port and serves controls until killed. */
static void serve_network(const char *port_arg, const char *secret_path, int sigfd) {
  char *end;
  errno = 0;
  unsigned long port = strtoul(port_arg, &end, 10);
  if (errno != 0 || *end != 0 || port < 1 || port > 65535) {
    fprintf(stderr, "box-agent: bad port %s\n", port_arg);
    _exit(2);
  }
  read_secret(secret_path);
  int listener = listen_on(AF_INET6, (uint16_t)port);
  if (listener < 0) listener = listen_on(AF_INET, (uint16_t)port);
  if (listener < 0) die("listen");
  static struct pollfd fds[2 + MAX_CONTROLS + MAX_PROCS + 6 * MAX_HELD];
  static struct held *relayed[MAX_HELD];
  const int first_report = 2 + MAX_CONTROLS;
  for (;;) {
    fds[0] = (struct pollfd){.fd = listener, .events = POLLIN};
    fds[1] = (struct pollfd){.fd = sigfd, .events = POLLIN};
    for (int c = 0; c < MAX_CONTROLS; c++) {
      fds[2 + c] = (struct pollfd){.fd = controls[c].fd, .events = POLLIN};
    }
    int reports = nprocs;
    for (int i = 0; i < reports; i++) {
      fds[first_report + i] = (struct pollfd){.fd = procs[i].report, .events = POLLIN};
    }
    const int first_relay = first_report + reports;
    int nrelayed = watch_all(&fds[first_relay], relayed);
    if (poll(fds, (nfds_t)(first_relay + 6 * nrelayed), expire()) < 0) {
      if (errno == EINTR) continue;
      die("poll");
    }
    /* Reports and relays before reaping, which reorders procs; only tidy() frees a relay. */
    for (int i = 0; i < reports; i++) {
      if (fds[first_report + i].revents != 0) take_report(&procs[i]);
    }
    for (int k = 0; k < nrelayed; k++) pump(relayed[k], &fds[first_relay + 6 * k]);
    if (fds[1].revents & POLLIN) reap(sigfd);
    for (int c = 0; c < MAX_CONTROLS; c++) {
      if (controls[c].fd >= 0 && !controls[c].dead && fds[2 + c].revents != 0) serve_control(c);
    }
    /* Closed controls free their slots before a new one may take one, and again after. */
    sweep();
    if (fds[0].revents & POLLIN) admit(listener);
    sweep();
    tidy();
  }
}

/* Unix mode: connects to socket_path and serves the server until it closes the connection. */
static void serve_unix(const char *socket_path, int sigfd) {
  if (strlen(socket_path) >= sizeof addr.sun_path) {
    fprintf(stderr, "box-agent: socket path too long\n");
    _exit(2);
  }
  strcpy(addr.sun_path, socket_path);
  controls[0].fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (controls[0].fd < 0) die("socket");
  if (connect(controls[0].fd, (struct sockaddr *)&addr, sizeof addr) < 0) die("connect");
  send2(0, 'H', AGENT_VERSION, (uint32_t)getpid());
  static struct pollfd fds[2 + 6 * MAX_HELD];
  static struct held *relayed[MAX_HELD];
  for (;;) {
    fds[0] = (struct pollfd){.fd = controls[0].fd, .events = POLLIN};
    fds[1] = (struct pollfd){.fd = sigfd, .events = POLLIN};
    int nrelayed = watch_all(&fds[2], relayed);
    if (poll(fds, (nfds_t)(2 + 6 * nrelayed), -1) < 0) {
      if (errno == EINTR) continue;
      die("poll");
    }
    /* Relays before reaping, which reorders procs; only tidy() frees a relay. */
    for (int k = 0; k < nrelayed; k++) pump(relayed[k], &fds[2 + 6 * k]);
    if (fds[1].revents & POLLIN) reap(sigfd);
    if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
      const char *wrong = request(0);
      if (wrong == CLOSED || wrong == BROKEN) _exit(0);
      if (wrong != NULL) bad(wrong);
    }
    tidy();
  }
}

/* The namespace of type `type` open at descriptor `arg`, close-on-exec; exits 2 when it is not. */
static int namespace_fd(const char *arg, int type) {
  char *end;
  errno = 0;
  long fd = strtol(arg, &end, 10);
  if (errno != 0 || *end != 0 || end == arg || fd < 0 || fd > 1023 ||
      ioctl((int)fd, NS_GET_NSTYPE) != type || fcntl((int)fd, F_SETFD, FD_CLOEXEC) < 0) {
    fprintf(stderr, "box-agent: --netns: %s is not a descriptor of the namespace it must be\n", arg);
    _exit(2);
  }
  return (int)fd;
}

/* Writes all of buf to fd; 0 on success, -1 on failure. */
static int write_all(int fd, const unsigned char *buf, size_t len) {
  while (len > 0) {
    ssize_t n = write(fd, buf, len);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return -1;
    buf += n;
    len -= (size_t)n;
  }
  return 0;
}

/* Pipe mode: relays stdin and stdout to one connection to the local agent (see the top). */
static int serve_pipe(const char *port_arg) {
  char *end;
  errno = 0;
  long port = strtol(port_arg, &end, 10);
  if (errno != 0 || *end != 0 || end == port_arg || port < 1 || port > 65535) {
    fprintf(stderr, "box-agent: --pipe: %s is not a port\n", port_arg);
    return 2;
  }
  int sock = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (sock < 0) die("socket");
  struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(sock, (struct sockaddr *)&addr, sizeof addr) < 0) die("connect to the agent");
  unsigned char buf[65536];
  int stdin_open = 1;
  for (;;) {
    struct pollfd fds[2] = {{.fd = sock, .events = POLLIN}, {.fd = 0, .events = POLLIN}};
    if (poll(fds, stdin_open ? 2 : 1, -1) < 0) {
      if (errno == EINTR) continue;
      die("poll");
    }
    if (fds[0].revents) {
      ssize_t n = read(sock, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n == 0) return 0;
      if (n < 0 || write_all(1, buf, (size_t)n) < 0) return 1;
    }
    if (stdin_open && fds[1].revents) {
      ssize_t n = read(0, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return 1;
      if (n == 0) {
        stdin_open = 0;
        if (shutdown(sock, SHUT_WR) < 0) return 1;
      } else if (write_all(sock, buf, (size_t)n) < 0) {
        return 1;
      }
    }
  }
}

/* Relay mode: one connection of the server, and the connection to the forwarded port it is relayed
 * to; each direction a ring of RELAY_SIZE bytes (only data, head and count of struct relay). */
struct pair {
  int down;       /* the server's connection on the Unix socket; -1 once closed */
  int up;         /* the connection to 127.0.0.1:PORT; -1 once closed */
  int connecting; /* up's non-blocking connect has not completed yet */
  struct relay to_up, to_down;
  int up_ended, down_ended; /* the connection's sending side has ended (its read gave 0) */
  int up_shut, down_shut;   /* nothing more goes to that connection (shut down, or it hung up) */
};

static struct pair pairs[RELAY_PAIRS];
static int npairs;

static void drop_pair(int i) {
  drop_fd(pairs[i].down);
  drop_fd(pairs[i].up);
  free(pairs[i].to_up.data);
  free(pairs[i].to_down.data);
  pairs[i] = pairs[--npairs];
}

/* Takes a connection of the server and starts its connection to the port; a connection that cannot
 * be relayed is closed, which the server sees as an agent that is not there. */
static void relay_accept(int listener, const struct sockaddr_in *to) {
  int down = accept4(listener, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
  if (down < 0) return;
  int up = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  unsigned char *a = malloc(RELAY_SIZE), *b = malloc(RELAY_SIZE);
  int connecting = 0;
  if (up >= 0 && a != NULL && b != NULL && connect(up, (const struct sockaddr *)to, sizeof *to) < 0) {
    if (errno == EINPROGRESS) {
      connecting = 1;
    } else {
      drop_fd(up);
      up = -1;
    }
  }
  if (up < 0 || a == NULL || b == NULL) {
    drop_fd(down);
    drop_fd(up);
    free(a);
    free(b);
    return;
  }
  pairs[npairs++] = (struct pair){.down = down, .up = up, .connecting = connecting,
                                  .to_up = {.data = a}, .to_down = {.data = b}};
}

/* What p wants of its two connections now; fd -1 where it wants nothing, so that a connection that
 * hung up is not reported again and again while the pair waits on the other one. */
static void relay_watch(const struct pair *p, struct pollfd w[2]) {
  short down = 0, up = 0;
  if (p->connecting) {
    up = POLLOUT; /* nothing is read before the connection to the port is there */
  } else {
    if (!p->down_ended && p->to_up.count < RELAY_SIZE) down |= POLLIN;
    if (p->to_down.count > 0 && !p->down_shut) down |= POLLOUT;
    if (!p->up_ended && p->to_down.count < RELAY_SIZE) up |= POLLIN;
    if (p->to_up.count > 0 && !p->up_shut) up |= POLLOUT;
  }
  w[0] = (struct pollfd){.fd = down ? p->down : -1, .events = down};
  w[1] = (struct pollfd){.fd = up ? p->up : -1, .events = up};
}

/* One direction: reads `from` into r while there is room, writes r to `to`, and once `from` has
 * ended and r is empty, shuts down the sending side of `to`. Returns -1 when the pair must end. */
static int relay_flow(struct relay *r, int from, short from_ev, int *ended, int to, short to_ev,
                      int *shut) {
  if ((from_ev & (POLLIN | POLLHUP)) && !*ended && r->count < RELAY_SIZE) {
    ssize_t n = fill(r, from);
    if (n == 0) *ended = 1;
    if (n < 0 && errno != EAGAIN) return -1;
  }
  if (*shut) {
    r->count = 0; /* its reader has gone: nothing of it can be delivered */
    return 0;
  }
  if ((to_ev & POLLOUT) && r->count > 0 && spill(r, to) < 0 && errno != EAGAIN) return -1;
  if (to_ev & (POLLERR | POLLHUP)) *shut = 1;
  if (*ended && r->count == 0 && !*shut) {
    if (shutdown(to, SHUT_WR) < 0) return -1;
    *shut = 1;
  }
  return 0;
}

/* Moves p's bytes as its connections allow; returns -1 when the pair is done or failed. */
static int relay_pump(struct pair *p, const struct pollfd w[2]) {
  short down = w[0].revents, up = w[1].revents;
  if ((down & POLLERR) || ((up & POLLERR) && !p->connecting)) return -1;
  if (p->connecting) {
    if (!up) return 0;
    int error = 0;
    socklen_t size = sizeof error;
    if (getsockopt(p->up, SOL_SOCKET, SO_ERROR, &error, &size) < 0 || error != 0) return -1;
    p->connecting = 0;
    up = POLLOUT;
  }
  if (relay_flow(&p->to_up, p->down, down, &p->down_ended, p->up, up, &p->up_shut) < 0 ||
      relay_flow(&p->to_down, p->up, up, &p->up_ended, p->down, down, &p->down_shut) < 0) {
    return -1;
  }
  return p->up_shut && p->down_shut ? -1 : 0;
}

/* The capabilities of root, given up once the socket listens: the relay only moves bytes. */
static void drop_capabilities(void) {
  struct __user_cap_header_struct header = {.version = _LINUX_CAPABILITY_VERSION_3};
  struct __user_cap_data_struct none[2];
  memset(none, 0, sizeof none);
  if (syscall(SYS_capset, &header, none) < 0) die("capset");
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) die("prctl");
}

/* Relay mode (see the top). */
static int serve_relay(const char *socket_path, const char *port_arg) {
  char *end;
  errno = 0;
  long port = strtol(port_arg, &end, 10);
  if (errno != 0 || *end != 0 || end == port_arg || port < 1 || port > 65535) {
    fprintf(stderr, "box-agent: --relay: %s is not a port\n", port_arg);
    return 2;
  }
  if (strlen(socket_path) >= sizeof addr.sun_path) {
    fprintf(stderr, "box-agent: --relay: socket path too long\n");
    return 2;
  }
  strcpy(addr.sun_path, socket_path);
  struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  int listener = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (listener < 0) die("socket");
  umask(0177); /* the socket is rw------- from its first moment: the server's alone */
  if (bind(listener, (struct sockaddr *)&addr, sizeof addr) < 0) die(socket_path);
  if (listen(listener, 64) < 0) die("listen");
  drop_capabilities();
  if (write_all(1, (const unsigned char *)"1", 1) < 0) die("ready");
  static struct pollfd fds[2 + 2 * RELAY_PAIRS];
  for (;;) {
    fds[0] = (struct pollfd){.fd = 0, .events = POLLIN};
    fds[1] = (struct pollfd){.fd = npairs < RELAY_PAIRS ? listener : -1, .events = POLLIN};
    for (int i = 0; i < npairs; i++) relay_watch(&pairs[i], &fds[2 + 2 * i]);
    if (poll(fds, (nfds_t)(2 + 2 * npairs), -1) < 0) {
      if (errno == EINTR) continue;
      die("poll");
    }
    if (fds[0].revents) {
      unsigned char sink[256];
      ssize_t n = read(0, sink, sizeof sink);
      if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) return 0;
    }
    /* From the last: a pair dropped is replaced by the last one, whose events are behind. */
    for (int i = npairs - 1; i >= 0; i--) {
      if (relay_pump(&pairs[i], &fds[2 + 2 * i]) < 0) drop_pair(i);
    }
    if (fds[1].revents & POLLIN) relay_accept(listener, &to);
  }
}

int main(int argc, char **argv) {
  if (argc == 3 && strcmp(argv[1], "--pipe") == 0) {
    if (signal(SIGPIPE, SIG_IGN) == SIG_ERR) die("signal");
    /* The sandbox's processes run as the same user: the secret passes through this memory. */
    if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0) die("prctl");
    return serve_pipe(argv[2]);
  }
  if (argc == 4 && strcmp(argv[1], "--relay") == 0) {
    if (signal(SIGPIPE, SIG_IGN) == SIG_ERR) die("signal");
    return serve_relay(argv[2], argv[3]);
  }
  if (argc == 4 && strcmp(argv[1], "--home") == 0) {
    /* What bwrap's sandbox runs first: the sandbox user's home made on the /home tmpfs (one that
     * is there is no error, nor is one that cannot be made: the sandbox runs without it), then
     * "ready" on stdout, which tells the server that the sandbox's setup is complete. */
    (void)mkdir(argv[2], 0700);
    static const char ready[] = "ready\n";
    if (write(1, ready, sizeof ready - 1) != (ssize_t)(sizeof ready - 1)) return 1;
    argv[1] = argv[3];
    argc = 2;
  }
  network = (argc == 4 || (argc == 7 && strcmp(argv[4], "--netns") == 0)) &&
            strcmp(argv[1], "--listen") == 0;
  if (argc != 2 && !network) {
    fprintf(stderr, "usage: box-agent SOCKET | box-agent --home DIR SOCKET | "
                    "box-agent --listen PORT SECRET_FILE [--netns USERFD NETFD] | "
                    "box-agent --pipe PORT | box-agent --relay SOCKET PORT\n");
    return 2;
  }
  if (argc == 7) {
    session_userns = namespace_fd(argv[5], CLONE_NEWUSER);
    session_netns = namespace_fd(argv[6], CLONE_NEWNET);
  }
  for (int c = 0; c < MAX_CONTROLS; c++) controls[c] = (struct control){.fd = -1};
  /* In network mode the agent logs to stderr and lives on: when it started with 0-2 closed,
   * those must not become its connections. */
  for (int fd = 0; network && fd < 3; fd++) {
    if (fcntl(fd, F_GETFD) < 0 && open("/dev/null", O_RDWR) != fd) die("/dev/null");
  }
  if (signal(SIGPIPE, SIG_IGN) == SIG_ERR) die("signal");
  /* Other processes of the sandbox user may not read this one's memory (tokens, secret). */
  if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0) die("prctl");
  sigset_t chld;
  if (sigemptyset(&chld) < 0 || sigaddset(&chld, SIGCHLD) < 0) die("sigset");
  if (sigprocmask(SIG_BLOCK, &chld, NULL) < 0) die("sigprocmask");
  int sigfd = signalfd(-1, &chld, SFD_NONBLOCK | SFD_CLOEXEC);
  if (sigfd < 0) die("signalfd");
  if (network) {
    serve_network(argv[2], argv[3], sigfd);
  } else {
    serve_unix(argv[1], sigfd);
  }
  return 0;
}
