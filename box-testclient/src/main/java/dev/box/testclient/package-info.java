/**
 * The raw test client of a Box server on 127.0.0.1: {@link dev.box.testclient.BoxHttp} sends JSON
 * over HTTP and reads each {@link dev.box.testclient.Answer}, {@link dev.box.testclient.BoxSocket}
 * records the frames of a relay or {@code /rpc/ws} WebSocket. It knows the wire format only, never
 * the server, so that the server's own tests, the testkit and the benchmark can all depend on it.
 */
@NullMarked
package dev.box.testclient;

import org.jspecify.annotations.NullMarked;
