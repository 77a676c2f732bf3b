/**
 * The nsjail backend: each session is a live nsjail jail (user, pid, mount, ipc, uts, cgroup and
 * network namespaces) whose processes are spawned with nsenter and limited with cgroups, through
 * the bubblewrap backend's launcher and cgroup drivers.
 */
@NullMarked
package dev.box.backend.nsjail;

import org.jspecify.annotations.NullMarked;
