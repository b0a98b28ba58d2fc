/** A packages object that cannot be built as asked (pooler-packages.ts, ssm-agent.ts): the message says what to give. */
export class PoolerPackagesError extends Error {
  override readonly name = 'PoolerPackagesError';
}
