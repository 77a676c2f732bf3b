package dev.box.backend.kubernetes;

import dev.box.api.internal.FileTrees;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.ContainerStatusBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.api.model.PodConditionBuilder;
import io.fabric8.kubernetes.api.model.PodStatusBuilder;
import io.fabric8.kubernetes.api.model.Probe;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.SeccompProfile;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A stand-in for the kubelets of a cluster, for tests: no kubelet can run on this machine (see
 * docs/KUBERNETES.md). It watches the pods of one namespace on the API server stand-in and runs
 * each as a real container of the local Docker engine, as a kubelet would through its runtime: init
 * containers first, to completion, then the pod's container with the pod's command, user, working
 * directory, environment, read-only root, dropped capabilities, no-new-privileges, cpu and memory
 * limits, and its volumes (emptyDirs as tmpfs of their size limit, Secrets as read-only files of
 * the pod's fsGroup, claims as host directories that outlive the pod), and the seccomp profile:
 * RuntimeDefault is Docker's default profile, a Localhost profile is the file of that name in the
 * repository's {@code deploy/kubernetes/seccomp} (where a node has the operator's profiles). It
 * then writes the pod's phase, its Ready condition (once its TCP readiness probe passes) and its IP
 * back; when the container ends, the phase and the container's termination message (its {@code
 * /dev/termination-log}, a host file as a kubelet mounts it), and removes the container when the
 * pod is deleted. It enforces the namespace's NetworkPolicies on the pods it runs, with nftables in
 * each pod's network namespace, before it reports a pod running ({@link StandInNetworkPolicies}:
 * every pod admits the node, the network's gateway, from which Box on this host reaches the
 * agents). A claim's directory is its volume, as a provisioner would bind one: it exists while the
 * PersistentVolumeClaim does, and goes with the claim's deletion; a pod whose claim does not exist
 * fails (a cluster would keep it pending).
 *
 * <p>What it does not stand in for: scheduling, node selectors and tolerations (there is one node),
 * RuntimeClasses, image pulls (images must be in the engine) and emptyDir size limits; of
 * NetworkPolicies, named ports and peers in other namespaces (it runs the pods of one). Pod IPs are
 * the containers' addresses on an internal Docker network that this kubelet creates: nothing leaves
 * the machine.
 */
