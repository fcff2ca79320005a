import { describe, expect, it } from 'vitest';
import { iamPasswordSource } from '../../../../src/core/db/iam/iamToken';
import { rejectionOf } from '../../../support/agentErrors';

const target = { host: 'db.abc.eu-west-1.rds.amazonaws.com', port: 5432, user: 'app' };

/** A stand-in for @aws-sdk/rds-signer: records what it was asked to sign, returns numbered tokens. */
function fakeSigner() {
  const signed: Record<string, unknown>[] = [];
  const module = {
    Signer: class {
      constructor(private readonly options: Record<string, unknown>) {}
      getAuthToken(): Promise<string> {
        signed.push(this.options);
        return Promise.resolve(`token-${signed.length}`);
      }
    },
  };
  return {
    signed,
    load: (name: string) =>
      name === '@aws-sdk/rds-signer'
        ? Promise.resolve(module)
        : Promise.reject(new Error(`Cannot find module '${name}'`)),
  };
}

describe('IAM tokens', () => {
  it('signs for the host, port, user and region, reuses a fresh token and makes a new one before it expires', async () => {
    const signer = fakeSigner();
    let now = 1_000_000;
    const password = iamPasswordSource({ provider: 'aws-rds', region: 'eu-west-1', awsProfile: 'prod' }, target, {
      loadModule: signer.load,
      now: () => now,
    });
    expect(await password()).toBe('token-1');
    expect(signer.signed).toEqual([
      { hostname: target.host, port: 5432, username: 'app', region: 'eu-west-1', profile: 'prod' },
    ]);
    now += 11 * 60_000;
    expect(await password()).toBe('token-1');
    now += 2 * 60_000; // 13 minutes: less than 3 left of 15
    expect(await password()).toBe('token-2');
  });

  it('says which package to install when the optional SDK is missing', async () => {
    const error = await rejectionOf(() =>
      iamPasswordSource({ provider: 'azure' }, target, { loadModule: fakeSigner().load })(),
    );
    expect(error.code).toBe('DB_TOKEN_FAILED');
    expect(error.message).toContain('@azure/identity');
    expect(error.advice).toContain('npm install -g @azure/identity');
  });

  it('refuses a token that is already expired, and names the provider when the SDK fails', async () => {
    const expired = {
      DefaultAzureCredential: class {
        getToken() {
          return Promise.resolve({ token: 't', expiresOnTimestamp: 5_000 });
        }
      },
    };
    const error = await rejectionOf(() =>
      iamPasswordSource({ provider: 'azure' }, target, {
        loadModule: () => Promise.resolve(expired),
        now: () => 10_000,
      })(),
    );
    expect(error.code).toBe('DB_TOKEN_FAILED');
    expect(error.message).toContain('Azure Entra ID token for "app" expired at 1970-01-01T00:00:05.000Z');
    const failing = {
      DefaultAzureCredential: class {
        getToken(): Promise<never> {
          return Promise.reject(new Error('CredentialUnavailableError: run az login'));
        }
      },
    };
    const noCredentials = await rejectionOf(() =>
      iamPasswordSource({ provider: 'azure', scope: 'x' }, target, { loadModule: () => Promise.resolve(failing) })(),
    );
    expect(noCredentials.message).toContain('Could not make the Azure Entra ID token');
    expect(noCredentials.advice).toContain('az login');
  });
});
