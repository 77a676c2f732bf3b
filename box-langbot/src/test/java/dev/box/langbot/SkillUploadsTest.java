package dev.box.langbot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.stream.Stream;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Skill ZIP preview and install with real archives built in the test, the malicious ones among them
 * byte by byte; a refused archive must leave nothing on disk.
 */
class SkillUploadsTest {
  private static final String SKILL = "---\nname: demo\ndescription: A demo\n---\nRun it.\n";

  @TempDir Path dir;

  private SkillStore store;

  @BeforeEach
  void setUp() {
    store = new SkillStore(dir, Tenancy.namespace("instance", "ws"));
  }

  /** An archive with the demo skill's SKILL.md, to add the entry under test to. */
  private static TestZip demoSkill() {
    return new TestZip().file("demo/SKILL.md", SKILL);
  }

  private List<Skill> install(byte[] zip) throws IOException {
    return SkillUploads.install(
        store, zip, new SkillUploads.Layout("demo.zip", "", "upload"), List.of(), "");
  }

  /** Fails unless the archive is refused with {@code message} and nothing is left behind. */
  private void assertRefused(byte[] zip, String message) throws IOException {
    assertRefusedBy(() -> install(zip), message);
    assertRefusedBy(
        () -> SkillUploads.preview(store, zip, new SkillUploads.Layout("demo.zip", "", "upload")),
        message);
  }

  private void assertRefusedBy(ThrowingCallable call, String message) throws IOException {
    assertThatThrownBy(call).isInstanceOf(SkillException.class).hasMessage(message);
    assertThat(listing(store.root())).isEmpty();
    assertThat(listing(store.staging())).isEmpty();
  }

  private static List<Path> listing(Path path) throws IOException {
    try (Stream<Path> files = Files.walk(path)) {
      return files.filter(p -> !p.equals(path)).toList();
    }
  }

