package dev.box.testkit;

/**
 * The network escape suite against the bubblewrap backend, whose server runs in a network namespace
 * of the suite's own behind the stand-in world, with the stand-in DNS server as its resolver.
 */
class BwrapNetworkEscapeTest extends NetworkEscapeSuite {
  @Override
  protected String backendName() {
    return "bwrap";
  }

  @Override
  protected boolean serverInOwnNamespace() {
    return true;
  }
}
