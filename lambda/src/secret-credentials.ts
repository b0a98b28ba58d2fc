/**
 * Database credentials kept in Secrets Manager as `{"username", "password"}`: the master secret the
 * role bootstrap reads, and the consumer secrets of the PgBouncer engine (DB_AUTH=secret), read through
 * the runtime's SDK (secrets-manager-sdk.ts).
 */
import { secretsManagerSdk, type SecretsManagerSdk } from './secrets-manager-sdk';

export interface SecretCredentials {
  readonly username: string;
  readonly password: string;
}

/** The secret is missing its fields, or Secrets Manager refused it. */
export class SecretCredentialsError extends Error {
  override readonly name = 'SecretCredentialsError';
}

export type SecretReader = (secretArn: string) => Promise<string | undefined>;

let client: InstanceType<SecretsManagerSdk['SecretsManagerClient']> | undefined;
let sdk: SecretsManagerSdk | undefined;

/** GetSecretValue through the runtime's SDK; one client per container. */
const runtimeReader: SecretReader = async (secretArn) => {
  sdk ??= secretsManagerSdk();
  client ??= new sdk.SecretsManagerClient();
  return (await client.send(new sdk.GetSecretValueCommand({ SecretId: secretArn }))).SecretString;
};

let reader: SecretReader = runtimeReader;

/** Reads and checks a credentials secret. */
export async function readSecretCredentials(secretArn: string): Promise<SecretCredentials> {
  let text: string | undefined;
  try {
    text = await reader(secretArn);
  } catch (err) {
    throw new SecretCredentialsError(`cannot read secret ${secretArn}: ${(err as Error).message}`);
  }
  let secret: Partial<SecretCredentials>;
  try {
    secret = JSON.parse(text ?? '{}') as Partial<SecretCredentials>;
  } catch {
    throw new SecretCredentialsError(`secret ${secretArn} is not JSON {"username", "password"}`);
  }
  if (typeof secret.username !== 'string' || typeof secret.password !== 'string' || !secret.username || !secret.password) {
    throw new SecretCredentialsError(`secret ${secretArn} has no username and password`);
  }
  return { username: secret.username, password: secret.password };
}

/** Test hook: read secrets through `next` (undefined: the runtime's SDK again). */
export function setSecretReaderForTests(next: SecretReader | undefined): void {
  reader = next ?? runtimeReader;
}
