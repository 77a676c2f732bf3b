package dev.box.core.session;

/**
 * The copy of a session's writable root that a snapshot keeps, as its record names it: sessions
 * created from the snapshot start from it, on the backend that keeps it only.
 *
 * @param backend the backend that keeps the copy ({@code docker}, {@code podman})
 * @param image the image of the session the snapshot was taken of: the copy is a layer over it
 * @param copy the backend's reference to the copy ({@link dev.box.core.backend.RootCopies#keep})
 */
record SnapshotRoot(String backend, String image, String copy) {}
