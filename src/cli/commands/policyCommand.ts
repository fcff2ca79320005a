/**
 * `pg-agent policy init --admin KEY [--policy JSON] | enroll NAME --key PUBKEY [--roles R1,R2] | set --policy JSON
 * | show`: signed mode (SPEC §5 3a). `init` pins the admin key and the first signed policy in the database's own
 * opt-in pgagent schema, as a held write (ticket) a person approves and executes; `enroll` and `set` sign the
 * next version with the pinned admin key (its passphrase typed on the terminal) and write it.
 */
import { assertKeyName, keyPublicText, listKeys, loadKey } from '../../core/approvals/keyFiles';
import type { PinnedPolicy } from '../../core/approvals/pinnedPolicy';
import { currentPinned, initPolicySql, writeNextPolicy } from '../../core/approvals/policyAdmin';
import { keyFingerprint, parsePolicyJson, withApprover, withPolicy } from '../../core/approvals/policyDocument';
import { publicKeyFrom } from '../../core/approvals/decisionSignature';
import { AgentError } from '../../core/platform/errors';
import { runSql } from '../../core/sql/runSql';
import type { CliCommand, CommandContext } from '../command';
import { requesterOf } from '../decider';
import { EXIT } from '../exitCodes';
import { renderImpact } from '../../core/present/renderImpact';
import { cliSafety } from '../sqlInput';
import { ticketSummary } from '../../core/present/outputJson';

