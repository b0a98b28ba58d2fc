/**
 * The AWS SDK for JavaScript v3 client of Secrets Manager that Lambda's Node.js runtimes include
 * ("Runtime-included SDK versions", Lambda developer guide, lambda-nodejs.html); not bundled, so the kit
 * adds no dependency. Loaded with require, not import(): the runtime's SDK is found through NODE_PATH,
 * which ES module resolution ignores. The consumers and the role bootstrap read credential secrets with it
 * (secret-credentials.ts), the listeners' certificate function reads and writes its secrets
 * (pooler-certificate.ts).
 */

const SECRETS_MANAGER_SDK = '@aws-sdk/client-secrets-manager';

/** The part of the SDK the kit calls. */
export interface SecretsManagerSdk {
  SecretsManagerClient: new (config?: { maxAttempts?: number }) => { send(command: unknown): Promise<{ SecretString?: string }> };
  GetSecretValueCommand: new (input: { SecretId: string }) => unknown;
  PutSecretValueCommand: new (input: { SecretId: string; SecretString: string }) => unknown;
}

/** The runtime's Secrets Manager SDK, loaded on first use (a test registers a stand-in under the same name). */
export function secretsManagerSdk(): SecretsManagerSdk {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- see SECRETS_MANAGER_SDK
  return require(SECRETS_MANAGER_SDK) as SecretsManagerSdk;
}
