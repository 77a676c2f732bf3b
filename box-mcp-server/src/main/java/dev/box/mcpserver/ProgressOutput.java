package dev.box.mcpserver;

import dev.box.agenthost.OutputCut;
import dev.box.client.ExecOutput;
import io.modelcontextprotocol.server.McpSyncServerExchange;
import io.modelcontextprotocol.spec.McpSchema;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A streamed exec's output told to an MCP client as progress notifications of its call: each piece
 * of stdout or stderr as it comes, its message cut for a model ({@link OutputCut}), its progress
 * the count of characters heard so far (MCP requires it to grow). A notification that cannot be
 * sent (the client went away) does not stop the command: the call's result still comes.
 */
final class ProgressOutput implements ExecOutput {
  private static final Logger log = LoggerFactory.getLogger(ProgressOutput.class);

  private final McpSyncServerExchange exchange;
  private final Object token;
  private long heard;

  ProgressOutput(McpSyncServerExchange exchange, Object token) {
    this.exchange = exchange;
    this.token = token;
  }

  @Override
  public void stdout(String text) {
    tell(text);
  }

  @Override
  public void stderr(String text) {
    tell(text);
  }

  private void tell(String text) {
    heard += text.length();
    try {
      exchange.progressNotification(
          new McpSchema.ProgressNotification(token, heard, null, OutputCut.of(text).text()));
    } catch (RuntimeException e) {
      // The client is gone or refuses notifications: the result still tells the output.
      log.debug("progress of an exec not sent: {}", e.toString());
    }
  }
}
