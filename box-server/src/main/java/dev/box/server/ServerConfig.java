package dev.box.server;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import dev.box.api.BoxDataDir;
import dev.box.backend.boxlite.BoxliteSettings;
import dev.box.backend.e2b.E2bSettings;
import dev.box.backend.kubernetes.KubernetesSettings;
import dev.box.core.RuntimeConfig;
import dev.box.core.settings.BooleanSetting;
import dev.box.core.settings.IntSetting;
import dev.box.core.settings.RuntimeLimits;
import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;

/**
 * The settings of {@code box serve}, resolved from flags, environment variables ({@code BOX_*}) and
 * a YAML or JSON file: flags win over the environment, the environment over the file.
 *
 * @param host the address to bind
 * @param port the port to bind (0 picks a free one)
 * @param dataDir the data directory; the server keeps its own state in {@link #stateDir()} inside
 *     it, and the rest is LangBot's (its default {@code host_root} is the same directory)
 * @param backend {@code local} (the best available), or a backend's name
 * @param controlToken the token every route but /healthz and /readyz requires, or null: the server
 *     then requires LangBot's token, or else the one it generates in {@code <data
 *     dir>/.box-state/control-token}
 * @param insecure with no token configured, whether the API is left open (no token generated, none
 *     required) instead: dangerous, anything that reaches the port can run code
 * @param sessionTtl idle time after which a non-persistent session is reaped (0 = never)
 * @param pausedSessionTtl time after which a non-persistent session paused all along is deleted (0
 *     = never)
 * @param maxSessions the session capacity
 * @param maxOutputBytes bytes kept per output stream of an exec
 * @param allowedMountRoots host directories mounts must be under; empty = any not blocked
 * @param processLimits the limits of managed processes
 * @param fileLimits the bounds of the files routes ({@code max_file_bytes}, {@code
 *     max_archive_bytes}, {@code max_archive_entries})
 * @param storeLimits the bounds of the workspace store ({@code max_snapshots}, {@code
 *     workspace_store_gib})
 * @param cgroups whether the bubblewrap backend may use cgroups (false: rlimits only)
 * @param containers the settings of the Docker and Podman backends
 * @param isolation who the sandbox user is on the host and what network-on sandboxes may reach
 * @param e2b how to reach E2B (keys {@code e2b_*}; {@code E2B_API_KEY} and {@code E2B_API_URL} win)
 * @param boxlite how to reach a BoxLite server (keys {@code boxlite_*}, and {@code image})
 * @param kubernetes the cluster, namespace and pods of the kubernetes backend (keys {@code k8s_*})
 * @param backendFixed whether the backend was named by a flag, variable or file (LangBot's {@code
 *     box_init} then cannot change it); false when {@code local} is the default
 * @param metrics whether {@code GET /metrics} exists and whether it needs the control token
 * @param replicaUrl where the other replicas of a backend that shares its sessions reach this
 *     server ({@code replica_url}: {@code http(s)://host[:port]}), or null: the bound URL when it
 *     is a loopback address, else none
 * @param publicUrl where clients reach this server, as preview links name it ({@code public_url}:
 *     {@code http(s)://host[:port][/path]}, behind a reverse proxy), or null: the address each
 *     request to make a link was sent to
 */