final class StandInKubelet implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(StandInKubelet.class);

  /** The Docker network whose addresses are the pod IPs. */
  static final String NETWORK = "box-standin-pods";

  /** Where a container writes why it ended, as Kubernetes' default terminationMessagePath. */
  private static final String TERMINATION_LOG = "/dev/termination-log";

  private final KubernetesClient client;
  private final String namespace;
  private final Path root;
  private final Set<String> running = ConcurrentHashMap.newKeySet();
  private final Set<Thread> starting = ConcurrentHashMap.newKeySet();
  private final SharedIndexInformer<Pod> informer;
  private final SharedIndexInformer<PersistentVolumeClaim> claims;
  private final StandInNetworkPolicies policies;

  /**
   * Starts watching the pods of {@code namespace}.
   *
   * @param root a directory for the pods' volumes
   */
  StandInKubelet(KubernetesClient client, String namespace, Path root) throws IOException {
    this.client = client;
    this.namespace = namespace;
    this.root = root;
    Docker.ensureNetwork(NETWORK);
    this.policies = new StandInNetworkPolicies(client, namespace, NETWORK);
    this.informer =
        client
            .pods()
            .inNamespace(namespace)
            .inform(
                new ResourceEventHandler<>() {
                  @Override
                  public void onAdd(Pod pod) {
                    String name = pod.getMetadata().getName();
                    if (pod.getStatus() == null || pod.getStatus().getPhase() == null) {
                      if (running.add(name)) {
                        Thread starter =
                            Thread.ofVirtual().name("kubelet-" + name).unstarted(() -> run(pod));
                        starting.add(starter);
                        starter.start();
                      }
                    }
                  }

                  @Override
                  public void onUpdate(Pod before, Pod after) {}

                  @Override
                  public void onDelete(Pod pod, boolean finalStateUnknown) {
                    String name = pod.getMetadata().getName();
                    running.remove(name);
                    Docker.removeQuietly(container(name));
                    policies.stopped(name);
                  }
                });
    this.claims =
        client
            .persistentVolumeClaims()
            .inNamespace(namespace)
            .inform(
                new ResourceEventHandler<>() {
                  @Override
                  public void onAdd(PersistentVolumeClaim claim) {}

                  @Override
                  public void onUpdate(PersistentVolumeClaim before, PersistentVolumeClaim after) {}

                  @Override
                  public void onDelete(PersistentVolumeClaim claim, boolean finalStateUnknown) {
                    try {
                      FileTrees.deleteTree(claimDir(root, claim.getMetadata().getName()));
                    } catch (IOException e) {
                      log.warn("cannot remove the volume of claim {}: {}", claim, e.toString());
                    }
                  }
                });
  }

  /** The host directory of the volume of claim {@code claim}, under the kubelet's {@code root}. */
  static Path claimDir(Path root, String claim) {
    return root.resolve("claims").resolve(claim);
  }

  /** The name of the Docker container of pod {@code pod}. */
  static String container(String pod) {
    return "box-standin-" + pod;
  }

  private void run(Pod pod) {
    String name = pod.getMetadata().getName();
    try {
      Path dir = Files.createDirectories(root.resolve(name));
      Map<String, Path> volumes = volumes(pod, dir);
      for (Container init : pod.getSpec().getInitContainers()) {
        Docker.run(dockerRun(pod, init, volumes, name + "-" + init.getName(), false));
      }
      Container main = pod.getSpec().getContainers().getFirst();
      Path terminationLog = dir.resolve("termination-log");
      Files.write(terminationLog, new byte[0]);
      Files.setPosixFilePermissions(terminationLog, PosixFilePermissions.fromString("rw-rw-rw-"));
      List<String> argv = dockerRun(pod, main, volumes, container(name), true);
      argv.add(argv.indexOf("--entrypoint"), "--mount");
      argv.add(
          argv.indexOf("--entrypoint"),
          "type=bind,source=" + terminationLog + ",target=" + TERMINATION_LOG);
      Docker.run(argv);
      if (!running.contains(name)) {
        // Deleted while it started: its deletion found no container to remove.
        Docker.removeQuietly(container(name));
        return;
      }
      // Started: close need not wait for it, its container is removed with the others.
      starting.remove(Thread.currentThread());
      try {
        String ip = Docker.ip(container(name), NETWORK);
        policies.started(name, container(name), ip);
        if (probeReady(main, container(name), ip)) {
          status(pod, "Running", ip, true, null);
        }
      } catch (IOException ended) {
        // It ended at once: its end says why.
      }
      String exit = Docker.run(List.of("wait", container(name))).strip();
      policies.stopped(name);
      if (running.contains(name)) {
        ContainerStatus ended =
            new ContainerStatusBuilder()
                .withName(main.getName())
                .withNewState()
                .withNewTerminated()
                .withExitCode(Integer.parseInt(exit))
                .withMessage(Files.readString(terminationLog).strip())
                .endTerminated()
                .endState()
                .build();
        status(pod, exit.equals("0") ? "Succeeded" : "Failed", null, false, ended);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (IOException | RuntimeException e) {
      log.warn("pod {} failed: {}", name, e.toString());
      if (running.contains(name)) {
        status(pod, "Failed", null, false, null);
      }
    } finally {
      starting.remove(Thread.currentThread());
    }
  }

  /** Writes the pod's status, unless it was deleted meanwhile. */
  private void status(
      Pod pod, String phase, @Nullable String ip, boolean ready, @Nullable ContainerStatus ended) {
    PodCondition condition =
        new PodConditionBuilder().withType("Ready").withStatus(ready ? "True" : "False").build();
    try {
      client
          .pods()
          .inNamespace(namespace)
          .withName(pod.getMetadata().getName())
          .editStatus(
              p -> {
                p.setStatus(
                    new PodStatusBuilder()
                        .withPhase(phase)
                        .withPodIP(ip)
                        .withConditions(condition)
                        .withContainerStatuses(ended == null ? List.of() : List.of(ended))
                        .build());
                return p;
              });
    } catch (KubernetesClientException e) {
      log.info("pod {} went before its status: {}", pod.getMetadata().getName(), e.getMessage());
    }
  }

  /** Makes each volume's host side: a directory for emptyDirs, files for Secrets. */
  private Map<String, Path> volumes(Pod pod, Path dir) throws IOException {
    Map<String, Path> volumes = new ConcurrentHashMap<>();
    long fsGroup =
        pod.getSpec().getSecurityContext() != null
                && pod.getSpec().getSecurityContext().getFsGroup() != null
            ? pod.getSpec().getSecurityContext().getFsGroup()
            : 0;
    for (Volume v : pod.getSpec().getVolumes()) {
      if (v.getSecret() != null) {
        Secret secret =
            client.secrets().inNamespace(namespace).withName(v.getSecret().getSecretName()).get();
        if (secret == null) {
          throw new IOException("secret " + v.getSecret().getSecretName() + " not found");
        }
        Path secretDir = Files.createDirectories(dir.resolve("secret-" + v.getName()));
        for (var entry : secret.getData().entrySet()) {
          Path file = secretDir.resolve(entry.getKey());
          Files.write(file, Base64.getDecoder().decode(entry.getValue()));
          Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("r--r-----"));
          Docker.chown(file, 0, fsGroup);
        }
        volumes.put(v.getName(), secretDir);
      } else if (v.getEmptyDir() != null) {
        // One host directory, so that init and main containers share it, writable by any user,
        // as a kubelet makes it. Its size limit is not enforced here.
        Path empty = Files.createDirectories(dir.resolve("empty-" + v.getName()));
        Files.setPosixFilePermissions(empty, PosixFilePermissions.fromString("rwxrwxrwx"));
        volumes.put(v.getName(), empty);
      } else if (v.getPersistentVolumeClaim() != null) {
        String name = v.getPersistentVolumeClaim().getClaimName();
        if (client.persistentVolumeClaims().inNamespace(namespace).withName(name).get() == null) {
          throw new IOException("persistentvolumeclaim " + name + " not found");
        }
        Path claim = Files.createDirectories(claimDir(root, name));
        Docker.chown(claim, fsGroup, fsGroup);
        volumes.put(v.getName(), claim);
      }
    }
    return volumes;
  }

  private static List<String> dockerRun(
      Pod pod, Container c, Map<String, Path> hostVolumes, String name, boolean detach)
      throws IOException {
    List<String> argv = new ArrayList<>(List.of("run", "--name", name, "--network", NETWORK));
    argv.add(detach ? "--detach" : "--rm");
    argv.addAll(seccomp(pod, c));
    var security = c.getSecurityContext();
    if (security != null) {
      if (security.getRunAsUser() != null) {
        argv.addAll(
            List.of(
                "--user",
                security.getRunAsUser()
                    + ":"
                    + (security.getRunAsGroup() == null ? 0 : security.getRunAsGroup())));
      }
      if (Boolean.TRUE.equals(security.getReadOnlyRootFilesystem())) {
        argv.add("--read-only");
      }
      if (security.getCapabilities() != null
          && security.getCapabilities().getDrop().contains("ALL")) {
        argv.addAll(List.of("--cap-drop", "ALL"));
      }
      if (Boolean.FALSE.equals(security.getAllowPrivilegeEscalation())) {
        argv.addAll(List.of("--security-opt", "no-new-privileges"));
      }
    }
    var fsGroup =
        pod.getSpec().getSecurityContext() == null
            ? null
            : pod.getSpec().getSecurityContext().getFsGroup();
    if (fsGroup != null) {
      argv.addAll(List.of("--group-add", fsGroup.toString()));
    }
    if (c.getResources() != null && c.getResources().getLimits() != null) {
      Quantity cpu = c.getResources().getLimits().get("cpu");
      if (cpu != null) {
        argv.addAll(List.of("--cpus", Quantity.getAmountInBytes(cpu).toPlainString()));
      }
      Quantity memory = c.getResources().getLimits().get("memory");
      if (memory != null) {
        argv.addAll(List.of("--memory", Quantity.getAmountInBytes(memory).toPlainString()));
      }
    }
    if (c.getWorkingDir() != null) {
      argv.addAll(List.of("--workdir", c.getWorkingDir()));
    }
    c.getEnv().forEach(e -> argv.addAll(List.of("--env", e.getName() + "=" + e.getValue())));
    for (VolumeMount m : c.getVolumeMounts()) {
      Path host = hostVolumes.get(m.getName());
      if (host == null) {
        throw new IllegalArgumentException(
            "volume " + m.getName() + " is not one the stand-in makes");
      }
      String ro = Boolean.TRUE.equals(m.getReadOnly()) ? ",readonly" : "";
      argv.addAll(
          List.of("--mount", "type=bind,source=" + host + ",target=" + m.getMountPath() + ro));
    }
    argv.addAll(List.of("--entrypoint", c.getCommand().getFirst(), c.getImage()));
    argv.addAll(c.getCommand().subList(1, c.getCommand().size()));
    argv.addAll(c.getArgs());
    return argv;
  }

  /**
   * Whether container {@code c} passed its TCP readiness probe on {@code ip} (true without one),
   * probing until it does or its container stops, as a kubelet does (more often than the probe's
   * period says).
   */
  private static boolean probeReady(Container c, String container, String ip)
      throws IOException, InterruptedException {
    Probe probe = c.getReadinessProbe();
    if (probe == null || probe.getTcpSocket() == null) {
      return true;
    }
    int port = probe.getTcpSocket().getPort().getIntVal();
    while (Docker.run(List.of("inspect", "--format", "{{.State.Running}}", container))
        .strip()
        .equals("true")) {
      try (Socket s = new Socket()) {
        s.connect(new InetSocketAddress(ip, port), 1000);
        return true;
      } catch (IOException notYet) {
        Thread.sleep(50);
      }
    }
    return false;
  }

  /**
   * Docker's options for the seccomp profile of container {@code c} of {@code pod}: its own, else
   * the pod's; RuntimeDefault is Docker's default, which needs none.
   */
  private static List<String> seccomp(Pod pod, Container c) throws IOException {
    SeccompProfile profile =
        c.getSecurityContext() != null && c.getSecurityContext().getSeccompProfile() != null
            ? c.getSecurityContext().getSeccompProfile()
            : pod.getSpec().getSecurityContext() == null
                ? null
                : pod.getSpec().getSecurityContext().getSeccompProfile();
    if (profile == null || "RuntimeDefault".equals(profile.getType())) {
      return List.of();
    }
    if (!"Localhost".equals(profile.getType())) {
      throw new IOException("the stand-in runs no " + profile.getType() + " seccomp profile");
    }
    Path file = seccompProfiles().resolve(profile.getLocalhostProfile()).normalize();
    if (!file.startsWith(seccompProfiles()) || !Files.isRegularFile(file)) {
      throw new IOException("no seccomp profile " + profile.getLocalhostProfile() + " on the node");
    }
    return List.of("--security-opt", "seccomp=" + file);
  }

  /** The node's Localhost seccomp profiles: the repository's deploy/kubernetes/seccomp. */
  static Path seccompProfiles() throws IOException {
    for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
      Path profiles = dir.resolve("deploy/kubernetes/seccomp");
      if (Files.isDirectory(profiles)) {
        return profiles;
      }
    }
    throw new IOException("no deploy/kubernetes/seccomp above " + Path.of("").toAbsolutePath());
  }

  @Override
  public void close() {
    informer.close();
    claims.close();
    // No pod runs from here on: a starter whose container comes after this removes it itself, and
    // the containers go before the wait for the starters (a pod deleted just before, whose deletion
    // the closed informer no longer delivers, would keep its starter waiting on its container).
    Set<String> names = Set.copyOf(running);
    running.clear();
    for (String name : names) {
      Docker.removeQuietly(container(name));
    }
    for (Thread starter : Set.copyOf(starting)) {
      try {
        starter.join(Duration.ofMinutes(2));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        break;
      }
    }
    policies.close();
  }

  /** Whether the container of pod {@code pod} is gone (or never was). */
  static boolean containerGone(String pod) throws IOException {
    return Docker.run(List.of("ps", "--all", "--quiet", "--filter", "name=" + container(pod)))
        .isBlank();
  }

  /** Waits for the informers' first lists. */
  void awaitSynced() throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (!(informer.hasSynced() && claims.hasSynced() && policies.hasSynced())
        && System.nanoTime() < deadline) {
      Thread.sleep(20);
    }
  }
}
