/** Typed errors of the local rehearsal, so the CLI and tests can tell a bad setting from a crash. */

/** A setting is wrong; raised before anything starts. */
export class RehearsalConfigError extends Error {
  readonly problems: ReadonlyArray<string>;
  constructor(problems: ReadonlyArray<string>) {
    super(`invalid rehearsal settings:\n  - ${problems.join('\n  - ')}`);
    this.name = 'RehearsalConfigError';
    this.problems = problems;
  }
}

/** A program the rehearsal runs is not installed. */
export class MissingBinaryError extends Error {
  constructor(readonly program: string, readonly installHint: string) {
    super(`${program} not found: ${installHint}`);
    this.name = 'MissingBinaryError';
  }
}

/** An address:port the rehearsal would listen on is taken. */
export class AddressInUseError extends Error {
  constructor(readonly role: string, readonly address: string, readonly port: number, detail: string) {
    super(`${role} address ${address}:${port} is busy (${detail}): stop what listens there, run \`rehearse down\` for a previous rehearsal, or pick another --address-block/--port`);
    this.name = 'AddressInUseError';
  }
}

/** The work directory already holds a running rehearsal, or none when one is needed. */
export class RehearsalStateError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RehearsalStateError';
  }
}

/** A component did not start or did not become ready in time; carries the tail of its log. */
export class RehearsalStartError extends Error {
  constructor(readonly component: string, message: string, readonly logTail = '', options?: { cause?: unknown }) {
    super(`${component}: ${message}${logTail ? `\n--- ${component} log tail ---\n${logTail}` : ''}`, options);
    this.name = 'RehearsalStartError';
  }
}

/** A drill or an operation (failover, kill) failed its own checks. */
export class RehearsalOperationError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'RehearsalOperationError';
  }
}

/**
 * Network namespaces or CPU budgets cannot be had here (not root, no iproute2, no writable cgroup
 * cpu controller); `reason` says which and what to do, so a caller can fall back and say why.
 */
export class IsolationUnavailableError extends Error {
  constructor(readonly what: 'network namespaces' | 'CPU budgets', readonly reason: string) {
    super(`${what} unavailable: ${reason}`);
    this.name = 'IsolationUnavailableError';
  }
}

/** Setting up or tearing down a rehearsal's namespaces or cgroups failed; names what is left behind. */
export class IsolationSetupError extends Error {
  constructor(message: string, readonly leftovers: ReadonlyArray<string> = [], options?: { cause?: unknown }) {
    super(`${message}${leftovers.length > 0 ? `\n  left behind: ${leftovers.join(', ')}` : ''}`, options);
    this.name = 'IsolationSetupError';
  }
}
