package dev.box.cli;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.Configurator.ExecutionStatus;
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
}
