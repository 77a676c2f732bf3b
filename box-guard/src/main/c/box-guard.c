/*
 * box-guard: starts a program inside a Box sandbox under a seccomp filter.
 *
 *   box-guard [--uid N --gid N] [--init] [--net-off] -- PROGRAM [ARGS...]
 *   box-guard --policy
 *
 * In order: with --uid and --gid, a process that is uid 0 (in its user namespace) becomes that
 * user with no capability left in any set, bounding set included; a process that is not uid 0 must
 * already be that user. Then no-new-privileges, then the filter is loaded, then PROGRAM is
 * executed (looked up on PATH). With --init it first forks: the parent stays as PID 1 of a
 * container, reaping every orphan and forwarding termination signals, and ends with PROGRAM's
 * status; both run under the filter, so nothing in the sandbox is left unfiltered for a process to
 * take over (an engine's own init could be written through /proc/1/mem by any process of the same
 * user).
 *
 * With --net-off, before the filter, a child makes a user namespace (the current uid and gid mapped
 * to themselves, setgroups denied) with a network namespace of its own, whose loopback it brings
 * up; PROGRAM inherits descriptors of both at 3 (user) and 4 (network), which keep them alive, and
 * runs itself in the pod's network: box-agent --netns 3 4 has every process of the session enter
 * them (see box-agent.c). The filter lets a process join a user or network namespace it has a
 * descriptor of (setns with exactly CLONE_NEWUSER or CLONE_NEWNET), never make one; the kernel
 * refuses the way back into the pod's network (no capability there).
 *
 * Nothing is written on success. Any failure prints one line, "box-guard: <what>: <why>", on
 * stderr, and also into /dev/termination-log where that exists (a pod's termination message), and
 * exits 125; PROGRAM never runs unfiltered. Where the runtime's seccomp profile or the kernel
 * refuses the namespaces of --net-off, that is such a failure: the program never runs with the
 * network.
 *
 * --policy builds and loads the filter in a child process, checks that the kernel applies it, and
 * prints the policy's name.
 *
 * The policy is Docker's default seccomp profile as it applies to a process without capabilities
 * (an allowlist; everything else fails with EPERM), made stricter: see docs/SECURITY.md.
 *
 * The filter is built with libseccomp when box-guard is built: this file compiled with
 * BOX_GUARD_EXPORT is box-guard-filter, which writes the program libseccomp makes of the policy
 * into box-guard-filter.h; box-guard includes it and loads it as it is, as seccomp_load would
 * (the same program for the same libseccomp, without its few milliseconds of work at every start).
 * Built statically (glibc) so that it runs in any container image.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <net/if.h>
#include <sched.h>
#ifdef BOX_GUARD_EXPORT
#include <seccomp.h>
#endif
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#if !defined(__x86_64__) && !defined(__aarch64__)
#error "box-guard supports x86-64 and aarch64"
#endif

#define GUARD_FAILED 125
#define POLICY_NAME "docker-default-equivalent"
#define USAGE \
  "usage: box-guard [--uid N --gid N] [--init] [--net-off] -- PROGRAM [ARGS...] | box-guard --policy"
/* Where --net-off puts its namespaces' descriptors for PROGRAM. */
#define USERNS_FD 3
#define NETNS_FD 4
/* Where a Kubernetes pod's container writes why it ended (its terminationMessagePath). */
#define TERMINATION_LOG "/dev/termination-log"

/* Says why box-guard fails on stderr and, in a pod, as the container's termination message. */
static void fail(const char *what, int err) {
  fprintf(stderr, "box-guard: %s: %s\n", what, strerror(err));
  FILE *log = fopen(TERMINATION_LOG, "we");
  if (log != NULL) {
    fprintf(log, "box-guard: %s: %s\n", what, strerror(err));
    fclose(log);
  }
  exit(GUARD_FAILED);
}

static void fail_usage(const char *what, const char *arg) {
  fprintf(stderr, "box-guard: %s%s (" USAGE ")\n", what, arg);
  exit(GUARD_FAILED);
}

#ifdef BOX_GUARD_EXPORT
/*
 * The policy, built with libseccomp into a BPF program when box-guard itself is built (see the
 * top of this file): box-guard then loads the program as it is, with no library and no work per
 * start. This part is compiled only into box-guard-filter, which writes the program as the header
 * box-guard includes.
 */

