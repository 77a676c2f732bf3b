package dev.box.testkit;

/**
 * The network escape suite against the nsjail backend, whose server runs in a network namespace of
 * the suite's own behind the stand-in world, with the stand-in DNS server as its resolver;
 * network-on jails reach it through slirp4netns behind the same firewall as bubblewrap's sandboxes.
 */
class NsjailNetworkEscapeTest extends NetworkEscapeSuite {
  @Override
  protected String backendName() {
    return "nsjail";
  }

  @Override
  protected boolean serverInOwnNamespace() {
    return true;
  }
}
