/**
 * How a rollout of the PgBouncer engine's hosts waits for a host that works (docs/PGBOUNCER-ENGINE.md,
 * "Rollouts"). A new host counts only once both listeners serve through its health endpoint (the
 * load balancer's health paths answer 200); a host whose bootstrap fails says so and powers off.
 *
 * - CloudFormation: the Auto Scaling group has a CreationPolicy (a signal from every host, within
 *   FLEET_HOST_SIGNAL_TIMEOUT_SECONDS) and a rolling update that waits on each new host's signal
 *   (WaitOnResourceSignals, PauseTime = the signal timeout). The host calls SignalResource itself,
 *   SigV4-signed with its role's credentials (Debian has no cfn-signal): SUCCESS once both listeners
 *   serve, FAILURE when the bootstrap fails. A FAILURE, or no signal in time, fails the creation or the
 *   update at the first host, and CloudFormation rolls back.
 * - Terraform cannot take signals: the group waits for healthy capacity instead (wait_for_elb_capacity:
 *   that many hosts healthy in every target group, within wait_for_capacity_timeout), and the instance
 *   refresh waits the warm-up after each host; a failed bootstrap still powers its host off.
 */

/**
 * Seconds a new host's bootstrap waits for both listeners to serve once its units have started. The
 * health endpoint answers 200 once every process answers and every server accepts a connection (seconds
 * after start on a working host); a host still not serving by then is broken, or cannot reach Aurora.
 */
export const FLEET_HOST_SERVE_WAIT_SECONDS = 300;

/**
 * Seconds CloudFormation waits for each host's signal (the CreationPolicy's Timeout and the rolling
 * update's PauseTime, which is the signal timeout when WaitOnResourceSignals is set): the boot, the
 * install with the agent's retries, and the serve wait, with room to spare. Also what Terraform's
 * wait_for_capacity_timeout allows the whole group.
 */
export const FLEET_HOST_SIGNAL_TIMEOUT_SECONDS = 900;

/** The statuses SignalResource takes (CloudFormation API Reference, SignalResource). */
export type FleetHostSignal = 'SUCCESS' | 'FAILURE';

/**
 * What the hosts' role may call to signal: cloudformation:SignalResource, on the stack that holds the
 * group only (its stack id, `arn:<partition>:cloudformation:<region>:<account>:stack/<name>/<uuid>`;
 * Service Authorization Reference, "Actions, resources, and condition keys for AWS CloudFormation":
 * SignalResource takes the stack resource type).
 */
export const FLEET_SIGNAL_POLICY = {
  actions: ['cloudformation:SignalResource'],
  sources: [
    'https://docs.aws.amazon.com/AWSCloudFormation/latest/APIReference/API_SignalResource.html',
    'https://docs.aws.amazon.com/service-authorization/latest/reference/list_awscloudformation.html',
  ],
} as const;

/**
 * The sources of the rollout's CloudFormation attributes: CreationPolicy (ResourceSignal Count and
 * Timeout, an ISO 8601 duration of at most 12 hours) and UpdatePolicy's AutoScalingRollingUpdate
 * (WaitOnResourceSignals; PauseTime is then the time to wait for the signals; MinSuccessfulInstancesPercent
 * 100 by default, so one FAILURE stops the update), and the interface endpoint an isolated VPC needs for the
 * call (com.amazonaws.<region>.cloudformation).
 */
export const FLEET_ROLLOUT_SOURCES = [
  'https://docs.aws.amazon.com/AWSCloudFormation/latest/TemplateReference/aws-attribute-creationpolicy.html',
  'https://docs.aws.amazon.com/AWSCloudFormation/latest/TemplateReference/aws-attribute-updatepolicy.html',
  'https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/vpc-interface-endpoints.html',
] as const;

/** The interface endpoint service a host in an isolated VPC signals CloudFormation through. */
export const CLOUDFORMATION_ENDPOINT_SERVICE = 'cloudformation';

/**
 * Terraform's stand-in for the signals (registry.terraform.io hashicorp/aws, aws_autoscaling_group:
 * wait_for_elb_capacity "Setting this will cause Terraform to wait for exactly this number of healthy
 * instances from this Auto Scaling Group in all attached load balancers on both create and update
 * operations"; wait_for_capacity_timeout bounds the wait). Every host must be healthy in both target
 * groups, i.e. serve on both listeners, before an apply succeeds.
 */
export const TERRAFORM_CAPACITY_WAIT_SOURCE = 'https://registry.terraform.io/providers/hashicorp/aws/latest/docs/resources/autoscaling_group#waiting-for-capacity';

/** An ISO 8601 duration of whole minutes, as CloudFormation's Timeout and PauseTime take it. */
export function isoMinutes(seconds: number): string {
  if (!Number.isInteger(seconds / 60)) throw new Error(`${seconds} s is not a whole number of minutes`);
  return `PT${seconds / 60}M`;
}
