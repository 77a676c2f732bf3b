package dev.box.sandbox;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * The files a namespace sandbox sees as its own /etc/passwd, /etc/group, /etc/hosts and (with the
 * network on) /etc/resolv.conf: the sandbox user and root, never the host's users, and
 * slirp4netns's resolver.
 */
public final class SandboxEtc {
  /** The uid and gid of the sandbox user inside a sandbox. */
  public static final String SANDBOX_ID = "1000";

  /** Directories of the host root that live in /usr on merged-usr hosts, or beside it on others. */
  public static final List<String> ROOT_DIRS =
      List.of("bin", "sbin", "lib", "lib32", "lib64", "libx32");

  /**
   * Host files from /etc that programs need, bound read-only when present; never shadow, never the
   * host's users.
   */
  public static final List<String> HOST_FILES =
      List.of(
          "/etc/ld.so.cache",
          "/etc/ld.so.conf",
          "/etc/ld.so.conf.d",
          "/etc/alternatives",
          "/etc/ssl",
          "/etc/ca-certificates",
          "/etc/localtime",
          "/etc/nsswitch.conf");

  /** The names of the files {@link #write} makes, but resolv.conf. */
  public static final List<String> FILES = List.of("passwd", "group", "hosts");

  private SandboxEtc() {}

  /** Writes the files into {@code dir}, creating it. */
  public static void write(Path dir) throws IOException {
    Files.createDirectories(dir);
    String id = SANDBOX_ID;
    Files.writeString(
        dir.resolve("passwd"),
        "root:x:0:0:root:/root:/usr/sbin/nologin\n"
            + "box:x:"
            + id
            + ":"
            + id
            + ":box:/home/box:/bin/sh\n"
            + "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n");
    Files.writeString(dir.resolve("group"), "root:x:0:\nbox:x:" + id + ":\nnogroup:x:65534:\n");
    Files.writeString(
        dir.resolve("hosts"), "127.0.0.1 localhost box\n::1 localhost ip6-localhost\n");
    Files.writeString(dir.resolve(UserModeNetwork.RESOLV_CONF), UserModeNetwork.RESOLV_CONF_TEXT);
  }
}