/* Namespace flags of clone(2); CLONE_NEWTIME (0x80) cannot be passed to clone, only to unshare and
 * clone3, which are refused whole. */
#define CLONE_NAMESPACES 0x7E020000ULL

/*
 * Calls a process without capabilities may make, from Docker's default profile, less adjtimex,
 * clock_adjtime (they read the clock discipline, but also set it where a capability allows) and
 * name_to_handle_at (file handles are the first half of the open_by_handle_at escape). ptrace,
 * process_vm_readv and process_vm_writev, which Docker allows since Linux 4.8, are refused: a
 * process could otherwise drive one outside the filter, or rewrite another sandboxed process. The
 * io_uring calls are refused as Docker refuses them: their operations bypass seccomp entirely.
 * Names this arch lacks are skipped; clone, socket, personality and the calls that give a file
 * its mode (SET_ID_FREE) are allowed with conditions below, openat2 answers ENOSYS.
 */
static const char *const ALLOWED[] = {
#if defined(__x86_64__)
    /* Thread-local storage. modify_ldt, which Docker also allows here, is refused: only 16-bit
     * and Wine code needs it, and it has a long record of kernel bugs. */
    "arch_prctl",
#endif
    "accept", "accept4", "access", "alarm", "bind", "brk", "cachestat", "capget", "capset", "chdir",
    "chown", "clock_getres", "clock_gettime", "clock_nanosleep", "close", "close_range",
    "connect", "copy_file_range", "dup", "dup2", "dup3", "epoll_create", "epoll_create1",
    "epoll_ctl", "epoll_ctl_old", "epoll_pwait", "epoll_pwait2", "epoll_wait", "epoll_wait_old",
    "eventfd", "eventfd2", "execve", "execveat", "exit", "exit_group", "faccessat", "faccessat2",
    "fadvise64", "fallocate", "fanotify_mark", "fchdir", "fchown", "fchownat", "fcntl", "fdatasync", "fgetxattr", "flistxattr", "flock", "fork",
    "fremovexattr", "fsetxattr", "fstat", "fstatfs", "fsync", "ftruncate", "futex", "futex_requeue",
    "futex_wait", "futex_waitv", "futex_wake", "futimesat", "getcpu", "getcwd", "getdents",
    "getdents64", "getegid", "geteuid", "getgid", "getgroups", "getitimer", "getpeername",
    "getpgid", "getpgrp", "getpid", "getppid", "getpriority", "getrandom", "getresgid", "getresuid",
    "getrlimit", "get_robust_list", "getrusage", "getsid", "getsockname", "getsockopt",
    "get_thread_area", "gettid", "gettimeofday", "getuid", "getxattr", "getxattrat",
    "inotify_add_watch", "inotify_init", "inotify_init1", "inotify_rm_watch", "io_cancel", "ioctl",
    "io_destroy", "io_getevents", "io_pgetevents", "ioprio_get", "ioprio_set", "io_setup",
    "io_submit", "kill", "landlock_add_rule", "landlock_create_ruleset", "landlock_restrict_self",
    "lchown", "lgetxattr", "link", "linkat", "listen", "listmount", "listxattr", "listxattrat",
    "llistxattr", "lremovexattr", "lseek", "lsetxattr", "lstat", "madvise", "map_shadow_stack",
    "membarrier", "memfd_create", "memfd_secret", "mincore", "mkdir", "mkdirat",
    "mlock", "mlock2", "mlockall", "mmap", "mprotect", "mq_getsetattr", "mq_notify", "mq_open",
    "mq_timedreceive", "mq_timedsend", "mq_unlink", "mremap", "mseal", "msgctl", "msgget", "msgrcv",
    "msgsnd", "msync", "munlock", "munlockall", "munmap", "nanosleep", "newfstatat", "pause", "pidfd_open", "pidfd_send_signal", "pipe", "pipe2", "pkey_alloc",
    "pkey_free", "pkey_mprotect", "poll", "ppoll", "prctl", "pread64", "preadv", "preadv2",
    "prlimit64", "process_mrelease", "pselect6", "pwrite64", "pwritev", "pwritev2", "read",
    "readahead", "readlink", "readlinkat", "readv", "recvfrom", "recvmmsg", "recvmsg",
    "remap_file_pages", "removexattr", "removexattrat", "rename", "renameat", "renameat2",
    "restart_syscall", "rmdir", "rseq", "rt_sigaction", "rt_sigpending", "rt_sigprocmask",
    "rt_sigqueueinfo", "rt_sigreturn", "rt_sigsuspend", "rt_sigtimedwait", "rt_tgsigqueueinfo",
    "sched_getaffinity", "sched_getattr", "sched_getparam", "sched_get_priority_max",
    "sched_get_priority_min", "sched_getscheduler", "sched_rr_get_interval", "sched_setaffinity",
    "sched_setattr", "sched_setparam", "sched_setscheduler", "sched_yield", "seccomp", "select",
    "semctl", "semget", "semop", "semtimedop", "sendfile", "sendmmsg", "sendmsg", "sendto",
    "setfsgid", "setfsuid", "setgid", "setgroups", "setitimer", "setpgid", "setpriority",
    "setregid", "setresgid", "setresuid", "setreuid", "setrlimit", "set_robust_list", "setsid",
    "setsockopt", "set_thread_area", "set_tid_address", "setuid", "setxattr", "setxattrat", "shmat",
    "shmctl", "shmdt", "shmget", "shutdown", "sigaltstack", "signalfd", "signalfd4", "socketpair",
    "splice", "stat", "statfs", "statmount", "statx", "symlink", "symlinkat", "sync",
    "sync_file_range", "syncfs", "sysinfo", "tee", "tgkill", "time", "timer_create", "timer_delete",
    "timer_getoverrun", "timer_gettime", "timer_settime", "timerfd_create", "timerfd_gettime",
    "timerfd_settime", "times", "tkill", "truncate", "umask", "uname", "unlink", "unlinkat",
    "utime", "utimensat", "utimes", "vfork", "vmsplice", "wait4", "waitid", "write", "writev",
};

