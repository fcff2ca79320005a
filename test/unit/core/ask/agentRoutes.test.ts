import { describe, expect, it } from 'vitest';
import { MAX_REPAIRS, routeAfterApproval, routeAfterValidation } from '../../../../src/core/ask/routes';
import type { AskStateValue } from '../../../../src/core/ask/state';
import { NO_USAGE } from '../../../../src/core/ask/state';
import type { Classification } from '../../../../src/core/sql/classification';

function state(overrides: Partial<AskStateValue>): AskStateValue {
  return { question: 'q', repairAttempts: 0, usage: NO_USAGE, ...overrides } as AskStateValue;
}

function parsed(decision: Classification['decision']): Classification {
  return { statements: [], class: decision === 'run' ? 'read' : 'write', decision, reasons: [] };
}

describe('routeAfterValidation', () => {
  it('routes by the parsed decision, whatever the model claimed', () => {
    expect(routeAfterValidation(state({ classification: parsed('run') }))).toBe('read');
    expect(
      routeAfterValidation(
        state({ classification: parsed('approve'), modelClaim: { operation: 'read', explanation: 'just a select' } }),
      ),
    ).toBe('write');
    expect(routeAfterValidation(state({ classification: parsed('refuse') }))).toBe('refused');
  });

  it('repairs an invalid statement at most twice, then fails', () => {
    const invalid = {
      validationError: { sqlState: '42703', message: 'column "nope" does not exist' },
    } as Partial<AskStateValue>;
    expect(routeAfterValidation(state({ ...invalid, repairAttempts: 0 }))).toBe('repair');
    expect(routeAfterValidation(state({ ...invalid, repairAttempts: MAX_REPAIRS - 1 }))).toBe('repair');
    expect(routeAfterValidation(state({ ...invalid, repairAttempts: MAX_REPAIRS }))).toBe('failed');
  });

  it('stops on an error and fails closed without a classification', () => {
    expect(
      routeAfterValidation(state({ error: { code: 'INTERNAL', message: 'x' }, classification: parsed('run') })),
    ).toBe('stop');
    expect(routeAfterValidation(state({}))).toBe('failed');
  });
});

describe('routeAfterApproval', () => {
  it('executes only on an explicit approval', () => {
    expect(routeAfterApproval(state({ decision: { approve: true, by: 'ana' } }))).toBe('execute');
    expect(routeAfterApproval(state({ decision: { approve: false, by: 'ana' } }))).toBe('stop');
    expect(routeAfterApproval(state({}))).toBe('stop');
    expect(
      routeAfterApproval(state({ decision: { approve: true, by: 'ana' }, error: { code: 'INTERNAL', message: 'x' } })),
    ).toBe('stop');
  });
});
