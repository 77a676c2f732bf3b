package dev.box.backend.microvm;

import dev.box.core.agent.AgentLink;
import dev.box.core.backend.PoolLevel;
import java.io.IOException;
import java.security.SecureRandom;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HexFormat;
import java.util.List;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * VMs booted to their agents ahead of their sessions ({@code pool_size} of them), so that a session
 * of the pooled memory size starts without the seconds a boot takes under TCG. Every VM boots the
 * same default root with no session state in it, so any of them serves any such session. A VM that
 * is taken is replaced in the background; one that died while it waited is destroyed when found. A
 * boot that fails is logged and retried at the next take, not in a loop.
 */
final class VmPool implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(VmPool.class);

  /** A VM whose agent said hello. */
  record Booted(String name, Vm vm, AgentLink link) {
    boolean usable() {
      return vm.alive() && link.usable();
    }
  }

  /** Boots the VM of a name to its agent. */
  interface Booter {
    Booted boot(String name) throws IOException, InterruptedException;
  }

  private final int size;
  private final Booter booter;
  private final Consumer<Booted> discard;
  private final SecureRandom random = new SecureRandom();
  private final Deque<Booted> ready = new ArrayDeque<>();
  private int booting;
  private boolean closed;

  /**
   * @param size how many VMs wait at most; 0: none
   * @param booter boots one (from a thread of the pool's own)
   * @param discard destroys one that will not serve a session
   */
  VmPool(int size, Booter booter, Consumer<Booted> discard) {
    this.size = size;
    this.booter = booter;
    this.discard = discard;
  }

  /** Starts the boots that bring the pool to its size. */
  synchronized void fill() {
    while (!closed && ready.size() + booting < size) {
      booting++;
      String name = "pool-" + HexFormat.of().formatHex(random.generateSeed(6));
      Thread.ofVirtual().name("microvm-pool-" + name).start(() -> bootInto(name));
    }
  }

  private void bootInto(String name) {
    Booted booted = null;
    try {
      booted = booter.boot(name);
    } catch (IOException e) {
      log.warn("cannot boot a VM for the pool: {}", e.getMessage());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    boolean kept = false;
    synchronized (this) {
      booting--;
      if (booted != null && !closed) {
        ready.add(booted);
        kept = true;
      }
    }
    if (booted != null && !kept) {
      discard.accept(booted);
    }
  }

  /** A waiting VM that still runs, or null when none does; the pool refills either way. */
  @Nullable Booted take() {
    Booted taken = null;
    List<Booted> dead = new ArrayList<>();
    synchronized (this) {
      while (taken == null && !ready.isEmpty()) {
        Booted next = ready.poll();
        if (next.usable()) {
          taken = next;
        } else {
          dead.add(next);
        }
      }
    }
    dead.forEach(discard);
    fill();
    return taken;
  }

  synchronized PoolLevel level() {
    return new PoolLevel(ready.size(), size);
  }

  /** Destroys the waiting VMs; those still booting are destroyed when their boot ends. */
  @Override
  public void close() {
    List<Booted> waiting;
    synchronized (this) {
      closed = true;
      waiting = List.copyOf(ready);
      ready.clear();
    }
    waiting.forEach(discard);
  }
}