  @Test
  void install_unpacksTheOnlySkill_underTheWorkspaceRoot_withSafeModes() throws IOException {
    byte[] zip =
        new TestZip()
            .dir("demo")
            .file("demo/SKILL.md", SKILL)
            .entry("demo/run.sh", "#!/bin/sh\n".getBytes(), true, 0104777)
            .entry("demo/data.txt", "x".getBytes(), false, 0100666)
            .bytes();
    List<Skill> previews =
        SkillUploads.preview(store, zip, new SkillUploads.Layout("My Demo!.zip", "", "upload"));
    assertThat(previews)
        .singleElement()
        .satisfies(
            p -> {
              assertThat(p.name()).isEqualTo("demo");
              assertThat(p.sourcePath()).isEmpty();
              assertThat(p.packageRoot()).isEqualTo(store.root().resolve("My-Demo-upload"));
            });
    assertThat(listing(store.root())).isEmpty();

    Skill installed = install(zip).get(0);
    Path root = store.root().resolve("demo-upload");
    assertThat(installed.packageRoot()).isEqualTo(root);
    assertThat(installed.description()).isEqualTo("A demo");
    assertThat(store.get("demo")).isNotNull();
    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(root.resolve("run.sh"))))
        .isEqualTo("rwxr-xr-x");
    assertThat(
            PosixFilePermissions.toString(Files.getPosixFilePermissions(root.resolve("data.txt"))))
        .isEqualTo("rw-r--r--");
    assertThat(listing(store.staging())).isEmpty();

    assertThatThrownBy(() -> install(zip)).hasMessage("Skill directory already exists: " + root);
  }

  @Test
  void install_ofSeveralSkills_needsAChoice_andInstallsTheChosen() throws IOException {
    byte[] zip =
        new TestZip()
            .file("a/SKILL.md", "---\nname: alpha\n---\nA")
            .file("b/SKILL.md", "---\nname: beta\n---\nB")
            .bytes();
    assertRefusedBy(
        () -> install(zip), "Multiple skills found. Please choose one or more source_paths: a, b");
    assertRefusedBy(
        () ->
            SkillUploads.install(
                store, zip, new SkillUploads.Layout("pack.zip", "", "upload"), List.of("c"), ""),
        "Invalid source_path \"c\". Available: a, b");
    List<Skill> installed =
        SkillUploads.install(
            store, zip, new SkillUploads.Layout("pack.zip", "", ""), List.of("/b/"), "a");
    assertThat(installed).extracting(Skill::name).containsExactly("beta", "alpha");
    assertThat(store.root().resolve("pack-b")).isDirectory();
    assertThat(store.root().resolve("pack-a")).isDirectory();
  }

  @Test
  void sourceSubdir_mustStayInTheArchive() throws IOException {
    byte[] zip = new TestZip().file("x/skills/demo/SKILL.md", SKILL).file("x/y", "y").bytes();
    assertThat(
            SkillUploads.preview(store, zip, new SkillUploads.Layout("s.zip", "skills", "upload")))
        .extracting(Skill::sourcePath)
        .containsExactly("demo");
    assertRefusedBy(
        () -> SkillUploads.preview(store, zip, new SkillUploads.Layout("s.zip", "../..", "upload")),
        "source_subdir must stay within the uploaded archive");
    assertRefusedBy(
        () -> SkillUploads.preview(store, zip, new SkillUploads.Layout("s.zip", "nope", "upload")),
        "source_subdir does not exist in the uploaded archive: nope");
  }

  @Test
  void targetSuffix_cannotClimbOutOfTheWorkspace() throws IOException {
    byte[] zip = demoSkill().bytes();
    Skill installed =
        SkillUploads.install(
                store,
                zip,
                new SkillUploads.Layout("../../evil.zip", "", "../../../x"),
                List.of(),
                "")
            .get(0);
    assertThat(installed.packageRoot().getParent()).isEqualTo(store.root());
    assertThat(installed.packageRoot().getFileName().toString()).isEqualTo("evil-x");
  }

  @ParameterizedTest
  @ValueSource(strings = {"demo/../../evil.txt", "/etc/evil", "C:\\evil.txt", "..\\evil.txt"})
  void zipSlip_absolute_andDrivePaths_areRefused(String path) throws IOException {
    assertRefused(demoSkill().file(path, "x").bytes(), "Archive contains an unsafe path: " + path);
    assertThat(dir.resolve("evil.txt")).doesNotExist();
  }

  @Test
  void symlinkAndDeviceEntries_areRefused_byTheirUnixMode() throws IOException {
    assertRefused(
        demoSkill().entry("demo/link", "/etc/passwd".getBytes(), false, 0120777).bytes(),
        "Archive contains a symbolic link: demo/link");
    assertRefused(
        demoSkill().entry("demo/fifo", new byte[0], false, 0010644).bytes(),
        "Archive contains a non-regular entry: demo/fifo");
  }

  @ParameterizedTest
  @ValueSource(strings = {"demo/SKILL.md", "demo/./SKILL.md"})
  void aSecondEntryOfTheSamePath_isRefused(String path) throws IOException {
    assertRefused(
        demoSkill().file(path, "second").bytes(), "Archive contains a duplicate path: " + path);
  }

  @Test
  void anEntryBelowAFile_isRefusedAsADuplicatePath() throws IOException {
    assertRefused(
        demoSkill().file("demo/x", "f").file("demo/x/y", "g").bytes(),
        "Archive contains a duplicate path: demo/x/y");
  }

  @Test
  void bombs_tooManyEntries_andOversizeArchives_areRefused() throws IOException {
    assertRefused(
        demoSkill().file("demo/zeros", new byte[1 << 20]).bytes(),
        "Archive entry exceeds the compression ratio limit: demo/zeros");
    TestZip many = demoSkill();
    for (int i = 0; i < 10_000; i++) {
      many.entry("demo/f" + i, new byte[0], false, 0100644);
    }
    assertRefused(many.bytes(), "Archive contains too many entries (maximum 512)");
    assertRefused(
        demoSkill().entry("demo/big", new byte[17 * 1024 * 1024], false, 0100644).bytes(),
        "Archive entry exceeds the uncompressed size limit: demo/big");
    assertRefused(
        new byte[SkillZip.MAX_COMPRESSED_BYTES + 1],
        "Uploaded archive exceeds the compressed size limit (20971520 bytes)");
    // Two symbols at random: about one bit a byte, so 70 MiB deflate below 20 MiB.
    byte[] part = new byte[14 * 1024 * 1024];
    java.util.Random random = new java.util.Random(1);
    for (int i = 0; i < part.length; i++) {
      part[i] = random.nextBoolean() ? (byte) 'a' : (byte) 'b';
    }
    TestZip total = demoSkill();
    for (int i = 0; i < 5; i++) {
      total.file("demo/part" + i, part);
    }
    assertRefused(total.bytes(), "Archive exceeds the total uncompressed size limit");
  }

  @Test
  void aDeeplyNestedEntry_failsCleanly() throws IOException {
    String deep = "demo/" + "d/".repeat(30_000) + "f";
    assertThatThrownBy(() -> install(demoSkill().file(deep, "x").bytes()))
        .isInstanceOf(IOException.class);
    assertThat(listing(store.root())).isEmpty();
    assertThat(listing(store.staging())).isEmpty();
  }

  @Test
  void headersThatUnderstateTheSize_areCaughtWhileCopying() throws IOException {
    byte[] random = new byte[4096];
    new java.util.Random(7).nextBytes(random);
    assertRefused(
        demoSkill().lyingFile("demo/lie", random, 100).bytes(),
        "Archive entry size changed while extracting: demo/lie");
  }

  @Test
  void emptyCorruptAndSkilllessArchives_areRefused() throws IOException {
    assertRefused(new byte[0], "Uploaded file is empty");
    assertRefused("not a zip at all".getBytes(), "Uploaded file must be a valid .zip archive");
    assertRefused(
        new TestZip().file("readme.txt", "no skill").bytes(),
        "No SKILL.md found in the uploaded archive or its subdirectories (max depth: 2)");
  }
}
