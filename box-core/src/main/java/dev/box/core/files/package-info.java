/**
 * File operations inside a sandbox: fixed shell programs spawned as the sandbox user, so that the
 * sandbox's own view of its filesystem resolves every path, and a tar guard that checks an archive
 * before any of it is extracted.
 */
@NullMarked
package dev.box.core.files;

import org.jspecify.annotations.NullMarked;
