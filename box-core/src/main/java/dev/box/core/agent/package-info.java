/**
 * The server's side of the exec agent that lives in each sandbox and starts its processes on
 * request: the link to it, its frames, and the processes it starts.
 */
@NullMarked
package dev.box.core.agent;

import org.jspecify.annotations.NullMarked;
