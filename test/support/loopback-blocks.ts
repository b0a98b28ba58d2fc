/**
 * The loopback blocks the live suites and the Go rehearsal test run on, one each, so suites running in
 * parallel never collide; the product's blocks (the hand-started rehearsal's default, the bench's and the
 * demo's) are its own, and test/rehearsal/loopback-blocks.test.ts checks that no two of all of them meet.
 * 127.0.0.x is left to system services and to the Lambda suites' servers on free ports of 127.0.0.1.
 */
import type { LoopbackBlock } from '../../lib/rehearsal';

export const SUITE_BLOCKS = {
  configSuite: { block: '127.0.30', user: 'test/rehearsal/config.test.ts, test/integration/rehearsal/address-in-use.test.ts', why: 'refusals before start: it squats an endpoint address, so nothing else may use the block' },
  endpointsSuite: { block: '127.0.31', user: 'test/integration/rehearsal/endpoints.test.ts', why: 'a live rehearsal whose replica it kills' },
  failoverSuite: { block: '127.0.32', user: 'test/integration/rehearsal/failover.test.ts', why: 'a live rehearsal whose writer it kills' },
  addReplicaSuite: { block: '127.0.33', user: 'test/integration/rehearsal/add-replica.test.ts', why: 'a live rehearsal that grows to a third replica (.5)' },
  poolersSuite: { block: '127.0.34', user: 'test/integration/rehearsal/poolers.test.ts', why: 'a live rehearsal whose PgBouncer processes it kills under load' },
  readOnlyRoleSuite: { block: '127.0.35', user: 'test/integration/rehearsal/read-only-role.test.ts', why: 'a live rehearsal with a replica promoted behind the health checker\'s back' },
  checkerKilledSuite: { block: '127.0.36', user: 'test/integration/rehearsal/checker-killed.test.ts', why: 'a live rehearsal whose health checker, then writer, it kills' },
  hardeningSuite: { block: '127.0.37', user: 'test/integration/rehearsal/hardening.test.ts', why: 'a live rehearsal whose TLS and sockets it inspects, then downs twice' },
  fromDeploymentSuite: { block: '127.0.48', user: 'test/integration/rehearsal/from-deployment.test.ts', why: 'rehearsals started from the reference app\'s cdk.out and from the complete example\'s plan, in namespaces (198.18.48.0/24)' },
  namespacesSuite: { block: '127.0.47', user: 'test/integration/rehearsal/namespaces.test.ts', why: "a live rehearsal with network 'namespaces' (198.18.47.0/24)" },
  networkSuite: { block: '127.0.38', user: 'test/integration/rehearsal/network.test.ts', why: 'makes and removes the namespaces of 198.18.38.0/24, also after a setup it makes fail' },
  networkTlsSuite: { block: '127.0.39', user: 'test/integration/rehearsal/network-tls.test.ts', why: 'serves RDS-Proxy-shaped certificates in the namespaces of 198.18.39.0/24' },
  hostAgentSuite: { block: '127.0.51', user: 'test/integration/model/pgbouncer-host-agent.test.ts', why: 'a bootstrapped pooler host in namespaces (198.18.51.0/24) whose reader it stops and whose PgBouncer processes it kills under load' },
  bootstrapSuite: { block: '127.0.49', user: 'test/integration/model/pgbouncer-bootstrap.test.ts', why: 'a rehearsal in namespaces (198.18.49.0/24) whose data namespace a bootstrapped pooler host joins' },
  lambdaRieSuite: { block: '127.0.55', user: 'test/integration/rehearsal/lambda-rie.test.ts', why: "the reference app's consumer bundles under the Lambda runtime emulator, in namespaces (198.18.55.0/24)" },
  poolerCertificateSuite: { block: '127.0.52', user: 'test/integration/lambda/pooler-certificate-live.test.ts', why: 'a PgBouncer serving the kit CA\'s listener certificate to node-postgres clients' },
  scratchAppSuite: { block: '127.0.56', user: 'test/integration/package/scratch-app-rehearsal.test.ts', why: "the README's three-stack app, from the npm tarball, rehearsed from its cdk.out with RDS Proxy, in namespaces (198.18.56.0/24)" },
  scratchAppFleetSuite: { block: '127.0.57', user: 'test/integration/package/scratch-app-rehearsal.test.ts', why: "the same app with the PgBouncer engine, its hosts booted, in namespaces (198.18.57.0/24)" },
  // Written in the Go test too (rehearsalAddressBlock); the block plan's test holds the two together.
  terratest: { block: '127.0.50', user: 'test/terratest/rehearsal_test.go TestRehearsalDataPath', why: 'the rehearsal as a deploy target, possibly left up between stages' },
} as const satisfies Record<string, LoopbackBlock>;

export type SuiteBlockUser = keyof typeof SUITE_BLOCKS;
