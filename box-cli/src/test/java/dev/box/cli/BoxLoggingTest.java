package dev.box.cli;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.PatternLayout;
import ch.qos.logback.classic.spi.Configurator.ExecutionStatus;
import ch.qos.logback.classic.spi.LoggingEvent;
import ch.qos.logback.core.ConsoleAppender;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;

/**
 * The CLI's logging as configured in code: INFO and above to stderr in the one pattern, Jetty and
 * Javalin at WARN, and logback told to look no further (no XML is read). This module's tests have
 * no configuration file of their own, so the configurator is what configured them too.
 */
class BoxLoggingTest {
  @Test
  void configuresStderrAtInfo_andQuietsTheHttpStack() {
    LoggerContext context = new LoggerContext();
    BoxLogging logging = new BoxLogging();
    logging.setContext(context);

    assertThat(logging.configure(context)).isEqualTo(ExecutionStatus.DO_NOT_INVOKE_NEXT_IF_ANY);

    ch.qos.logback.classic.Logger root = context.getLogger(Logger.ROOT_LOGGER_NAME);
    assertThat(root.getLevel()).isEqualTo(Level.INFO);
    assertThat(root.getAppender("STDERR"))
        .isInstanceOfSatisfying(
            ConsoleAppender.class,
            appender -> {
              assertThat(appender.getTarget()).isEqualTo("System.err");
              assertThat(appender.isStarted()).isTrue();
            });
    assertThat(context.getLogger("org.eclipse.jetty").getLevel()).isEqualTo(Level.WARN);
    assertThat(context.getLogger("io.javalin").getLevel()).isEqualTo(Level.WARN);
  }

  @Test
  void isTheConfigurationInUse() {
    LoggerContext context = (LoggerContext) org.slf4j.LoggerFactory.getILoggerFactory();
    assertThat(context.getLogger(Logger.ROOT_LOGGER_NAME).getAppender("STDERR")).isNotNull();
    assertThat(context.getLogger("org.eclipse.jetty").getLevel()).isEqualTo(Level.WARN);
  }

  @Test
  void writesEachLineAsThePatternWould_exceptionsIncluded() {
    LoggerContext context = new LoggerContext();
    PatternLayout pattern = new PatternLayout();
    pattern.setContext(context);
    pattern.setPattern("%d{HH:mm:ss.SSS} %-5level %logger{0} - %msg%n");
    pattern.start();
    BoxLogging.LineLayout lines = new BoxLogging.LineLayout();
    lines.setContext(context);
    lines.start();
    ch.qos.logback.classic.Logger logger = context.getLogger("dev.box.server.BoxServer$Inner");
    LoggingEvent plain =
        new LoggingEvent(
            "fqcn", logger, Level.WARN, "listening on {}:{}", null, new Object[] {"h", 5410});
    plain.setTimeStamp(1_764_000_000_007L);
    LoggingEvent failed =
        new LoggingEvent(
            "fqcn",
            logger,
            Level.ERROR,
            "failed",
            new IllegalStateException("outer", new RuntimeException("inner")),
            null);
    failed.setTimeStamp(1_764_000_012_345L);

    assertThat(lines.doLayout(plain))
        .isEqualTo(pattern.doLayout(plain))
        .contains(" WARN  BoxServer$Inner - listening on h:5410");
    assertThat(lines.doLayout(failed))
        .isEqualTo(pattern.doLayout(failed))
        .contains("Caused by: java.lang.RuntimeException: inner");
  }
}
