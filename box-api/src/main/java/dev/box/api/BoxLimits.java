package dev.box.api;

/**
 * The resource limits of a sandbox, as a profile or an operator's policy sets them for the sessions
 * it shapes. The constructor checks them with the messages of {@link BoxSpec}, whose fields of the
 * same names they become ({@link BoxSpec.Builder#limits}).
 *
 * @param cpus the CPU quota in cores
 * @param memoryMb the memory limit in MiB, at least 32
 * @param pidsLimit the process limit, at least 1
 * @param readOnlyRootfs whether the root filesystem is read-only
 * @param workspaceQuotaMb the workspace quota in MiB, 0 for none
 */
public record BoxLimits(
    double cpus, int memoryMb, int pidsLimit, boolean readOnlyRootfs, int workspaceQuotaMb) {

  /**
   * Checks every limit.
   *
   * @throws BoxValidationException naming the first limit out of range
   */
  public BoxLimits {
    if (!(cpus > 0) || Double.isInfinite(cpus)) {
      throw new BoxValidationException("cpus must be greater than 0");
    }
    if (memoryMb < 32) {
      throw new BoxValidationException("memory_mb must be at least 32");
    }
    if (pidsLimit < 1) {
      throw new BoxValidationException("pids_limit must be at least 1");
    }
    if (workspaceQuotaMb < 0) {
      throw new BoxValidationException("workspace_quota_mb must be at least 0");
    }
  }
}
