package dev.box.agenthost;

import dev.box.api.BoxProfile;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * A profile applied to a request as the reference's {@code _apply_profile} applies it: for each of
 * {@code image}, {@code network}, {@code timeout_sec}, {@code host_path_mode}, {@code cpus}, {@code
 * memory_mb}, {@code pids_limit}, {@code read_only_rootfs} and {@code workspace_quota_mb}, a locked
 * field takes the profile's value whatever the request says, and an absent one takes the profile's
 * value too; then {@code timeout_sec} is clamped to the profile's {@code max_timeout_sec}.
 */
public final class ProfileRules {
  private ProfileRules() {}

  /** {@code request} with every profile field set; see the class comment. */
  public static ExecRequest apply(BoxProfile profile, ExecRequest request) {
    int timeout = pick(profile, "timeout_sec", request.timeoutSec(), BoxProfile::timeoutSec);
    SandboxSettings asked = request.sandbox();
    SandboxSettings filled =
        asked.toBuilder()
            .image(pick(profile, "image", asked.image(), BoxProfile::image))
            .network(pick(profile, "network", asked.network(), BoxProfile::network))
            .hostPathMode(
                pick(profile, "host_path_mode", asked.hostPathMode(), BoxProfile::hostPathMode))
            .cpus(pick(profile, "cpus", asked.cpus(), p -> p.limits().cpus()))
            .memoryMb(pick(profile, "memory_mb", asked.memoryMb(), p -> p.limits().memoryMb()))
            .pidsLimit(pick(profile, "pids_limit", asked.pidsLimit(), p -> p.limits().pidsLimit()))
            .readOnlyRootfs(
                pick(
                    profile,
                    "read_only_rootfs",
                    asked.readOnlyRootfs(),
                    p -> p.limits().readOnlyRootfs()))
            .workspaceQuotaMb(
                pick(
                    profile,
                    "workspace_quota_mb",
                    asked.workspaceQuotaMb(),
                    p -> p.limits().workspaceQuotaMb()))
            .build();
    return request.toBuilder()
        .timeoutSec(Math.min(timeout, profile.maxTimeoutSec()))
        .sandbox(filled)
        .build();
  }

  private static <T> T pick(
      BoxProfile profile, String field, @Nullable T requested, Function<BoxProfile, T> own) {
    return requested == null || profile.locked().contains(field) ? own.apply(profile) : requested;
  }
}
