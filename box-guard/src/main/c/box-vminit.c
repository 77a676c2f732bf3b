/*
 * box-vminit: the first program of a Box micro-VM, the /init of its initramfs, run by the guest
 * kernel as root before anything of the sandbox runs.
 *
 *   /init        (no arguments; of the kernel's command line only the word "box.template")
 *
 * The initramfs holds this program, the guest kernel's modules in /modules, and box-guard and
 * box-agent in /box. In order:
 *   - mounts /dev (devtmpfs), /proc and /sys, and makes the console its stdin, stdout and stderr;
 *   - loads every module in /modules in the order of their names (the host names them so: the
 *     virtio-mmio transport first, then block, console, network, ext4, overlay and 9p drivers), and opens
 *     the console again, now the virtio console's;
 *   - mounts the root disk, /dev/vda, read-only, under an overlay whose writable layer is a tmpfs
 *     (the VM's RAM bounds it, and it is gone with the VM);
 *   - with "box.template" on the kernel's command line (the VMs Box saves once and restores many
 *     times), everything above is generic: it writes one byte, "R", on the virtio-serial port
 *     /dev/vport0p1 and waits there for the host's go, which comes only after the host saved the
 *     VM and restored it as one of many: GO_SIZE bytes, "BOXGO001", the host's time (seconds and
 *     nanoseconds, 8 and 4 bytes, little-endian) and GO_RANDOM random bytes. Every restored VM
 *     starts with the template's clock and the template's random state: the init sets
 *     CLOCK_REALTIME to the host's time, adds the bytes to the kernel's pool (RNDADDENTROPY,
 *     credited) and forces a reseed of its generator (RNDRESEEDCRNG) before anything else runs.
 *     What is the VM's own, the config disk, it reads only then, with O_DIRECT: the kernel read
 *     the template's (all zeros) when it probed the disk, and its page cache may still hold it;
 *   - reads the config disk /dev/vdb (at most 128 KiB): the agent's secret, its first 32 bytes,
 *     goes to /run/box/secret (a tmpfs, mode 0400, owned by the sandbox user, who runs the agent):
 *     the secret never goes on the kernel's command line, which the host shows every user (QEMU's
 *     arguments); the lines after it, up to a NUL, are parsed strictly (below);
 *   - reads the session's limits, the first line "<memory bytes> <pids> <share> <net>\n" after the
 *     secret, mounts cgroup2 at /sys/fs/cgroup and moves itself into a cgroup "session" with
 *     memory.max, memory.swap.max 0 and pids.max set: the agent and every process of the session
 *     inherit it, its files stay root's, so the sandbox user cannot lift the limits, and a command
 *     that outgrows the memory meets the guest's OOM killer;
 *   - brings up lo and eth0 with QEMU's user-mode network address (10.0.4.15/24), on which the host
 *     forwards one loopback port to the agent; when <net> is 1 (network on), also the default
 *     route through QEMU's gateway, 10.0.4.2, and /etc/resolv.conf (of the overlay) naming
 *     10.0.2.3, the DNS forwarder of the slirp4netns that is the way out of QEMU's network
 *     namespace on the host (the host's firewall there lets DNS reach only it);
 *   - makes /workspace (a directory of the overlay that the sandbox user owns, unless <share> is 1:
 *     a share mounts there), binds /box at /.box, moves the overlay onto / and chroots into it;
 *   - mounts each host folder the host shares over virtio-9p, line "share share<i> <ro|rw>
 *     <path>\n" (in order; an absolute path, printable, no "." or ".." part), at its path
 *     (nosuid, nodev, read-only for ro; QEMU refuses writes to those too), making the directories
 *     above it: the host's files appear with their host owners and modes, and QEMU runs as the
 *     sandbox user's host uid, so the guest's checks match the host's;
 *   - forks the session's init into a pid namespace of its own, with a /proc of that namespace:
 *     the session sees only its own processes, neither this init (which waits for it as the VM's
 *     PID 1, outside the session's cgroup, and ends the VM when it ends) nor the kernel's threads;
 *   - there becomes the sandbox user, the uid of line "uid <n>\n" (the host's sandbox uid) and the
 *     same gid, with no supplementary group and an empty capability bounding set, and execs, as the
 *     namespace's PID 1:
 *       /.box/box-guard --init --net-off -- /.box/box-agent --listen 7000 SECRET --netns 3 4
 *     so that the agent and everything it forks are the sandbox user under the syscall filter, and
 *     every process the agent starts runs in a network namespace with only loopback: eth0 is the
 *     agent's alone. With the network on, without --net-off and --netns: the session's processes
 *     use eth0 too. The user changes here, not through box-guard's --uid: a process whose user
 *     changed is not dumpable until its next exec, and one that is not cannot write the uid map of
 *     the user namespace that --net-off makes.
 * Any failure prints one line, "box-vminit: <what>: <why>", on the console and restarts the VM,
 * which QEMU run with -no-reboot turns into its exit.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <limits.h>
#include <grp.h>
#include <net/if.h>
#include <net/route.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/random.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/reboot.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <arpa/inet.h>
#include <time.h>
#include <unistd.h>

#define SECRET_SIZE 32
#define AGENT_PORT "7000"
#define GUEST_ADDRESS "10.0.4.15"
#define GUEST_NETMASK "255.255.255.0"
#define GATEWAY "10.0.4.2"
/* slirp4netns's DNS forwarder (dev.box.sandbox.UserModeNetwork.RESOLV_CONF_TEXT). */
#define RESOLV_CONF "nameserver 10.0.2.3\noptions edns0\n"
#define NEWROOT "/newroot"
#define SECRET_PATH "/run/box/secret"
#define CONFIG_MAX (128 * 1024)
#define MAX_SHARES 16
#define SESSION_CGROUP "/sys/fs/cgroup/session"
#define GO_PORT "/dev/vport0p1"
#define GO_MAGIC "BOXGO001"
#define GO_RANDOM 64
#define GO_SIZE (8 + 8 + 4 + GO_RANDOM)

