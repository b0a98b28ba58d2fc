#!/usr/bin/env node
import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { ContextError, readDeploymentContext } from '../lib/reference-app/app-context';
import { ReferenceDeployment } from '../lib/reference-app/reference-deployment';
import { KitValidationError } from '../lib/private/validation';

/**
 * The reference deployment. Settings come from CDK context, e.g.
 *   npx cdk synth -c instanceClass=db.r6gd.2xlarge -c readers=3 -c engineVersion=17.9
 * It needs no context lookups, so it synthesizes offline.
 */
try {
  const app = new App();
  const settings = readDeploymentContext(app);
  new ReferenceDeployment(app, settings.stackName, {
    ...settings,
    description:
      'aurora-proxy-kit reference deployment: Aurora PostgreSQL Optimized Reads, RDS Proxy with cross-VPC endpoints, Lambda consumers, dashboard',
  });
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
} catch (err) {
  // Configuration mistakes get their message alone, not a stack trace.
  if (err instanceof KitValidationError || err instanceof ContextError) {
    process.stderr.write(`Error: ${err.message}\n`);
    process.exit(1);
  }
  throw err;
}
