/*
 * box-vminit: the first program of a Box micro-VM, the /init of its initramfs, run by the guest
 * kernel as root before anything of the sandbox runs.
 *
 *   /init        (no arguments; nothing is read from the kernel's command line)
 *
 * The initramfs holds this program, the guest kernel's modules in /modules, and box-guard and
 * box-agent in /box. In order:
 *   - mounts /dev (devtmpfs), /proc and /sys, and makes the console its stdin, stdout and stderr;
 *   - loads every module in /modules in the order of their names (the host names them so: the
 *     virtio-mmio transport first, then block, console, network, ext4, overlay and 9p drivers), and opens
 *     the console again, now the virtio console's;
 *   - mounts the root disk, /dev/vda, read-only, under an overlay whose writable layer is a tmpfs
 *     (the VM's RAM bounds it, and it is gone with the VM);
 *   - reads the agent's secret, the first 32 bytes of the config disk /dev/vdb, into
 *     /run/box/secret (a tmpfs, mode 0400, owned by the sandbox user, who runs the agent): the
 *     secret never goes on the kernel's command line, which the host shows every user (QEMU's
 *     arguments);
 *   - reads the session's limits, the line "<memory bytes> <pids> <share> <net>\n" after the secret, mounts
 *     cgroup2 at /sys/fs/cgroup and moves itself into a cgroup "session" with memory.max,
 *     memory.swap.max 0 and pids.max set: the agent and every process of the session inherit it,
 *     its files stay root's, so the sandbox user cannot lift the limits, and a command that
 *     outgrows the memory meets the guest's OOM killer;
 *   - brings up lo and eth0 with QEMU's user-mode network address (10.0.4.15/24), on which the host
 *     forwards one loopback port to the agent; when <net> is 1 (network on), also the default
 *     route through QEMU's gateway, 10.0.4.2, and /etc/resolv.conf (of the overlay) naming
 *     10.0.2.3, the DNS forwarder of the slirp4netns that is the way out of QEMU's network
 *     namespace on the host (the host's firewall there lets DNS reach only it);
 *   - makes /workspace: when <share> is 1, the host's directory over virtio-9p (tag "workspace",
 *     whose owner and mode QEMU reports as the host set them: the sandbox user's), else a directory
 *     of the overlay that the sandbox user owns; binds /box at /.box, moves the overlay onto /;
 *   - becomes the sandbox user, uid and gid 1000, with no supplementary group and an empty
 *     capability bounding set, and execs, as PID 1:
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
#include <grp.h>
#include <net/if.h>
#include <net/route.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/reboot.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <arpa/inet.h>
#include <time.h>
#include <unistd.h>

#define SECRET_SIZE 32
#define SANDBOX_ID "1000"
#define AGENT_PORT "7000"
#define GUEST_ADDRESS "10.0.4.15"
#define GUEST_NETMASK "255.255.255.0"
#define GATEWAY "10.0.4.2"
/* slirp4netns's DNS forwarder (dev.box.sandbox.UserModeNetwork.RESOLV_CONF_TEXT). */
#define RESOLV_CONF "nameserver 10.0.2.3\noptions edns0\n"
#define NEWROOT "/newroot"
#define SECRET_PATH "/run/box/secret"
#define CONFIG_SIZE 512
#define SESSION_CGROUP "/sys/fs/cgroup/session"

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

/* Reads the config disk's one sector: the secret, then the limits' line. */
static void read_config(unsigned char config[CONFIG_SIZE]) {
  int in = open("/dev/vdb", O_RDONLY | O_CLOEXEC);
  if (in < 0) die("/dev/vdb");
  if (read(in, config, CONFIG_SIZE) != CONFIG_SIZE) die("the config on /dev/vdb");
  close(in);
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
static int limit_session(const unsigned char config[CONFIG_SIZE], int *net) {
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

static void make_workspace(int share) {
  make_dir(NEWROOT "/workspace", 0755);
  if (share) {
    if (mount("workspace", NEWROOT "/workspace", "9p", MS_NOSUID | MS_NODEV,
              "trans=virtio,version=9p2000.L,msize=262144") < 0) {
      die("the 9p workspace");
    }
  } else if (chown(NEWROOT "/workspace", atoi(SANDBOX_ID), atoi(SANDBOX_ID)) < 0) {
    die("/workspace");
  }
}

static void write_secret(const unsigned char *secret) {
  do_mount("tmpfs", NEWROOT "/run", "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755");
  make_dir(NEWROOT "/run/box", 0755);
  int out = open(NEWROOT SECRET_PATH, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0400);
  if (out < 0) die(SECRET_PATH);
  if (write(out, secret, SECRET_SIZE) != SECRET_SIZE) die(SECRET_PATH);
  if (fchown(out, atoi(SANDBOX_ID), atoi(SANDBOX_ID)) < 0) die(SECRET_PATH);
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
  uid_t id = (uid_t)atoi(SANDBOX_ID);
  if (setgroups(0, NULL) < 0) die("setgroups");
  if (setresgid(id, id, id) < 0) die("setresgid");
  if (setresuid(id, id, id) < 0) die("setresuid");
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
  unsigned char config[CONFIG_SIZE];
  read_config(config);
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
