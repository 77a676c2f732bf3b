/**
 * Details shared by the server, the core and the client SDK: the relay protocol, and file-tree
 * operations. Not API: these classes change without notice.
 */
@NullMarked
package dev.box.api.internal;

import org.jspecify.annotations.NullMarked;