/* Calls numbered alike on x86-64 and aarch64 (424 and up), for a libseccomp too old to know them. */
static const struct {
  const char *name;
  int nr;
} GENERIC_NUMBERS[] = {
    {"pidfd_send_signal", 424}, {"pidfd_open", 434}, {"close_range", 436},
    {"openat2", 437}, {"faccessat2", 439}, {"epoll_pwait2", 441},
    {"landlock_create_ruleset", 444}, {"landlock_add_rule", 445},
    {"landlock_restrict_self", 446}, {"memfd_secret", 447}, {"process_mrelease", 448},
    {"futex_waitv", 449}, {"cachestat", 451}, {"fchmodat2", 452}, {"map_shadow_stack", 453},
    {"futex_wake", 454}, {"futex_wait", 455}, {"futex_requeue", 456}, {"statmount", 457},
    {"listmount", 458}, {"mseal", 462}, {"setxattrat", 463}, {"getxattrat", 464},
    {"listxattrat", 465}, {"removexattrat", 466},
};

/*
 * Calls numbered after the newest this policy was reviewed against (removexattrat, 466) answer
 * ENOSYS, as on an older kernel, so that a newer C library falls back to the calls it replaces
 * instead of failing on EPERM (runc does the same). Refused either way.
 */
#define FIRST_UNREVIEWED_NR 467
#define LAST_UNREVIEWED_NR 511

/*
 * The calls that give a file its mode, allowed only when that mode has neither set-id bit: through
 * a writable idmapped mount of a folder another user owns, the sandbox user is that owner on disk,
 * and a set-user-ID or set-group-ID executable it made would run as that owner for anyone on the
 * host (nosuid covers only the sandbox's own mount). Otherwise the default action refuses them
 * with EPERM. open and openat take a mode only when they create (O_CREAT, or O_TMPFILE, whose
 * __O_TMPFILE bit is the same on both arches), so they are also allowed whenever they do not;
 * creat, mknod and mknodat always create. mkdir needs no rule: the kernel drops set-id bits from
 * its mode. The index is that of the call's mode, then of its flags (-1: none).
 */
static const struct {
  const char *name;
  unsigned int mode_arg;
  int flags_arg;
} MODE_SETTERS[] = {
    {"chmod", 1, -1},     {"fchmod", 1, -1}, {"fchmodat", 2, -1}, {"fchmodat2", 2, -1},
    {"creat", 1, -1},     {"mknod", 1, -1},  {"mknodat", 2, -1},  {"open", 2, 1},
    {"openat", 3, 2},
};
#define SET_ID_BITS ((scmp_datum_t)(S_ISUID | S_ISGID))
/* __O_TMPFILE carries O_DIRECTORY with it: only its own bit, or every O_DIRECTORY open would be
 * allowed by its mode register alone. */
