package dev.box.api;

import java.util.List;

/**
 * A directory listing inside a sandbox: the entries of a directory, or the one entry of a file.
 *
 * @param entries the entries, sorted by name
 * @param truncated whether the directory held more entries than the server lists at once ({@code
 *     max_archive_entries}); {@code entries} then holds the first ones by name among those read
 */
public record BoxFileList(List<BoxFileEntry> entries, boolean truncated) {

  /** Copies the list. */
  public BoxFileList {
    entries = List.copyOf(entries);
  }
}
