package dev.box.cli;

import java.util.List;
import java.util.stream.Collectors;

/** Turns the words after {@code box exec} into the one command string {@code /bin/sh -c} runs. */
final class ShellWords {
  private ShellWords() {}

  /**
   * One word is a shell command already ({@code box exec -- 'echo hi | wc -c'}); several words are
   * an argument vector, so each is quoted and {@code box exec -- echo 'a b'} prints {@code a b}.
   */
  static String join(List<String> words) {
    if (words.size() == 1) {
      return words.get(0);
    }
    return words.stream().map(ShellWords::quote).collect(Collectors.joining(" "));
  }

  /** The word in single quotes, each {@code '} in it written as {@code '\''}. */
  static String quote(String word) {
    return "'" + word.replace("'", "'\\''") + "'";
  }
}
