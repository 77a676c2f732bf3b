package dev.box.api;

/**
 * The answer to an archive upload ({@code PUT /v1/sessions/{id}/archive}).
 *
 * @param path the absolute directory inside the sandbox the archive was extracted into
 * @param entries how many entries (files, directories and links) the archive held
 * @param size the size of the archive in bytes
 */
public record BoxArchiveExtracted(String path, int entries, long size) {}
