/**
 * The bubblewrap backend: each session is a live sandbox (user, pid, mount, ipc, uts and optionally
 * network namespaces) whose processes are spawned with nsenter and limited with cgroups.
 */
@NullMarked
package dev.box.backend.bwrap;

import org.jspecify.annotations.NullMarked;
