package dev.box.backend.kubernetes;

import dev.box.api.BoxNetworkMode;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.ContainerStateTerminated;
import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodSecurityContextBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.ResourceRequirements;
import io.fabric8.kubernetes.api.model.ResourceRequirementsBuilder;
import io.fabric8.kubernetes.api.model.SeccompProfile;
import io.fabric8.kubernetes.api.model.SeccompProfileBuilder;
import io.fabric8.kubernetes.api.model.SecurityContext;
import io.fabric8.kubernetes.api.model.SecurityContextBuilder;
import io.fabric8.kubernetes.api.model.Toleration;
import io.fabric8.kubernetes.api.model.TolerationBuilder;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeBuilder;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.VolumeMountBuilder;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * The pod of one session, every setting of the session and of the operator mapped to the Kubernetes
 * field that enforces it.
 *
 * <p>The pod runs as uid and gid {@value #SANDBOX_UID} and may not be root ({@code runAsNonRoot}),
 * gain privileges, keep a capability, reach a host namespace, see the API server's credentials or
 * the cluster's services through its environment. An init container copies {@code box-guard} and
 * {@code box-agent} (static binaries, from the agent image) into a memory volume; the session's
 * container then runs the session's own image with {@code box-guard --init} as its PID 1 and {@code
 * box-agent} serving the processes on port {@value #AGENT_PORT}, to servers that present the pod's
 * secret (a Secret volume only the pod mounts: never in its environment). A network-off session's
 * guard also makes a network namespace with only loopback ({@code --net-off}), in which the agent
 * runs every process while it stays in the pod's network ({@code --netns}), unless the operator
 * accepts the NetworkPolicy alone ({@link KubernetesSettings.NetworkOff#POLICY}).
 *
 * @param name the pod's name (also its Secret's)
 * @param labels the labels that find the pod: managed-by, tenant, session
 * @param annotations the session's id and the lease
 * @param image the session's image
 * @param readOnlyRoot whether the root filesystem is read-only
 * @param cpus the cpu limit in cores, 0 for none
 * @param memoryMb the memory limit in MiB, 0 for none
 * @param workspaceMb the workspace's size in MiB (the emptyDir's limit, or the claim's request)
 * @param workspaceClaim the persistent workspace's claim, or null for an emptyDir
 * @param network the network mode (on: the pod's network; off: see {@link NetworkPolicies})
 */
record PodShape(
    String name,
    Map<String, String> labels,
    Map<String, String> annotations,
    String image,
    boolean readOnlyRoot,
    double cpus,
    int memoryMb,
    int workspaceMb,
    @Nullable String workspaceClaim,
    BoxNetworkMode network) {

  /** The sandbox user's uid and gid, as E2B's and Box's images have it. */
  static final long SANDBOX_UID = 1000;

  /** The port the agent listens on. */
  static final int AGENT_PORT = 5411;

  /** Where the agent's binaries are, in the pod. */
  static final String BIN = "/box/bin";

  /** The name of the container that runs the session. */
  static final String CONTAINER = "sandbox";

  /** Where the pod's secret is, in the pod. */
  static final String SECRET_DIR = "/box/secret";

  /** The key of the agent's secret in the pod's Secret. */
  static final String SECRET_KEY = "agent-token";

  /** The workspace, in the pod. */
  static final String WORKSPACE = "/workspace";

  /** The sandbox user's home, in the pod: writable whatever the root. */
  static final String HOME = "/home/box";

  /** Copies {@code labels} and {@code annotations}. */
  PodShape {
    labels = Map.copyOf(labels);
    annotations = Map.copyOf(annotations);
  }

  /** The pod, under {@code settings}. */
  Pod pod(KubernetesSettings settings) {
    List<Toleration> tolerations = new ArrayList<>();
    for (KubernetesSettings.Toleration t : settings.tolerations()) {
      tolerations.add(
          new TolerationBuilder()
              .withKey(t.key())
              .withOperator(t.value() == null ? "Exists" : "Equal")
              .withValue(t.value())
              .withEffect(t.effect())
              .build());
    }
    return new PodBuilder()
        .withNewMetadata()
        .withName(name)
        .withNamespace(settings.namespace())
        .withLabels(labels)
        .withAnnotations(annotations)
        .endMetadata()
        .withNewSpec()
        .withRestartPolicy("Never")
        .withAutomountServiceAccountToken(false)
        .withEnableServiceLinks(false)
        .withHostNetwork(false)
        .withHostPID(false)
        .withHostIPC(false)
        .withShareProcessNamespace(false)
        .withRuntimeClassName(settings.runtimeClass())
        .withNodeSelector(settings.nodeSelector().isEmpty() ? null : settings.nodeSelector())
        .withTolerations(tolerations)
        .withSecurityContext(
            new PodSecurityContextBuilder()
                .withRunAsNonRoot(true)
                .withRunAsUser(SANDBOX_UID)
                .withRunAsGroup(SANDBOX_UID)
                .withFsGroup(SANDBOX_UID)
                .withSeccompProfile(seccomp(settings.seccompProfile()))
                .build())
        .withInitContainers(installer(settings))
        .withContainers(sandbox(settings))
        .withVolumes(volumes())
        .endSpec()
        .build();
  }

  private Container installer(KubernetesSettings settings) {
    return new ContainerBuilder()
        .withName("box-agent-install")
        .withImage(settings.agentImage())
        .withImagePullPolicy(settings.imagePullPolicy())
        .withCommand("/box-agent-image/install", BIN)
        .withSecurityContext(containerSecurity(true))
        .withResources(limits(0.1, 32))
        .withVolumeMounts(mount("box-bin", BIN, false))
        .build();
  }

  private Container sandbox(KubernetesSettings settings) {
    List<VolumeMount> mounts = new ArrayList<>();
    mounts.add(mount("box-bin", BIN, true));
    mounts.add(mount("box-secret", SECRET_DIR, true));
    mounts.add(mount("workspace", WORKSPACE, false));
    mounts.add(mount("home", HOME, false));
    mounts.add(mount("tmp", "/tmp", false));
    return new ContainerBuilder()
        .withName(CONTAINER)
        .withImage(image)
        .withImagePullPolicy(settings.imagePullPolicy())
        .withCommand(command(settings))
        .withWorkingDir(WORKSPACE)
        .addNewEnv()
        .withName("HOME")
        .withValue(HOME)
        .endEnv()
        .addNewPort()
        .withName("box-agent")
        .withContainerPort(AGENT_PORT)
        .withProtocol("TCP")
        .endPort()
        // Ready once the agent listens: box-guard's set-up (--net-off) comes first, and a pod
        // whose guard fails never becomes ready.
        .withNewReadinessProbe()
        .withNewTcpSocket()
        .withPort(new IntOrString(AGENT_PORT))
        .endTcpSocket()
        .withPeriodSeconds(1)
        .endReadinessProbe()
        .withSecurityContext(containerSecurity(readOnlyRoot))
        .withResources(limits(cpus, memoryMb))
        .withVolumeMounts(mounts)
        .build();
  }

  /** box-guard as PID 1, running the agent; with the namespace of a network-off session. */
  private List<String> command(KubernetesSettings settings) {
    boolean ownNetwork =
        network == BoxNetworkMode.OFF
            && settings.networkOff() == KubernetesSettings.NetworkOff.NAMESPACE;
    List<String> command = new ArrayList<>(List.of(BIN + "/box-guard", "--init"));
    if (ownNetwork) {
      command.add("--net-off");
    }
    command.addAll(
        List.of(
            "--",
            BIN + "/box-agent",
            "--listen",
            Integer.toString(AGENT_PORT),
            SECRET_DIR + "/" + SECRET_KEY));
    if (ownNetwork) {
      // Where box-guard --net-off puts the descriptors of the user and network namespaces.
      command.addAll(List.of("--netns", "3", "4"));
    }
    return command;
  }

  /**
   * Why the sandbox container of {@code pod} ended, from its termination message (box-guard writes
   * its failure there), with the fix when the pod could not make a network-off session's namespace;
   * empty when it says nothing.
   */
  static String endedBecause(Pod pod) {
    if (pod.getStatus() == null) {
      return "";
    }
    StringBuilder why = new StringBuilder();
    for (ContainerStatus c : pod.getStatus().getContainerStatuses()) {
      ContainerStateTerminated ended = c.getState() == null ? null : c.getState().getTerminated();
      if (ended != null && ended.getMessage() != null && !ended.getMessage().isBlank()) {
        why.append(": ").append(ended.getMessage().strip());
      }
    }
    if (why.indexOf("--net-off") >= 0) {
      why.append(
          " (a network-off session runs in a network namespace of its own, which the pod's seccomp"
              + " profile must allow: install deploy/kubernetes/seccomp/box-sandbox.json on the"
              + " nodes and set k8s_seccomp_profile=localhost/box-sandbox.json, or accept the"
              + " NetworkPolicy alone with k8s_network_off=policy; see docs/KUBERNETES.md)");
    }
    return why.toString();
  }

  private List<Volume> volumes() {
    List<Volume> volumes = new ArrayList<>();
    volumes.add(
        new VolumeBuilder()
            .withName("box-bin")
            .withNewEmptyDir()
            .withMedium("Memory")
            .withSizeLimit(new Quantity("32Mi"))
            .endEmptyDir()
            .build());
    volumes.add(
        new VolumeBuilder()
            .withName("box-secret")
            .withNewSecret()
            .withSecretName(name)
            .withDefaultMode(0440)
            .endSecret()
            .build());
    if (workspaceClaim != null) {
      volumes.add(
          new VolumeBuilder()
              .withName("workspace")
              .withNewPersistentVolumeClaim()
              .withClaimName(workspaceClaim)
              .endPersistentVolumeClaim()
              .build());
    } else {
      volumes.add(emptyDir("workspace", workspaceMb));
    }
    volumes.add(emptyDir("home", 64));
    volumes.add(emptyDir("tmp", 256));
    return volumes;
  }

  private static Volume emptyDir(String name, int mb) {
    return new VolumeBuilder()
        .withName(name)
        .withNewEmptyDir()
        .withSizeLimit(new Quantity(mb + "Mi"))
        .endEmptyDir()
        .build();
  }

  private static VolumeMount mount(String volume, String path, boolean readOnly) {
    return new VolumeMountBuilder()
        .withName(volume)
        .withMountPath(path)
        .withReadOnly(readOnly)
        .build();
  }

  private static SecurityContext containerSecurity(boolean readOnlyRoot) {
    return new SecurityContextBuilder()
        .withRunAsNonRoot(true)
        .withRunAsUser(SANDBOX_UID)
        .withRunAsGroup(SANDBOX_UID)
        .withPrivileged(false)
        .withAllowPrivilegeEscalation(false)
        .withReadOnlyRootFilesystem(readOnlyRoot)
        .withNewCapabilities()
        .withDrop("ALL")
        .endCapabilities()
        .build();
  }

  private static SeccompProfile seccomp(String profile) {
    if (profile.equals("RuntimeDefault")) {
      return new SeccompProfileBuilder().withType("RuntimeDefault").build();
    }
    return new SeccompProfileBuilder()
        .withType("Localhost")
        .withLocalhostProfile(profile.substring("localhost/".length()))
        .build();
  }

  /**
   * Requests equal to limits (the Guaranteed class): what a sandbox may use is what it is given.
   */
  private static ResourceRequirements limits(double cpus, int memoryMb) {
    Map<String, Quantity> limits = new LinkedHashMap<>();
    if (cpus > 0) {
      limits.put("cpu", new Quantity(Math.max(1, Math.round(cpus * 1000)) + "m"));
    }
    if (memoryMb > 0) {
      limits.put("memory", new Quantity(memoryMb + "Mi"));
    }
    return new ResourceRequirementsBuilder().withLimits(limits).withRequests(limits).build();
  }
}
