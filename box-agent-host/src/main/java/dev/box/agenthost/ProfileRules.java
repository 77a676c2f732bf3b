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
    return request.toBuilder()
        .image(pick(profile, "image", request.image(), BoxProfile::image))
        .network(pick(profile, "network", request.network(), BoxProfile::network))
        .timeoutSec(Math.min(timeout, profile.maxTimeoutSec()))
        .hostPathMode(
            pick(profile, "host_path_mode", request.hostPathMode(), BoxProfile::hostPathMode))
        .cpus(pick(profile, "cpus", request.cpus(), p -> p.limits().cpus()))
        .memoryMb(pick(profile, "memory_mb", request.memoryMb(), p -> p.limits().memoryMb()))
        .pidsLimit(pick(profile, "pids_limit", request.pidsLimit(), p -> p.limits().pidsLimit()))
        .readOnlyRootfs(
            pick(
                profile,
                "read_only_rootfs",
                request.readOnlyRootfs(),
                p -> p.limits().readOnlyRootfs()))
        .workspaceQuotaMb(
            pick(
                profile,
                "workspace_quota_mb",
                request.workspaceQuotaMb(),
                p -> p.limits().workspaceQuotaMb()))
        .build();
  }

  private static <T> T pick(
      BoxProfile profile, String field, @Nullable T requested, Function<BoxProfile, T> own) {
    return requested == null || profile.locked().contains(field) ? own.apply(profile) : requested;
  }
}
