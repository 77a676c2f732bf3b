package dev.box.server.ports;

import dev.box.api.BoxErrorCode;
import dev.box.api.BoxException;

/**
 * Nothing answered a proxied request on the sandbox's port, or what answered is not HTTP Box
 * relays: answered 502 ({@link #STATUS}), with the code a client reads for that status.
 */
public final class PortUnreachable extends BoxException {
  private static final long serialVersionUID = 1L;

  /** The status of the answer: Bad Gateway. */
  public static final int STATUS = 502;

  PortUnreachable(String message) {
    super(BoxErrorCode.forHttpStatus(STATUS), message);
  }
}