/* One host folder shared over virtio-9p, as a line of the config names it. */
struct share {
  char tag[16];
  int read_only;
  char path[PATH_MAX];
};

static uid_t sandbox_id;
static struct share shares[MAX_SHARES];
static int share_count;

static void die(const char *what) {
  fprintf(stderr, "box-vminit: %s: %s\n", what, strerror(errno));
  fflush(stderr);
  sync();
  reboot(RB_AUTOBOOT);
  _exit(1);
}

static void make_dir(const char *path, mode_t mode) {
  if (mkdir(path, mode) < 0 && errno != EEXIST) die(path);
}

static void do_mount(const char *source, const char *target, const char *type,
                     unsigned long flags, const char *data) {
  make_dir(target, 0755);
  if (mount(source, target, type, flags, data) < 0) die(target);
}

static void console(void) {
  int fd = open("/dev/console", O_RDWR | O_NOCTTY);
  if (fd < 0) return; /* nowhere to say anything: go on silently */
  for (int i = 0; i < 3; i++) dup2(fd, i);
  if (fd > 2) close(fd);
}

static int module_name(const struct dirent *entry) {
  size_t length = strlen(entry->d_name);
  return length > 3 && strcmp(entry->d_name + length - 3, ".ko") == 0;
}

static void load_modules(void) {
  struct dirent **names;
  int count = scandir("/modules", &names, module_name, alphasort);
  if (count < 0) die("/modules");
  for (int i = 0; i < count; i++) {
    char path[300];
    snprintf(path, sizeof path, "/modules/%s", names[i]->d_name);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) die(path);
    if (syscall(SYS_finit_module, fd, "", 0) < 0 && errno != EEXIST) die(path);
    close(fd);
    free(names[i]);
  }
  free(names);
}

/* Waits up to 5 s for the device node, which the driver's probe makes as its module loads. */
static void await_device(const char *path) {
  for (int i = 0; i < 500 && access(path, F_OK) < 0; i++) {
    struct timespec pause = {0, 10 * 1000 * 1000};
    nanosleep(&pause, NULL);
  }
  if (access(path, F_OK) < 0) die(path);
}

/* Reads the config disk (at most CONFIG_MAX bytes): the secret, then the lines; returns how many
   bytes it read. */
static size_t read_config(unsigned char *config) {
  /* O_DIRECT: a restored VM's page cache may hold what the template's kernel read of its own
     config disk; the buffer, the offsets and the size are multiples of 4096, as it asks. */
  int in = open("/dev/vdb", O_RDONLY | O_CLOEXEC | O_DIRECT);
  if (in < 0) die("/dev/vdb");
  size_t size = 0;
  while (size < CONFIG_MAX) {
    ssize_t n = read(in, config + size, CONFIG_MAX - size);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) die("the config on /dev/vdb");
    if (n == 0) break;
    size += (size_t)n;
  }
  close(in);
  errno = EINVAL;
  if (size <= SECRET_SIZE) die("the config on /dev/vdb");
  return size;
}

