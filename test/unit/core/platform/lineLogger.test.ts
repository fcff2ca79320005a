import { describe, expect, it } from 'vitest';
import { lineLogger } from '../../../../src/core/platform/logger';

function logged(format: 'text' | 'json', verbose: boolean): string[] {
  const lines: string[] = [];
  const logger = lineLogger(format, (line) => lines.push(line), verbose);
  logger.debug('connected', { user: 'alice', port: 5432 });
  logger.warn('slow answer', { ms: 1200, ticket: undefined });
  logger.error('lost');
  return lines;
}

describe('lineLogger (the CLI and the guard write the same lines)', () => {
  it('writes text lines as [level] message key=value, the undefined fields left out', () => {
    expect(logged('text', true)).toEqual([
      '[debug] connected user=alice port=5432',
      '[warn] slow answer ms=1200',
      '[error] lost',
    ]);
  });

  it('writes one JSON object per line with time, level, msg and the fields', () => {
    const [debug, warn, error] = logged('json', true).map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(Object.keys(debug!)).toEqual(['time', 'level', 'msg', 'user', 'port']);
    expect(new Date(String(debug!.time)).toISOString()).toBe(debug!.time);
    expect(debug).toMatchObject({ level: 'debug', msg: 'connected', user: 'alice', port: 5432 });
    expect(Object.keys(warn!)).toEqual(['time', 'level', 'msg', 'ms']);
    expect(error).toMatchObject({ level: 'error', msg: 'lost' });
  });

  it('keeps trace, debug and info for --verbose', () => {
    expect(logged('text', false)).toEqual(['[warn] slow answer ms=1200', '[error] lost']);
    expect(logged('json', false)).toHaveLength(2);
  });
});
