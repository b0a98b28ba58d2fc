/**
 * What RDS Proxy does with each feature class the probes exercise, as AWS documents it. No RDS Proxy
 * runs here: this column is the documentation's, beside the measured ones. Aurora User Guide,
 * "Avoiding pinning an RDS Proxy" (rds-proxy-pinning), lists for PostgreSQL the interactions that pin a
 * client's session to its server connection (it then keeps every later transaction on that connection,
 * so the state survives); what it does not list is not claimed here.
 */
import type { CompatFeature } from './probes';

export type RdsProxyBehaviour = 'pins' | 'not documented';

export interface RdsProxyEntry {
  readonly behaviour: RdsProxyBehaviour;
  /** The documentation's words for the condition, or why nothing is claimed. */
  readonly note: string;
}

export const RDS_PROXY_PINNING_SOURCE = 'Aurora User Guide, "Avoiding pinning an RDS Proxy" (rds-proxy-pinning): https://docs.aws.amazon.com/AmazonRDS/latest/AuroraUserGuide/rds-proxy-pinning.html';

const pins = (note: string): RdsProxyEntry => ({ behaviour: 'pins', note });
const silent = (note: string): RdsProxyEntry => ({ behaviour: 'not documented', note });

export const RDS_PROXY_BEHAVIOUR: Readonly<Record<CompatFeature, RdsProxyEntry>> = {
  set: pins('"Using SET commands"'),
  startup: silent('startup parameters are not among the pinning conditions'),
  'prepared-sql': pins('"Using PREPARE, DISCARD, DEALLOCATE, or EXECUTE commands to manage prepared statements"'),
  'prepared-protocol': silent('protocol-level (Parse) statements are not among the pinning conditions'),
  'temp-table': pins('"Creating temporary sequences, tables, or views"'),
  'advisory-lock': pins('"Interacting with locks using functions such as pg_advisory_lock and pg_try_advisory_lock"'),
  'cursor-with-hold': pins('"Declaring cursors"'),
  sequence: pins('"Manipulating sequences using functions such as nextval and setval"'),
  'listen-notify': pins('"Listening on a notification channel"'),
  copy: silent('COPY is not among the pinning conditions'),
  cancel: silent('cancellation is not among the pinning conditions'),
  'lost-connection': silent('not among the pinning conditions'),
  authentication: silent('not among the pinning conditions'),
};
