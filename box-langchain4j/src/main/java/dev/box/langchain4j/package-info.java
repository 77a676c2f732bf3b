/**
 * LangChain4j on Box: {@link dev.box.langchain4j.BoxTools}, tools a model calls to run commands and
 * read and write files in a sandbox, and {@link dev.box.langchain4j.BoxCodeExecutionEngine}, a
 * {@code CodeExecutionEngine} that runs code in one; both through the agent host.
 */
@NullMarked
package dev.box.langchain4j;

import org.jspecify.annotations.NullMarked;
