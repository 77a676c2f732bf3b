/**
 * E2B's API served by Box at {@code /e2b}: the control plane (sandboxes as Box sessions) and envd's
 * filesystem (Connect's JSON codec and the {@code /files} routes), so that E2B's unchanged SDKs
 * drive Box sessions. The entry point is {@link dev.box.e2b.server.E2bApi}.
 */
@NullMarked
package dev.box.e2b.server;

import org.jspecify.annotations.NullMarked;
