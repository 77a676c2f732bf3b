package dev.box.backend.boxlite;

import dev.box.fakemachine.FakeMachine;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;

/** One box of {@link FakeBoxlite}: its settings, its state, its VM and its executions. */
final class FakeBox {
  final String id;
  final @Nullable String name;
  final String image;
  final int cpus;
  final int memoryMib;
  final String workingDir;
  final Map<String, String> env;
  final boolean network;
  final Instant createdAt = Instant.now();
  final FakeMachine vm;
  final Map<String, FakeExecution> executions = new ConcurrentHashMap<>();
  volatile String status = "configured";
  volatile Instant updatedAt = createdAt;

  FakeBox(
      String id,
      @Nullable String name,
      String image,
      int cpus,
      int memoryMib,
      String workingDir,
      Map<String, String> env,
      boolean network,
      FakeMachine vm) {
    this.id = id;
    this.name = name;
    this.image = image;
    this.cpus = cpus;
    this.memoryMib = memoryMib;
    this.workingDir = workingDir;
    this.env = Map.copyOf(env);
    this.network = network;
    this.vm = vm;
  }

  /** Moves the box to {@code next}. */
  void status(String next) {
    status = next;
    updatedAt = Instant.now();
  }

  /** The box as the API describes it (schema {@code Box}). */
  Map<String, Object> json() {
    Map<String, Object> box = new LinkedHashMap<>();
    box.put("box_id", id);
    box.put("name", name);
    box.put("status", status);
    box.put("created_at", createdAt.toString());
    box.put("updated_at", updatedAt.toString());
    box.put("pid", null);
    box.put("image", image);
    box.put("cpus", cpus);
    box.put("memory_mib", memoryMib);
    box.put("labels", Map.of());
    box.put("auto_stop", 0);
    box.put("auto_delete", 0);
    box.put("auto_resume", true);
    return box;
  }
}
