/** The cluster parameters the kit sets, with the user's merged over them where the kit allows it. */
export function kitClusterParameters(requested: Record<string, string> | undefined): Record<string, string> {
  return {
    // Connection churn is what the proxy tier removes; log it so the change is visible.
    log_connections: '1',
    log_disconnections: '1',
    ...requested,
    // Every client, the proxy included, must use TLS (an override to 0 is rejected by the cluster's rules).
    'rds.force_ssl': '1',
    // Libraries the user asks for are loaded beside pg_stat_statements, never instead of it.
    shared_preload_libraries: preloadLibraries(requested?.shared_preload_libraries),
  };
}

/** The user's preload libraries with pg_stat_statements added once. */
function preloadLibraries(requested: string | undefined): string {
  const libraries = (requested ?? '').split(',').map((l) => l.trim()).filter((l) => l.length > 0);
  return [...new Set(['pg_stat_statements', ...libraries])].join(',');
}
