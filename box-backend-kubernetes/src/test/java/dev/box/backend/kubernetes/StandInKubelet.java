package dev.box.backend.kubernetes;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.api.model.PodConditionBuilder;
import io.fabric8.kubernetes.api.model.PodStatusBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
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
 * the pod's fsGroup, claims as host directories that outlive the pod). It then writes the pod's
 * phase, its Ready condition and its IP back, and removes the container when the pod is deleted.
 *
 * <p>What it does not stand in for: scheduling, node selectors and tolerations (there is one node),
 * RuntimeClasses, image pulls (images must be in the engine), emptyDir size limits and
 * NetworkPolicies. Pod IPs are the containers' addresses on an internal Docker network that this
 * kubelet creates: nothing leaves the machine.
 */
final class StandInKubelet implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(StandInKubelet.class);

  /** The Docker network whose addresses are the pod IPs. */
  static final String NETWORK = "box-standin-pods";

  private final KubernetesClient client;
  private final String namespace;
  private final Path root;
  private final Set<String> running = ConcurrentHashMap.newKeySet();
  private final SharedIndexInformer<Pod> informer;

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
                        Thread.ofVirtual().name("kubelet-" + name).start(() -> run(pod));
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
                  }
                });
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
      Docker.run(dockerRun(pod, main, volumes, container(name), true));
      String ip = Docker.ip(container(name), NETWORK);
      status(pod, "Running", ip, true);
    } catch (IOException | RuntimeException e) {
      log.warn("pod {} failed: {}", name, e.toString());
      status(pod, "Failed", null, false);
    }
  }

  private void status(Pod pod, String phase, @Nullable String ip, boolean ready) {
    PodCondition condition =
        new PodConditionBuilder().withType("Ready").withStatus(ready ? "True" : "False").build();
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
                      .build());
              return p;
            });
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
        Path claim =
            Files.createDirectories(
                root.resolve("claims").resolve(v.getPersistentVolumeClaim().getClaimName()));
        Docker.chown(claim, fsGroup, fsGroup);
        volumes.put(v.getName(), claim);
      }
    }
    return volumes;
  }

  private static List<String> dockerRun(
      Pod pod, Container c, Map<String, Path> hostVolumes, String name, boolean detach) {
    List<String> argv = new ArrayList<>(List.of("run", "--name", name, "--network", NETWORK));
    argv.add(detach ? "--detach" : "--rm");
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

  @Override
  public void close() {
    informer.close();
    for (String name : Set.copyOf(running)) {
      Docker.removeQuietly(container(name));
    }
    running.clear();
  }

  /** Whether the container of pod {@code pod} is gone (or never was). */
  static boolean containerGone(String pod) throws IOException {
    return Docker.run(List.of("ps", "--all", "--quiet", "--filter", "name=" + container(pod)))
        .isBlank();
  }

  /** Waits for the informer's first list. */
  void awaitSynced() throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (!informer.hasSynced() && System.nanoTime() < deadline) {
      Thread.sleep(20);
    }
  }
}
