package dev.box.e2b.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.google.protobuf.CodedInputStream;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.MethodDescriptor;
import com.google.protobuf.Descriptors.ServiceDescriptor;
import com.google.protobuf.DynamicMessage;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.util.JsonFormat;
import dev.box.e2b.server.proto.FilesystemProto;
import dev.box.e2b.server.proto.ProcessProto;
import io.javalin.http.Context;
import java.io.IOException;
import java.util.Locale;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * The codec of one envd call, by its {@code Content-Type}: Connect's JSON ({@code
 * application/json}, {@code application/connect+json}), in which the handlers speak, or protobuf's
 * binary ({@code application/proto}, {@code application/connect+proto}), turned into that JSON and
 * back through the descriptors of envd's messages ({@code src/main/proto}), so that every handler
 * serves both from one code path. Another type is refused with 415 and {@code Accept-Post}, as
 * Connect's protocol says.
 */
abstract class EnvdCodec {
  /** The unary types served, as {@code Accept-Post} lists them. */
  static final String UNARY_TYPES = "application/json, application/proto";

  /** The streaming types served, as {@code Accept-Post} lists them. */
  static final String STREAM_TYPES = "application/connect+json, application/connect+proto";

  private static final String CONNECT = "application/connect+";
  private static final Map<String, ServiceDescriptor> SERVICES =
      Map.of(
          "filesystem.Filesystem",
          FilesystemProto.getDescriptor().findServiceByName("Filesystem"),
          "process.Process",
          ProcessProto.getDescriptor().findServiceByName("Process"));
  private static final JsonFormat.Printer PRINTER =
      JsonFormat.printer().omittingInsignificantWhitespace();
  private static final JsonFormat.Parser PARSER = JsonFormat.parser();

  private final String name;
  final ObjectMapper mapper;

  private EnvdCodec(String name, ObjectMapper mapper) {
    this.name = name;
    this.mapper = mapper;
  }

  /** The codec's name in its content types: {@code json} or {@code proto}. */
  final String name() {
    return name;
  }

  /**
   * The request message in {@code length} bytes of {@code bytes} from {@code offset}, as JSON.
   *
   * @throws ConnectError {@code invalid_argument} when it is not one
   */
  abstract JsonNode decode(byte[] bytes, int offset, int length) throws IOException;

  /** The answer {@code message} (JSON, as the handlers make it) in this codec. */
  abstract byte[] encode(ObjectNode message) throws IOException;

  /** Answers a unary call with {@code message} in this codec. */
  final void answer(Context ctx, ObjectNode message) throws IOException {
    ctx.status(200).contentType("application/" + name()).result(encode(message));
  }

  /** Whether {@code ctx} is a streaming call, by its type {@code application/connect+...}. */
  static boolean isStream(Context ctx) {
    return type(ctx).startsWith(CONNECT);
  }

  /**
   * The codec of the call {@code service/method} in {@code ctx}.
   *
   * @throws ConnectError 415 for a type that is not served (with {@code Accept-Post} set), {@code
   *     unimplemented} for a method without messages
   */
  static EnvdCodec of(Context ctx, ObjectMapper mapper, String service, String method) {
    String type = type(ctx);
    switch (type) {
      case "application/json", CONNECT + "json" -> {
        return new Json(mapper);
      }
      case "application/proto", CONNECT + "proto" -> {
        MethodDescriptor call = method(service, method);
        return new Proto(mapper, call.getInputType(), call.getOutputType());
      }
      default -> {
        String served = type.startsWith(CONNECT) ? STREAM_TYPES : UNARY_TYPES;
        ctx.header("Accept-Post", served);
        throw ConnectError.unsupportedMediaType(
            "Content-Type " + (type.isEmpty() ? "(none)" : type) + " is not served: use " + served);
      }
    }
  }

  private static MethodDescriptor method(String service, String method) {
    ServiceDescriptor descriptor = SERVICES.get(service);
    MethodDescriptor found = descriptor == null ? null : descriptor.findMethodByName(method);
    if (found == null) {
      throw new ConnectError("unimplemented", "no method " + service + "/" + method);
    }
    return found;
  }

  /** The media type of {@code ctx}'s body, lower case, without parameters; "" for none. */
  private static String type(Context ctx) {
    @Nullable String type = ctx.contentType();
    if (type == null) {
      return "";
    }
    int semicolon = type.indexOf(';');
    return (semicolon < 0 ? type : type.substring(0, semicolon)).strip().toLowerCase(Locale.ROOT);
  }

  /** Connect's JSON: the handlers' own. */
  private static final class Json extends EnvdCodec {
    Json(ObjectMapper mapper) {
      super("json", mapper);
    }

    @Override
    JsonNode decode(byte[] bytes, int offset, int length) throws IOException {
      JsonNode request =
          length == 0 ? mapper.createObjectNode() : mapper.readTree(bytes, offset, length);
      if (request == null || !request.isObject()) {
        throw ConnectError.invalidArgument("the request must be a JSON object");
      }
      return request;
    }

    @Override
    byte[] encode(ObjectNode message) throws IOException {
      return mapper.writeValueAsBytes(message);
    }
  }

  /** protobuf's binary encoding of the call's messages. */
  private static final class Proto extends EnvdCodec {
    private final Descriptor input;
    private final Descriptor output;

    Proto(ObjectMapper mapper, Descriptor input, Descriptor output) {
      super("proto", mapper);
      this.input = input;
      this.output = output;
    }

    @Override
    JsonNode decode(byte[] bytes, int offset, int length) throws IOException {
      DynamicMessage message;
      try {
        message =
            DynamicMessage.parseFrom(input, CodedInputStream.newInstance(bytes, offset, length));
      } catch (InvalidProtocolBufferException e) {
        throw ConnectError.invalidArgument(
            "the request is not a " + input.getFullName() + ": " + e.getMessage());
      }
      return mapper.readTree(PRINTER.print(message));
    }

    @Override
    byte[] encode(ObjectNode message) throws IOException {
      DynamicMessage.Builder builder = DynamicMessage.newBuilder(output);
      PARSER.merge(mapper.writeValueAsString(message), builder);
      return builder.build().toByteArray();
    }
  }
}
