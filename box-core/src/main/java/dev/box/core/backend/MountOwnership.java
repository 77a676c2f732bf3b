package dev.box.core.backend;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Makes the workspaces Box created itself writable by the sandbox user, whose host uid is not the
 * server's. Directories the user named keep their owner: the sandbox writes there only if their
 * permissions let the sandbox user write, and a warning says so when they do not.
 */
public final class MountOwnership {
  private static final Logger log = LoggerFactory.getLogger(MountOwnership.class);

  private MountOwnership() {}

  /**
   * Hands the read-write mounts of {@code spec} that lie under {@code workspaces} to {@code uid}
   * (user and group), and warns about other read-write mounts {@code uid} cannot write.
   */
  public static void prepare(SandboxSpec spec, Path workspaces, int uid) {
    List<SandboxMount> mounts = new ArrayList<>(spec.extraMounts());
    SandboxMount workspace = spec.workspace();
    if (workspace != null) {
      mounts.add(0, workspace);
    }
    for (SandboxMount mount : mounts) {
      if (mount.readOnly()) {
        continue;
      }
      Path host = mount.hostPath();
      try {
        if (host.startsWith(workspaces)) {
          Files.setAttribute(host, "unix:uid", uid);
          Files.setAttribute(host, "unix:gid", uid);
        } else if (!writableBy(host, uid)) {
          log.warn(
              "{} is mounted read-write but the sandbox user (host uid {}) cannot write it; chown or"
                  + " chmod it to let the sandbox write",
              host,
              uid);
        }
      } catch (IOException | UnsupportedOperationException e) {
        log.warn("cannot check the owner of {}: {}", host, e.toString());
      }
    }
  }

  private static boolean writableBy(Path dir, int uid) throws IOException {
    int owner = (Integer) Files.getAttribute(dir, "unix:uid");
    int group = (Integer) Files.getAttribute(dir, "unix:gid");
    int mode = (Integer) Files.getAttribute(dir, "unix:mode");
    return (owner == uid && (mode & 0300) == 0300)
        || (group == uid && (mode & 0030) == 0030)
        || (mode & 0003) == 0003;
  }
}
