/**
 * Words the constructs, the Terraform generator and the rehearsal share with the Lambda consumers. Their
 * one home is the consumers' environment contract (lambda/src/environment.ts), which depends on nothing
 * so the consumers bundle on their own; the model re-exports them.
 */
export {
  CONNECTION_MODES,
  ENDPOINT_ROLES,
  POSTGRES_PORT,
  type ConnectionMode,
  type EndpointRole,
} from '../../lambda/src/environment';
