import { Validations } from 'aws-cdk-lib';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import { skipCheckov } from './checkov';

/**
 * A PgBouncerProxy user's password secret `{"username", "password"}`, in the proxy's scope (id `id`): the hosts
 * read it into their auth file, the role bootstrap sets the role's verifier from it.
 */
export function newPgBouncerUserSecret(scope: Construct, id: string, username: string, what: string): secretsmanager.Secret {
  const secret = new secretsmanager.Secret(scope, id, {
    description: `The password ${what}: ${username}`,
    // Letters and digits only: the password is written into PgBouncer's auth file and SQL without quoting questions.
    generateSecretString: { secretStringTemplate: JSON.stringify({ username }), generateStringKey: 'password', excludePunctuation: true, passwordLength: 32 },
  });
  Validations.of(secret).acknowledge({
    id: 'AwsSolutions-SMG4',
    reason: 'rotation must change the role\'s verifier on Aurora too; the role bootstrap will own that, the hosts already re-read the secret every 5 minutes',
  });
  skipCheckov(secret, [{
    id: 'CKV_AWS_149',
    comment: 'encrypted with the account\'s aws/secretsmanager key: readers need only the secret\'s own grant, and Secrets Manager decrypts on their behalf',
  }]);
  return secret;
}
