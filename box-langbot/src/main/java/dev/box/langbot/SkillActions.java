package dev.box.langbot;

import static dev.box.langbot.ActionData.optional;
import static dev.box.langbot.ActionData.required;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.box.api.internal.FileTrees;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;

/**
 * LangBot's eleven skill actions ({@code box_list_skills} ... {@code box_install_skill_zip}) over
 * the {@link SkillStore} of the requesting Workspace, with the reference's request and answer
 * shapes. Store failures answer {@code BoxValidationError: <message>}; a missing request key
 * answers {@code BoxValidationError: '<key>'}, or {@code KeyError: '<key>'} for {@code
 * box_get_skill}, as in the reference.
 *
 * <p>Skill operations run one at a time, as in LangBot's runtime: they are short, and a ZIP upload
 * must not interleave with a create of the same name.
 */
final class SkillActions {
  /** One skill action of {@code actions} on a request's {@code data} over a Workspace's store. */
  @FunctionalInterface
  interface Handler {
    JsonNode run(SkillActions actions, JsonNode data, SkillStore store) throws IOException;
  }

  /**
   * A skill action.
   *
   * @param validated whether the reference reads its keys inside its validation wrapper, so that a
   *     missing key answers {@code BoxValidationError} rather than {@code KeyError}
   */
  record Action(boolean validated, Handler handler) {}

  /** The skill actions, in the order {@link ActionDispatcher#ACTIONS} lists them. */
  static final ActionTable<Action> TABLE =
      ActionTable.<Action>builder()
          .add("box_list_skills", new Action(false, SkillActions::listSkills))
          .add("box_get_skill", new Action(false, SkillActions::getSkill))
          .add("box_create_skill", new Action(true, SkillActions::createSkill))
          .add("box_update_skill", new Action(true, SkillActions::updateSkill))
          .add("box_delete_skill", new Action(true, SkillActions::deleteSkill))
          .add("box_scan_skill_directory", new Action(true, SkillActions::scan))
          .add("box_list_skill_files", new Action(true, SkillActions::listFiles))
          .add("box_read_skill_file", new Action(true, SkillActions::readFile))
          .add("box_write_skill_file", new Action(true, SkillActions::writeFile))
          .add("box_preview_skill_zip", new Action(true, SkillActions::previewZip))
          .add("box_install_skill_zip", new Action(true, SkillActions::installZip))
          .build();

  private final Supplier<Path> skillsRoot;
  private final Consumer<Path> hostPathCheck;
  private final RpcFiles files;
  private final ObjectMapper mapper;
  private final ReentrantLock lock = new ReentrantLock();
  private boolean stagingSwept;

  /**
   * Actions over the skills under {@code skillsRoot}.
   *
   * @param skillsRoot the root in force, read on every action ({@code box_init} may change it)
   * @param hostPathCheck checks a resolved host path LangBot names in {@code
   *     box_scan_skill_directory} against the runtime's host-path policy; throws when refused
   * @param files where ZIP uploads arrive
   */
  SkillActions(
      Supplier<Path> skillsRoot,
      Consumer<Path> hostPathCheck,
      RpcFiles files,
      ObjectMapper mapper) {
    this.skillsRoot = skillsRoot;
    this.hostPathCheck = hostPathCheck;
    this.files = files;
    this.mapper = mapper;
  }

  /** The skills root in force, resolved. */
  Path skillsRoot() {
    return SkillPackages.real(skillsRoot.get());
  }

  /** The root of {@code context}'s Workspace: {@code <skills root>/tenants/<namespace>}. */
  Path workspaceRoot(ActionContext context) {
    return skillsRoot()
        .resolve("tenants")
        .resolve(Tenancy.namespace(context.instanceUuid(), context.workspaceUuid()));
  }

  /**
   * Makes every mount of {@code spec} (a BoxSpec's JSON) whose host path lies in the skills root
   * read-only: LangBot asks for its skill packages {@code rw}, but a sandbox must not change a
   * package another session runs. A mount of another Workspace's skills is refused.
   *
   * @throws ActionError {@code BoxValidationError} for another Workspace's skills
   */
  void confineMounts(ObjectNode spec, ActionContext context) {
    JsonNode mounts = spec.get("extra_mounts");
    if (mounts == null || !mounts.isArray()) {
      return;
    }
    Path root = skillsRoot();
    Path own = workspaceRoot(context);
    for (JsonNode mount : mounts) {
      JsonNode hostPath = mount.get("host_path");
      if (!(mount instanceof ObjectNode object) || hostPath == null || !hostPath.isTextual()) {
        continue;
      }
      Path requested;
      try {
        requested = Path.of(hostPath.asText().strip());
      } catch (IllegalArgumentException e) {
        continue;
      }
      if (!requested.isAbsolute()) {
        continue;
      }
      Path real = SkillPackages.real(requested);
      if (!real.startsWith(root)) {
        continue;
      }
      if (!real.startsWith(own)) {
        throw new ActionError(
            "BoxValidationError",
            "host_path " + hostPath.asText() + " belongs to another Workspace's skills");
      }
      if (!"none".equals(object.path("mode").asText())) {
        object.put("mode", "ro");
      }
    }
  }

