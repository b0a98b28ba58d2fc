/** The derived SCRAM verifiers live with the role bootstrap that sets them (lambda/src/scram-salt.ts); the model's files use them too. */
export { DERIVED_SCRAM_ITERATIONS, derivedScramVerifier, SCRAM_SALT_CONTEXT } from '../../lambda/src/scram-salt';
