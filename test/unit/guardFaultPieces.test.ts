/** The guard's small fault guards that need no server: the unread-bytes bound and one-at-a-time decisions. */
import { EventEmitter } from 'node:events';
import type { Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { oneAtATime } from '../../src/guard/keyedQueue';
import { boundUnreadBytes, MAX_MESSAGE_BYTES, MAX_STARTUP_BYTES } from '../../src/guard/wire/messageBound';

function fakeSocket(): Socket & { paused: boolean } {
  const socket = Object.assign(new EventEmitter(), { paused: false, pause: () => ((socket.paused = true), socket) });
  return socket as unknown as Socket & { paused: boolean };
}

describe('the unread-bytes bound', () => {
  it('lets bytes through while messages end, and stops a client past the bound once', () => {
    const socket = fakeSocket();
    let started = false;
    const limits: number[] = [];
    const unread = boundUnreadBytes(socket, () => started, (limit) => limits.push(limit));
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
    boundUnreadBytes(socket, () => false, (limit) => limits.push(limit));
    socket.emit('data', Buffer.alloc(MAX_STARTUP_BYTES + 1));
    expect(limits).toEqual([MAX_STARTUP_BYTES]);
  });
});

describe('one at a time per key', () => {
  it('runs tasks of one key in turn (a failure does not stop the next), and other keys beside them', async () => {
    const order: string[] = [];
    const task = (name: string, fail = false) => async () => {
      order.push(`${name} start`);
      await new Promise((resolve) => setTimeout(resolve, 5));
      order.push(`${name} end`);
      if (fail) throw new Error(name);
      return name;
    };
    const results = await Promise.allSettled([oneAtATime('a', task('a1', true)), oneAtATime('a', task('a2')), oneAtATime('b', task('b1'))]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'fulfilled', 'fulfilled']);
    expect(order.indexOf('a2 start')).toBeGreaterThan(order.indexOf('a1 end'));
    expect(order.indexOf('b1 start')).toBeLessThan(order.indexOf('a1 end'));
  });
});