#define CREATING_FLAGS ((scmp_datum_t)(O_CREAT | (__O_TMPFILE & ~O_DIRECTORY)))

/* personality(2) values Docker allows: PER_LINUX, PER_LINUX32, UNAME26 and query. */
static const unsigned long PERSONALITIES[] = {0x0, 0x8, 0x20000, 0x20008, 0xffffffffUL};

static void allow(scmp_filter_ctx ctx, int nr, const char *name) {
  int rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 0);
  if (rc != 0) {
    char what[96];
    snprintf(what, sizeof what, "seccomp_rule_add %s", name);
    fail(what, -rc);
  }
}

static int generic_number(const char *name) {
  for (size_t i = 0; i < sizeof GENERIC_NUMBERS / sizeof GENERIC_NUMBERS[0]; i++) {
    if (strcmp(GENERIC_NUMBERS[i].name, name) == 0) {
      return GENERIC_NUMBERS[i].nr;
    }
  }
  return -1;
}

/* The number of call `name` on this arch, or -1 where it has none. */
static int syscall_number(const char *name) {
  int nr = seccomp_syscall_resolve_name(name);
  return nr == __NR_SCMP_ERROR ? generic_number(name) : nr;
}

static void add_rule(scmp_filter_ctx ctx, uint32_t action, int nr, const char *what,
                     unsigned int count, const struct scmp_arg_cmp *cmp) {
  int rc = seccomp_rule_add_array(ctx, action, nr, count, cmp);
  if (rc != 0) {
    fail(what, -rc);
  }
}

