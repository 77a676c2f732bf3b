/*
 * Attempts the calls a sandbox filter must refuse and prints one line per attempt:
 *
 *   NAME allowed | NAME errno=N ENAME | NAME signal=N
 *
 *   syscall-attacks [--target PID] [NAME...]     (no NAME: every attack)
 *
 * Each attempt runs in a child of its own, so one that kills its process (a foreign-ABI call
 * under a filter that kills) or changes it (a new namespace) does not affect the others. ptrace,
 * process_vm_readv and the /proc/PID/mem open aim at --target, by default this program (the
 * parent of each attempt).
 *
 * Arguments are chosen so that a call that is not refused changes nothing on the host (invalid
 * flags, missing paths, a no-op). The set-id attempts give a file of the caller's own, in a
 * directory they make under /tmp and remove, a set-user-ID or set-group-ID mode; the plain_*
 * attempts do the same with a plain mode and must be allowed. Run it under a filter or as an
 * unprivileged user all the same.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/openat2.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/timex.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static pid_t target;

/* Each returns the raw result: -1 with errno set when refused. */

static long unshare_user(void) { return unshare(CLONE_NEWUSER); }
static long unshare_net(void) { return unshare(CLONE_NEWNET); }
static long unshare_mount(void) { return unshare(CLONE_NEWNS); }

static long clone_newuser(void) {
  long pid = syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0);
  if (pid == 0) {
    _exit(0);
  }
  if (pid > 0) {
    waitpid((pid_t)pid, NULL, 0);
  }
  return pid < 0 ? -1 : 0;
}

static long clone3_plain(void) {
  uint64_t args[11];
  memset(args, 0, sizeof args);
  args[4] = SIGCHLD; /* exit_signal */
  long pid = syscall(SYS_clone3, args, sizeof args);
  if (pid == 0) {
    _exit(0);
  }
  if (pid > 0) {
    waitpid((pid_t)pid, NULL, 0);
  }
  return pid < 0 ? -1 : 0;
}

static long mount_tmpfs(void) { return mount("box", "/nonexistent-box", "tmpfs", 0, NULL); }
static long umount_it(void) { return umount2("/nonexistent-box", 0); }
static long pivot_root_it(void) {
  return syscall(SYS_pivot_root, "/nonexistent-box-a", "/nonexistent-box-b");
}
static long open_tree_it(void) { return syscall(SYS_open_tree, -1, "", 0); }
static long move_mount_it(void) { return syscall(SYS_move_mount, -1, "", -1, "", 0); }
static long fsopen_it(void) { return syscall(SYS_fsopen, "box-nonexistent-fs", 0); }
static long fsmount_it(void) { return syscall(SYS_fsmount, -1, 0, 0); }
static long fspick_it(void) { return syscall(SYS_fspick, -1, "", 0); }
static long setns_it(void) { return setns(-1, 0); }
static long chroot_it(void) { return chroot("/nonexistent-box"); }

static long add_key_it(void) {
  return syscall(SYS_add_key, "user", "box-attack", "x", 1, -2 /* process keyring */);
}
static long keyctl_it(void) {
  return syscall(SYS_keyctl, 0 /* KEYCTL_GET_KEYRING_ID */, -3 /* session keyring */, 0);
}
static long request_key_it(void) {
  return syscall(SYS_request_key, "user", "box-attack-none", NULL, 0);
}

static long bpf_it(void) {
  union bpf_attr attr;
  memset(&attr, 0, sizeof attr);
  attr.map_type = BPF_MAP_TYPE_ARRAY;
  attr.key_size = 4;
  attr.value_size = 4;
  attr.max_entries = 1;
  return syscall(SYS_bpf, BPF_MAP_CREATE, &attr, sizeof attr);
}

static long userfaultfd_it(void) {
  return syscall(SYS_userfaultfd, O_CLOEXEC | 1 /* UFFD_USER_MODE_ONLY */);
}

static long perf_event_open_it(void) {
  struct perf_event_attr attr;
  memset(&attr, 0, sizeof attr);
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_TASK_CLOCK;
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  return syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
}

static long io_uring_setup_it(void) {
  char params[120];
  memset(params, 0, sizeof params);
  return syscall(SYS_io_uring_setup, 1, params);
}