  /**
   * Carries out one skill action for {@code context}'s Workspace.
   *
   * @throws ActionError {@code BoxValidationError} for a store failure or a missing key ({@code
   *     KeyError} for a missing key of {@code box_get_skill})
   */
  JsonNode handle(String action, JsonNode data, ActionContext context) {
    Action skillAction = TABLE.handler(action);
    if (skillAction == null) {
      throw new ActionError("BoxError", "unknown action " + action);
    }
    SkillStore store =
        new SkillStore(
            skillsRoot.get(), Tenancy.namespace(context.instanceUuid(), context.workspaceUuid()));
    lock.lock();
    try {
      return skillAction.handler().run(this, data, store);
    } catch (SkillException | IllegalArgumentException e) {
      throw new ActionError("BoxValidationError", String.valueOf(e.getMessage()));
    } catch (IOException e) {
      throw new ActionError("BoxValidationError", describe(e));
    } catch (UncheckedIOException e) {
      throw new ActionError("BoxValidationError", String.valueOf(e.getMessage()));
    } catch (ActionError e) {
      if (e.className().equals("KeyError") && skillAction.validated()) {
        throw new ActionError("BoxValidationError", String.valueOf(e.getMessage()));
      }
      throw e;
    } finally {
      lock.unlock();
    }
  }

  private JsonNode listSkills(JsonNode data, SkillStore store) throws IOException {
    ObjectNode result = mapper.createObjectNode();
    ArrayNode skills = result.putArray("skills");
    store.list().forEach(s -> skills.add(s.toJson(mapper)));
    return result;
  }

  private JsonNode getSkill(JsonNode data, SkillStore store) throws IOException {
    Skill skill = store.get(required(data, "name"));
    ObjectNode result = mapper.createObjectNode();
    result.set("skill", skill == null ? mapper.nullNode() : skill.toJson(mapper));
    return result;
  }

  private JsonNode createSkill(JsonNode data, SkillStore store) throws IOException {
    return wrapped("skill", store.create(object(data, "skill")));
  }

  private JsonNode updateSkill(JsonNode data, SkillStore store) throws IOException {
    return wrapped("skill", store.update(required(data, "name"), object(data, "skill")));
  }

  private JsonNode deleteSkill(JsonNode data, SkillStore store) throws IOException {
    String name = required(data, "name");
    store.delete(name);
    return mapper.createObjectNode().put("deleted", name);
  }

  private JsonNode readFile(JsonNode data, SkillStore store) throws IOException {
    String name = required(data, "name");
    String path = required(data, "path");
    SkillFiles.Text text = SkillFiles.read(store.require(name), path);
    ObjectNode result = named(name);
    result.put("path", text.path());
    result.put("content", text.content());
    return result;
  }

  private JsonNode writeFile(JsonNode data, SkillStore store) throws IOException {
    String name = required(data, "name");
    String path = required(data, "path");
    SkillFiles.Written written =
        SkillFiles.write(store.require(name), path, optional(data, "content", ""));
    ObjectNode result = named(name);
    result.put("path", written.path());
    result.put("bytes_written", written.bytes());
    return result;
  }

  private JsonNode previewZip(JsonNode data, SkillStore store) throws IOException {
    sweepStaging(store);
    byte[] zip = upload(required(data, "file_key"));
    return skills(SkillUploads.preview(store, zip, layout(data)));
  }

  private JsonNode installZip(JsonNode data, SkillStore store) throws IOException {
    sweepStaging(store);
    byte[] zip = upload(required(data, "file_key"));
    return skills(
        SkillUploads.install(
            store,
            zip,
            layout(data),
            strings(data.get("source_paths")),
            optional(data, "source_path", "")));
  }

  private JsonNode scan(JsonNode data, SkillStore store) throws IOException {
    String path = required(data, "path");
    Path requested = Path.of(path.strip().isEmpty() ? "." : path.strip()).toAbsolutePath();
    Path real = SkillPackages.real(requested);
    store.scoped(real.toString(), "scan path");
    if (Files.isDirectory(real)) {
      hostPathCheck.accept(real);
    }
    return store.scan(real.toString()).toJson(mapper);
  }

