/**
 * A rehearsal listens on one loopback /24 (the same port on every address), so rehearsals on different
 * blocks run side by side. The hand-started rehearsal takes the default block; whoever starts others hands
 * out blocks of its own (the bench and the demo: lib/bench/blocks.ts). 127.0.0.x is left to system services
 * (a Debian postgres or pgbouncer).
 */

export interface LoopbackBlock {
  /** First three octets, as RehearsalSettings.addressBlock takes them. */
  readonly block: string;
  /** What runs on it. */
  readonly user: string;
  /** Why it needs a block of its own. */
  readonly why: string;
}

export const DEFAULT_LOOPBACK_BLOCK: LoopbackBlock = {
  block: '127.0.10',
  user: '`rehearse up` and make rehearse-up without --address-block',
  why: 'the hand-started rehearsal in .rehearsal/',
};
