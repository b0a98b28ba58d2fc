import * as path from 'path';
import { moduleOfRule, terraformMessages } from '../../lib/terraform';
import { rejectionMessage } from '../helpers/vectors';
import { ROOT, TerraformDir, ensureLambdaZips } from './terraform-cli';

/**
 * `expect_failures` in terraform test proves which check fails, not its wording. Here the complete
 * example is planned with one bad input at a time, and the error must carry exactly the message the
 * CDK construct gives for the same input (the shared vector's message), with the module's variable
 * named where CDK names its prop: both come from the same row of lib/model.
 */
const complete = new TerraformDir(path.join(ROOT, 'modules', 'examples', 'complete'));

beforeAll(() => {
  ensureLambdaZips();
  complete.init();
});
afterAll(() => complete.dispose());

test.each([
  ['instance_class', 'db.r6g.xlarge', 'instance-class', { instanceClass: 'db.r6g.xlarge' }],
  ['instance_class', 'db.r6gd.large', 'instance-class', { instanceClass: 'db.r6gd.large' }],
  ['engine_version', '14.6', 'engine-version', { engineVersion: '14.6', instanceClass: 'db.r6gd.xlarge' }],
  ['engine_version', '13.9', 'engine-version', { engineVersion: '13.9', instanceClass: 'db.r6gd.xlarge' }],
  ['engine_version', '17.2', 'engine-version', { engineVersion: '17.2', instanceClass: 'db.r6gd.xlarge' }],
  ['max_connections_percent', '150', 'max-connections-percent', { maxConnectionsPercent: 150 }],
  ['readers', '16', 'readers', { readers: 16 }],
] as const)('%s = %s fails plan with the CDK construct\'s message', (variable, value, rule, input) => {
  const cdkMessage = rejectionMessage(rule, input);
  const [message] = terraformMessages(moduleOfRule(rule), input);
  // The same message but for the name: the module's variable where CDK names its prop.
  expect(message.startsWith(`${variable} ${value} `)).toBe(true);
  expect(message.slice(variable.length)).toBe(cdkMessage.slice(cdkMessage.indexOf(' ')));
  const errors = complete.planErrors({ [variable]: value });
  expect(errors.map((e) => e.detail.split('\n\n')[0])).toEqual([message]);
});

test('the acceptance case: db.r6g.xlarge is refused as an invalid variable value', () => {
  const errors = complete.planErrors({ instance_class: 'db.r6g.xlarge' });
  expect(errors[0].summary).toBe('Invalid value for variable');
  expect(errors[0].detail).toContain('instance_class db.r6g.xlarge has no local NVMe: Optimized Reads needs db.r6gd, db.r6id, db.r8gd (e.g. db.r6gd.xlarge)');
});

test('readers = 0 fails plan at the READ_ONLY endpoint, with the rule\'s message naming the module\'s variables', () => {
  // RDS Proxy refuses a READ_ONLY endpoint for a cluster with only a writer; the apply would fail.
  const [message] = terraformMessages('pooling-proxy', { readers: 0, targetRole: 'READ_ONLY' });
  expect(message).toBe(rejectionMessage('read-only-endpoint-readers', { readers: 0, targetRole: 'READ_ONLY' }).replace('(addReadOnlyEndpoint)', '(endpoints target_role)'));
  const errors = complete.planErrors({ readers: '0' });
  expect(errors.map((e) => [e.summary, e.detail.split('\n\n')[0]])).toEqual([['Resource precondition failed', message]]);
});
