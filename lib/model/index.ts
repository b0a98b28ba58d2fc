export * from './instance-classes';
export * from './engine-versions';
export * from './sizing';
export * from './metrics';
export * from './rule-table';
export * from './rules';
export * from './pgbouncer';
export * from './scram';
