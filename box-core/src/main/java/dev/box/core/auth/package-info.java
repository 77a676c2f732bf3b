/** Who may drive the API: the control tokens every route but the probes requires. */
@NullMarked
package dev.box.core.auth;

import org.jspecify.annotations.NullMarked;
