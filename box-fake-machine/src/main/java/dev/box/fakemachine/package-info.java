/**
 * A fake remote machine for the tests of remote backends: a private directory that stands in for
 * its disk, in which commands run as real local processes under bubblewrap.
 */
@NullMarked
package dev.box.fakemachine;

import org.jspecify.annotations.NullMarked;