static scmp_filter_ctx build_filter(void) {
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ERRNO(EPERM));
  if (ctx == NULL) {
    fail("seccomp_init", ENOMEM);
  }
  /*
   * Only the native ABI: on x86-64 a call through int 0x80 (i386) or with the x32 bit set, on
   * aarch64 an AArch32 call, kills the whole process. These are how filters written for one ABI
   * have been bypassed; no program of this ABI makes them by accident, and a 32-bit program
   * answered EPERM on every call, exit included, would spin or crash obscurely instead of dying
   * at once with SIGSYS.
   */
  int rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
  if (rc != 0) {
    fail("seccomp_attr_set bad-arch action", -rc);
  }
  /* A binary tree of syscall numbers keeps each call's cost logarithmic; optional. */
  (void)seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);

  for (size_t i = 0; i < sizeof ALLOWED / sizeof ALLOWED[0]; i++) {
    int nr = syscall_number(ALLOWED[i]);
    if (nr >= 0) {
      allow(ctx, nr, ALLOWED[i]);
    }
  }

  /* No set-id bit on any file (MODE_SETTERS); openat2's mode sits in memory a filter cannot read:
   * ENOSYS, so that a C library falls back to openat (glibc's open uses openat already). */
  for (size_t i = 0; i < sizeof MODE_SETTERS / sizeof MODE_SETTERS[0]; i++) {
    int nr = syscall_number(MODE_SETTERS[i].name);
    if (nr < 0) {
      continue;
    }
    struct scmp_arg_cmp no_set_id = {MODE_SETTERS[i].mode_arg, SCMP_CMP_MASKED_EQ, SET_ID_BITS,
                                     0};
    add_rule(ctx, SCMP_ACT_ALLOW, nr, "seccomp_rule_add set-id-free mode", 1, &no_set_id);
    if (MODE_SETTERS[i].flags_arg >= 0) {
      struct scmp_arg_cmp not_creating = {(unsigned int)MODE_SETTERS[i].flags_arg,
                                          SCMP_CMP_MASKED_EQ, CREATING_FLAGS, 0};
      add_rule(ctx, SCMP_ACT_ALLOW, nr, "seccomp_rule_add open without creating", 1,
               &not_creating);
    }
  }
  add_rule(ctx, SCMP_ACT_ERRNO(ENOSYS), syscall_number("openat2"), "seccomp_rule_add openat2", 0,
           NULL);

  /* clone without any namespace flag; clone3's flags sit in memory a filter cannot read. */
  struct scmp_arg_cmp no_namespace = SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_NAMESPACES, 0);
  add_rule(ctx, SCMP_ACT_ALLOW, SCMP_SYS(clone), "seccomp_rule_add clone", 1, &no_namespace);
  add_rule(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), "seccomp_rule_add clone3", 0, NULL);

  for (size_t i = 0; i < sizeof PERSONALITIES / sizeof PERSONALITIES[0]; i++) {
    struct scmp_arg_cmp persona = SCMP_A0(SCMP_CMP_EQ, PERSONALITIES[i]);
    add_rule(ctx, SCMP_ACT_ALLOW, SCMP_SYS(personality), "seccomp_rule_add personality", 1,
             &persona);
  }

  /*
   * socket: every family but AF_ALG (38) and AF_VSOCK (40), as Docker. Compared on all 64 bits
   * and allowed only by exact value, so a family with high bits set (which the kernel truncates
   * to an int) does not pass; families after AF_MCTP (45) do not exist yet.
   */
  struct scmp_arg_cmp below_alg = SCMP_A0(SCMP_CMP_LT, 38);
  add_rule(ctx, SCMP_ACT_ALLOW, SCMP_SYS(socket), "seccomp_rule_add socket", 1, &below_alg);
  for (unsigned long family = 39; family <= 45; family++) {
    if (family != 40) {
      struct scmp_arg_cmp exact = SCMP_A0(SCMP_CMP_EQ, family);
      add_rule(ctx, SCMP_ACT_ALLOW, SCMP_SYS(socket), "seccomp_rule_add socket", 1, &exact);
    }
  }

  /* setns into a namespace of one of these two types only (0, any type, is refused): what the
   * processes of a --net-off session do to enter its network. The kernel allows it where the
   * caller has CAP_SYS_ADMIN over the namespace: one its own user namespace owns, never the pod's. */
  static const unsigned long JOINABLE[] = {CLONE_NEWUSER, CLONE_NEWNET};
  for (size_t i = 0; i < sizeof JOINABLE / sizeof JOINABLE[0]; i++) {
    struct scmp_arg_cmp type = SCMP_A1(SCMP_CMP_EQ, JOINABLE[i]);
    add_rule(ctx, SCMP_ACT_ALLOW, SCMP_SYS(setns), "seccomp_rule_add setns", 1, &type);
  }

  for (int nr = FIRST_UNREVIEWED_NR; nr <= LAST_UNREVIEWED_NR; nr++) {
    add_rule(ctx, SCMP_ACT_ERRNO(ENOSYS), nr, "seccomp_rule_add unreviewed", 0, NULL);
  }
  return ctx;
}

/* box-guard-filter OUTPUT: writes build_filter's program into OUTPUT, a C header for box-guard. */
int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: box-guard-filter OUTPUT\n");
    return 2;
  }
  scmp_filter_ctx ctx = build_filter();
  FILE *bpf = tmpfile();
  if (bpf == NULL) {
    fail("tmpfile", errno);
  }
  int rc = seccomp_export_bpf(ctx, fileno(bpf));
  if (rc != 0) {
    fail("seccomp_export_bpf", -rc);
  }
  seccomp_release(ctx);
  rewind(bpf);
  FILE *out = fopen(argv[1], "we");
  if (out == NULL) {
    fail(argv[1], errno);
  }
  fprintf(out, "/* box-guard.c's policy as box-guard-filter wrote it when box-guard was built. */\n");
  fprintf(out, "static const struct sock_filter FILTER[] = {\n");
  struct sock_filter insn;
  size_t count = 0;
  while (fread(&insn, sizeof insn, 1, bpf) == 1) {
    fprintf(out, "    {0x%04x, %u, %u, 0x%08x},\n", insn.code, insn.jt, insn.jf, insn.k);
    count++;
  }
  if (ferror(bpf) || count == 0 || count > BPF_MAXINSNS) {
    fail("reading the exported program", EINVAL);
  }
  fprintf(out, "};\n");
  if (fclose(out) != 0) {
    fail(argv[1], errno);
  }
  return 0;
}
#else

#include "box-guard-filter.h"

static unsigned int parse_id(const char *flag, const char *text) {
  char *end;
  errno = 0;
  unsigned long value = strtoul(text, &end, 10);
  if (text[0] < '0' || text[0] > '9' || *end != '\0' || errno != 0 || value >= UINT_MAX) {
    fail_usage(flag, " needs a number");
  }
  return (unsigned int)value;
}

