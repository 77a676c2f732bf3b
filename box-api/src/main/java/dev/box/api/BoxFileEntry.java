package dev.box.api;

import java.time.Instant;

/**
 * One entry of a directory listing inside a sandbox ({@code GET /v1/sessions/{id}/files/list}).
 *
 * @param path the entry's absolute path inside the sandbox
 * @param name its last component
 * @param type what it is; a symbolic link is reported as one, not followed
 * @param size its size in bytes (for a symbolic link, the length of its target)
 * @param mode its permission bits in octal, as {@code "0644"}
 * @param mtime when it was last modified (UTC)
 */
public record BoxFileEntry(
    String path, String name, BoxFileType type, long size, String mode, Instant mtime) {}
