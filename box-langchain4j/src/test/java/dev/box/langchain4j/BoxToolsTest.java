package dev.box.langchain4j;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.box.agenthost.AgentHost;
import dev.box.agenthost.OutputCut;
import dev.box.client.LiveBox;
import dev.langchain4j.agent.tool.Tool;
import dev.langchain4j.agent.tool.ToolExecutionRequest;
import dev.langchain4j.agent.tool.ToolSpecification;
import dev.langchain4j.agent.tool.ToolSpecifications;
import dev.langchain4j.code.CodeExecutionEngine;
import dev.langchain4j.service.tool.DefaultToolExecutor;
import java.lang.reflect.Method;
import java.util.Arrays;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The tools as a model would call them, without a model: LangChain4j builds the tool specifications
 * from the class, and its own {@link DefaultToolExecutor} runs tool calls with JSON arguments
 * against a real Box server running real bubblewrap sandboxes.
 */
class BoxToolsTest {
  @RegisterExtension static final LiveBox box = LiveBox.perClass();

  private static final ObjectMapper JSON = new ObjectMapper();
  private static AgentHost host;
  private static BoxTools tools;
  private static Map<String, Method> methods;

  @BeforeAll
  static void start() {
    host = AgentHost.builder(box.client()).build().start();
    tools = new BoxTools(host, "lc4j");
    methods =
        Arrays.stream(BoxTools.class.getDeclaredMethods())
            .filter(m -> m.isAnnotationPresent(Tool.class))
            .collect(Collectors.toMap(Method::getName, Function.identity()));
  }

  @AfterAll
  static void stop() {
    host.close();
  }

  /** Runs a tool call as LangChain4j runs a model's. */
  private static String call(String name, String arguments) {
    ToolExecutionRequest request =
        ToolExecutionRequest.builder().id("call-1").name(name).arguments(arguments).build();
    return new DefaultToolExecutor(tools, Objects.requireNonNull(methods.get(name)))
        .execute(request, "memory-1");
  }

  @Test
  void specifications_describeEveryToolAndItsParameters() {
    Map<String, ToolSpecification> specs =
        ToolSpecifications.toolSpecificationsFrom(tools).stream()
            .collect(Collectors.toMap(ToolSpecification::name, Function.identity()));

    assertThat(specs).containsOnlyKeys("exec", "readFile", "writeFile", "listFiles");
    assertThat(Objects.requireNonNull(specs.get("exec")).parameters().properties())
        .containsOnlyKeys("command", "workdir", "timeoutSec");
    assertThat(Objects.requireNonNull(specs.get("exec")).parameters().required())
        .containsExactly("command");
    assertThat(Objects.requireNonNull(specs.get("writeFile")).parameters().required())
        .containsExactly("path", "content");
  }

  @Test
  void exec_runsTheCommandInTheSandbox_andAnswersWithTheOutcomeAsJson() throws Exception {
    JsonNode out = JSON.readTree(call("exec", "{\"command\": \"echo $((6 * 7)); id -u\"}"));

    assertThat(out.path("ok").asBoolean()).isTrue();
    assertThat(out.path("stdout").asText()).startsWith("42\n");
    assertThat(out.path("session_id").asText(out.path("sessionId").asText())).isEqualTo("lc4j");

    JsonNode failed =
        JSON.readTree(call("exec", "{\"command\": \"pwd; exit 4\", \"workdir\": \"/tmp\"}"));
    assertThat(failed.path("ok").asBoolean()).isFalse();
    assertThat(failed.path("stdout").asText()).isEqualTo("/tmp\n");
  }

  @Test
  void writeReadAndList_goThroughTheSandbox() {
    String content = "héllo 'quoted' \"and\" $HOME\nline 2\n";
    String args =
        JSON.createObjectNode().put("path", "notes/a.txt").put("content", content).toString();

    assertThat(call("writeFile", args)).isEqualTo("Wrote 34 characters to notes/a.txt");
    assertThat(call("readFile", "{\"path\": \"/workspace/notes/a.txt\"}")).isEqualTo(content);
    assertThat(call("listFiles", "{}")).contains("notes/");
    assertThat(call("listFiles", "{\"path\": \"notes\"}")).isEqualTo("a.txt\n");
    assertThat(call("readFile", "{\"path\": \"missing.txt\"}"))
        .startsWith("Cannot read missing.txt: ");
  }

  /**
   * One more byte than Linux lets a single environment string hold (MAX_ARG_STRLEN, 131,072 with
   * its NUL), which is where a write through a command line stops.
   */
  private static final int PAST_ONE_ARGUMENT = 131_072;

  @Test
  void writeFile_takesMoreThanOneCommandLineArgumentHolds() throws Exception {
    String content = "x".repeat(PAST_ONE_ARGUMENT + 10_000) + "\nend\n";
    String args =
        JSON.createObjectNode().put("path", "big/w.txt").put("content", content).toString();

    assertThat(call("writeFile", args))
        .isEqualTo("Wrote " + content.length() + " characters to big/w.txt");
    JsonNode size =
        JSON.readTree(call("exec", "{\"command\": \"wc -c < big/w.txt; tail -n 1 big/w.txt\"}"));
    assertThat(size.path("stdout").asText()).isEqualTo(content.length() + "\nend\n");
  }

  @Test
  void readFile_ofALongFile_isCutForAModelWithANotice_asTheMcpToolsCutIt() {
    call("exec", "{\"command\": \"mkdir -p big; seq 1 20000 > big/r.txt\"}");

    String read = call("readFile", "{\"path\": \"big/r.txt\"}");

    assertThat(read.codePointCount(0, read.length())).isLessThanOrEqualTo(OutputCut.DEFAULT_LIMIT);
    assertThat(read)
        .startsWith("1\n2\n3\n")
        .endsWith("19999\n20000\n")
        .contains(" characters truncated] ...");
    assertThat(read).isEqualTo(OutputCut.of(seq(20_000)).text());
  }

  private static String seq(int last) {
    StringBuilder text = new StringBuilder();
    for (int i = 1; i <= last; i++) {
      text.append(i).append('\n');
    }
    return text.toString();
  }

  @Test
  void codeExecutionEngine_runsPythonInASession() {
    CodeExecutionEngine engine = new BoxCodeExecutionEngine(host, "lc4j-code");

    assertThat(engine.execute("print(2 ** 64)")).isEqualTo("18446744073709551616\n");
    assertThat(engine.execute("open('/workspace/x', 'w').write('kept')\nprint('ok')"))
        .isEqualTo("ok\n");
    assertThat(engine.execute("print(open('/workspace/x').read())")).isEqualTo("kept\n");
    assertThat(engine.execute("raise SystemExit('no')"))
        .startsWith("The code failed (exit code 1):\nno");
  }

  @Test
  void codeExecutionEngine_runsCodeLongerThanOneCommandLineArgumentHolds_andLeavesNoFile() {
    CodeExecutionEngine engine = new BoxCodeExecutionEngine(host, "lc4j-code-long");
    String padding = "# " + "p".repeat(PAST_ONE_ARGUMENT) + "\n";

    assertThat(engine.execute(padding + "print('ran')")).isEqualTo("ran\n");
    assertThat(engine.execute("import glob; print(glob.glob('/tmp/.box-code-*'))"))
        .isEqualTo("[]\n");
  }
}
