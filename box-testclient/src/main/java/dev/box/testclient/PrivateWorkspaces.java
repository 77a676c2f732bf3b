package dev.box.testclient;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * The names of the private workspaces a data dir holds, wherever the server keeps them: plain
 * directories and quota file systems in {@code .box-state/workspaces/}, and subvolumes of the
 * workspace store, read from {@code .box-state/store/} while it is mounted, else from its image
 * {@code workspace-store.img}, which is then mounted read-only for the listing (a stopped server
 * unmounts it).
 */
public final class PrivateWorkspaces {
  private PrivateWorkspaces() {}

  /** The names of the private workspaces of {@code dataDir}, in no particular order. */
  public static List<String> names(Path dataDir) throws IOException, InterruptedException {
    Path state = dataDir.resolve(".box-state");
    List<String> names = new ArrayList<>(list(state.resolve("workspaces")));
    Path store = state.resolve("store");
    Path image = state.resolve("workspace-store.img");
    if (mounted(store, state) || !Files.exists(image)) {
      names.addAll(list(store.resolve("workspaces")));
      return names;
    }
    Path point = Files.createTempDirectory("box-store-");
    run("mount", "-o", "loop,ro", image.toString(), point.toString());
    try {
      names.addAll(list(point.resolve("workspaces")));
    } finally {
      run("umount", point.toString());
      Files.delete(point);
    }
    return names;
  }

  private static boolean mounted(Path dir, Path parent) throws IOException {
    return Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)
        && !Files.getAttribute(dir, "unix:dev").equals(Files.getAttribute(parent, "unix:dev"));
  }

  private static List<String> list(Path dir) throws IOException {
    if (!Files.isDirectory(dir)) {
      return List.of();
    }
    try (Stream<Path> entries = Files.list(dir)) {
      return entries.map(p -> p.getFileName().toString()).toList();
    }
  }

  private static void run(String... command) throws IOException, InterruptedException {
    int exit = new ProcessBuilder(command).inheritIO().start().waitFor();
    if (exit != 0) {
      throw new IOException(String.join(" ", command) + " exited with " + exit);
    }
  }
}
