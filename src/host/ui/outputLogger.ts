/** The core Logger on VS Code's LogOutputChannel (levels, timestamps and "Set Log Level" for free). */
import type * as vscode from 'vscode';
import type { Logger } from '../../core/platform/logger';
import { formatLogLine } from '../../core/platform/logger';

export function outputLogger(channel: vscode.LogOutputChannel): Logger {
  return {
    trace: (message, fields) => channel.trace(formatLogLine(message, fields)),
    debug: (message, fields) => channel.debug(formatLogLine(message, fields)),
    info: (message, fields) => channel.info(formatLogLine(message, fields)),
    warn: (message, fields) => channel.warn(formatLogLine(message, fields)),
    error: (message, fields) => channel.error(formatLogLine(message, fields)),
  };
}