  private JsonNode listFiles(JsonNode data, SkillStore store) throws IOException {
    Skill skill = store.require(required(data, "name"));
    SkillFiles.Listing listing =
        SkillFiles.list(
            skill,
            optional(data, "path", "."),
            truthy(data.get("include_hidden")),
            maxEntries(data.get("max_entries")));
    ObjectNode result = named(skill.name());
    result.put("base_path", listing.basePath());
    ArrayNode entries = result.putArray("entries");
    for (SkillFiles.FileEntry entry : listing.entries()) {
      ObjectNode node = entries.addObject();
      node.put("path", entry.path());
      node.put("name", entry.name());
      node.put("is_dir", entry.isDir());
      if (entry.size() == null) {
        node.putNull("size");
      } else {
        node.put("size", entry.size());
      }
    }
    result.put("truncated", listing.truncated());
    return result;
  }

  /**
   * Removes what a runtime that stopped in the middle of an upload left in the staging directory,
   * once per process: uploads run one at a time under the lock, so nothing there is in use.
   */
  private void sweepStaging(SkillStore store) throws IOException {
    if (stagingSwept) {
      return;
    }
    try (Stream<Path> leftovers = Files.list(store.staging())) {
      for (Path leftover : (Iterable<Path>) leftovers::iterator) {
        FileTrees.deleteTree(leftover);
      }
    }
    stagingSwept = true;
  }

  /** Reads and deletes the uploaded file of {@code key}, bounded by the ZIP size limit. */
  private byte[] upload(String key) throws IOException {
    Path file = files.fileOf(key);
    try (InputStream in = Files.newInputStream(file, LinkOption.NOFOLLOW_LINKS)) {
      byte[] bytes = in.readNBytes(SkillZip.MAX_COMPRESSED_BYTES + 1);
      if (bytes.length > SkillZip.MAX_COMPRESSED_BYTES) {
        throw new SkillException(
            "Uploaded archive exceeds the compressed size limit ("
                + SkillZip.MAX_COMPRESSED_BYTES
                + " bytes)");
      }
      return bytes;
    } catch (NoSuchFileException e) {
      throw new SkillException("Uploaded file " + key + " was not found");
    } finally {
      Files.deleteIfExists(file);
    }
  }

  private ObjectNode wrapped(String key, Skill skill) {
    ObjectNode result = mapper.createObjectNode();
    result.set(key, skill.toJson(mapper));
    return result;
  }

  private ObjectNode skills(List<Skill> skills) {
    ObjectNode result = mapper.createObjectNode();
    ArrayNode array = result.putArray("skills");
    skills.forEach(s -> array.add(s.toJson(mapper)));
    return result;
  }

  private ObjectNode named(String name) {
    ObjectNode result = mapper.createObjectNode();
    result.putObject("skill").put("name", name);
    return result;
  }

  /**
   * How the upload actions' {@code data} says to read the archive, with the reference's defaults.
   */
  private static SkillUploads.Layout layout(JsonNode data) {
    return new SkillUploads.Layout(
        optional(data, "filename", "skill.zip"),
        optional(data, "source_subdir", ""),
        optional(data, "target_suffix", "upload"));
  }

  private static JsonNode object(JsonNode data, String key) {
    JsonNode value = data.get(key);
    if (value == null || value.isNull()) {
      throw ActionError.missingKey(key);
    }
    if (!value.isObject()) {
      throw new SkillException(key + " must be an object");
    }
    return value;
  }

  private static List<String> strings(@Nullable JsonNode node) {
    List<String> values = new ArrayList<>();
    if (node != null && node.isArray()) {
      node.forEach(v -> values.add(v.isTextual() ? v.asText() : v.toString()));
    }
    return values;
  }

  /** Python's truthiness of a JSON value, as {@code bool(...)} reads it. */
  private static boolean truthy(@Nullable JsonNode node) {
    if (node == null || node.isNull()) {
      return false;
    }
    if (node.isBoolean()) {
      return node.booleanValue();
    }
    if (node.isNumber()) {
      return node.asDouble() != 0;
    }
    if (node.isTextual()) {
      return !node.asText().isEmpty();
    }
    return node.size() > 0;
  }

  private static int maxEntries(@Nullable JsonNode node) {
    if (node == null || node.isNull()) {
      return 200;
    }
    if (node.isIntegralNumber() && node.canConvertToInt()) {
      return node.asInt();
    }
    if (node.isTextual()) {
      try {
        return Integer.parseInt(node.asText().strip());
      } catch (NumberFormatException e) {
        // falls through to the reference's message
      }
    }
    throw new SkillException("max_entries must be a positive integer");
  }

  private static String describe(IOException e) {
    return e instanceof NoSuchFileException missing
        ? "No such file or directory: " + missing.getFile()
        : e.getClass().getSimpleName() + ": " + e.getMessage();
  }
}
