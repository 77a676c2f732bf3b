/**
 * The E2B backend: sessions as E2B sandboxes (or sandboxes of a self-hosted E2B-compatible
 * service), created through the control plane and driven through each sandbox's envd (Connect-RPC
 * process service, HTTP file routes).
 */
@NullMarked
package dev.box.backend.e2b;

import org.jspecify.annotations.NullMarked;
