export * from './instance-classes';
export * from './engine-versions';
export * from './sizing';
export * from './metrics';
export * from './rules';
export * from './rehearsal-rules';
