/**
 * The password of an IAM profile: a token from the provider's SDK, cached and made again a few minutes
 * before it expires, so every new pool connection logs in with a valid one. A missing SDK, missing
 * credentials or a token that is already expired are errors naming the provider and what to do.
 */
import { AgentError } from '../../platform/errors';
import type { IamAuth } from './iamConfig';
import { AZURE_POSTGRES_SCOPE, IAM_PACKAGES, describeIam } from './iamConfig';

/** Loads an optional package by name (dynamic import); tests give their own stand-in. */
export type ModuleLoader = (name: string) => Promise<unknown>;

export interface IamTokenDeps {
  loadModule?: ModuleLoader;
  now?: () => number;
}

interface Token {
  value: string;
  expiresAt: number;
}

/** AWS says an RDS IAM token is valid for 15 minutes from signing. */
const AWS_TOKEN_LIFETIME_MS = 15 * 60_000;
/** A token is made again when less than this is left. */
const REFRESH_MARGIN_MS = 3 * 60_000;

const importModule: ModuleLoader = (name) => import(/* @vite-ignore */ name) as Promise<unknown>;

export interface IamTarget {
  host: string;
  port: number;
  user: string;
}

/** A function `pg` calls for each new connection's password. */
export function iamPasswordSource(iam: IamAuth, target: IamTarget, deps: IamTokenDeps = {}): () => Promise<string> {
  const now = deps.now ?? Date.now;
  const load = deps.loadModule ?? importModule;
  let cached: Token | undefined;
  let pending: Promise<Token> | undefined;
  return async () => {
    if (cached && cached.expiresAt - now() > REFRESH_MARGIN_MS) return cached.value;
    pending ??= makeToken(iam, target, load, now).finally(() => {
      pending = undefined;
    });
    const token = await pending;
    if (token.expiresAt <= now()) {
      throw new AgentError(
        'DB_TOKEN_FAILED',
        `The ${describeIam(iam)} token for "${target.user}" expired at ${new Date(token.expiresAt).toISOString()}, before it could be used.`,
        "Check this machine's clock, and sign in again (aws sso login / az login) if your cloud session has ended.",
      );
    }
    cached = token;
    return token.value;
  };
}

async function makeToken(iam: IamAuth, target: IamTarget, load: ModuleLoader, now: () => number): Promise<Token> {
  const module = await loadOptional(iam, load);
  try {
    if (iam.provider === 'aws-rds') {
      const { Signer } = module as {
        Signer: new (options: Record<string, unknown>) => { getAuthToken(): Promise<string> };
      };
      const signedAt = now();
      const signer = new Signer({
        hostname: target.host,
        port: target.port,
        username: target.user,
        region: iam.region,
        ...(iam.awsProfile ? { profile: iam.awsProfile } : {}),
      });
      return { value: await signer.getAuthToken(), expiresAt: signedAt + AWS_TOKEN_LIFETIME_MS };
    }
    const { DefaultAzureCredential } = module as {
      DefaultAzureCredential: new () => {
        getToken(scope: string): Promise<{ token: string; expiresOnTimestamp: number } | null>;
      };
    };
    const token = await new DefaultAzureCredential().getToken(iam.scope ?? AZURE_POSTGRES_SCOPE);
    if (!token) throw new Error('no token was returned');
    return { value: token.token, expiresAt: token.expiresOnTimestamp };
  } catch (error) {
    if (error instanceof AgentError) throw error;
    throw new AgentError(
      'DB_TOKEN_FAILED',
      `Could not make the ${describeIam(iam)} token for "${target.user}": ${error instanceof Error ? error.message : String(error)}.`,
      iam.provider === 'aws-rds'
        ? 'Check your AWS credentials (aws sts get-caller-identity) and the region.'
        : 'Sign in with az login (or set the AZURE_* variables of a service principal).',
      { cause: error },
    );
  }
}

async function loadOptional(iam: IamAuth, load: ModuleLoader): Promise<unknown> {
  const name = IAM_PACKAGES[iam.provider];
  try {
    return await load(name);
  } catch (error) {
    throw new AgentError(
      'DB_TOKEN_FAILED',
      `${describeIam(iam)} needs the package ${name}, which is not installed (it is optional, and only this kind of login uses it).`,
      `Install it where pg-agent is installed: npm install -g ${name} (or npm install ${name} beside it).`,
      { cause: error },
    );
  }
}
