#!/usr/bin/env node
import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { ReferenceDeployment } from '../lib/reference-deployment';
import { readDeploymentContext } from '../lib/app-context';

/**
 * The reference deployment. Settings come from CDK context, e.g.
 *   npx cdk synth -c instanceClass=db.r6gd.2xlarge -c readers=3 -c engineVersion=17.9
 * It needs no context lookups, so it synthesizes offline.
 */
const app = new App();
const settings = readDeploymentContext(app);
new ReferenceDeployment(app, settings.stackName, {
  ...settings,
  description: 'aurora-proxy-kit reference deployment: Aurora PostgreSQL Optimized Reads, RDS Proxy with cross-VPC endpoints, Lambda consumers, dashboard',
});
Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
