/**
 * The wire model of Box: what clients send (specs) and what the server answers (infos, results,
 * errors), with the JSON names, defaults and validation messages of the LangBot Box runtime.
 */
@NullMarked
package dev.box.api;

import org.jspecify.annotations.NullMarked;
