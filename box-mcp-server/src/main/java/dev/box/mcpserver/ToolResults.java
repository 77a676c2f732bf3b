package dev.box.mcpserver;

import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Map;

/**
 * Tool results as MCP clients read them: the answer as structured content and, for clients that
 * show text only, the same answer as one JSON text; an error as one text with {@code isError}.
 */
final class ToolResults {
  private static final McpJsonMapper JSON = McpJsonDefaults.getMapper();

  private ToolResults() {}

  static CallToolResult success(Map<String, Object> answer) {
    String text;
    try {
      text = JSON.writeValueAsString(answer);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot render the tool's answer: " + e.getMessage(), e);
    }
    return CallToolResult.builder()
        .addTextContent(text)
        .structuredContent(answer)
        .isError(false)
        .build();
  }

  static CallToolResult error(String message) {
    return CallToolResult.builder().addTextContent(message).isError(true).build();
  }
}