static int last_capability(void) {
  FILE *file = fopen("/proc/sys/kernel/cap_last_cap", "r");
  int last = -1;
  if (file != NULL) {
    if (fscanf(file, "%d", &last) != 1) {
      last = -1;
    }
    fclose(file);
  }
  if (last < 0) {
    /* No /proc: the bounding set answers EINVAL past the last capability the kernel knows. */
    for (last = 0; last < 63 && prctl(PR_CAPBSET_READ, last + 1, 0, 0, 0) >= 0; last++) {
    }
  }
  return last;
}

static void clear_capabilities(void) {
  struct __user_cap_header_struct header = {_LINUX_CAPABILITY_VERSION_3, 0};
  struct __user_cap_data_struct data[2];
  memset(data, 0, sizeof data);
  if (syscall(SYS_capset, &header, data) != 0) {
    fail("capset", errno);
  }
  if (syscall(SYS_capget, &header, data) != 0) {
    fail("capget", errno);
  }
  for (int i = 0; i < 2; i++) {
    if (data[i].effective != 0 || data[i].permitted != 0 || data[i].inheritable != 0) {
      fail("capabilities remain after capset", EPERM);
    }
  }
}

/* As uid 0: becomes uid:gid with no capability in any set. Otherwise checks it already is. */
static void become(uid_t uid, gid_t gid) {
  uid_t ruid, euid, suid;
  gid_t rgid, egid, sgid;
  if (getresuid(&ruid, &euid, &suid) != 0 || getresgid(&rgid, &egid, &sgid) != 0) {
    fail("getresuid", errno);
  }
  if (ruid != 0 && euid != 0 && suid != 0) {
    if (ruid != uid || euid != uid || suid != uid || rgid != gid || egid != gid || sgid != gid) {
      fail("not uid 0 and not already the --uid and --gid given", EPERM);
    }
    return;
  }
  if (setgroups(1, &gid) != 0) {
    fail("setgroups", errno);
  }
  if (setresgid(gid, gid, gid) != 0) {
    fail("setresgid", errno);
  }
  int last = last_capability();
  for (int cap = 0; cap <= last; cap++) {
    if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EINVAL) {
      fail("dropping the capability bounding set", errno);
    }
  }
  if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL) {
    fail("clearing ambient capabilities", errno);
  }
  if (setresuid(uid, uid, uid) != 0) {
    fail("setresuid", errno);
  }
  /* setresuid clears them unless SECBIT_NO_SETUID_FIXUP was set: clear and check regardless. */
  clear_capabilities();
  if (getresuid(&ruid, &euid, &suid) != 0 || ruid != uid || euid != uid || suid != uid) {
    fail("uid did not change", EPERM);
  }
  if (getresgid(&rgid, &egid, &sgid) != 0 || rgid != gid || egid != gid || sgid != gid) {
    fail("gid did not change", EPERM);
  }
  if (uid != 0 && setresuid(-1, 0, -1) == 0) {
    fail("uid 0 could be regained", EPERM);
  }
}

/* Loads the filter, with no-new-privileges first, as libseccomp's seccomp_load would. */
static void load_filter(void) {
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    fail("PR_SET_NO_NEW_PRIVS", errno);
  }
  struct sock_fprog program = {
      .len = (unsigned short)(sizeof FILTER / sizeof FILTER[0]),
      .filter = (struct sock_filter *)FILTER,
  };
  if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program, 0, 0) != 0) {
    fail("loading the filter", errno);
  }
}

