import { PROXY_RULES } from '../model/rules';
import { type Rule, custom, integerRange, runRules } from '../model/rule-table';
import { poolableConnections, poolSizing, RESERVED_CONNECTIONS } from '../model/sizing';
import type { RehearsalSettings } from './settings-types';

/**
 * Validation rules of the local rehearsal, rows of the same machinery as the model's tables
 * (lib/model/rule-table.ts): each names the settings it reads and returns a message naming the setting,
 * the bad value and the fix. They run before the rehearsal starts anything.
 */
/** The settings the rules read (each documented on RehearsalSettings). */
export type RehearsalRuleInput = Pick<RehearsalSettings, 'replicas' | 'addressBlock' | 'port' | 'maxConnections' | 'sizingMaxConnections' | 'pool' | 'maxClientConnections' | 'poolerProcesses' | 'poolerVcpus'>;

/** Aurora's limit, and the rehearsal's address plan has room for it. */
export const REHEARSAL_MAX_REPLICAS = 15;

/** PgBouncer processes per pool target: enough to show several pooler hosts, few enough for a laptop. */
export const REHEARSAL_MAX_POOLER_PROCESSES = 8;

export function parseAddressBlock(block: string): [number, number, number] | undefined {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(block);
  if (!m) return undefined;
  const octets = [Number(m[1]), Number(m[2]), Number(m[3])] as [number, number, number];
  return octets.every((o) => o <= 255) ? octets : undefined;
}

export const REHEARSAL_RULES: ReadonlyArray<Rule<RehearsalRuleInput>> = [
  integerRange({
    id: 'rehearsal-replicas',
    properties: ['replicas'],
    min: 1,
    max: REHEARSAL_MAX_REPLICAS,
    fix: 'the read-only endpoint needs at least one replica; Aurora allows up to 15 readers',
  }),
  custom({
    id: 'rehearsal-address-block',
    properties: ['addressBlock'],
    summary: 'three octets of a loopback block other than 127.0.0',
    check: (i, n) => {
      const octets = parseAddressBlock(i.addressBlock!);
      const name = n('addressBlock');
      if (octets === undefined) return `${name} ${i.addressBlock} is not three octets: use the form 127.0.10 (hosts become 127.0.10.2, 127.0.10.3, ...)`;
      if (octets[0] !== 127) return `${name} ${i.addressBlock} is outside 127.0.0.0/8: the rehearsal listens on loopback only; use e.g. 127.0.10`;
      // 127.0.0.x is where system services (a Debian postgres or pgbouncer) listen by default.
      if (octets[1] === 0 && octets[2] === 0) return `${name} ${i.addressBlock} is shared with system services on 127.0.0.1: use a block of its own, e.g. 127.0.10`;
      return undefined;
    },
  }),
  integerRange({
    id: 'rehearsal-port',
    properties: ['port'],
    min: 1024,
    max: 65534,
    fix: 'servers run as the postgres user, which cannot bind privileged ports; pgpool also uses port+1',
  }),
  integerRange({ id: 'rehearsal-max-connections', properties: ['maxConnections'], min: 5, max: 10000, fix: 'set the max_connections of the local instances' }),
  integerRange({ id: 'rehearsal-sizing-max-connections', properties: ['sizingMaxConnections'], min: 1, max: 5000, fix: 'Aurora caps max_connections at 5000' }),
  integerRange({
    id: 'rehearsal-max-client-connections',
    properties: ['maxClientConnections'],
    min: 1,
    max: 10000,
    fix: 'set how many client connections each PgBouncer endpoint accepts',
  }),
  integerRange({
    id: 'rehearsal-pooler-processes',
    properties: ['poolerProcesses'],
    min: 1,
    max: REHEARSAL_MAX_POOLER_PROCESSES,
    fix: 'set how many PgBouncer processes share each endpoint per pool target (2 shows a crashed one being covered)',
  }),
  integerRange({ id: 'rehearsal-pooler-vcpus', properties: ['poolerVcpus'], min: 1, max: 64, fix: 'set the vCPUs of the pooler host the CPU budget of the pooling tier is scaled from' }),
  custom({
    id: 'rehearsal-pool-split-over-processes',
    properties: ['poolerProcesses', 'pool', 'maxConnections'],
    summary: 'every PgBouncer process gets at least one server connection',
    check: (i) => {
      const processes = i.poolerProcesses;
      if (processes === undefined || !Number.isInteger(processes) || processes < 1 || runRules(PROXY_RULES, i.pool!).length > 0) return undefined; // reported by the rows above
      const sizedAgainst = i.sizingMaxConnections ?? i.maxConnections!;
      const { maxServerConnections } = poolSizing(sizedAgainst, i.pool!);
      if (maxServerConnections < 1 || processes <= maxServerConnections) return undefined;
      return `poolerProcesses ${processes} exceeds the pool size ${maxServerConnections} each target's processes split between them (PgBouncer reads a pool_size of 0 as unlimited): lower poolerProcesses to ${maxServerConnections} or raise maxConnectionsPercent`;
    },
  }),
  custom({
    id: 'rehearsal-pool-settings',
    properties: ['pool'],
    summary: 'the RDS Proxy pool rules',
    // The AWS proxy's own rules, so a setting the proxy would reject is rejected here too.
    check: (i) => {
      const messages = runRules(PROXY_RULES, i.pool!);
      return messages.length > 0 ? `pool: ${messages.join('; ')}` : undefined;
    },
  }),
  custom({
    id: 'rehearsal-pool-within-max-connections',
    properties: ['pool', 'maxConnections'],
    summary: 'the pool fits the replicas\' max_connections less the reserved connections, as on Aurora',
    check: (i) => {
      if (runRules(PROXY_RULES, i.pool!).length > 0) return undefined; // reported by rehearsal-pool-settings
      const sizedAgainst = i.sizingMaxConnections ?? i.maxConnections!;
      const { maxServerConnections } = poolSizing(sizedAgainst, i.pool!);
      if (maxServerConnections < 1) {
        return `pool size ${maxServerConnections} (maxConnectionsPercent ${i.pool!.maxConnectionsPercent} of max_connections ${sizedAgainst}, less the ${RESERVED_CONNECTIONS} connections reserved) leaves no server connection: raise maxConnectionsPercent, or maxConnections above ${RESERVED_CONNECTIONS}`;
      }
      // The local instances keep the same reserve as Aurora's (superuser slots, the checker's and an operator's sessions).
      const room = poolableConnections(i.maxConnections!);
      if (maxServerConnections > room) {
        const fitting = Math.floor((room * 100) / sizedAgainst);
        return `pool size ${maxServerConnections} (maxConnectionsPercent ${i.pool!.maxConnectionsPercent} of max_connections ${sizedAgainst}) exceeds the replicas' maxConnections ${i.maxConnections} less the ${RESERVED_CONNECTIONS} connections reserved: lower maxConnectionsPercent to ${fitting} or less, or raise maxConnections to ${maxServerConnections + RESERVED_CONNECTIONS}`;
      }
      return undefined;
    },
  }),
];
