/**
 * The guard's small fault guards that need no database: the unread-bytes bound, one-at-a-time decisions,
 * and the start-up timeout (the guard's own server on a loopback port, clients that never finish start-up).
 */
import { EventEmitter } from 'node:events';
import { mkdtempSync } from 'node:fs';
import net from 'node:net';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Db } from '../../../src/core/db/db';
import { silentLogger } from '../../../src/core/platform/logger';
import type { GuardContext } from '../../../src/guard/guardContext';
import { startGuard } from '../../../src/guard/guardServer';
import { GuardUsers } from '../../../src/guard/guardUsers';
import { oneAtATime } from '../../../src/guard/hold/keyedQueue';
import { boundUnreadBytes, MAX_MESSAGE_BYTES, MAX_STARTUP_BYTES } from '../../../src/guard/wire/messageBound';

function fakeSocket(): Socket & { paused: boolean } {
  const socket = Object.assign(new EventEmitter(), { paused: false, pause: () => ((socket.paused = true), socket) });
  return socket as unknown as Socket & { paused: boolean };
}

describe('the unread-bytes bound', () => {
  it('lets bytes through while messages end, and stops a client past the bound once', () => {
    const socket = fakeSocket();
    let started = false;
    const limits: number[] = [];
    const unread = boundUnreadBytes(
      socket,
      () => started,
      (limit) => limits.push(limit),
    );
    socket.emit('data', Buffer.alloc(MAX_STARTUP_BYTES));
    unread.handed();
    started = true;
    socket.emit('data', Buffer.alloc(MAX_MESSAGE_BYTES - 10));
    unread.handed();
    socket.emit('data', Buffer.alloc(MAX_MESSAGE_BYTES - 10));
    expect(limits).toEqual([]);
    socket.emit('data', Buffer.alloc(20));
    socket.emit('data', Buffer.alloc(20));
    expect(limits).toEqual([MAX_MESSAGE_BYTES]);
    expect(socket.paused).toBe(true);
  });

  it('bounds the bytes before start-up much lower', () => {
    const socket = fakeSocket();
    const limits: number[] = [];
    boundUnreadBytes(
      socket,
      () => false,
      (limit) => limits.push(limit),
    );
    socket.emit('data', Buffer.alloc(MAX_STARTUP_BYTES + 1));
    expect(limits).toEqual([MAX_STARTUP_BYTES]);
  });
});

describe('one at a time per key', () => {
  it('runs tasks of one key in turn (a failure does not stop the next), and other keys beside them', async () => {
    const order: string[] = [];
    const task =
      (name: string, fail = false) =>
      async () => {
        order.push(`${name} start`);
        await new Promise((resolve) => setTimeout(resolve, 5));
        order.push(`${name} end`);
        if (fail) throw new Error(name);
        return name;
      };
    const results = await Promise.allSettled([
      oneAtATime('a', task('a1', true)),
      oneAtATime('a', task('a2')),
      oneAtATime('b', task('b1')),
    ]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'fulfilled', 'fulfilled']);
    expect(order.indexOf('a2 start')).toBeGreaterThan(order.indexOf('a1 end'));
    expect(order.indexOf('b1 start')).toBeLessThan(order.indexOf('a1 end'));
  });
});

describe('the start-up timeout', () => {
  it('closes a client that sends nothing, or a start-up packet that never ends', async () => {
    // Nothing here reaches the database: these clients never get past start-up.
    const context = {
      upstream: { host: '127.0.0.1', port: 1, database: 'none', user: 'none' },
      logger: silentLogger,
    } as unknown as GuardContext;
    const users = GuardUsers.inWorkspace(mkdtempSync(join(tmpdir(), 'pgagent-guard-timeout-')));
    const guard = await startGuard({ context, db: {} as Db, users, host: '127.0.0.1', port: 0, startupTimeoutMs: 200 });
    const closedAfter = (bytes: Buffer) =>
      new Promise<boolean>((resolve) => {
        const socket = net.connect({ host: '127.0.0.1', port: guard.port }, () => socket.write(bytes));
        const timer = setTimeout(() => {
          socket.destroy();
          resolve(false);
        }, 10_000);
        socket.on('error', () => undefined);
        socket.on('close', () => {
          clearTimeout(timer);
          resolve(true);
        });
      });
    try {
      const huge = Buffer.from([0x7f, 0xff, 0xff, 0xf0, 0, 3, 0, 0]);
      const negative = Buffer.from([0xff, 0xff, 0xff, 0xff, 0, 3, 0, 0]);
      expect(await Promise.all([closedAfter(Buffer.alloc(0)), closedAfter(huge), closedAfter(negative)])).toEqual([
        true,
        true,
        true,
      ]);
    } finally {
      await guard.close();
    }
  }, 30_000);
});
