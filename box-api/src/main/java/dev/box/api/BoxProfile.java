package dev.box.api;

import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * A named set of session defaults with an upper bound on exec timeouts, as the reference's built-in
 * profiles.
 *
 * @param name the profile's name
 * @param image the image
 * @param network the network mode
 * @param timeoutSec the default exec timeout
 * @param hostPathMode the default workspace mount mode
 * @param maxTimeoutSec the upper bound applied to a requested timeout
 * @param limits the CPU, memory and process limits, root file system and workspace quota
 * @param locked field names a request may not override
 */
public record BoxProfile(
    String name,
    String image,
    BoxNetworkMode network,
    int timeoutSec,
    BoxHostMountMode hostPathMode,
    int maxTimeoutSec,
    BoxLimits limits,
    Set<String> locked) {

  /** Copies {@code locked}. */
  public BoxProfile {
    locked = Set.copyOf(locked);
  }

  /** The four built-in profiles by name, in name order. */
  public static final Map<String, BoxProfile> BUILTIN = builtins();

  private static Map<String, BoxProfile> builtins() {
    Map<String, BoxProfile> map = new TreeMap<>();
    String image = BoxSpec.DEFAULT_IMAGE;
    map.put("default", basic("default", image, BoxNetworkMode.OFF));
    map.put(
        "offline_readonly",
        new BoxProfile(
            "offline_readonly",
            image,
            BoxNetworkMode.OFF,
            30,
            BoxHostMountMode.RO,
            60,
            new BoxLimits(0.5, 256, 64, true, 0),
            Set.of("network", "host_path_mode", "read_only_rootfs")));
    map.put("network_basic", basic("network_basic", image, BoxNetworkMode.ON));
    map.put(
        "network_extended",
        new BoxProfile(
            "network_extended",
            image,
            BoxNetworkMode.ON,
            30,
            BoxHostMountMode.RW,
            300,
            new BoxLimits(2.0, 1024, 256, false, 0),
            Set.of()));
    return java.util.Collections.unmodifiableMap(map);
  }

  /** The settings {@code default} and {@code network_basic} share: they differ in the network. */
  private static BoxProfile basic(String name, String image, BoxNetworkMode network) {
    return new BoxProfile(
        name,
        image,
        network,
        30,
        BoxHostMountMode.RW,
        120,
        new BoxLimits(1.0, 512, 128, true, 0),
        Set.of());
  }

  /**
   * The built-in profile {@code name}; throws {@link BoxValidationException} for an unknown one.
   */
  public static BoxProfile named(String name) {
    BoxProfile profile = BUILTIN.get(name);
    if (profile == null) {
      throw new BoxValidationException(
          "unknown box profile '"
              + name
              + "', available profiles: "
              + String.join(", ", BUILTIN.keySet()));
    }
    return profile;
  }

  /**
   * Applies this profile to a request: the profile's values replace the request's where the field
   * is locked, and the timeout is clamped to {@code max_timeout_sec}.
   */
  public BoxSpec apply(BoxSpec spec) {
    BoxSpec.Builder b = spec.toBuilder();
    if (locked.contains("network")) b.network(network);
    if (locked.contains("host_path_mode")) b.hostPathMode(hostPathMode);
    if (locked.contains("read_only_rootfs")) b.readOnlyRootfs(limits.readOnlyRootfs());
    if (locked.contains("cpus")) b.cpus(limits.cpus());
    if (locked.contains("memory_mb")) b.memoryMb(limits.memoryMb());
    if (locked.contains("pids_limit")) b.pidsLimit(limits.pidsLimit());
    if (locked.contains("image")) b.image(image);
    if (locked.contains("workspace_quota_mb")) b.workspaceQuotaMb(limits.workspaceQuotaMb());
    int timeout = locked.contains("timeout_sec") ? timeoutSec : spec.timeoutSec();
    b.timeoutSec(Math.min(timeout, maxTimeoutSec));
    return b.build();
  }
}
