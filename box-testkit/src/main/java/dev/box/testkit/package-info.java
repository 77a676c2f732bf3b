/**
 * The backend conformance suite: {@link dev.box.testkit.BackendConformanceSuite} checks, through a
 * real server over HTTP, that a sandbox backend does what the API promises.
 */
@NullMarked
package dev.box.testkit;

import org.jspecify.annotations.NullMarked;
