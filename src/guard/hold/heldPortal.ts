/**
 * A held portal in the extended protocol: it was never bound upstream (binding plans, and planning can run
 * functions), but its statement was parsed there. Describe of the portal is answered with the statement's
 * own RowDescription, asked upstream (Describe 'S'), every column in text format: the rows an approved
 * execution returns are PostgreSQL's text. A client that asked for binary results without describing the
 * portal is refused before anything runs (it would read text as binary).
 */
import { serialize } from 'pg-protocol';
import type { Classification } from '../../core/sql/classification';
import type { CheckedSql } from '../../core/sql/reach/checkSql';
import type { BackendMessage, Field } from 'pg-protocol/dist/messages';
import { failedError, refusedError } from './heldMessages';
import type { ErrorFields } from '../wire/backendMessages';
import { noData } from '../wire/backendMessages';
import { rowDescription } from '../wire/rowMessages';

/** What the guard holds of a portal it did not bind upstream. */
export interface HeldPortal {
  kind: 'hold';
  sql: string;
  classification: Classification;
  /** The check of `sql` at Bind (its parse), carried to the impact and the approved run. */
  checked?: CheckedSql;
  /** Its statement's name upstream (where it was parsed). */
  statement: string;
  binary: boolean;
  /** The client described it: it was told the columns are text. */
  described?: boolean;
}

export type DescribeAnswer = { fields: Field[] } | { error: string };

/** The guard's own Describe 'S' in a client's upstream session: its answer is read here, never relayed. */
export class UpstreamDescribe {
  private capture: ((answer: DescribeAnswer) => void) | undefined;

  constructor(private readonly send: (bytes: Uint8Array) => void) {}

  /** Call once the upstream answered everything before (nothing else is in flight). */
  run(statement: string): Promise<DescribeAnswer> {
    return new Promise((resolve) => {
      this.capture = resolve;
      this.send(Buffer.concat([serialize.describe({ type: 'S', name: statement }), serialize.flush()]));
    });
  }

  /** The guard's Describe waits for its answer (its RowDescription must be decoded). */
  get busy(): boolean {
    return this.capture !== undefined;
  }

  /** True when these upstream messages were the answer of the guard's Describe. */
  take(messages: readonly BackendMessage[]): boolean {
    const capture = this.capture;
    if (!capture) return false;
    for (const m of messages as (BackendMessage & { fields?: Field[]; message?: string })[]) {
      const answer: DescribeAnswer | undefined =
        m.name === 'rowDescription'
          ? { fields: m.fields ?? [] }
          : m.name === 'noData'
            ? { fields: [] }
            : m.name === 'error'
              ? { error: m.message ?? 'error' }
              : undefined;
      if (answer) {
        this.capture = undefined;
        capture(answer);
        break;
      }
    }
    return true;
  }

  abandon(): void {
    this.capture?.({ error: 'the upstream session ended' });
    this.capture = undefined;
  }
}

/** The answer to Describe of a held portal (call once the upstream answered everything before). */
export async function describeHeldPortal(
  describes: UpstreamDescribe,
  portal: HeldPortal,
): Promise<Buffer | ErrorFields> {
  const described = await describes.run(portal.statement);
  if ('error' in described) return failedError(new Error(described.error));
  portal.described = true;
  return described.fields.length > 0 ? rowDescription(described.fields) : noData();
}

/** Before a held portal runs: why it may not (binary rows asked blind), or undefined. */
export async function heldPortalProblem(
  describes: UpstreamDescribe,
  portal: HeldPortal,
): Promise<ErrorFields | undefined> {
  if (!portal.binary || portal.described) return undefined;
  const described = await describes.run(portal.statement);
  if ('error' in described) return failedError(new Error(described.error));
  return described.fields.length > 0 ? BINARY_REFUSED : undefined;
}

/** Bind asked for at least one column in binary format (one code applies to all columns). */
export function asksBinary(resultFormats: readonly number[]): boolean {
  return resultFormats.some((code) => code !== 0);
}

export const BINARY_REFUSED: ErrorFields = refusedError(
  'not run: the guard returns the rows of a held statement in text format only, and this client asked for binary results without describing the portal',
  'Ask for text results (result format 0), or Describe the portal first: its RowDescription then says text.',
);
