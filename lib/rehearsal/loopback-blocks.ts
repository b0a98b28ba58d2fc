/**
 * Which loopback /24 each rehearsal runs on. Every live rehearsal listens on its own block (the same
 * port on every address), so suites, bench scenarios and the demo can run side by side without
 * colliding; this table is the one place that hands blocks out. 127.0.0.x is left to system services
 * (a Debian postgres or pgbouncer) and to the Lambda suites' servers on free ports of 127.0.0.1.
 *
 * The Go rehearsal test asks `rehearse block terratest` for its block.
 */

export interface LoopbackBlock {
  /** First three octets, as RehearsalSettings.addressBlock takes them. */
  readonly block: string;
  /** What runs on it. */
  readonly user: string;
  /** Why it needs a block of its own. */
  readonly why: string;
}

export const LOOPBACK_BLOCKS = {
  default: { block: '127.0.10', user: '`rehearse up` and make rehearse-up without --address-block', why: 'the hand-started rehearsal in .rehearsal/' },
  configSuite: { block: '127.0.30', user: 'test/rehearsal/config.test.ts', why: 'refusals before start: it squats an endpoint address, so nothing else may use the block' },
  endpointsSuite: { block: '127.0.31', user: 'test/rehearsal/endpoints.test.ts', why: 'a live rehearsal whose replica it kills' },
  failoverSuite: { block: '127.0.32', user: 'test/rehearsal/failover.test.ts', why: 'a live rehearsal whose writer it kills' },
  addReplicaSuite: { block: '127.0.33', user: 'test/rehearsal/add-replica.test.ts', why: 'a live rehearsal that grows to a third replica (.5)' },
  poolersSuite: { block: '127.0.34', user: 'test/rehearsal/poolers.test.ts', why: 'a live rehearsal whose PgBouncer processes it kills under load' },
  readOnlyRoleSuite: { block: '127.0.35', user: 'test/rehearsal/read-only-role.test.ts', why: 'a live rehearsal with a replica promoted behind the health checker\'s back' },
  checkerKilledSuite: { block: '127.0.36', user: 'test/rehearsal/checker-killed.test.ts', why: 'a live rehearsal whose health checker, then writer, it kills' },
  hardeningSuite: { block: '127.0.37', user: 'test/rehearsal/hardening.test.ts', why: 'a live rehearsal whose TLS and sockets it inspects, then downs twice' },
  fromDeploymentSuite: { block: '127.0.48', user: 'test/rehearsal/from-deployment.test.ts', why: 'rehearsals started from the reference app\'s cdk.out and from the complete example\'s plan, in namespaces (198.18.48.0/24)' },
  namespacesSuite: { block: '127.0.47', user: 'test/rehearsal/namespaces.test.ts', why: "a live rehearsal with network 'namespaces' (198.18.47.0/24)" },
  networkSuite: { block: '127.0.38', user: 'test/rehearsal/network.test.ts', why: 'makes and removes the namespaces of 198.18.38.0/24, also after a setup it makes fail' },
  networkTlsSuite: { block: '127.0.39', user: 'test/rehearsal/network-tls.test.ts', why: 'serves RDS-Proxy-shaped certificates in the namespaces of 198.18.39.0/24' },
  hostAgentSuite: { block: '127.0.51', user: 'test/model/pgbouncer-host-agent.test.ts', why: 'a bootstrapped pooler host in namespaces (198.18.51.0/24) whose reader it stops and whose PgBouncer processes it kills under load' },
  bootstrapSuite: { block: '127.0.49', user: 'test/model/pgbouncer-bootstrap.test.ts', why: 'a rehearsal in namespaces (198.18.49.0/24) whose data namespace a bootstrapped pooler host joins' },
  benchReadOnlyEndpoint: { block: '127.0.40', user: 'bench read_only_endpoint', why: 'measures connections and CPU on its own replicas' },
  benchReaderAddedHaproxy: { block: '127.0.41', user: 'bench reader_added (HAProxy run)', why: 'adds a replica while HAProxy balances' },
  benchReaderAddedPooler: { block: '127.0.42', user: 'bench reader_added (PgBouncer run)', why: 'adds a replica while the read-only endpoint pools' },
  benchConnectOverhead: { block: '127.0.43', user: 'bench connect_overhead', why: 'counts connection setups on its own writer' },
  benchReadWriteSplit: { block: '127.0.44', user: 'bench read_write_split', why: 'compares pgpool-II with the endpoints under load' },
  benchTransactionPooling: { block: '127.0.46', user: 'bench transaction_pooling', why: 'counts the server connections of prepared statements on its own replica' },
  demo: { block: '127.0.45', user: 'aurora-proxy-kit demo (make demo)', why: 'runs the Lambda handlers while the quick bench may follow on 127.0.40-44' },
  poolerCertificateSuite: { block: '127.0.52', user: 'test/lambda/pooler-certificate-live.test.ts', why: 'a PgBouncer serving the kit CA\'s listener certificate to node-postgres clients' },
  terratest: { block: '127.0.50', user: 'test/terratest TestRehearsalDataPath', why: 'the rehearsal as a deploy target, possibly left up between stages' },
} as const satisfies Record<string, LoopbackBlock>;

export type LoopbackBlockUser = keyof typeof LOOPBACK_BLOCKS;

export function isLoopbackBlockUser(name: string): name is LoopbackBlockUser {
  return Object.prototype.hasOwnProperty.call(LOOPBACK_BLOCKS, name);
}
