package dev.box.remote;

import dev.box.core.Hashes;
import dev.box.core.backend.SandboxBackend;
import java.io.IOException;
import java.net.http.HttpClient;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A backend whose sandboxes are machines of a remote service, reached over HTTP. Each machine is
 * marked with the hash of the server's data directory and the running instance, by which the next
 * server on the same data directory finds and removes those an earlier one left behind.
 */
public abstract class RemoteBackend implements SandboxBackend {
  private static final Logger log = LoggerFactory.getLogger(RemoteBackend.class);

  /** The hash of the server's data directory, which marks its machines. */
  protected final String dataLabel;

  /** The running server instance, which marks the machines it made. */
  protected final String instanceId;

  /** The client of the service, closed with the backend. */
  protected final HttpClient http;

  private final String name;
  private final String kinds;

  /**
   * @param name the backend's name
   * @param dataDir the server's state directory
   * @param instanceId the running server instance
   * @param connectTimeout how long connecting to the service may take
   * @param kinds what the service calls its machines, for logs ({@code "E2B sandboxes"})
   */
  protected RemoteBackend(
      String name, Path dataDir, String instanceId, Duration connectTimeout, String kinds) {
    this.name = name;
    this.dataLabel = Hashes.shortSha256(dataDir.toAbsolutePath().normalize().toString());
    this.instanceId = instanceId;
    this.kinds = kinds;
    this.http = client(connectTimeout);
  }

  /**
   * A client that never follows a redirect, so that the service's credential goes nowhere but the
   * configured address.
   */
  private static HttpClient client(Duration connectTimeout) {
    return HttpClient.newBuilder()
        .version(HttpClient.Version.HTTP_1_1)
        .connectTimeout(connectTimeout)
        .followRedirects(HttpClient.Redirect.NEVER)
        .build();
  }

  @Override
  public final String name() {
    return name;
  }

  @Override
  public final void removeOrphans() {
    removeLeftBehind(false);
  }

  @Override
  public final void removeOrphansSparingPersistent() {
    removeLeftBehind(true);
  }

  private void removeLeftBehind(boolean sparePersistent) {
    try {
      for (Machine machine : machines()) {
        if (dataLabel.equals(machine.dataLabel())
            && !machine.ours()
            && !(sparePersistent && machine.persistent())) {
          log.info("removing {} left by an earlier server: {}", kinds, machine.id());
          remove(machine.id());
        }
      }
    } catch (IOException e) {
      log.warn("cannot look for {} left by an earlier server: {}", kinds, e.toString());
    }
  }

  /**
   * A machine of the service, as its marks say.
   *
   * @param id the service's id of it
   * @param dataLabel the data directory's hash it is marked with, null when unmarked
   * @param ours whether this server made or adopted it
   * @param persistent whether it holds a persistent session
   */
  public record Machine(String id, @Nullable String dataLabel, boolean ours, boolean persistent) {}

  /**
   * The service's machines that may be Box's, at least those marked with {@link #dataLabel}; none
   * when the service cannot be asked (no credentials), as nothing could have been made.
   */
  protected abstract List<Machine> machines() throws IOException;

  /** Removes the machine {@code id}, one left by an earlier server. */
  protected abstract void remove(String id) throws IOException;

  @Override
  public void close() {
    http.close();
  }
}
