package dev.box.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectWriter;
import dev.box.api.BoxJson;
import java.io.PrintWriter;
import java.io.UncheckedIOException;

/** The {@code --json} output: a wire type in the server's JSON form, indented. */
final class Json {
  private static final ObjectWriter WRITER = BoxJson.newMapper().writerWithDefaultPrettyPrinter();

  private Json() {}

  static void print(PrintWriter out, Object value) {
    try {
      out.println(WRITER.writeValueAsString(value));
    } catch (JsonProcessingException e) {
      throw new UncheckedIOException("cannot render a wire type as JSON", e);
    }
    out.flush();
  }
}
