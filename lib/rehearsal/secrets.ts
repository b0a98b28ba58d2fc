/**
 * The rehearsal's credentials: made fresh by every `up`, kept in the work dir's secrets file (0600) so
 * `status`, `down`, drills and the health checker can log in from other processes.
 */
import { readFileSync } from 'node:fs';
import { newConsumerLogins, type ConsumerLogin } from './consumer-roles';
import type { RehearsedDeployment } from './deployment';
import { newPassword, scramSha256Verifier } from './scram';
import { writeAtomic } from './state';

export interface Secrets {
  readonly database: string;
  readonly adminUser: string;
  readonly adminPassword: string;
  readonly appUser: string;
  readonly appPassword: string;
  /** SCRAM-SHA-256 verifier of appPassword, stored by the writer and by PgBouncer (absent in older state files). */
  readonly appPasswordVerifier?: string;
  readonly replicationUser: string;
  readonly replicationPassword: string;
  /**
   * The read-only endpoint's server login: a role granted pg_read_all_data and nothing else, so that
   * endpoint cannot write even through a pool that ends up on a writer. Clients still log in as themselves.
   */
  readonly readOnlyServerUser: string;
  readonly readOnlyServerPassword: string;
  /** The deployment's consumer users (rehearse up --from), passwords standing in for IAM tokens. */
  readonly consumerLogins?: ReadonlyArray<ConsumerLogin>;
}

const APP_DATABASE = 'kit';

/** The password of a rehearsed deployment's consumer user; undefined for a user that has no login. */
export function consumerPassword(secrets: Secrets, user: string): string | undefined {
  return secrets.consumerLogins?.find((l) => l.name === user)?.password;
}

/** Fresh credentials; a rehearsed deployment brings its database name and its consumers' users. */
export function newSecrets(deployment?: RehearsedDeployment): Secrets {
  const appPassword = newPassword();
  return {
    database: deployment?.database ?? APP_DATABASE,
    adminUser: 'kit_admin',
    adminPassword: newPassword(),
    appUser: 'kit_app',
    appPassword,
    // The writer and PgBouncer's auth file both store this verifier.
    appPasswordVerifier: scramSha256Verifier(appPassword),
    replicationUser: 'kit_replicator',
    replicationPassword: newPassword(),
    readOnlyServerUser: 'rehearsal_readonly',
    readOnlyServerPassword: newPassword(),
    ...(deployment !== undefined ? { consumerLogins: newConsumerLogins(deployment) } : {}),
  };
}

export function writeSecrets(path: string, secrets: Secrets): void {
  // 0600: the passwords of a throwaway rehearsal, but still nobody else's business.
  writeAtomic(path, `${JSON.stringify(secrets, null, 2)}\n`, 0o600);
}

export function readSecrets(path: string): Secrets {
  return JSON.parse(readFileSync(path, 'utf8')) as Secrets;
}
