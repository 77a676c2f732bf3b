package dev.box.agenthost;

import java.util.LinkedHashMap;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * What an agent asks to run: a command, its exec settings and the sandbox it asked for. A null
 * setting is one the agent left out, which the {@linkplain ProfileRules profile} fills; a profile's
 * locked fields replace what the agent chose.
 *
 * @param command the shell command, run under {@code /bin/sh -c}
 * @param workdir the absolute directory inside the sandbox, or null for the mount path
 * @param timeoutSec the exec's timeout in seconds, clamped to the profile's maximum
 * @param env environment variables for the command
 * @param sandbox the sandbox's settings; a null host path is the agent host's workspace
 */
public record ExecRequest(
    String command,
    @Nullable String workdir,
    @Nullable Integer timeoutSec,
    Map<String, String> env,
    SandboxSettings sandbox) {

  /** Copies {@code env}. */
  public ExecRequest {
    env = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(env));
  }

  /** A request for {@code command} that leaves every setting to the profile. */
  public static ExecRequest of(String command) {
    return builder(command).build();
  }

  /** A builder of a request for {@code command}. */
  public static Builder builder(String command) {
    return new Builder(command);
  }

  /** A builder holding this request's values. */
  public Builder toBuilder() {
    return new Builder(command).workdir(workdir).timeoutSec(timeoutSec).env(env).sandbox(sandbox);
  }

  /** Builds an {@link ExecRequest}; every setting starts absent. */
  public static final class Builder {
    private String command;
    private @Nullable String workdir;
    private @Nullable Integer timeoutSec;
    private Map<String, String> env = new LinkedHashMap<>();
    private SandboxSettings sandbox = SandboxSettings.NONE;

    private Builder(String command) {
      this.command = command;
    }

    /** Sets the command. */
    public Builder command(String value) {
      command = value;
      return this;
    }

    /** Sets the working directory. */
    public Builder workdir(@Nullable String value) {
      workdir = value;
      return this;
    }

    /** Sets the timeout in seconds. */
    public Builder timeoutSec(@Nullable Integer value) {
      timeoutSec = value;
      return this;
    }

    /** Adds an environment variable. */
    public Builder env(String key, String value) {
      env.put(key, value);
      return this;
    }

    /** Replaces the environment variables. */
    public Builder env(Map<String, String> value) {
      env = new LinkedHashMap<>(value);
      return this;
    }

    /** Sets the sandbox's settings. */
    public Builder sandbox(SandboxSettings value) {
      sandbox = value;
      return this;
    }

    /** The request. */
    public ExecRequest build() {
      return new ExecRequest(command, workdir, timeoutSec, env, sandbox);
    }
  }
}
