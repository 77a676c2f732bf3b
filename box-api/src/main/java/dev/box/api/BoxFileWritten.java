package dev.box.api;

/**
 * The answer to a file upload ({@code PUT /v1/sessions/{id}/files}).
 *
 * @param path the absolute path inside the sandbox the file was written to
 * @param size how many bytes it holds
 */
public record BoxFileWritten(String path, long size) {}
