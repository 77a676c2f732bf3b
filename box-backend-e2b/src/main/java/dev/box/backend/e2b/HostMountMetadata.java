package dev.box.backend.e2b;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.box.core.backend.SandboxMount;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The {@code host-mount} metadata entry (a CubeSandbox convention LangBot's runtime follows): a
 * JSON array of {@code {hostPath, mountPath, readOnly}}, with which a self-hosted service on the
 * same machine may mount the directories itself.
 */
final class HostMountMetadata {
  private static final ObjectMapper JSON = new ObjectMapper();

  private HostMountMetadata() {}

  static String json(List<SandboxMount> mounts) {
    List<Map<String, Object>> entries =
        mounts.stream()
            .map(
                m -> {
                  Map<String, Object> entry = new LinkedHashMap<>();
                  entry.put("hostPath", m.hostPath().toString());
                  entry.put("mountPath", m.sandboxPath());
                  entry.put("readOnly", m.readOnly());
                  return entry;
                })
            .toList();
    try {
      return JSON.writeValueAsString(entries);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
  }
}