/* In a child: loads the filter and checks that the kernel applies it. */
static int probe(void) {
  pid_t pid = fork();
  if (pid < 0) {
    fail("fork", errno);
  }
  if (pid == 0) {
    load_filter();
    if (prctl(PR_GET_SECCOMP, 0, 0, 0, 0) != 2) {
      fail("the kernel does not report the filter", EPERM);
    }
    if (syscall(SYS_add_key, NULL, NULL, NULL, 0, 0) != -1 || errno != EPERM) {
      fail("add_key is not refused", EINVAL);
    }
    if (syscall(SYS_clone3, NULL, 0) != -1 || errno != ENOSYS) {
      fail("clone3 does not answer ENOSYS", EINVAL);
    }
    /* No descriptor -1: the kernel answers EBADF to what the filter lets through. */
    if (syscall(SYS_fchmod, -1, S_ISUID | 0755) != -1 || errno != EPERM) {
      fail("fchmod to a set-user-ID mode is not refused", EINVAL);
    }
    if (syscall(SYS_fchmod, -1, 0755) != -1 || errno != EBADF) {
      fail("fchmod to a plain mode is refused", EINVAL);
    }
    _exit(0);
  }
  int status;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      fail("waitpid", errno);
    }
  }
  if (WIFSIGNALED(status)) {
    fprintf(stderr, "box-guard: the probe was killed by signal %d\n", WTERMSIG(status));
    return GUARD_FAILED;
  }
  if (WEXITSTATUS(status) != 0) {
    return GUARD_FAILED;
  }
  printf("%s\n", POLICY_NAME);
  return fflush(stdout) == 0 ? 0 : GUARD_FAILED;
}

/* Writes `text` to the file `path`; false on failure, with errno set. */
static int write_file(const char *path, const char *text) {
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) {
    return 0;
  }
  size_t len = strlen(text);
  ssize_t n = write(fd, text, len);
  int e = errno;
  close(fd);
  errno = e;
  if (n >= 0 && (size_t)n != len) {
    errno = EIO;
  }
  return n >= 0 && (size_t)n == len;
}

/* In the child of --net-off: the new namespaces, this process's ids mapped, loopback up. Exits 0,
 * or 125 with the reason (the parent says it again). */
static void make_namespaces(uid_t uid, gid_t gid) {
  if (unshare(CLONE_NEWUSER | CLONE_NEWNET) != 0) {
    fail("--net-off: unshare(CLONE_NEWUSER|CLONE_NEWNET) (the runtime's seccomp profile or the "
         "kernel refuses unprivileged user namespaces)",
         errno);
  }
  char map[64];
  snprintf(map, sizeof map, "%u %u 1\n", (unsigned)uid, (unsigned)uid);
  if (!write_file("/proc/self/uid_map", map)) {
    fail("--net-off: uid_map", errno);
  }
  if (!write_file("/proc/self/setgroups", "deny\n")) {
    fail("--net-off: setgroups", errno);
  }
  snprintf(map, sizeof map, "%u %u 1\n", (unsigned)gid, (unsigned)gid);
  if (!write_file("/proc/self/gid_map", map)) {
    fail("--net-off: gid_map", errno);
  }
  int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  struct ifreq lo;
  memset(&lo, 0, sizeof lo);
  strcpy(lo.ifr_name, "lo");
  if (s < 0 || ioctl(s, SIOCGIFFLAGS, &lo) != 0) {
    fail("--net-off: reading loopback", errno);
  }
  lo.ifr_flags |= IFF_UP;
  if (ioctl(s, SIOCSIFFLAGS, &lo) != 0) {
    fail("--net-off: bringing loopback up", errno);
  }
  close(s);
}

/* Puts descriptor `fd` at `at`, inheritable, and closes it where it was. */
static void place_fd(int fd, int at) {
  if (fd != at) {
    if (dup2(fd, at) < 0) {
      fail("--net-off: dup2", errno);
    }
    close(fd);
  }
}

/*
 * --net-off: a child makes the namespaces and waits; this process opens them through its /proc
 * entry (the descriptors keep them alive once it is gone) at USERNS_FD and NETNS_FD.
 */
