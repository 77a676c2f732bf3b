package dev.box.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.box.testclient.Answer;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** What a sandbox can and cannot see and do on the host. */
class IsolationTest {
  @AutoClose private static final TestServer box = TestServer.start();

  @Test
  void sandboxCannotReadHostSecretsOrTheDataDir() {
    Answer a =
        box.exec(
            "secrets",
            "cat /etc/shadow; ls /root; ls /home; ls " + box.dataDir + "; echo done",
            "");

    assertThat(a.text("stdout")).isEqualTo("box\ndone\n");
    assertThat(a.text("stderr"))
        .contains("/etc/shadow: No such file")
        .contains("/root")
        .contains(box.dataDir + "': No such file");
  }

  @Test
  void sandboxSeesOnlyItsOwnProcesses() {
    Answer a = box.exec("procs", "ps -eo pid,args");

    String out = a.text("stdout");
    assertThat(out).doesNotContain("java").contains("1 /.box/box-agent");
    // The exec agent (pid 1), the shell and ps: a handful, never the host's hundreds.
    assertThat(out.lines().count()).isLessThan(10);
  }

  @Test
  void commandRunsAsAnUnprivilegedUserWithoutCapabilities() {
    Answer a = box.exec("caps", "id -u; grep -E '^(CapEff|CapPrm|NoNewPrivs)' /proc/self/status");

    assertThat(a.text("stdout"))
        .isEqualTo("1000\nCapPrm:\t0000000000000000\nCapEff:\t0000000000000000\nNoNewPrivs:\t1\n");
  }

  @Test
  void rootAndSystemDirectoriesAreReadOnly_workspaceAndTmpAreWritable() {
    Answer a =
        box.exec(
            "readonly",
            "touch /x 2>/dev/null && echo root-writable; touch /usr/x 2>/dev/null && echo"
                + " usr-writable; touch /workspace/x /tmp/x /home/box/x && echo ok");

    assertThat(a.text("stdout")).isEqualTo("ok\n");
  }

  @Test
  void readOnlyRootfsFalse_givesAWritableSessionPrivateRoot() {
    Answer a =
        box.exec(
            "writable-root",
            "mkdir -p /opt/tool && echo hi > /opt/tool/x && cat /opt/tool/x; touch /usr/x 2>&1",
            "\"read_only_rootfs\":false");

    assertThat(a.text("stdout"))
        .isEqualTo("hi\ntouch: cannot touch '/usr/x': Read-only file system\n");
    assertThat(box.exec("other-root", "ls /opt/tool 2>&1").text("stdout")).contains("No such file");
  }

  @Test
  void posixSharedMemory_works_asPythonsMultiprocessingNeedsIt() {
    Answer a =
        box.exec(
            "shm",
            "python3 -c 'import multiprocessing as m; l = m.Lock(); l.acquire(); print(\"locked\")'");

    assertThat(a.text("stdout")).as(a.text("stderr")).isEqualTo("locked\n");
  }

  @Test
  void aSandbox_cannotCreateNestedUserNamespaces_andIsNotRootOnTheHost() {
    Answer a =
        box.exec(
            "nested",
            "cat /proc/sys/user/max_user_namespaces; unshare -U true 2>/dev/null; echo rc=$?;"
                + " unshare -n true 2>/dev/null; echo rc=$?; cat /proc/self/uid_map");

    assertThat(a.text("stdout"))
        .startsWith("0\nrc=1\nrc=1\n")
        .contains("1000    2000000          1")
        .doesNotContain("1000          0");
  }

  /** With the network off (the default) and on. */
  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {"net-off | ''", "net-on | '\"network\":\"on\"'"})
  void cannotReachAServerOnTheHostsLoopback(String session, String fields) throws Exception {
    try (Listener listener = new Listener()) {
      Answer a =
          box.exec(
              session,
              "bash -c 'echo hi > /dev/tcp/127.0.0.1/" + listener.port() + "' 2>&1; echo rc=$?",
              fields);

      assertThat(a.text("stdout")).contains("rc=1");
      assertThat(listener.accepted()).isZero();
    }
  }

  /** A TCP server on the host's 127.0.0.1 that counts the connections it accepted. */
  private static final class Listener implements AutoCloseable {
    private final ServerSocket socket;
    private final AtomicInteger accepted = new AtomicInteger();
    private final Thread acceptor;

    Listener() throws IOException {
      socket = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
      acceptor =
          Thread.ofPlatform()
              .daemon()
              .start(
                  () -> {
                    while (!socket.isClosed()) {
                      try (Socket client = socket.accept();
                          InputStream in = client.getInputStream()) {
                        accepted.incrementAndGet();
                        in.readAllBytes();
                      } catch (IOException e) {
                        return;
                      }
                    }
                  });
    }

    int port() {
      return socket.getLocalPort();
    }

    int accepted() throws IOException, InterruptedException {
      socket.close();
      acceptor.join();
      return accepted.get();
    }

    @Override
    public void close() throws IOException {
      socket.close();
    }
  }
}
