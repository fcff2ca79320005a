/**
 * The opt-in `pgagent` schema of a database in signed mode (SPEC §5 3a, 6): the pinned admin key
 * (policy_pin), the signed policy versions (policy) and the execution ledger (executions). It is created by
 * `pg-agent policy init`, as a held write a person approves like any other, never through a side door.
 *
 * The triggers refuse a pin that goes backwards, a policy row that changes and a ledger row that disappears,
 * so no pg-agent path and no careless hand can undo them; a role that owns the schema or is a superuser can
 * still drop them. What protects the schema from an agent holding that credential is not here: that is the
 * broker's job (`pg-agent guard`, SPEC §5 8).
 */
import type { SignedPolicy } from './policyDocument';
import { keyFingerprint } from './policyDocument';

export const PGAGENT_SCHEMA = 'pgagent';

function literal(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
}

/** The SQL `policy init` holds for approval: schema, tables, guards, the pin and the first signed policy. */
export function initSchemaSql(adminKey: string, first: SignedPolicy): string {
  return `CREATE SCHEMA pgagent;
CREATE TABLE pgagent.policy_pin (
  only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
  admin_key text NOT NULL,
  fingerprint text NOT NULL,
  version integer NOT NULL CHECK (version >= 1),
  pinned_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE pgagent.policy (
  version integer PRIMARY KEY CHECK (version >= 1),
  document text NOT NULL,
  signature text NOT NULL,
  written_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE pgagent.executions (
  ticket_id text PRIMARY KEY,
  sql_hash text NOT NULL,
  executed_at timestamptz NOT NULL DEFAULT now(),
  xid text,
  by text NOT NULL,
  status text NOT NULL DEFAULT 'done' CHECK (status IN ('running', 'done', 'failed'))
);
CREATE FUNCTION pgagent.only_forward() RETURNS trigger LANGUAGE plpgsql AS $pgagent$
BEGIN
  IF TG_OP = 'DELETE' OR TG_OP = 'TRUNCATE' THEN
    RAISE EXCEPTION 'pgagent.%: rows are never removed (signed mode)', TG_TABLE_NAME;
  END IF;
  -- Nested, not AND-ed: a record field is looked up only on the table that has it.
  IF TG_TABLE_NAME = 'policy_pin' THEN
    IF NEW.version <= OLD.version OR NEW.admin_key <> OLD.admin_key THEN
      RAISE EXCEPTION 'pgagent.policy_pin: the pinned version only goes up and the admin key never changes';
    END IF;
  ELSIF TG_TABLE_NAME = 'policy' THEN
    RAISE EXCEPTION 'pgagent.policy: a signed version is never changed; sign a new one';
  ELSIF TG_TABLE_NAME = 'executions' THEN
    IF OLD.status <> 'running' OR NEW.ticket_id <> OLD.ticket_id OR NEW.sql_hash <> OLD.sql_hash THEN
      RAISE EXCEPTION 'pgagent.executions: only a running execution is finished';
    END IF;
  END IF;
  RETURN NEW;
END
$pgagent$;
CREATE TRIGGER only_forward BEFORE UPDATE OR DELETE ON pgagent.policy_pin FOR EACH ROW EXECUTE FUNCTION pgagent.only_forward();
CREATE TRIGGER only_forward BEFORE UPDATE OR DELETE ON pgagent.policy FOR EACH ROW EXECUTE FUNCTION pgagent.only_forward();
CREATE TRIGGER only_forward BEFORE UPDATE OR DELETE ON pgagent.executions FOR EACH ROW EXECUTE FUNCTION pgagent.only_forward();
CREATE TRIGGER no_truncate BEFORE TRUNCATE ON pgagent.policy_pin FOR EACH STATEMENT EXECUTE FUNCTION pgagent.only_forward();
CREATE TRIGGER no_truncate BEFORE TRUNCATE ON pgagent.policy FOR EACH STATEMENT EXECUTE FUNCTION pgagent.only_forward();
CREATE TRIGGER no_truncate BEFORE TRUNCATE ON pgagent.executions FOR EACH STATEMENT EXECUTE FUNCTION pgagent.only_forward();
REVOKE ALL ON SCHEMA pgagent FROM PUBLIC;
INSERT INTO pgagent.policy (version, document, signature) VALUES (${first.version}, ${literal(first.document)}, ${literal(first.signature)});
INSERT INTO pgagent.policy_pin (admin_key, fingerprint, version) VALUES (${literal(adminKey)}, ${literal(keyFingerprint(adminKey))}, ${first.version})`;
}

/** Which of the schema's tables exist (one catalog query; a database without the schema answers nulls). */
export const SCHEMA_PRESENCE_SQL =
  "SELECT to_regclass('pgagent.policy_pin') IS NOT NULL AS pinned, to_regclass('pgagent.executions') IS NOT NULL AS ledger";
