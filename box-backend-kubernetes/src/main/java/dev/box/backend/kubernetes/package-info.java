/**
 * The Kubernetes backend: each session is a pod of the configured namespace, whose container runs
 * the session's image under {@code box-guard}, with {@code box-agent} serving the session's
 * processes on a pod port to the servers that hold the pod's secret.
 */
@NullMarked
package dev.box.backend.kubernetes;

import org.jspecify.annotations.NullMarked;