static long ptrace_attach_it(void) { return ptrace(PTRACE_ATTACH, target, NULL, NULL); }
static long ptrace_seize_it(void) { return ptrace(PTRACE_SEIZE, target, NULL, NULL); }

static long process_vm_readv_it(void) {
  char buffer[8];
  static char source[8];
  struct iovec local = {buffer, sizeof buffer};
  struct iovec remote = {source, sizeof source};
  return process_vm_readv(target, &local, 1, &remote, 1, 0);
}

static long proc_mem_write_it(void) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/mem", (int)target);
  return open(path, O_RDWR);
}

static long kexec_load_it(void) { return syscall(SYS_kexec_load, 0, 0, NULL, 0xffff0000UL); }
static long kexec_file_load_it(void) {
  return syscall(SYS_kexec_file_load, -1, -1, 0, "", 0xffffffffUL);
}
static long init_module_it(void) { return syscall(SYS_init_module, NULL, 0, ""); }
static long finit_module_it(void) { return syscall(SYS_finit_module, -1, "", 0); }
static long delete_module_it(void) { return syscall(SYS_delete_module, "box_none", O_NONBLOCK); }

static long swapon_it(void) { return syscall(SYS_swapon, "/nonexistent-box", 0); }
static long reboot_it(void) { return syscall(SYS_reboot, 0, 0, 0, NULL); /* bad magic */ }
static long acct_it(void) { return syscall(SYS_acct, "/nonexistent-box/acct"); }
static long settimeofday_it(void) { return syscall(SYS_settimeofday, NULL, NULL); }
static long clock_settime_it(void) {
  struct timespec ts = {0, 0};
  return syscall(SYS_clock_settime, -1, &ts);
}
static long adjtimex_it(void) {
  struct timex tx;
  memset(&tx, 0, sizeof tx);
  return syscall(SYS_adjtimex, &tx);
}
static long syslog_it(void) { return syscall(SYS_syslog, 10 /* SYSLOG_ACTION_SIZE_BUFFER */, 0, 0); }
static long quotactl_it(void) { return syscall(SYS_quotactl, 0, "/nonexistent-box", 0, NULL); }
static long name_to_handle_at_it(void) {
  char handle[256];
  int mount_id;
  memset(handle, 0, sizeof handle);
  *(unsigned int *)handle = sizeof handle - 8;
  return syscall(SYS_name_to_handle_at, AT_FDCWD, "/", handle, &mount_id, 0);
}
static long open_by_handle_at_it(void) { return syscall(SYS_open_by_handle_at, -1, NULL, 0); }
static long personality_it(void) { return personality(ADDR_NO_RANDOMIZE); }
static long uselib_it(void) {
#ifdef SYS_uselib
  return syscall(SYS_uselib, "/nonexistent-box");
#else
  errno = ENOSYS;
  return -1;
#endif
}
static long ustat_it(void) {
#ifdef SYS_ustat
  char buffer[64];
  return syscall(SYS_ustat, 0, buffer);
#else
  errno = ENOSYS;
  return -1;
#endif
}
static long get_mempolicy_it(void) { return syscall(SYS_get_mempolicy, NULL, NULL, 0, NULL, 0); }
static long kcmp_it(void) { return syscall(SYS_kcmp, getpid(), getpid(), 0, 0, 0); }
static long socket_vsock_it(void) { return socket(40 /* AF_VSOCK */, SOCK_STREAM, 0); }
static long socket_alg_high_bits_it(void) {
  /* The kernel reads the family as an int: the high bits are dropped after the filter looked. */
  return syscall(SYS_socket, 0x100000000UL | 38 /* AF_ALG */, SOCK_SEQPACKET, 0);
}

/* A directory of its own under /tmp for the set-id attempts, and its file "f". */
static char scratch[] = "/tmp/box-setid-XXXXXX";
static char scratch_file[sizeof scratch + 2];

