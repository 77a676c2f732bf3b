package dev.box.backend.remote;

import dev.box.core.Hashes;
import dev.box.core.backend.SandboxBackend;
import java.io.IOException;
import java.net.http.HttpClient;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
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

  private final String kinds;

  /**
   * @param dataDir the server's state directory
   * @param instanceId the running server instance
   * @param connectTimeout how long connecting to the service may take
   * @param kinds what the service calls its machines, for logs ({@code "E2B sandboxes"})
   */
  protected RemoteBackend(Path dataDir, String instanceId, Duration connectTimeout, String kinds) {
    this.dataLabel = Hashes.shortSha256(dataDir.toAbsolutePath().normalize().toString());
    this.instanceId = instanceId;
    this.kinds = kinds;
    this.http =
        HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(connectTimeout)
            .followRedirects(HttpClient.Redirect.NEVER)
            .build();
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
      for (String id : leftBehind(sparePersistent)) {
        log.info("removing {} left by an earlier server: {}", kinds, id);
        remove(id);
      }
    } catch (IOException e) {
      log.warn("cannot look for {} left by an earlier server: {}", kinds, e.toString());
    }
  }

  /**
   * The ids of the machines that an earlier server on this data directory left, but for the
   * persistent sessions' when {@code sparePersistent}; none when the service cannot be asked (no
   * credentials), as nothing could have been made.
   */
  protected abstract List<String> leftBehind(boolean sparePersistent) throws IOException;

  /** Removes the machine {@code id}, one that {@link #leftBehind} named. */
  protected abstract void remove(String id) throws IOException;

  @Override
  public void close() {
    http.close();
  }
}
