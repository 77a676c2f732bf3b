package dev.box.sandbox.engine;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;

/**
 * The Engine API paths Box calls, each name, id or filter encoded into its path or query, so that
 * no caller builds one from an unencoded value.
 */
public final class EnginePaths {
  private EnginePaths() {}

  /** {@code DELETE} on it removes the container {@code nameOrId}, running or not. */
  public static String forceRemove(String nameOrId) {
    return "/containers/" + encode(nameOrId) + "?force=1";
  }

  /** {@code GET} on it lists the containers, running or not, that {@code filters} (JSON) match. */
  public static String listContainers(String filters) {
    return "/containers/json?all=1&filters=" + encode(filters);
  }

  /** {@code POST} on it creates a container named {@code name}. */
  public static String createContainer(String name) {
    return "/containers/create?name=" + encode(name);
  }

  /** {@code GET} on it inspects the image {@code image}. */
  public static String inspectImage(String image) {
    return "/images/" + encode(image) + "/json";
  }

  /** {@code POST} on it pulls the image {@code image}. */
  public static String pullImage(String image) {
    return "/images/create?fromImage=" + encode(image);
  }

  /** {@code GET} on it streams the file system of the container {@code id} as a tar. */
  public static String exportContainer(String id) {
    return "/containers/" + encode(id) + "/export";
  }

  private static String encode(String value) {
    return URLEncoder.encode(value, StandardCharsets.UTF_8);
  }
}