static void make_scratch(int with_file) {
  if (mkdtemp(scratch) == NULL) {
    exit(254);
  }
  snprintf(scratch_file, sizeof scratch_file, "%s/f", scratch);
  if (with_file) {
    int fd = open(scratch_file, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
    if (fd < 0) {
      exit(254);
    }
    close(fd);
  }
}

/* Removes the scratch directory, keeping `result` and errno. */
static long drop_scratch(long result) {
  int e = errno;
  unlink(scratch_file);
  rmdir(scratch);
  errno = e;
  return result;
}

/* Closes what an open that succeeded returned: 0, or -1 as it failed. */
static long opened(long fd) {
  if (fd >= 0) {
    close((int)fd);
  }
  return drop_scratch(fd < 0 ? -1 : 0);
}

static long chmod_to(mode_t mode) {
  make_scratch(1);
  return drop_scratch(chmod(scratch_file, mode));
}
static long chmod_setuid_it(void) { return chmod_to(S_ISUID | 0755); }
static long chmod_setgid_it(void) { return chmod_to(S_ISGID | 0755); }
static long plain_chmod_it(void) { return chmod_to(0755); }

static long fchmod_setuid_it(void) {
  make_scratch(1);
  int fd = open(scratch_file, O_RDONLY | O_CLOEXEC);
  long result = fchmod(fd, S_ISUID | 0755);
  close(fd);
  return drop_scratch(result);
}
static long fchmodat_setgid_it(void) {
  make_scratch(1);
  return drop_scratch(syscall(SYS_fchmodat, AT_FDCWD, scratch_file, S_ISGID | 0755));
}
static long fchmodat2_setuid_it(void) {
  make_scratch(1);
  return drop_scratch(syscall(452 /* fchmodat2 */, AT_FDCWD, scratch_file, S_ISUID | 0755, 0));
}

static long open_setuid_it(void) {
  make_scratch(0);
#ifdef SYS_open
  return opened(syscall(SYS_open, scratch_file, O_CREAT | O_WRONLY, S_ISUID | 0755));
#else
  return opened(syscall(SYS_openat, AT_FDCWD, scratch_file, O_CREAT | O_WRONLY, S_ISUID | 0755));
#endif
}
static long creat_to(mode_t mode) {
  make_scratch(0);
#ifdef SYS_creat
  return opened(syscall(SYS_creat, scratch_file, mode));
#else
  return opened(
      syscall(SYS_openat, AT_FDCWD, scratch_file, O_CREAT | O_WRONLY | O_TRUNC, mode));
#endif
}
static long creat_setuid_it(void) { return creat_to(S_ISUID | 0755); }
static long plain_creat_it(void) { return creat_to(0755); }
static long openat_to(mode_t mode) {
  make_scratch(0);
  return opened(syscall(SYS_openat, AT_FDCWD, scratch_file, O_CREAT | O_WRONLY, mode));
}
static long openat_setgid_it(void) { return openat_to(S_ISGID | 0755); }
static long plain_openat_it(void) { return openat_to(0755); }
static long openat_tmpfile_setuid_it(void) {
  make_scratch(0);
  return opened(syscall(SYS_openat, AT_FDCWD, scratch, O_TMPFILE | O_WRONLY, S_ISUID | 0755));
}
static long mknodat_setuid_it(void) {
  make_scratch(0);
  return drop_scratch(syscall(SYS_mknodat, AT_FDCWD, scratch_file, S_IFREG | S_ISUID | 0755, 0));
}
static long openat2_it(void) {
  struct open_how how;
  memset(&how, 0, sizeof how);
  how.flags = O_RDONLY;
  long fd = syscall(SYS_openat2, AT_FDCWD, "/", &how, sizeof how);
  if (fd >= 0) {
    close((int)fd);
  }
  return fd < 0 ? -1 : 0;
}

static long int80_it(void) {
#if defined(__x86_64__)
  long result;
  __asm__ volatile("int $0x80" : "=a"(result) : "a"(20L) /* i386 getpid */ : "memory");
  if (result < 0) {
    errno = (int)-result;
    return -1;
  }
  return result;
#else
  errno = ENOSYS;
  return -1;
#endif
}

static long x32_it(void) {
#if defined(__x86_64__)
  return syscall(0x40000000L | 39 /* x32 getpid */);
#else
  errno = ENOSYS;
  return -1;
#endif
}

static long unreviewed_it(void) { return syscall(500); }

static const struct {
  const char *name;
  long (*attempt)(void);
} ATTACKS[] = {
    {"unshare_user", unshare_user},
    {"unshare_net", unshare_net},
    {"unshare_mount", unshare_mount},
    {"clone_newuser", clone_newuser},
    {"clone3", clone3_plain},
    {"mount_tmpfs", mount_tmpfs},
    {"umount2", umount_it},
    {"pivot_root", pivot_root_it},
    {"open_tree", open_tree_it},
    {"move_mount", move_mount_it},
    {"fsopen", fsopen_it},
    {"fsmount", fsmount_it},
    {"fspick", fspick_it},
    {"setns", setns_it},
    {"chroot", chroot_it},
    {"add_key", add_key_it},
    {"keyctl", keyctl_it},
    {"request_key", request_key_it},
    {"bpf", bpf_it},
    {"userfaultfd", userfaultfd_it},
    {"perf_event_open", perf_event_open_it},
    {"io_uring_setup", io_uring_setup_it},
    {"ptrace_attach", ptrace_attach_it},
    {"ptrace_seize", ptrace_seize_it},
    {"process_vm_readv", process_vm_readv_it},
    {"proc_mem_write", proc_mem_write_it},
    {"kexec_load", kexec_load_it},
    {"kexec_file_load", kexec_file_load_it},
    {"init_module", init_module_it},
    {"finit_module", finit_module_it},
    {"delete_module", delete_module_it},
    {"swapon", swapon_it},
    {"reboot", reboot_it},
    {"acct", acct_it},
    {"settimeofday", settimeofday_it},
    {"clock_settime", clock_settime_it},
    {"adjtimex", adjtimex_it},
    {"syslog", syslog_it},
    {"quotactl", quotactl_it},
    {"name_to_handle_at", name_to_handle_at_it},
    {"open_by_handle_at", open_by_handle_at_it},
    {"personality", personality_it},
    {"uselib", uselib_it},
    {"ustat", ustat_it},
    {"get_mempolicy", get_mempolicy_it},
    {"kcmp", kcmp_it},
    {"socket_vsock", socket_vsock_it},
    {"socket_alg_high_bits", socket_alg_high_bits_it},
    {"chmod_setuid", chmod_setuid_it},
    {"chmod_setgid", chmod_setgid_it},
    {"fchmod_setuid", fchmod_setuid_it},
    {"fchmodat_setgid", fchmodat_setgid_it},
    {"fchmodat2_setuid", fchmodat2_setuid_it},
    {"open_setuid", open_setuid_it},
    {"creat_setuid", creat_setuid_it},
    {"openat_setgid", openat_setgid_it},
    {"openat_tmpfile_setuid", openat_tmpfile_setuid_it},
    {"mknodat_setuid", mknodat_setuid_it},
    {"openat2", openat2_it},
    {"plain_chmod", plain_chmod_it},
    {"plain_creat", plain_creat_it},
    {"plain_openat", plain_openat_it},
    {"int80", int80_it},
    {"x32", x32_it},
    {"unreviewed", unreviewed_it},
};

static void run(const char *name, long (*attempt)(void)) {
  fflush(stdout);
  pid_t pid = fork();
  if (pid < 0) {
    printf("%s fork-failed errno=%d\n", name, errno);
    return;
  }
  if (pid == 0) {
    errno = 0;
    long result = attempt();
    _exit(result == -1 ? (errno > 0 && errno < 255 ? errno : 255) : 0);
  }
  int status;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(status)) {
    printf("%s signal=%d\n", name, WTERMSIG(status));
  } else if (WEXITSTATUS(status) == 0) {
    printf("%s allowed\n", name);
  } else {
    const char *symbol = strerrorname_np(WEXITSTATUS(status));
    printf("%s errno=%d %s\n", name, WEXITSTATUS(status), symbol == NULL ? "?" : symbol);
  }
}

int main(int argc, char **argv) {
  int first = 1;
  target = getpid();
  if (argc > 2 && strcmp(argv[1], "--target") == 0) {
    target = (pid_t)atoi(argv[2]);
    first = 3;
  }
  size_t count = sizeof ATTACKS / sizeof ATTACKS[0];
  if (first >= argc) {
    for (size_t i = 0; i < count; i++) {
      run(ATTACKS[i].name, ATTACKS[i].attempt);
    }
  }
  for (int a = first; a < argc; a++) {
    size_t i = 0;
    while (i < count && strcmp(ATTACKS[i].name, argv[a]) != 0) {
      i++;
    }
    if (i == count) {
      fprintf(stderr, "unknown attack %s\n", argv[a]);
      return 2;
    }
    run(ATTACKS[i].name, ATTACKS[i].attempt);
  }
  return 0;
}
