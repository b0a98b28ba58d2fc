/**
 * A PgBouncer engine fleet's deploy-time values (what CDK's Fn::Sub variables and Terraform's templatefile vars
 * hold), and the model's own rendering of its files with them substituted: the reference the host's layout
 * (host/apk_host.py configure) is compared with.
 */
import { sessionListenersValue, substitutePlaceholders } from '../../lib/model/pgbouncer-bootstrap';
import { DEFAULT_SESSION_MAX_CONNECTIONS_PERCENT, FLEET_PLACEHOLDERS, type PoolerFleetSpec } from '../../lib/model/pgbouncer-fleet';
import { renderFleetFiles } from '../../lib/model/pgbouncer-fleet-files';

const placeholderName = (p: string): string => p.slice(2, -1);

export interface FleetHosts {
  readonly cluster: string;
  readonly writer: string;
  readonly readers: ReadonlyArray<string>;
  readonly database: string;
  readonly port: string;
  readonly serverUser: string;
}

export function fleetValues(spec: PoolerFleetSpec, hosts: FleetHosts): Record<string, string> {
  return {
    ClusterEndpoint: hosts.cluster,
    ReaderEndpoints: hosts.readers.join(' '),
    WriterInstanceEndpoint: hosts.writer,
    DatabaseName: hosts.database,
    ServerPort: hosts.port,
    ServerUser: hosts.serverUser,
    Hosts: String(spec.hosts),
    Vcpus: String(spec.vcpusPerHost),
    MaxConnections: String(spec.maxConnections),
    MaxConnectionsPercent: String(spec.pool.maxConnectionsPercent),
    MaxIdleConnectionsPercent: String(spec.pool.maxIdleConnectionsPercent),
    BorrowTimeoutSeconds: String(spec.pool.connectionBorrowTimeoutSeconds),
    MaxClientConnections: String(spec.maxClientConnections ?? 1000),
    TcpIdleTimeoutSeconds: String(spec.tcpIdleTimeoutSeconds),
    PackagesBucket: 'kit-packages',
    PackagesKey: 'pooler/debian-13-arm64.tar',
    ServerSecretArn: 'arn:aws:secretsmanager:us-east-1:111122223333:secret:server',
    ConsumerSecretArns: 'arn:aws:secretsmanager:us-east-1:111122223333:secret:consumer',
    TlsSecretArn: 'arn:aws:secretsmanager:us-east-1:111122223333:secret:tls',
    FleetName: 'kit-stack/Pooler',
    SignalStack: '',
    SignalResource: '',
    SignalRegion: '',
    SessionListeners: sessionListenersValue(spec.sessionRoles ?? []),
    SessionMaxConnectionsPercent: String(spec.sessionMaxConnectionsPercent ?? DEFAULT_SESSION_MAX_CONNECTIONS_PERCENT),
  };
}

/** The model's own rendering of the fleet (the reference) for a host (root /), with the same values substituted. */
export function referenceFiles(spec: PoolerFleetSpec, values: Readonly<Record<string, string>>): Map<string, string> {
  const readers = values.ReaderEndpoints!.split(' ');
  const oracle: Record<string, string> = { ...values, ...Object.fromEntries(readers.map((r, i) => [placeholderName(FLEET_PLACEHOLDERS.readerEndpoint(i + 1)), r])) };
  return new Map([...renderFleetFiles(spec)].map(([path, text]) => [path, substitutePlaceholders(text, oracle)]));
}
