package dev.box.testkit;

import dev.box.backend.microvm.MicrovmBackend;
import dev.box.testclient.OptionalPiece;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

/**
 * The network escape suite against the microvm backend, whose server runs in a network namespace of
 * the suite's own behind the stand-in world, with the stand-in DNS server as its resolver:
 * network-on VMs reach it through QEMU's user-mode network inside a namespace of the VM's own,
 * behind the same firewall and slirp4netns as bubblewrap's sandboxes. Without a pool (network-on
 * VMs never take a pooled one, and idle boots would only slow the suite's own under TCG). Needs
 * what {@code scripts/microvm} prepares.
 */
class MicrovmNetworkEscapeTest extends NetworkEscapeSuite {
  @Override
  protected String backendName() {
    return "microvm";
  }

  @Override
  protected boolean serverInOwnNamespace() {
    return true;
  }

  @Override
  protected Map<String, String> serverSettings() {
    Path files = MicrovmBackend.filesDir(System.getenv("BOX_MICROVM_CACHE"));
    OptionalPiece.MICROVM.assumePresent(
        Files.isRegularFile(files.resolve("microvm.env")),
        "no micro-VM files in " + files + ": run scripts/microvm");
    return Map.of("pool_size", "0");
  }
}
