package dev.box.server.http;

import dev.box.api.BoxException;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.function.BiConsumer;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * The control-token check in front of an {@link HttpMount}: the same check and the same JSON error
 * answer as every route of the API, for a servlet the route handlers never see.
 */
final class MountGuard implements Filter {
  private final BiConsumer<String, Function<String, @Nullable String>> check;

  /**
   * @param check throws the {@link BoxException} to answer for a request to a path whose headers
   *     the function reads, or returns when the request may pass
   */
  MountGuard(BiConsumer<String, Function<String, @Nullable String>> check) {
    this.check = check;
  }

  @Override
  public void doFilter(ServletRequest request, ServletResponse response, FilterChain chain)
      throws IOException, ServletException {
    HttpServletRequest http = (HttpServletRequest) request;
    try {
      check.accept(http.getRequestURI(), http::getHeader);
    } catch (BoxException e) {
      HttpServletResponse answer = (HttpServletResponse) response;
      answer.setStatus(e.code().httpStatus());
      answer.setContentType("application/json");
      answer.getOutputStream().write(ErrorMapper.body(e));
      return;
    }
    chain.doFilter(request, response);
  }
}
