/**
 * The loopback blocks the bench's scenarios and the demo rehearse on: each its own /24, so a scenario's
 * measurements (connections, CPU) are its own and the quick bench may follow the demo while its rehearsal
 * still stops. The hand-started rehearsal keeps DEFAULT_LOOPBACK_BLOCK.
 */
import type { LoopbackBlock } from '../rehearsal/loopback-blocks';

export const BENCH_BLOCKS = {
  readOnlyEndpoint: { block: '127.0.40', user: 'bench read_only_endpoint', why: 'measures connections and CPU on its own replicas' },
  readerAddedHaproxy: { block: '127.0.41', user: 'bench reader_added (HAProxy run)', why: 'adds a replica while HAProxy balances' },
  readerAddedPooler: { block: '127.0.42', user: 'bench reader_added (PgBouncer run)', why: 'adds a replica while the read-only endpoint pools' },
  connectOverhead: { block: '127.0.43', user: 'bench connect_overhead', why: 'counts connection setups on its own writer' },
  readWriteSplit: { block: '127.0.44', user: 'bench read_write_split', why: 'compares pgpool-II with the endpoints under load' },
  transactionPooling: { block: '127.0.46', user: 'bench transaction_pooling', why: 'counts the server connections of prepared statements on its own replica' },
  pgbouncerEngine: { block: '127.0.53', user: 'bench pgbouncer_engine', why: 'boots the PgBouncer engine\'s hosts in namespaces of its own, with their load balancer stand-in' },
  engines: { block: '127.0.54', user: 'bench engines', why: 'runs the same loads through the rehearsal\'s endpoints and through the PgBouncer engine\'s booted hosts, and fails its writer over' },
  demo: { block: '127.0.45', user: 'aurora-proxy-kit demo (make demo)', why: 'runs the Lambda handlers while the quick bench may follow on 127.0.40-44' },
} as const satisfies Record<string, LoopbackBlock>;
