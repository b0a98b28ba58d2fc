/**
 * Periodic samplers of a running rehearsal: server connections per instance (pg_stat_activity,
 * client backends of the application user, over one persistent admin connection per instance) and
 * the PSS of each instance's processes. Each sample is timestamped so windows can be cut afterwards.
 */
import { Client } from 'pg';
import { type Endpoint, clientConfig } from '../rehearsal';
import { childrenPssMiB } from './proc';
import { mean } from './stats';

export interface Sample {
  readonly t: number;
  /** Value per instance name. */
  readonly values: Readonly<Record<string, number>>;
}

export interface WindowStats {
  /** Mean over samples and instances of the per-instance value. */
  readonly perInstanceAvg: number;
  /** Highest per-instance value seen. */
  readonly perInstancePeak: number;
  /** Mean over samples of the sum over instances. */
  readonly totalAvg: number;
  readonly totalPeak: number;
  /** Mean per instance over the window. */
  readonly byInstance: Readonly<Record<string, number>>;
  readonly samples: number;
}

export function windowStats(samples: ReadonlyArray<Sample>, from = -Infinity, to = Infinity, names?: ReadonlyArray<string>): WindowStats {
  const inWindow = samples.filter((s) => s.t >= from && s.t <= to);
  const keys = names ?? [...new Set(inWindow.flatMap((s) => Object.keys(s.values)))];
  const per: number[] = [];
  const totals: number[] = [];
  const byInstance: Record<string, number> = {};
  for (const k of keys) byInstance[k] = mean(inWindow.map((s) => s.values[k] ?? 0));
  for (const s of inWindow) {
    let total = 0;
    for (const k of keys) {
      const v = s.values[k] ?? 0;
      per.push(v);
      total += v;
    }
    totals.push(total);
  }
  return {
    perInstanceAvg: mean(per),
    perInstancePeak: per.length === 0 ? Number.NaN : Math.max(...per),
    totalAvg: mean(totals),
    totalPeak: totals.length === 0 ? Number.NaN : Math.max(...totals),
    byInstance,
    samples: inWindow.length,
  };
}

abstract class Periodic {
  readonly samples: Sample[] = [];
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;

  constructor(private readonly intervalMs: number) {}

  protected abstract sample(): Promise<Record<string, number>>;

  start(): void {
    const tick = async (): Promise<void> => {
      if (this.stopped) return;
      const t = Date.now();
      try {
        this.samples.push({ t, values: await this.sample() });
      } catch {
        // A missed sample is a gap, not a failure.
      }
      if (!this.stopped) this.timer = setTimeout(() => (this.running = tick()), Math.max(0, this.intervalMs - (Date.now() - t)));
    };
    this.running = tick();
  }

  async stop(): Promise<Sample[]> {
    this.stopped = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    await this.running;
    await this.close();
    return this.samples;
  }

  protected async close(): Promise<void> {}
}

/** Client backends of the application's roles (Rehearsal.applicationRoles) on each instance, every `intervalMs` (default 200 ms). */
export class ConnectionSampler extends Periodic {
  private readonly clients = new Map<string, Client>();

  constructor(private readonly appRoles: ReadonlyArray<string>, intervalMs = 200) {
    super(intervalMs);
  }

  /** Adds an instance to watch (as its superuser, whose slots are reserved and not counted). */
  async add(name: string, admin: Endpoint): Promise<void> {
    const client = new Client(clientConfig({ ...admin, database: 'postgres' }, 10000));
    client.on('error', () => undefined);
    await client.connect();
    this.clients.set(name, client);
  }

  protected async sample(): Promise<Record<string, number>> {
    const entries = await Promise.all(
      [...this.clients].map(async ([name, c]) => {
        const r = await c.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE backend_type = 'client backend' AND usename = ANY($1)", [this.appRoles]);
        return [name, r.rows[0]?.n ?? 0] as const;
      }),
    );
    return Object.fromEntries(entries);
  }

  protected async close(): Promise<void> {
    await Promise.all([...this.clients.values()].map((c) => c.end().catch(() => undefined)));
  }
}

/** Summed PSS (MiB) of each instance's postmaster children, every `intervalMs` (default 1 s). */
export class MemorySampler extends Periodic {
  constructor(private readonly postmasters: () => Record<string, number | undefined>, intervalMs = 1000) {
    super(intervalMs);
  }

  protected async sample(): Promise<Record<string, number>> {
    const out: Record<string, number> = {};
    for (const [name, pid] of Object.entries(this.postmasters())) if (pid !== undefined) out[name] = childrenPssMiB(pid).mib;
    return out;
  }
}
