/**
 * A small evaluator of resource policies (SNS topic policies, KMS key policies), enough to prove a
 * permission path offline: an Allow whose principal, action, resource and conditions match the request,
 * and no Deny that matches it. It knows the condition operators the kit writes and refuses any other
 * (and NotPrincipal/NotAction/NotResource), so a policy it cannot judge fails the test instead of passing.
 */

type OneOrMany = string | string[];

export interface PolicyStatement {
  readonly Sid?: string;
  readonly Effect: 'Allow' | 'Deny';
  readonly Principal?: '*' | Record<string, OneOrMany>;
  readonly Action: OneOrMany;
  readonly Resource?: OneOrMany;
  readonly Condition?: Record<string, Record<string, OneOrMany>>;
}

export interface PolicyRequest {
  /** The calling service principal, e.g. cloudwatch.amazonaws.com. */
  readonly service: string;
  readonly action: string;
  readonly resource: string;
  /** Condition keys of the request context, e.g. aws:SourceAccount, aws:SourceArn, aws:SecureTransport. */
  readonly context: Readonly<Record<string, string>>;
}

export type Decision = 'allow' | 'explicit-deny' | 'implicit-deny';

const many = (value: OneOrMany | undefined): string[] => (value === undefined ? [] : Array.isArray(value) ? value : [value]);

/** IAM's wildcards: `*` any run of characters, `?` one character. */
function globMatches(pattern: string, value: string, ignoreCase = false): boolean {
  const source = pattern.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.');
  return new RegExp(`^${source}$`, ignoreCase ? 'i' : '').test(value);
}

function principalMatches(principal: PolicyStatement['Principal'], service: string): boolean {
  if (principal === undefined) throw new Error('a resource policy statement without Principal');
  if (principal === '*') return true;
  return many(principal.AWS).includes('*') || many(principal.Service).includes(service);
}

const OPERATORS: Record<string, (patterns: string[], value: string) => boolean> = {
  StringEquals: (patterns, value) => patterns.includes(value),
  StringLike: (patterns, value) => patterns.some((p) => globMatches(p, value)),
  ArnEquals: (patterns, value) => patterns.includes(value),
  ArnLike: (patterns, value) => patterns.some((p) => globMatches(p, value)),
  Bool: (patterns, value) => patterns.some((p) => p.toLowerCase() === value.toLowerCase()),
};

function conditionsHold(conditions: PolicyStatement['Condition'], context: PolicyRequest['context']): boolean {
  return Object.entries(conditions ?? {}).every(([operator, keys]) => {
    const test = OPERATORS[operator];
    if (!test) throw new Error(`condition operator ${operator} is not known to this evaluator`);
    // Every key must hold; a key missing from the request context does not.
    return Object.entries(keys).every(([key, patterns]) => context[key] !== undefined && test(many(patterns), context[key]));
  });
}

function applies(statement: PolicyStatement, request: PolicyRequest): boolean {
  for (const unsupported of ['NotPrincipal', 'NotAction', 'NotResource']) {
    if (unsupported in statement) throw new Error(`${unsupported} is not known to this evaluator`);
  }
  return (
    principalMatches(statement.Principal, request.service) &&
    many(statement.Action).some((a) => globMatches(a, request.action, true)) &&
    many(statement.Resource ?? '*').some((r) => globMatches(r, request.resource)) &&
    conditionsHold(statement.Condition, request.context)
  );
}

/** An explicit Deny wins; else an Allow grants; else the request is implicitly denied. */
export function evaluatePolicy(statements: ReadonlyArray<PolicyStatement>, request: PolicyRequest): Decision {
  const matching = statements.filter((s) => applies(s, request));
  if (matching.some((s) => s.Effect === 'Deny')) return 'explicit-deny';
  return matching.some((s) => s.Effect === 'Allow') ? 'allow' : 'implicit-deny';
}
