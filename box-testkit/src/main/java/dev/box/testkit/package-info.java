/**
 * The backend conformance suite: {@link dev.box.testkit.BackendConformanceSuite} checks, through a
 * real server over HTTP, that a sandbox backend does what the API promises. The network escape
 * suite, {@link dev.box.testkit.NetworkEscapeSuite}, attacks a sandbox's network the same way,
 * against a stand-in network of namespaces the test builds.
 */
@NullMarked
package dev.box.testkit;

import org.jspecify.annotations.NullMarked;