/* Whether the kernel's command line has the word WORD. */
static int on_command_line(const char *word) {
  static char line[4096];
  int fd = open("/proc/cmdline", O_RDONLY | O_CLOEXEC);
  if (fd < 0) die("/proc/cmdline");
  ssize_t n = read(fd, line, sizeof line - 1);
  if (n < 0) die("/proc/cmdline");
  close(fd);
  line[n] = '\0';
  size_t length = strlen(word);
  for (char *at = line; (at = strstr(at, word)) != NULL; at += length) {
    int starts = at == line || at[-1] == ' ';
    int ends = at[length] == '\0' || at[length] == ' ' || at[length] == '\n';
    if (starts && ends) return 1;
  }
  return 0;
}

static void pause_ms(long ms) {
  struct timespec pause = {ms / 1000, (ms % 1000) * 1000 * 1000};
  nanosleep(&pause, NULL);
}

static unsigned long long little_endian(const unsigned char *bytes, int count) {
  unsigned long long value = 0;
  for (int i = count - 1; i >= 0; i--) value = value << 8 | bytes[i];
  return value;
}

/* Says "ready" on the go port, then reads the host's go. A read returns 0 while no host end is
   connected (a restored VM's, until the host connects), so it is tried again, every 10 ms. */
static void await_go(unsigned char *go) {
  await_device(GO_PORT);
  int port = open(GO_PORT, O_RDWR | O_CLOEXEC);
  if (port < 0) die(GO_PORT);
  if (write(port, "R", 1) != 1) die(GO_PORT);
  size_t size = 0;
  while (size < GO_SIZE) {
    ssize_t n = read(port, go + size, GO_SIZE - size);
    if (n < 0 && errno != EINTR && errno != EAGAIN) die(GO_PORT);
    if (n > 0) size += (size_t)n;
    if (n <= 0) pause_ms(10);
  }
  close(port);
  errno = EINVAL;
  if (memcmp(go, GO_MAGIC, 8) != 0) die("the go on " GO_PORT);
}

/* A restored VM's own clock and random state, from the host's go. */
static void go_on(void) {
  static unsigned char go[GO_SIZE];
  await_go(go);
  struct timespec now = {(time_t)little_endian(go + 8, 8), (long)little_endian(go + 16, 4)};
  errno = EINVAL;
  if (now.tv_nsec >= 1000000000L) die("the time of the go");
  if (clock_settime(CLOCK_REALTIME, &now) < 0) die("clock_settime");
  struct {
    struct rand_pool_info info;
    unsigned char bytes[GO_RANDOM];
  } entropy;
  entropy.info.entropy_count = GO_RANDOM * 8;
  entropy.info.buf_size = GO_RANDOM;
  memcpy(entropy.bytes, go + 20, GO_RANDOM);
  int random = open("/dev/urandom", O_RDWR | O_CLOEXEC);
  if (random < 0) die("/dev/urandom");
  if (ioctl(random, RNDADDENTROPY, &entropy) < 0) die("RNDADDENTROPY");
  if (ioctl(random, RNDRESEEDCRNG) < 0) die("RNDRESEEDCRNG");
  close(random);
  memset(&entropy, 0, sizeof entropy);
  memset(go, 0, sizeof go);
  fprintf(stderr, "box-vminit: go\n");
}

/* A decimal number of 1 to 10 digits, no sign, no leading zero, within [1, max]; -1 if not. */
static long long number(const char *text, size_t length, long long max) {
  if (length == 0 || length > 10 || text[0] == '0') return -1;
  long long value = 0;
  for (size_t i = 0; i < length; i++) {
    if (text[i] < '0' || text[i] > '9') return -1;
    value = value * 10 + (text[i] - '0');
  }
  return value <= max ? value : -1;
}

