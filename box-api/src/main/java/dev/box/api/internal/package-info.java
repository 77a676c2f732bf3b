/**
 * Protocol details shared by the server and the client SDK. Not API: these classes change with the
 * protocol, without notice.
 */
@NullMarked
package dev.box.api.internal;

import org.jspecify.annotations.NullMarked;
