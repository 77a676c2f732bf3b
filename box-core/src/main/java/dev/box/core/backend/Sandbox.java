package dev.box.core.backend;

import java.util.List;
import org.jspecify.annotations.Nullable;

/** The live sandbox of one session. Thread-safe: processes are spawned concurrently. */
public interface Sandbox {

  /** The backend's own name for this sandbox (a directory, a container name, ...). */
  String id();

  /** Whether the sandbox still runs; a dead one is recreated on next use. */
  boolean isAlive();

  /**
   * Spawns a process inside the sandbox, as the sandbox user, with the sandbox's limits. The
   * process and everything it starts can be killed together with {@link SandboxProcess#killTree}.
   *
   * @throws dev.box.api.BoxException when the process cannot be started
   */
  SandboxProcess spawn(ProcessSpec spec);

  /**
   * Spawns a long-running process (a managed process) that, where the backend can, outlives this
   * server's relay of its stdio: it then has a {@link SandboxProcess#handle} by which another
   * server {@linkplain #reattach reattaches} to it. The default is {@link #spawn}.
   */
  default SandboxProcess spawnHeld(ProcessSpec spec) {
    return spawn(spec);
  }

  /**
   * Takes over the running process that another server started with {@link #spawnHeld} and let go
   * of (it stopped, or was killed), by its {@link SandboxProcess#handle}.
   *
   * @return the process, or null when it is gone (it ended, and its output was all read), or the
   *     backend keeps no process beyond its server
   * @throws dev.box.api.BoxManagedProcessConflictException when another server relays it
   * @throws dev.box.api.BoxException when the sandbox cannot be reached
   */
  default @Nullable SandboxProcess reattach(String handle) {
    return null;
  }

  /**
   * The command that, spawned in this sandbox as an ordinary process, connects to {@code
   * 127.0.0.1:port} inside it and relays its stdin and stdout to that connection unchanged, exiting
   * 1 when nothing listens there ({@code box-agent --pipe}); null (the default) when the backend
   * has no such command. It reaches the sandbox's own loopback, so it works with the network off.
   *
   * @param port a TCP port, 1 to 65535
   */
  default @Nullable List<String> portPipe(int port) {
    return null;
  }

  /**
   * Freezes every process of the sandbox: they keep their memory and use no CPU until {@link
   * #resume}; idempotent. Called only on backends that declare {@link
   * dev.box.api.BoxCapabilities#PAUSE}; the default refuses.
   *
   * @throws dev.box.api.BoxException when the sandbox cannot be frozen
   */
  default void pause() {
    throw new UnsupportedOperationException("this backend cannot pause a sandbox");
  }

  /**
   * Thaws what {@link #pause} froze; idempotent, and does nothing on a sandbox that is not paused.
   *
   * @throws dev.box.api.BoxException when the sandbox cannot be thawed
   */
  default void resume() {
    throw new UnsupportedOperationException("this backend cannot resume a sandbox");
  }

  /**
   * What the sandbox's processes use now: CPU time and memory, as the backend can measure them (a
   * paused sandbox included). Never throws: what cannot be measured, or a sandbox that cannot be
   * asked, is {@link SandboxUsage#UNMEASURED}. The default measures nothing.
   */
  default SandboxUsage usage() {
    return SandboxUsage.UNKNOWN;
  }

  /**
   * Kills every process of the sandbox and removes what the backend created for it, except the
   * workspace; idempotent.
   */
  void destroy();

  /**
   * Lets go of the sandbox without stopping it, for another server to serve ({@link
   * SharedSessions}); the default destroys it.
   */
  default void release() {
    destroy();
  }

  /**
   * Removes the workspace the backend keeps for this sandbox itself, beyond the host (a cluster's
   * volume claim): called after {@link #destroy} when the session is deleted, never when its
   * sandbox is only replaced or the server stops. The default keeps none: a host workspace is the
   * runtime's to remove.
   */
  default void removeWorkspace() {}

  /**
   * Whether the backend started this sandbox ahead of its session, from a pool, rather than for it;
   * false by default.
   */
  default boolean preStarted() {
    return false;
  }
}
