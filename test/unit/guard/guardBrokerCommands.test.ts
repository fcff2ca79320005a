/**
 * The guard's own commands (src/guard/brokerCommands.ts) are recognised only when the whole message is exactly one
 * of them by PostgreSQL's grammar; every other spelling is ordinary SQL, judged like any other.
 */
import { describe, expect, it } from 'vitest';
import { brokerCommandOf } from '../../../src/guard/brokerCommands';

describe("the guard's own commands", () => {
  it('are recognised by the grammar, however they are spelled', async () => {
    expect(await brokerCommandOf('SELECT * FROM pg_agent.tickets()')).toEqual({ kind: 'tickets' });
    expect(await brokerCommandOf('  select *\n from "pg_agent"."tickets"() ; -- list')).toEqual({ kind: 'tickets' });
    expect(await brokerCommandOf("SELECT * FROM PG_AGENT.ticket('tkt_a')")).toEqual({ kind: 'ticket', id: 'tkt_a' });
    expect(await brokerCommandOf("/* x */ SELECT pg_agent.decide('{\"a\":''b''}')")).toEqual({
      kind: 'decide',
      decision: '{"a":\'b\'}',
    });
    expect(await brokerCommandOf("SELECT pg_agent.decide(E'\\x41')")).toEqual({ kind: 'decide', decision: 'A' });
  });

  it('are not recognised inside anything else', async () => {
    for (const sql of [
      "SELECT 1; SELECT pg_agent.decide('x')",
      "SELECT pg_agent.decide('x'); SELECT 1",
      "WITH d AS (SELECT pg_agent.decide('x')) SELECT * FROM d",
      "SELECT pg_agent.decide('x'::text)",
      "SELECT pg_agent.decide('x', 'y')",
      'SELECT pg_agent.decide(NULL)',
      'SELECT pg_agent.decide(1)',
      "SELECT pg_agent.decide('x') FROM pg_class",
      "SELECT pg_agent.decide('x') AS d",
      "SELECT * FROM pg_agent.ticket('x') t",
      "SELECT * FROM pg_agent.ticket('x') WHERE true",
      "SELECT * FROM pg_agent.tickets('x')",
      "SELECT agent.decide('x')",
      "SELECT public.pg_agent_decide('x')",
      "SELECT pg_agent.decide('x' || 'y')",
      "INSERT INTO t SELECT pg_agent.decide('x')",
      "EXPLAIN SELECT pg_agent.decide('x')",
      "SELECT pg_agent.decide('x'",
    ]) {
      expect(await brokerCommandOf(sql), sql).toBeUndefined();
    }
  });
});
