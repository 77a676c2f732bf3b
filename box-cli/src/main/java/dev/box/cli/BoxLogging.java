package dev.box.cli;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.encoder.PatternLayoutEncoder;
import ch.qos.logback.classic.spi.Configurator;
import ch.qos.logback.classic.spi.ConfiguratorRank;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.ConsoleAppender;
import ch.qos.logback.core.spi.ContextAwareBase;
import org.slf4j.Logger;

/**
 * The CLI's logging, configured in code: everything at INFO and above to stderr (so that stdout
 * stays free for command output and for protocols on stdio), Jetty and Javalin at WARN. An XML file
 * would say the same, but reading it loads logback's configuration framework and an XML parser,
 * some 400 classes and a few tens of milliseconds of every start. An operator's own file ({@code
 * -Dlogback.configurationFile=...}) still wins: then this configurator steps aside.
 */
@ConfiguratorRank(ConfiguratorRank.CUSTOM_HIGH_PRIORITY)
public final class BoxLogging extends ContextAwareBase implements Configurator {
  static final String PATTERN = "%d{HH:mm:ss.SSS} %-5level %logger{0} - %msg%n";

  /** Made by logback's service loader. */
  public BoxLogging() {}

  @Override
  public ExecutionStatus configure(LoggerContext context) {
    ClassLoader loader = BoxLogging.class.getClassLoader();
    if (System.getProperty("logback.configurationFile") != null
        || loader.getResource("logback-test.xml") != null
        || loader.getResource("logback.xml") != null) {
      return ExecutionStatus.INVOKE_NEXT_IF_ANY;
    }
    PatternLayoutEncoder encoder = new PatternLayoutEncoder();
    encoder.setContext(context);
    encoder.setPattern(PATTERN);
    encoder.start();
    ConsoleAppender<ILoggingEvent> stderr = new ConsoleAppender<>();
    stderr.setContext(context);
    stderr.setName("STDERR");
    stderr.setTarget("System.err");
    stderr.setEncoder(encoder);
    stderr.start();
    ch.qos.logback.classic.Logger root = context.getLogger(Logger.ROOT_LOGGER_NAME);
    root.setLevel(Level.INFO);
    root.addAppender(stderr);
    context.getLogger("org.eclipse.jetty").setLevel(Level.WARN);
    context.getLogger("io.javalin").setLevel(Level.WARN);
    return ExecutionStatus.DO_NOT_INVOKE_NEXT_IF_ANY;
  }
}
