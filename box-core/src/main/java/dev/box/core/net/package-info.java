/**
 * Network isolation of sandboxes: the egress policy (what a network-on sandbox may reach) and the
 * firewall that enforces it inside each sandbox's own network namespace.
 */
@NullMarked
package dev.box.core.net;

import org.jspecify.annotations.NullMarked;