/* Whether PATH (LENGTH bytes) is absolute and plain: printable, no empty, "." or ".." part. */
static int plain_path(const char *path, size_t length) {
  if (length < 2 || length >= PATH_MAX || path[0] != '/') return 0;
  for (size_t i = 0; i < length; i++) {
    unsigned char c = (unsigned char)path[i];
    if (c < 0x20 || c == 0x7f) return 0;
  }
  for (size_t start = 1; start <= length;) {
    size_t end = start;
    while (end < length && path[end] != '/') end++;
    size_t part = end - start;
    if (part == 0 || (part == 1 && path[start] == '.') ||
        (part == 2 && path[start] == '.' && path[start + 1] == '.')) {
      return 0;
    }
    start = end + 1;
  }
  return 1;
}

/* One line after the first: "uid <n>" or "share share<i> <ro|rw> <path>", the i-th share. */
static void parse_line(const char *line, size_t length) {
  errno = EINVAL;
  if (length > 4 && memcmp(line, "uid ", 4) == 0) {
    long long uid = number(line + 4, length - 4, 4294967294LL);
    if (uid <= 0 || sandbox_id != 0) die("the uid on /dev/vdb");
    sandbox_id = (uid_t)uid;
    return;
  }
  if (share_count >= MAX_SHARES) die("the shares on /dev/vdb");
  struct share *share = &shares[share_count];
  int tag = snprintf(share->tag, sizeof share->tag, "share%d", share_count);
  size_t head = 6 + (size_t)tag + 4; /* "share " TAG " ro " */
  if (length <= head || memcmp(line, "share ", 6) != 0 ||
      memcmp(line + 6, share->tag, (size_t)tag) != 0 ||
      (memcmp(line + 6 + tag, " ro ", 4) != 0 && memcmp(line + 6 + tag, " rw ", 4) != 0) ||
      !plain_path(line + head, length - head)) {
    die("a share on /dev/vdb");
  }
  share->read_only = line[6 + tag + 2] == 'o';
  memcpy(share->path, line + head, length - head);
  share->path[length - head] = '\0';
  share_count++;
}

/* The lines after the limits' line, up to the first NUL: each ends with a newline. */
static void parse_config(const unsigned char *config, size_t size) {
  const char *text = (const char *)config + SECRET_SIZE;
  size_t end = 0;
  while (SECRET_SIZE + end < size && text[end] != '\0') end++;
  const char *first = memchr(text, '\n', end);
  errno = EINVAL;
  if (first == NULL) die("the config on /dev/vdb");
  for (size_t at = (size_t)(first - text) + 1; at < end;) {
    const char *newline = memchr(text + at, '\n', end - at);
    if (newline == NULL) die("the config on /dev/vdb");
    parse_line(text + at, (size_t)(newline - (text + at)));
    at = (size_t)(newline - text) + 1;
  }
  if (sandbox_id == 0) die("no uid on /dev/vdb");
}

static void write_file(const char *path, const char *text) {
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) die(path);
  size_t length = strlen(text);
  if (write(fd, text, length) != (ssize_t)length) die(path);
  close(fd);
}

/* The session's cgroup, with the limits of the config's line, and this process in it; returns
   whether the workspace is the host's 9p share, and sets *net to whether the network is on. */
