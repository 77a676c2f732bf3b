package dev.box.core.session;

import dev.box.api.BoxArchiveExtracted;
import dev.box.api.BoxFileList;
import dev.box.api.BoxFileWritten;
import dev.box.api.BoxRuntimeUnavailableException;
import dev.box.api.BoxSessionNotFoundException;
import dev.box.core.RuntimeConfig.FileLimits;
import dev.box.core.backend.Sandbox;
import dev.box.core.files.FileDownload;
import dev.box.core.files.SandboxFiles;
import dev.box.core.files.SandboxPath;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.time.Clock;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * The files routes on the sessions: each operation runs in an existing session's sandbox ({@link
 * SandboxFiles}) and counts as activity, as an exec does: the session is not reaped while it runs,
 * and its {@code last_used_at} moves when it starts and ends. A relative path starts at the
 * session's {@code mount_path}. A paused session is resumed first.
 */
public final class SessionFiles {
  private final SessionTable table;
  private final SandboxFiles files;
  private final Clock clock;
  private final BooleanSupplier shuttingDown;
  private final Consumer<String> adoptShared;
  private final Consumer<Session> resumeIfPaused;

  /**
   * @param adoptShared adopts a session that another server started, when the backend shares its
   *     sessions ({@link SessionAcquirer#adoptShared})
   * @param resumeIfPaused thaws a paused session before a file operation runs in it
   */
  SessionFiles(
      SessionTable table,
      SandboxFiles files,
      Clock clock,
      BooleanSupplier shuttingDown,
      Consumer<String> adoptShared,
      Consumer<Session> resumeIfPaused) {
    this.adoptShared = adoptShared;
    this.resumeIfPaused = resumeIfPaused;
    this.table = table;
    this.files = files;
    this.clock = clock;
    this.shuttingDown = shuttingDown;
  }

  /** The bounds in force. */
  public FileLimits limits() {
    return files.limits();
  }

  /**
   * Writes {@code body} to {@code path} in the session {@code id}; see {@link SandboxFiles#write}.
   */
  public BoxFileWritten write(
      String id, @Nullable String path, InputStream body, long declaredLength) throws IOException {
    try (Use use = use(id, path)) {
      return files.write(use.session.sandbox(), use.path, body, declaredLength);
    }
  }

  /**
   * Starts reading the file {@code path} of the session {@code id}; the session counts as in use
   * until the download is closed. See {@link SandboxFiles#read}.
   */
  public FileDownload read(String id, @Nullable String path) throws IOException {
    return counted(id, path, files::read);
  }

  /** Lists {@code path} in the session {@code id}; see {@link SandboxFiles#list}. */
  public BoxFileList list(String id, @Nullable String path) throws IOException {
    try (Use use = use(id, path)) {
      return files.list(use.session.sandbox(), use.path);
    }
  }

  /**
   * Deletes {@code path} in the session {@code id}; see {@link SandboxFiles#delete}.
   *
   * @return the absolute path deleted
   */
  public String delete(String id, @Nullable String path) throws IOException {
    try (Use use = use(id, path)) {
      files.delete(use.session.sandbox(), use.path);
      return use.path;
    }
  }

  /**
   * Starts a tar of {@code path} in the session {@code id}; the session counts as in use until the
   * download is closed. See {@link SandboxFiles#archive}.
   */
  public FileDownload archive(String id, @Nullable String path) throws IOException {
    return counted(id, path, files::archive);
  }

  /** How a download starts in a sandbox. */
  private interface Start {
    FileDownload start(Sandbox sandbox, String path) throws IOException;
  }

  /** Starts a download that counts in the session until it is closed. */
  private FileDownload counted(String id, @Nullable String path, Start start) throws IOException {
    Use use = use(id, path);
    try {
      return new Counted(start.start(use.session.sandbox(), use.path), use);
    } catch (IOException | RuntimeException e) {
      use.close();
      throw e;
    }
  }

  /**
   * Extracts the tar {@code body} into {@code path} in the session {@code id}; see {@link
   * SandboxFiles#extract}.
   */
  public BoxArchiveExtracted extract(
      String id, @Nullable String path, InputStream body, long declaredLength) throws IOException {
    try (Use use = use(id, path)) {
      return files.extract(use.session.sandbox(), use.path, body, declaredLength);
    }
  }

  /** Finds the session, resolves the path and counts the operation in the session. */
  private Use use(String id, @Nullable String requested) {
    adoptShared.accept(id);
    Session session;
    try (KeyedLocks.Held held = table.lockSettled(id)) {
      if (shuttingDown.getAsBoolean()) {
        throw new BoxRuntimeUnavailableException("Box runtime is shutting down");
      }
      session = table.get(id);
      if (session == null) {
        throw new BoxSessionNotFoundException("session " + id + " not found");
      }
      String path = SandboxPath.resolve(requested, session.template().mountPath());
      resumeIfPaused.accept(session);
      session.execStarted();
      session.touch(clock.instant());
      return new Use(session, path);
    }
  }

  /** One operation counted in its session until closed. */
  private final class Use implements AutoCloseable {
    final Session session;
    final String path;
    private final AtomicBoolean closed = new AtomicBoolean();

    Use(Session session, String path) {
      this.session = session;
      this.path = path;
    }

    @Override
    public void close() {
      if (closed.compareAndSet(false, true)) {
        session.execEnded();
        session.touch(clock.instant());
      }
    }
  }

  /** A download that ends its use of the session when closed. */
  private record Counted(FileDownload download, Use use) implements FileDownload {
    @Override
    public long size() {
      return download.size();
    }

    @Override
    public void transferTo(OutputStream out) throws IOException {
      download.transferTo(out);
    }

    @Override
    public void close() {
      try {
        download.close();
      } finally {
        use.close();
      }
    }
  }
}
