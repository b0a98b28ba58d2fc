/**
 * Words the constructs, the Terraform generator and the rehearsal share. The Lambda consumers restate
 * the role and connection-mode lists in their environment contract (lambda/src/environment.ts), since
 * lambda/ depends on nothing of ours; test/model/vocabulary.test.ts keeps the two equal.
 */

/** The PostgreSQL port Aurora, RDS Proxy and the rehearsal's endpoints listen on. */
export const POSTGRES_PORT = 5432;

/** What a proxy endpoint's connections reach: the writer, or the readers. */
export const ENDPOINT_ROLES = ['READ_ONLY', 'READ_WRITE'] as const;
export type EndpointRole = (typeof ENDPOINT_ROLES)[number];

/**
 * How a consumer holds its database connection: `reuse` keeps one across invocations,
 * `per-invocation` opens one per call (the seeds' comparison).
 */
export const CONNECTION_MODES = ['reuse', 'per-invocation'] as const;
export type ConnectionMode = (typeof CONNECTION_MODES)[number];