static int limit_session(const unsigned char *config, int *net) {
  char line[64] = {0};
  memcpy(line, config + SECRET_SIZE, sizeof line - 1);
  unsigned long long memory = 0;
  unsigned long pids = 0;
  int share = -1;
  errno = EINVAL;
  if (sscanf(line, "%llu %lu %d %d", &memory, &pids, &share, net) != 4 || memory == 0 ||
      pids == 0 || (share != 0 && share != 1) || (*net != 0 && *net != 1)) {
    die("the limits on /dev/vdb");
  }
  do_mount("cgroup2", "/sys/fs/cgroup", "cgroup2", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
  write_file("/sys/fs/cgroup/cgroup.subtree_control", "+memory +pids");
  make_dir(SESSION_CGROUP, 0755);
  char value[32];
  snprintf(value, sizeof value, "%llu", memory);
  write_file(SESSION_CGROUP "/memory.max", value);
  /* The guest has no swap; the file is there only where the kernel accounts swap. */
  if (access(SESSION_CGROUP "/memory.swap.max", F_OK) == 0) {
    write_file(SESSION_CGROUP "/memory.swap.max", "0");
  }
  snprintf(value, sizeof value, "%lu", pids);
  write_file(SESSION_CGROUP "/pids.max", value);
  snprintf(value, sizeof value, "%d", (int)getpid());
  write_file(SESSION_CGROUP "/cgroup.procs", value);
  return share;
}

/* /workspace: a share mounts there later (mount_shares), else the sandbox user owns it. */
static void make_workspace(int share) {
  make_dir(NEWROOT "/workspace", 0755);
  if (!share && chown(NEWROOT "/workspace", sandbox_id, sandbox_id) < 0) die("/workspace");
}

/* Makes PATH and the directories above it, as root, in the root it runs in. */
static void make_dirs(const char *path) {
  char prefix[PATH_MAX];
  size_t length = strlen(path);
  for (size_t i = 1; i <= length; i++) {
    if (i == length || path[i] == '/') {
      memcpy(prefix, path, i);
      prefix[i] = '\0';
      make_dir(prefix, 0755);
    }
  }
}

/* Mounts each share at its path (after the chroot, so that a link in the image resolves inside
   it), read-only when it is so; the host gives them in order, a folder before one inside it. */
static void mount_shares(void) {
  for (int i = 0; i < share_count; i++) {
    make_dirs(shares[i].path);
    unsigned long flags = MS_NOSUID | MS_NODEV | (shares[i].read_only ? MS_RDONLY : 0);
    if (mount(shares[i].tag, shares[i].path, "9p", flags,
              "trans=virtio,version=9p2000.L,msize=262144") < 0) {
      die(shares[i].path);
    }
  }
}

static void write_secret(const unsigned char *secret) {
  do_mount("tmpfs", NEWROOT "/run", "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755");
  make_dir(NEWROOT "/run/box", 0755);
  int out = open(NEWROOT SECRET_PATH, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0400);
  if (out < 0) die(SECRET_PATH);
  if (write(out, secret, SECRET_SIZE) != SECRET_SIZE) die(SECRET_PATH);
  if (fchown(out, sandbox_id, sandbox_id) < 0) die(SECRET_PATH);
  close(out);
}

static void set_address(int sock, const char *name, unsigned long request, const char *address) {
  struct ifreq ifr;
  memset(&ifr, 0, sizeof ifr);
  strncpy(ifr.ifr_name, name, IFNAMSIZ - 1);
  struct sockaddr_in *in = (struct sockaddr_in *)&ifr.ifr_addr;
  in->sin_family = AF_INET;
  if (inet_pton(AF_INET, address, &in->sin_addr) != 1) die(address);
  if (ioctl(sock, request, &ifr) < 0) die(name);
}

static void bring_up(int sock, const char *name) {
  struct ifreq ifr;
  memset(&ifr, 0, sizeof ifr);
  strncpy(ifr.ifr_name, name, IFNAMSIZ - 1);
  if (ioctl(sock, SIOCGIFFLAGS, &ifr) < 0) die(name);
  ifr.ifr_flags |= IFF_UP;
  if (ioctl(sock, SIOCSIFFLAGS, &ifr) < 0) die(name);
}

static void default_route(int sock) {
  struct rtentry route;
  memset(&route, 0, sizeof route);
  struct sockaddr_in *any = (struct sockaddr_in *)&route.rt_dst;
  struct sockaddr_in *mask = (struct sockaddr_in *)&route.rt_genmask;
  struct sockaddr_in *via = (struct sockaddr_in *)&route.rt_gateway;
  any->sin_family = mask->sin_family = via->sin_family = AF_INET;
  if (inet_pton(AF_INET, GATEWAY, &via->sin_addr) != 1) die(GATEWAY);
  route.rt_flags = RTF_UP | RTF_GATEWAY;
  route.rt_dev = "eth0";
  if (ioctl(sock, SIOCADDRT, &route) < 0) die("the default route");
}

/* The overlay's /etc/resolv.conf, replaced (the root image's may be a symlink). */
static void write_resolv_conf(void) {
  const char *path = NEWROOT "/etc/resolv.conf";
  if (unlink(path) < 0 && errno != ENOENT) die(path);
  int out = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (out < 0) die(path);
  size_t length = strlen(RESOLV_CONF);
  if (write(out, RESOLV_CONF, length) != (ssize_t)length) die(path);
  close(out);
}

static void network(int on) {
  int sock = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (sock < 0) die("socket");
  bring_up(sock, "lo");
  set_address(sock, "eth0", SIOCSIFADDR, GUEST_ADDRESS);
  set_address(sock, "eth0", SIOCSIFNETMASK, GUEST_NETMASK);
  bring_up(sock, "eth0");
  if (on) {
    default_route(sock);
    write_resolv_conf();
  }
  close(sock);
}

static void move_to(const char *from, const char *to) {
  make_dir(to, 0755);
  if (mount(from, to, NULL, MS_MOVE, NULL) < 0) die(to);
}

static void become_sandbox_user(void) {
  for (int cap = 0; cap <= 63; cap++) {
    if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno != EINVAL) die("PR_CAPBSET_DROP");
  }
  if (setgroups(0, NULL) < 0) die("setgroups");
  if (setresgid(sandbox_id, sandbox_id, sandbox_id) < 0) die("setresgid");
  if (setresuid(sandbox_id, sandbox_id, sandbox_id) < 0) die("setresuid");
}

