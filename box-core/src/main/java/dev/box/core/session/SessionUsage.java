package dev.box.core.session;

import dev.box.core.backend.SandboxUsage;
import java.time.Instant;

/**
 * What one session uses at one moment: its sandbox's CPU time and memory as the backend measures
 * them, and the disk of its private workspace. A value that cannot be measured is {@link
 * SandboxUsage#UNMEASURED}.
 *
 * @param at when it was measured
 * @param sandbox the sandbox's CPU time and memory
 * @param diskUsedBytes the bytes of the files in the private workspace
 * @param diskTotalBytes the size of the workspace's file system: its quota when it has one, else
 *     the host file system it shares
 */
public record SessionUsage(
    Instant at, SandboxUsage sandbox, long diskUsedBytes, long diskTotalBytes) {

  /** Measures {@code session} now. */
  static SessionUsage measure(Session session, Instant now) {
    WorkspaceDisk.Use disk =
        WorkspaceDisk.measure(session.privateWorkspace(), session.template().workspaceQuotaMb());
    return new SessionUsage(now, session.sandbox().usage(), disk.usedBytes(), disk.totalBytes());
  }
}
