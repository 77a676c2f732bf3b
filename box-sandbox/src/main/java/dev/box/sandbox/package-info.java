/**
 * What the sandbox backends share: starting a namespace sandbox around a backend's own jail (user
 * maps, cgroups, the egress firewall and user-mode network, the exec agent's host side), launching
 * processes into it, and the pool of sandboxes started ahead of their sessions with the workspace
 * slots that hand a session's workspace to one. A backend module depends on this one, never on
 * another backend.
 */
@NullMarked
package dev.box.sandbox;

import org.jspecify.annotations.NullMarked;