/*
 * Puts the session into a pid namespace of its own: this process forks the session's init, which
 * is PID 1 of the new namespace and mounts a /proc that shows only the session's processes (not this
 * init, nor the kernel's threads), and waits for it as the VM's PID 1, in the root cgroup (not
 * counted in the session's pids.max). When the session's init ends the VM ends, as it did when that
 * init was the VM's PID 1. Returns in the session's init only.
 */
static void session_namespace(void) {
  if (unshare(CLONE_NEWPID) < 0) die("unshare(CLONE_NEWPID)");
  pid_t session = fork();
  if (session < 0) die("fork");
  if (session == 0) {
    if (umount2("/proc", MNT_DETACH) < 0) die("/proc");
    do_mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
    return;
  }
  char value[32];
  snprintf(value, sizeof value, "%d", (int)getpid());
  write_file("/sys/fs/cgroup/cgroup.procs", value);
  for (;;) {
    int status;
    pid_t pid = waitpid(-1, &status, 0);
    if (pid == session) {
      fprintf(stderr, "box-vminit: the session's init ended (status %d)\n", status);
      fflush(stderr);
      sync();
      reboot(RB_AUTOBOOT);
      _exit(0);
    }
    if (pid < 0 && errno != EINTR) die("waitpid");
  }
}

int main(void) {
  do_mount("devtmpfs", "/dev", "devtmpfs", MS_NOSUID, "mode=0755");
  console();
  do_mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
  do_mount("sysfs", "/sys", "sysfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
  load_modules();
  /* Again: the virtio console exists only now, and what was opened before writes nowhere. */
  console();
  await_device("/dev/vda");
  await_device("/dev/vdb");
  do_mount("/dev/vda", "/lower", "ext4", MS_RDONLY, NULL);
  do_mount("tmpfs", "/rw", "tmpfs", 0, "mode=0755");
  make_dir("/rw/upper", 0755);
  make_dir("/rw/work", 0755);
  do_mount("overlay", NEWROOT, "overlay", 0, "lowerdir=/lower,upperdir=/rw/upper,workdir=/rw/work");
  if (on_command_line("box.template")) go_on();
  static unsigned char config[CONFIG_MAX] __attribute__((aligned(4096)));
  size_t size = read_config(config);
  parse_config(config, size);
  write_secret(config);
  int net = 0;
  int share = limit_session(config, &net);
  memset(config, 0, sizeof config);
  network(net);
  make_workspace(share);
  do_mount("/box", NEWROOT "/.box", NULL, MS_BIND, NULL);
  if (mount(NULL, NEWROOT "/.box", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY, NULL) < 0) die("/.box");
  move_to("/dev", NEWROOT "/dev");
  move_to("/proc", NEWROOT "/proc");
  move_to("/sys", NEWROOT "/sys");
  if (chdir(NEWROOT) < 0) die(NEWROOT);
  if (mount(".", "/", NULL, MS_MOVE, NULL) < 0) die("moving the root");
  if (chroot(".") < 0 || chdir("/") < 0) die("chroot");
  mount_shares();
  session_namespace();
  become_sandbox_user();
  char *agent[] = {"/.box/box-guard", "--init",   "--net-off", "--", "/.box/box-agent",
                   "--listen",        AGENT_PORT, SECRET_PATH, "--netns", "3",
                   "4",               NULL};
  char *agent_on_network[] = {"/.box/box-guard", "--init",   "--", "/.box/box-agent",
                              "--listen",        AGENT_PORT, SECRET_PATH, NULL};
  execv(agent[0], net ? agent_on_network : agent);
  die(agent[0]);
  return 1;
}
