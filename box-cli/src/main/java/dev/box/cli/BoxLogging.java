package dev.box.cli;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.Configurator;
import ch.qos.logback.classic.spi.ConfiguratorRank;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.IThrowableProxy;
import ch.qos.logback.classic.spi.ThrowableProxyUtil;
import ch.qos.logback.core.ConsoleAppender;
import ch.qos.logback.core.CoreConstants;
import ch.qos.logback.core.LayoutBase;
import ch.qos.logback.core.encoder.LayoutWrappingEncoder;
import ch.qos.logback.core.spi.ContextAwareBase;
import java.time.Instant;
import java.time.LocalTime;
import java.time.ZoneId;
import org.slf4j.Logger;

/**
 * The CLI's logging, configured in code: everything at INFO and above to stderr (so that stdout
 * stays free for command output and for protocols on stdio), Jetty and Javalin at WARN. An XML file
 * would say the same, but reading it loads logback's configuration framework and an XML parser,
 * some 400 classes and a few tens of milliseconds of every start; and each line is written by
 * {@link LineLayout}, not by a pattern, whose parser and converters are another 80 classes. An
 * operator's own file ({@code -Dlogback.configurationFile=...}) still wins: then this configurator
 * steps aside.
 */
@ConfiguratorRank(ConfiguratorRank.CUSTOM_HIGH_PRIORITY)
public final class BoxLogging extends ContextAwareBase implements Configurator {
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
    LineLayout layout = new LineLayout();
    layout.setContext(context);
    layout.start();
    LayoutWrappingEncoder<ILoggingEvent> encoder = new LayoutWrappingEncoder<>();
    encoder.setContext(context);
    encoder.setLayout(layout);
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

  /**
   * Writes an event as the pattern {@code %d{HH:mm:ss.SSS} %-5level %logger{0} - %msg%n} would, in
   * the host's time zone, followed by its exception's stack trace as logback prints it.
   */
  static final class LineLayout extends LayoutBase<ILoggingEvent> {
    private final ZoneId zone = ZoneId.systemDefault();

    @Override
    public String doLayout(ILoggingEvent event) {
      LocalTime time = LocalTime.ofInstant(Instant.ofEpochMilli(event.getTimeStamp()), zone);
      StringBuilder line = new StringBuilder(128);
      digits(line, time.getHour(), 2).append(':');
      digits(line, time.getMinute(), 2).append(':');
      digits(line, time.getSecond(), 2).append('.');
      digits(line, time.getNano() / 1_000_000, 3).append(' ');
      String level = event.getLevel().toString();
      line.append(level);
      for (int i = level.length(); i < 5; i++) {
        line.append(' ');
      }
      String logger = event.getLoggerName();
      line.append(' ')
          .append(logger, logger.lastIndexOf('.') + 1, logger.length())
          .append(" - ")
          .append(event.getFormattedMessage())
          .append(CoreConstants.LINE_SEPARATOR);
      IThrowableProxy thrown = event.getThrowableProxy();
      if (thrown != null) {
        line.append(ThrowableProxyUtil.asString(thrown));
      }
      return line.toString();
    }

    private static StringBuilder digits(StringBuilder line, int value, int width) {
      String text = Integer.toString(value);
      for (int i = text.length(); i < width; i++) {
        line.append('0');
      }
      return line.append(text);
    }
  }
}