public record ServerConfig(
    String host,
    int port,
    Path dataDir,
    String backend,
    @Nullable String controlToken,
    boolean insecure,
    Duration sessionTtl,
    Duration pausedSessionTtl,
    int maxSessions,
    int maxOutputBytes,
    List<Path> allowedMountRoots,
    RuntimeConfig.ProcessLimits processLimits,
    RuntimeConfig.FileLimits fileLimits,
    RuntimeConfig.StoreLimits storeLimits,
    boolean cgroups,
    ContainerConfig containers,
    IsolationConfig isolation,
    E2bSettings e2b,
    BoxliteSettings boxlite,
    KubernetesSettings kubernetes,
    boolean backendFixed,
    MetricsConfig metrics,
    @Nullable URI replicaUrl,
    @Nullable URI publicUrl) {

  private static final IntSetting PORT = new IntSetting("port", 5410, 0, 65535);

  /** Opens the API: only the exact word {@code true} (any case) does, as it always has. */
  private static final BooleanSetting INSECURE = BooleanSetting.offUnlessExactly("true");

  /**
   * On unless {@code false}: any other text, {@code 0} included, keeps cgroups, as it always has.
   */
  private static final BooleanSetting CGROUPS = BooleanSetting.onUnless("false");

  private static final String HOST = "host";
  private static final String DATA_DIR = "data_dir";
  private static final String BACKEND = "backend";
  private static final String CONTROL_TOKEN = "control_token";
  private static final String INSECURE_KEY = "insecure";
  private static final String ALLOWED_MOUNT_ROOTS = "allowed_mount_roots";
  private static final String CGROUPS_KEY = "cgroups";
  private static final String CONFIG = "config";
  private static final String REPLICA_URL = "replica_url";
  private static final String PUBLIC_URL = "public_url";

  /** The keys a flag, variable ({@code BOX_<KEY>}) or file entry may set. */
  public static final Set<String> KEYS =
      Stream.of(
              Stream.of(
                  HOST,
                  PORT.key(),
                  DATA_DIR,
                  BACKEND,
                  CONTROL_TOKEN,
                  INSECURE_KEY,
                  ALLOWED_MOUNT_ROOTS,
                  CGROUPS_KEY,
                  CONFIG,
                  REPLICA_URL,
                  PUBLIC_URL),
              RuntimeLimits.SERVER.stream().map(IntSetting::key),
              ContainerConfig.KEYS.stream(),
              IsolationConfig.KEYS.stream(),
              E2bSettings.KEYS.stream(),
              BoxliteSettings.KEYS.stream(),
              KubernetesSettings.KEYS.stream(),
              MetricsConfig.KEYS.stream())
          .flatMap(keys -> keys)
          .collect(Collectors.toUnmodifiableSet());

  /** Copies the list. */
  public ServerConfig {
    allowedMountRoots = List.copyOf(allowedMountRoots);
  }

  /**
   * The defaults: 127.0.0.1:5410, ./data/box ({@link BoxDataDir#DEFAULT}), the local backend, the
   * generated token.
   */
  public static ServerConfig defaults() {
    return resolve(Map.of(), Map.of());
  }

  /**
   * The server's private state directory ({@code <data dir>/.box-state}): private workspaces, the
   * control token, the lock and generated files. Mounts may not reach it.
   */
  public Path stateDir() {
    return BoxDataDir.stateDir(dataDir);
  }

  /** The settings, with the control token shown as {@code <set>}: never the token itself. */
  @Override
  public String toString() {
    return "ServerConfig[host="
        + host
        + ", port="
        + port
        + ", dataDir="
        + dataDir
        + ", backend="
        + backend
        + ", controlToken="
        + (controlToken == null ? "null" : "<set>")
        + ", insecure="
        + insecure
        + ", sessionTtl="
        + sessionTtl
        + ", pausedSessionTtl="
        + pausedSessionTtl
        + ", maxSessions="
        + maxSessions
        + ", maxOutputBytes="
        + maxOutputBytes
        + ", allowedMountRoots="
        + allowedMountRoots
        + ", processLimits="
        + processLimits
        + ", fileLimits="
        + fileLimits
        + ", storeLimits="
        + storeLimits
        + ", cgroups="
        + cgroups
        + ", containers="
        + containers
        + ", e2b="
        + e2b
        + ", boxlite="
        + boxlite
        + ", kubernetes="
        + kubernetes
        + ", backendFixed="
        + backendFixed
        + ", metrics="
        + metrics
        + ", replicaUrl="
        + replicaUrl
        + ", publicUrl="
        + publicUrl
        + "]";
  }

  /**
   * Resolves the settings.
   *
   * @param flags values given on the command line, by key ({@code data_dir}, ...)
   * @param env the process environment ({@code BOX_DATA_DIR}, ...)
   * @throws IllegalArgumentException with a message for the user when a value is invalid
   */
  public static ServerConfig resolve(Map<String, String> flags, Map<String, String> env) {
    Map<String, String> values = new HashMap<>();
    String file = flags.getOrDefault(CONFIG, env.get(envName(CONFIG)));
    if (file != null && !file.isBlank()) {
      values.putAll(readFile(Path.of(file)));
    }
    for (String key : KEYS) {
      String fromEnv = env.get(envName(key));
      if (fromEnv != null) {
        values.put(key, fromEnv);
      }
    }
    values.putAll(flags);
    String token = values.get(CONTROL_TOKEN);
    return new ServerConfig(
        values.getOrDefault(HOST, "127.0.0.1"),
        PORT.read(values),
        Path.of(values.getOrDefault(DATA_DIR, BoxDataDir.DEFAULT)).toAbsolutePath().normalize(),
        values.getOrDefault(BACKEND, "local").strip(),
        token == null || token.isBlank() ? null : token.strip(),
        INSECURE.parse(values.get(INSECURE_KEY)),
        Duration.ofSeconds(RuntimeLimits.SESSION_TTL_SEC.read(values)),
        Duration.ofSeconds(RuntimeLimits.PAUSED_SESSION_TTL_SEC.read(values)),
        RuntimeLimits.MAX_SESSIONS.read(values),
        RuntimeLimits.MAX_OUTPUT_BYTES.read(values),
        roots(values.getOrDefault(ALLOWED_MOUNT_ROOTS, "")),
        processLimits(values),
        new RuntimeConfig.FileLimits(
            RuntimeLimits.MAX_FILE_BYTES.read(values),
            RuntimeLimits.MAX_ARCHIVE_BYTES.read(values),
            RuntimeLimits.MAX_ARCHIVE_ENTRIES.read(values)),
        new RuntimeConfig.StoreLimits(
            RuntimeLimits.MAX_SNAPSHOTS.read(values),
            RuntimeLimits.WORKSPACE_STORE_GIB.read(values)),
        CGROUPS.parse(values.get(CGROUPS_KEY)),
        ContainerConfig.read(values, env),
        IsolationConfig.read(values),
        E2bSettings.read(values, env),
        BoxliteSettings.read(values),
        KubernetesSettings.read(values),
        values.containsKey(BACKEND),
        MetricsConfig.read(values),
        replicaUrl(values.get(REPLICA_URL)),
        publicUrl(values.get(PUBLIC_URL)));
  }

  /**
   * The {@code replica_url} setting: an {@code http} or {@code https} URL of a host (and port),
   * without user info, path, query or fragment.
   */
  private static @Nullable URI replicaUrl(@Nullable String value) {
    return webUrl(REPLICA_URL, value, false, "where the other replicas reach this server");
  }

  /**
   * The {@code public_url} setting: an {@code http} or {@code https} URL of a host (and port), and
   * a path when a reverse proxy serves Box under one, without user info, query or fragment.
   */
  private static @Nullable URI publicUrl(@Nullable String value) {
    return webUrl(PUBLIC_URL, value, true, "where clients reach this server");
  }

  /**
   * The setting {@code key} of {@code value}, an {@code http} or {@code https} URL of a host (and
   * port), and of a path (without its last {@code /}) when {@code withPath}; null when unset.
   *
   * @throws IllegalArgumentException when it is anything else
   */
  private static @Nullable URI webUrl(
      String key, @Nullable String value, boolean withPath, String what) {
    if (value == null || value.isBlank()) {
      return null;
    }
    String text = value.strip();
    String problem;
    try {
      URI uri = new URI(text);
      boolean web = "http".equals(uri.getScheme()) || "https".equals(uri.getScheme());
      String path = uri.getRawPath() == null ? "" : uri.getRawPath();
      path = path.endsWith("/") ? path.substring(0, path.length() - 1) : path;
      if (web
          && uri.getHost() != null
          && uri.getRawUserInfo() == null
          && (withPath || path.isEmpty())
          && uri.getRawQuery() == null
          && uri.getRawFragment() == null) {
        return URI.create(uri.getScheme() + "://" + uri.getRawAuthority() + path);
      }
      problem =
          "it must be http(s)://host[:port]"
              + (withPath ? "[/path], without a query or user info" : ", without a path, query")
              + (withPath ? "" : " or user info");
    } catch (URISyntaxException e) {
      problem = e.getMessage();
    }
    throw new IllegalArgumentException(key + " must be " + what + ": '" + text + "': " + problem);
  }

  /** The variable that sets {@code key}: {@code BOX_<KEY>}. */
  private static String envName(String key) {
    return "BOX_" + key.toUpperCase(Locale.ROOT);
  }

  private static RuntimeConfig.ProcessLimits processLimits(Map<String, String> values) {
    return new RuntimeConfig.ProcessLimits(
        RuntimeLimits.MAX_MANAGED_PROCESSES.read(values),
        RuntimeLimits.MAX_COMPLETED_PROCESSES.read(values),
        Duration.ofSeconds(RuntimeLimits.COMPLETED_PROCESS_RETENTION_SEC.read(values)),
        RuntimeLimits.PROCESS_BUFFER_BYTES.read(values));
  }

  private static List<Path> roots(String value) {
    List<Path> roots = new ArrayList<>();
    Arrays.stream(value.split(",", -1))
        .map(String::strip)
        .filter(s -> !s.isEmpty())
        .forEach(s -> roots.add(Path.of(s).toAbsolutePath().normalize()));
    return roots;
  }

  private static Map<String, String> readFile(Path file) {
    Map<?, ?> tree;
    try {
      tree = new ObjectMapper(new YAMLFactory()).readValue(Files.readString(file), Map.class);
    } catch (IOException e) {
      throw new IllegalArgumentException("cannot read config file " + file + ": " + e.getMessage());
    }
    Map<String, String> values = new HashMap<>();
    if (tree == null) {
      return values;
    }
    tree.forEach(
        (k, v) -> {
          String key = String.valueOf(k).replace('-', '_');
          if (!KEYS.contains(key) || key.equals(CONFIG)) {
            throw new IllegalArgumentException("unknown key '" + k + "' in config file " + file);
          }
          if (v instanceof List<?> list) {
            values.put(key, String.join(",", list.stream().map(String::valueOf).toList()));
          } else if (v != null) {
            values.put(key, String.valueOf(v));
          }
        });
    return values;
  }
}
