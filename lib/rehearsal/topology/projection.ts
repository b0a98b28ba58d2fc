/**
 * What two topologies of the same deployment must share whichever flavour they were read from: the
 * shape (instances, endpoints by role and VPC, consumers by endpoint) and the settings, with every name
 * replaced by what it stands for. Left out, because the flavours name things differently by design:
 * ids (CDK logical ids, Terraform addresses), the cluster, instance, proxy, endpoint and function names
 * (CDK generates them, the Terraform example derives them from var.name), VPC Name tags, the source,
 * the region (an environment-agnostic CDK stack has none; a plan has its provider's), the notes (they
 * say how each reader derived a fact), and the wording and counts of the not-reproducible entries (each
 * flavour names its own resource types): only their ids are kept.
 */
import type { DeployedTopology, EnvValue, ProxyEndpointTopology } from './types';

export interface ComparableTopology {
  readonly cluster: { engine: string; engineVersion?: string; port: number; databaseName?: string; vpc?: string; writerClass: string; readerClasses: string[]; promotionTiers: Array<number | null> };
  readonly proxy: { engineFamily: string; vpc?: string; requireTls: boolean; authScheme: string; idleClientTimeoutSeconds?: number; pool: DeployedTopology['proxy']['pool'] };
  readonly endpoints: string[];
  readonly vpcs: string[];
  readonly consumers: Array<{ vpc?: string; endpoint?: string; environment: Record<string, string> }>;
  readonly notReproducible: string[];
}

export function comparableTopology(t: DeployedTopology): ComparableTopology {
  const cidrOf = (vpcId: string | undefined): string | undefined => (vpcId === undefined ? undefined : (t.vpcs.find((v) => v.id === vpcId)?.cidr ?? 'a VPC without a known CIDR'));
  const endpointWord = (e: ProxyEndpointTopology | undefined): string => (e === undefined ? 'an unknown endpoint' : `${e.isDefault ? 'default' : 'added'} ${e.role} endpoint in ${cidrOf(e.vpc) ?? 'an unknown VPC'}`);
  const endpointById = (id: string | undefined) => t.endpoints.find((e) => e.id === id);
  const envWord = (v: EnvValue): string => (v.kind === 'literal' ? v.value : v.kind === 'endpoint-host' ? `host of the ${endpointWord(endpointById(v.endpoint))}` : `unknown (${v.detail})`);
  const withDefined = <T extends object>(o: T): T => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
  const instances = [t.cluster.writer, ...t.cluster.readers];
  return {
    cluster: withDefined({
      engine: t.cluster.engine,
      engineVersion: t.cluster.engineVersion,
      port: t.cluster.port,
      databaseName: t.cluster.databaseName,
      vpc: cidrOf(t.cluster.vpc),
      writerClass: t.cluster.writer.instanceClass,
      readerClasses: t.cluster.readers.map((r) => r.instanceClass),
      promotionTiers: instances.map((i) => i.promotionTier ?? null),
    }),
    proxy: withDefined({
      engineFamily: t.proxy.engineFamily,
      vpc: cidrOf(t.proxy.vpc),
      requireTls: t.proxy.requireTls,
      authScheme: t.proxy.authScheme,
      idleClientTimeoutSeconds: t.proxy.idleClientTimeoutSeconds,
      pool: t.proxy.pool,
    }),
    endpoints: t.endpoints.map(endpointWord).sort(),
    vpcs: t.vpcs.map((v) => v.cidr ?? 'a VPC without a known CIDR').sort(),
    consumers: t.consumers
      .map((c) => withDefined({ vpc: cidrOf(c.vpc), endpoint: c.endpoint === undefined ? undefined : endpointWord(endpointById(c.endpoint)), environment: Object.fromEntries(Object.entries(c.environment).map(([k, v]) => [k, envWord(v)])) }))
      .sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b))),
    notReproducible: t.notReproducible.map((n) => n.id).sort(),
  };
}
