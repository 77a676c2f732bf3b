package dev.box.mcp;

import dev.box.client.ProcessAttachment;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.locks.ReentrantLock;
import org.jspecify.annotations.Nullable;

/**
 * The lines a transport writes to the process's stdin. The SDK's client sends its first request
 * without waiting for {@code connect} to complete, so lines sent before the attachment is up wait
 * here, in order, and go out when it is; once the transport is unusable, every send fails.
 */
final class StdinLines {
  private final ReentrantLock lock = new ReentrantLock();
  private final List<Pending> pending = new ArrayList<>();
  private @Nullable ProcessAttachment attachment;
  private @Nullable Throwable unusable;

  private record Pending(String line, CompletableFuture<Void> sent) {}

  /**
   * Sends through {@code opened} from now on, the waiting lines first; closes it instead when the
   * transport became unusable meanwhile.
   */
  void attached(ProcessAttachment opened) {
    lock.lock();
    try {
      if (unusable != null) {
        opened.close();
        return;
      }
      attachment = opened;
      for (Pending p : pending) {
        var unused =
            opened
                .send(p.line())
                .whenComplete(
                    (v, failure) -> {
                      if (failure == null) {
                        p.sent().complete(null);
                      } else {
                        p.sent().completeExceptionally(failure);
                      }
                    });
      }
      pending.clear();
    } finally {
      lock.unlock();
    }
  }

  /**
   * Fails the waiting lines and every later one with {@code reason}.
   *
   * @return the attachment that was in use, for the caller to close, or null
   */
  @Nullable ProcessAttachment unusable(Throwable reason) {
    lock.lock();
    try {
      if (unusable == null) {
        unusable = reason;
      }
      ProcessAttachment current = attachment;
      attachment = null;
      pending.forEach(p -> p.sent().completeExceptionally(reason));
      pending.clear();
      return current;
    } finally {
      lock.unlock();
    }
  }

  /** Sends {@code line} now, or once attached; the future completes when it was written. */
  CompletableFuture<Void> send(String line) {
    lock.lock();
    try {
      if (attachment != null) {
        return attachment.send(line);
      }
      if (unusable != null) {
        return CompletableFuture.failedFuture(unusable);
      }
      CompletableFuture<Void> sent = new CompletableFuture<>();
      pending.add(new Pending(line, sent));
      return sent;
    } finally {
      lock.unlock();
    }
  }
}