static void make_session_network(void) {
  int ready[2], done[2];
  if (pipe2(ready, O_CLOEXEC) != 0 || pipe2(done, O_CLOEXEC) != 0) {
    fail("--net-off: pipe", errno);
  }
  uid_t uid = geteuid();
  gid_t gid = getegid();
  pid_t child = fork();
  if (child < 0) {
    fail("--net-off: fork", errno);
  }
  if (child == 0) {
    close(ready[0]);
    close(done[1]);
    make_namespaces(uid, gid);
    char byte = 'r';
    if (write(ready[1], &byte, 1) != 1) {
      _exit(GUARD_FAILED);
    }
    /* Until the parent has opened them: it closes its end. */
    while (read(done[0], &byte, 1) < 0 && errno == EINTR) {
    }
    _exit(0);
  }
  close(ready[1]);
  close(done[0]);
  char byte;
  ssize_t n;
  do {
    n = read(ready[0], &byte, 1);
  } while (n < 0 && errno == EINTR);
  int user = -1, net = -1;
  if (n == 1) {
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/ns/user", (int)child);
    user = open(path, O_RDONLY);
    snprintf(path, sizeof path, "/proc/%d/ns/net", (int)child);
    net = open(path, O_RDONLY);
  }
  int e = errno;
  close(done[1]);
  close(ready[0]);
  int status;
  while (waitpid(child, &status, 0) < 0) {
    if (errno != EINTR) {
      fail("--net-off: waitpid", errno);
    }
  }
  if (n != 1) {
    /* The child said why on stderr and in the termination log already. */
    exit(GUARD_FAILED);
  }
  if (user < 0 || net < 0) {
    fail("--net-off: opening the namespaces", e);
  }
  /* Above both places first, so that neither dup2 overwrites the other. */
  int high_user = fcntl(user, F_DUPFD, NETNS_FD + 1);
  int high_net = fcntl(net, F_DUPFD, NETNS_FD + 1);
  if (high_user < 0 || high_net < 0) {
    fail("--net-off: fcntl", errno);
  }
  close(user);
  close(net);
  place_fd(high_user, USERNS_FD);
  place_fd(high_net, NETNS_FD);
}

static volatile pid_t init_child;

static void forward_signal(int sig) {
  if (init_child > 0) {
    kill(init_child, sig);
  }
}

/* PID 1 of a container: runs argv, reaps every orphan, ends with argv's status. */
static int run_init(char **argv) {
  static const int FORWARDED[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};
  sigset_t all, previous;
  sigfillset(&all);
  if (sigprocmask(SIG_BLOCK, &all, &previous) != 0) {
    fail("sigprocmask", errno);
  }
  pid_t pid = fork();
  if (pid < 0) {
    fail("fork", errno);
  }
  if (pid == 0) {
    if (sigprocmask(SIG_SETMASK, &previous, NULL) != 0) {
      fail("sigprocmask", errno);
    }
    execvp(argv[0], argv);
    fail(argv[0], errno);
  }
  init_child = pid;
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_handler = forward_signal;
  sigemptyset(&action.sa_mask);
  for (size_t i = 0; i < sizeof FORWARDED / sizeof FORWARDED[0]; i++) {
    sigaction(FORWARDED[i], &action, NULL);
  }
  if (sigprocmask(SIG_SETMASK, &previous, NULL) != 0) {
    fail("sigprocmask", errno);
  }
  for (;;) {
    int status;
    pid_t ended = waitpid(-1, &status, 0);
    if (ended < 0) {
      if (errno == EINTR) {
        continue;
      }
      fail("waitpid", errno);
    }
    if (ended == pid) {
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
  }
}

int main(int argc, char **argv) {
  long uid = -1, gid = -1;
  int init = 0, net_off = 0;
  int i = 1;
  if (argc == 2 && strcmp(argv[1], "--policy") == 0) {
    return probe();
  }
  for (; i < argc && strcmp(argv[i], "--") != 0; i++) {
    if (strcmp(argv[i], "--uid") == 0 && i + 1 < argc && uid < 0) {
      uid = parse_id("--uid", argv[++i]);
    } else if (strcmp(argv[i], "--gid") == 0 && i + 1 < argc && gid < 0) {
      gid = parse_id("--gid", argv[++i]);
    } else if (strcmp(argv[i], "--init") == 0 && !init) {
      init = 1;
    } else if (strcmp(argv[i], "--net-off") == 0 && !net_off) {
      net_off = 1;
    } else {
      fail_usage("unexpected argument ", argv[i]);
    }
  }
  if (i >= argc) {
    fail_usage("missing --", "");
  }
  if (i + 1 >= argc || argv[i + 1][0] == '\0') {
    fail_usage("missing program after --", "");
  }
  if ((uid < 0) != (gid < 0)) {
    fail_usage("--uid and --gid go together", "");
  }
  if (uid >= 0) {
    become((uid_t)uid, (gid_t)gid);
  }
  if (net_off) {
    make_session_network();
  }
  load_filter();
  char **program = argv + i + 1;
  if (init) {
    return run_init(program);
  }
  execvp(program[0], program);
  fail(program[0], errno);
  return GUARD_FAILED;
}

#endif /* BOX_GUARD_EXPORT */
