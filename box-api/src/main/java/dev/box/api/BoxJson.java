package dev.box.api;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.MapperFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.datatype.jsr310.JavaTimeModule;
import java.util.stream.Collectors;

/**
 * The one JSON configuration of the wire model: snake_case names, ISO instants, unknown fields
 * ignored.
 */
public final class BoxJson {
  private BoxJson() {}

  /** A new mapper configured for the wire model; mappers are thread-safe, share one. */
  public static ObjectMapper newMapper() {
    return JsonMapper.builder()
        .addModule(new JavaTimeModule())
        .propertyNamingStrategy(PropertyNamingStrategies.SNAKE_CASE)
        .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
        .disable(DeserializationFeature.ACCEPT_FLOAT_AS_INT)
        .enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES)
        .disable(SerializationFeature.WRITE_DATES_AS_TIMESTAMPS)
        .disable(MapperFeature.AUTO_DETECT_IS_GETTERS)
        .build();
  }

  /**
   * One line saying what was wrong with a JSON document: {@code "invalid value for <path>:
   * <detail>"}, or {@code "<whole>: <detail>"} when the failure concerns the whole document.
   */
  public static String describe(JsonMappingException e, String whole) {
    String path =
        e.getPath().stream()
            .map(r -> r.getFieldName() != null ? r.getFieldName() : "[" + r.getIndex() + "]")
            .collect(Collectors.joining("."));
    String detail = e.getOriginalMessage();
    int newline = detail.indexOf('\n');
    if (newline >= 0) {
      detail = detail.substring(0, newline);
    }
    return path.isEmpty() ? whole + ": " + detail : "invalid value for " + path + ": " + detail;
  }
}