function option(context: CommandContext, name: string): string | undefined {
  const value = context.args.options[name];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** The caller's key that is the pinned admin key, opened with its passphrase. */
async function adminKeyFor(context: CommandContext, pinned: PinnedPolicy) {
  for (const name of await listKeys(context.io.env)) {
    const publicKey = await keyPublicText(context.io.env, name).catch(() => undefined);
    if (publicKey === pinned.adminKey) return loadKey(context.io.env, name, context.io.passphrase);
  }
  throw new AgentError(
    'APPROVAL_POLICY',
    `None of your keys is the admin key this database pins (${keyFingerprint(pinned.adminKey)}): only the admin signs a new policy version.`,
    "Run it as the admin, with the admin's key in $XDG_CONFIG_HOME/pg-agent/keys.",
  );
}

async function pinnedOrRefuse(context: CommandContext): Promise<PinnedPolicy> {
  const pinned = await currentPinned(await context.openDb());
  if (!pinned)
    throw new AgentError(
      'BAD_INPUT',
      'This database pins no signed policy.',
      'Pin one first: `pg-agent policy init --admin KEY` (a held write a person approves).',
    );
  return pinned;
}

function describe(pinned: PinnedPolicy): string {
  const approvers = pinned.rules.approvers
    .map((a) => `  ${a.name}${a.roles.length > 0 ? ` (${a.roles.join(', ')})` : ''}  ${a.publicKey}`)
    .join('\n');
  return `Signed policy version ${pinned.version} for database ${pinned.document.database}, signed ${pinned.document.signedAt}\nadmin key: ${keyFingerprint(pinned.adminKey)}\npolicy: ${JSON.stringify(pinned.rules.policy)}\napprovers:\n${approvers || '  (none enrolled yet)'}\n`;
}

function json(pinned: PinnedPolicy) {
  return {
    version: pinned.version,
    database: pinned.document.database,
    adminKey: pinned.adminKey,
    fingerprint: keyFingerprint(pinned.adminKey),
    approvers: pinned.rules.approvers,
    policy: pinned.rules.policy,
  };
}

export const policyCommand: CliCommand = {
  name: 'policy',
  summary: 'signed mode: pin an admin-signed approval policy in the database, enrol approvers',
  usage:
    'pg-agent policy init --admin KEY [--policy JSON] | enroll NAME --key PUBKEY [--roles R1,R2] | set --policy JSON | show [--json]',
  options: {
    admin: { type: 'string' },
    policy: { type: 'string' },
    key: { type: 'string' },
    roles: { type: 'string' },
    by: { type: 'string' },
  },
  optionsHelp: `  --admin KEY         (init) your key that becomes this database's admin key
  --policy JSON       the approval policy, e.g. '{"twoPersonAbove":"MEDIUM","rolesFor":{"CRITICAL":["dba"]}}'
  --key PUBKEY        (enroll) the approver's public key, as \`pg-agent keys new\` printed it
  --roles R1,R2       (enroll) the approver's roles`,
  description:
    'init: signs the first policy with the admin key (passphrase on the terminal) and holds, as a ticket, the SQL that\n' +
    'creates the pgagent schema, pins the admin key and stores the policy; approve and exec it like any write.\n' +
    'Once pinned, every execution on this database verifies the signed policy and counts only signed approvals by its\n' +
    'approvers (exit 4 otherwise). enroll/set: the next version, signed by the pinned admin key, written at once.',
  async run(context) {
    const { args, io } = context;
    const [action, name, ...extra] = args.positionals;
    if (extra.length > 0 || (action !== 'enroll' && name !== undefined))
      throw new AgentError('BAD_INPUT', `Unexpected arguments: ${[name, ...extra].join(' ')}.`);
    const policyText = option(context, 'policy');
    switch (action) {
      case 'init': {
        const adminName = option(context, 'admin');
        if (adminName === undefined)
          throw new AgentError(
            'BAD_INPUT',
            'policy init needs --admin KEY (the name of your key that becomes the admin key).',
            'Make one first: pg-agent keys new --name admin',
          );
        const policy = policyText !== undefined ? parsePolicyJson(policyText) : {};
        const db = await context.openDb();
        const admin = await loadKey(io.env, adminName, io.passphrase);
        const { sql, database } = await initPolicySql(db, admin.privateKey, policy);
        const outcome = await runSql(db, await context.openTicketStore(), {
          sql,
          connection: await context.connectionKey(),
          requestedBy: await requesterOf(context),
          settings: await cliSafety(context),
          logger: context.logger,
        });
        if (outcome.status !== 'held')
          throw new AgentError('INTERNAL', `The pinning SQL was not held for approval (${outcome.status}).`);
        if (args.flags.json) {
          io.stdout(`${JSON.stringify({ status: 'held', database, ticket: ticketSummary(outcome.ticket) })}\n`);
        } else {
          io.stdout(
            `${renderImpact(outcome.impact)}\n\nPinning database ${database} to the admin key ${admin.name} is held for approval: ticket ${outcome.ticket.id}.\n`,
          );
          io.stdout(
            `  approve: pg-agent approvals approve ${outcome.ticket.id}\n  run:     pg-agent exec --ticket ${outcome.ticket.id}\n`,
          );
        }
        return EXIT.held;
      }
      case 'enroll': {
        if (name === undefined)
          throw new AgentError(
            'BAD_INPUT',
            "policy enroll needs the approver's name.",
            'e.g. pg-agent policy enroll alice --key PUBKEY --roles dba',
          );
        assertKeyName(name);
        const publicKey = option(context, 'key');
        if (publicKey === undefined)
          throw new AgentError('BAD_INPUT', 'policy enroll needs --key PUBKEY (what `pg-agent keys new` printed).');
        try {
          publicKeyFrom(publicKey);
        } catch (error) {
          throw new AgentError(
            'BAD_INPUT',
            `--key ${publicKey.slice(0, 60)} is not an Ed25519 public key.`,
            'Copy the public key `pg-agent keys new` printed.',
            { cause: error },
          );
        }
        const roles = (option(context, 'roles') ?? '')
          .split(',')
          .map((r) => r.trim())
          .filter((r) => r !== '');
        const pinned = await pinnedOrRefuse(context);
        const admin = await adminKeyFor(context, pinned);
        const written = await writeNextPolicy(await context.openDb(), admin.privateKey, (current) =>
          withApprover(current, { name, publicKey, roles }, new Date()),
        );
        io.stdout(
          args.flags.json
            ? `${JSON.stringify(json(written))}\n`
            : `Enrolled ${name}${roles.length > 0 ? ` (${roles.join(', ')})` : ''}.\n${describe(written)}`,
        );
        return EXIT.ok;
      }
      case 'set': {
        if (policyText === undefined) throw new AgentError('BAD_INPUT', 'policy set needs --policy JSON.');
        const policy = parsePolicyJson(policyText);
        const pinned = await pinnedOrRefuse(context);
        const admin = await adminKeyFor(context, pinned);
        const written = await writeNextPolicy(await context.openDb(), admin.privateKey, (current) =>
          withPolicy(current, { ...policy, requireSignature: true }, new Date()),
        );
        io.stdout(args.flags.json ? `${JSON.stringify(json(written))}\n` : describe(written));
        return EXIT.ok;
      }
      case 'show':
      case undefined: {
        const pinned = await currentPinned(await context.openDb());
        if (!pinned)
          io.stdout(
            args.flags.json ? '{"pinned":false}\n' : 'No signed policy is pinned in this database (default mode).\n',
          );
        else io.stdout(args.flags.json ? `${JSON.stringify({ pinned: true, ...json(pinned) })}\n` : describe(pinned));
        return EXIT.ok;
      }
      default:
        throw new AgentError('BAD_INPUT', `Unknown policy action "${action}".`, 'Use init, enroll, set or show.');
    }
  },
};
