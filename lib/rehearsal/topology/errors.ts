/**
 * The input (a cloud assembly or a plan) lacks what a topology needs, or is not what it claims to be.
 * Names the file, what is missing or wrong, and the fix; raised before anything starts.
 */
export class TopologyInputError extends Error {
  constructor(
    readonly file: string,
    readonly problem: string,
    readonly fix: string,
    /** How the problem relates to the file, when "<problem> in <file>" does not read right. */
    phrasing: (file: string, problem: string) => string = (f, p) => `${p} in ${f}`,
  ) {
    super(`${phrasing(file, problem)}: ${fix}`);
    this.name = 'TopologyInputError';
  }
}

/**
 * What `rehearse --from` says of a Terraform plan of the PgBouncer engine (an Auto Scaling group behind a VPC
 * endpoint service, no RDS Proxy): the hosts' user data is `templatefile` of values Terraform knows only after
 * apply (the cluster's endpoints, the secrets' ARNs), so the plan carries neither its text nor those values.
 */
export function pgBouncerEngineNotModelled(file: string): TopologyInputError {
  return new TopologyInputError(
    file,
    'a PgBouncer engine deployment (an Auto Scaling group behind a VPC endpoint service, no RDS Proxy)',
    'a plan leaves the hosts\' user data unknown until apply (templatefile of the cluster\'s endpoints and the secrets\' ARNs), so rehearse --from boots the engine from a cdk.out (npx cdk synth -c proxyEngine=pgbouncer); plans are rehearsed for the RDS Proxy modules (modules/examples/complete)',
  );
}
