package dev.box.api;

import java.time.Instant;

/**
 * A preview link to a port of a session's sandbox ({@code POST
 * /v1/sessions/{id}/ports/{port}/links}): a capability URL that a browser opens without the control
 * token, until it expires, is revoked, or its session is deleted.
 *
 * @param url the link, {@code <base>/preview/<token>/}
 * @param expiresAt when it stops working (UTC)
 */
public record BoxPreviewLink(String url, Instant expiresAt) {}
