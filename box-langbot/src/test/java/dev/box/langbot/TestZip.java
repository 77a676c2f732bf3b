package dev.box.langbot;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.CRC32;
import java.util.zip.Deflater;

/**
 * Writes ZIP archives byte by byte, so that tests can build what {@code ZipOutputStream} refuses
 * to: duplicate names, symbolic-link entries, climbing paths and headers whose sizes lie.
 */
final class TestZip {
  private record Entry(String name, byte[] data, boolean deflate, int unixMode, long statedSize) {}

  private final List<Entry> entries = new ArrayList<>();

  /** A regular file (mode 0644), deflated. */
  TestZip file(String name, String content) {
    return file(name, content.getBytes(StandardCharsets.UTF_8));
  }

  /** A regular file (mode 0644), deflated. */
  TestZip file(String name, byte[] content) {
    return entry(name, content, true, 0100644);
  }

  /** An entry with the unix mode {@code mode} in its external attributes. */
  TestZip entry(String name, byte[] content, boolean deflate, int mode) {
    entries.add(new Entry(name, content, deflate, mode, content.length));
    return this;
  }

  /** A deflated file whose headers state {@code statedSize} instead of its real size. */
  TestZip lyingFile(String name, byte[] content, long statedSize) {
    entries.add(new Entry(name, content, true, 0100644, statedSize));
    return this;
  }

  /** A directory entry. */
  TestZip dir(String name) {
    return entry(name.endsWith("/") ? name : name + "/", new byte[0], false, 040755);
  }

  /** The archive. */
  byte[] bytes() {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream central = new ByteArrayOutputStream();
    for (Entry e : entries) {
      byte[] name = e.name().getBytes(StandardCharsets.UTF_8);
      byte[] data = e.deflate() ? deflate(e.data()) : e.data();
      CRC32 crc = new CRC32();
      crc.update(e.data());
      int offset = out.size();
      ByteBuffer local = le(30);
      local.putInt(0x04034b50).putShort((short) 20).putShort((short) 0x800);
      local.putShort((short) (e.deflate() ? 8 : 0)).putInt(0);
      local.putInt((int) crc.getValue()).putInt(data.length).putInt((int) e.statedSize());
      local.putShort((short) name.length).putShort((short) 0);
      out.writeBytes(local.array());
      out.writeBytes(name);
      out.writeBytes(data);
      ByteBuffer cd = le(46);
      cd.putInt(0x02014b50).putShort((short) 0x0314).putShort((short) 20).putShort((short) 0x800);
      cd.putShort((short) (e.deflate() ? 8 : 0)).putInt(0);
      cd.putInt((int) crc.getValue()).putInt(data.length).putInt((int) e.statedSize());
      cd.putShort((short) name.length).putShort((short) 0).putShort((short) 0);
      cd.putShort((short) 0).putShort((short) 0).putInt(e.unixMode() << 16).putInt(offset);
      central.writeBytes(cd.array());
      central.writeBytes(name);
    }
    int cdOffset = out.size();
    out.writeBytes(central.toByteArray());
    ByteBuffer end = le(22);
    end.putInt(0x06054b50).putShort((short) 0).putShort((short) 0);
    end.putShort((short) entries.size()).putShort((short) entries.size());
    end.putInt(central.size()).putInt(cdOffset).putShort((short) 0);
    out.writeBytes(end.array());
    return out.toByteArray();
  }

  private static ByteBuffer le(int size) {
    return ByteBuffer.allocate(size).order(ByteOrder.LITTLE_ENDIAN);
  }

  private static byte[] deflate(byte[] data) {
    Deflater deflater = new Deflater(Deflater.BEST_SPEED, true);
    deflater.setInput(data);
    deflater.finish();
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    byte[] buffer = new byte[8192];
    while (!deflater.finished()) {
      out.write(buffer, 0, deflater.deflate(buffer));
    }
    deflater.end();
    return out.toByteArray();
  }
}
