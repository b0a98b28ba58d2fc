/**
 * Clients the pooler suites drive an endpoint with: a cancel request sent the way libpq sends it over
 * TLS (on a connection of its own, which the kernel may hand to any of the endpoint's processes),
 * looping clients that count their errors and reconnect, and a prober that opens fresh connections.
 */
import { readFileSync } from 'node:fs';
import { connect as tcpConnect } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { Client } from 'pg';
import { clientConfig, type Endpoint } from '../../lib/rehearsal';

/** The key PgBouncer gave a client in BackendKeyData (node-postgres keeps it untyped). */
export function cancelKey(client: Client): { processID: number; secretKey: number } {
  const c = client as unknown as { processID: number; secretKey: number };
  return { processID: c.processID, secretKey: c.secretKey };
}

/** SSLRequest, TLS verified against the rehearsal CA, then CancelRequest; resolves when the pooler closes. */
export function sendCancel(endpoint: Endpoint, key: { processID: number; secretKey: number }, timeoutMs = 5000): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = tcpConnect({ host: endpoint.host, port: endpoint.port });
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error('cancel request timed out'));
    }, timeoutMs);
    const fail = (err: Error): void => {
      clearTimeout(timer);
      socket.destroy();
      reject(err);
    };
    socket.once('error', fail);
    socket.once('connect', () => {
      const sslRequest = Buffer.alloc(8);
      sslRequest.writeInt32BE(8, 0);
      sslRequest.writeInt32BE(80877103, 4);
      socket.write(sslRequest);
    });
    socket.once('data', (answer) => {
      if (answer[0] !== 0x53) return fail(new Error(`pooler refused TLS for the cancel request: ${answer.toString()}`));
      const tls = tlsConnect({ socket, ca: readFileSync(endpoint.caFile, 'utf8'), host: endpoint.host });
      tls.once('error', fail);
      tls.once('secureConnect', () => {
        const cancel = Buffer.alloc(16);
        cancel.writeInt32BE(16, 0);
        cancel.writeInt32BE(80877102, 4);
        cancel.writeInt32BE(key.processID, 8);
        cancel.writeInt32BE(key.secretKey, 12);
        tls.end(cancel);
      });
      tls.once('close', () => {
        clearTimeout(timer);
        resolve();
      });
    });
  });
}

export async function connected(endpoint: Endpoint, timeoutMs = 10000): Promise<Client> {
  const client = new Client(clientConfig(endpoint, timeoutMs));
  client.on('error', () => undefined);
  await client.connect();
  return client;
}

export interface LoopFigures {
  readonly transactions: number;
  readonly errors: number;
  /** When each error happened (ms since epoch). */
  readonly errorTimes: ReadonlyArray<number>;
  readonly errorSamples: ReadonlyArray<string>;
}

/** `clients` connections looping `sql` until stopped; a client that fails counts it and reconnects. */
export class LoopingClients {
  private running = true;
  private transactions = 0;
  private readonly errorTimes: number[] = [];
  private readonly samples = new Set<string>();
  private readonly loops: Array<Promise<void>>;

  constructor(endpoint: Endpoint, clients: number, sql: string, pauseMs = 5) {
    this.loops = Array.from({ length: clients }, () => this.loop(endpoint, sql, pauseMs));
  }

  private async loop(endpoint: Endpoint, sql: string, pauseMs: number): Promise<void> {
    let client: Client | undefined;
    while (this.running) {
      try {
        client ??= await connected(endpoint, 5000);
        await client.query(sql);
        this.transactions++;
      } catch (err) {
        this.errorTimes.push(Date.now());
        this.samples.add((err as Error).message);
        await client?.end().catch(() => undefined);
        client = undefined;
      }
      await new Promise((r) => setTimeout(r, pauseMs));
    }
    await client?.end().catch(() => undefined);
  }

  get figures(): LoopFigures {
    return { transactions: this.transactions, errors: this.errorTimes.length, errorTimes: [...this.errorTimes], errorSamples: [...this.samples].slice(0, 5) };
  }

  async stop(): Promise<LoopFigures> {
    this.running = false;
    await Promise.all(this.loops);
    return this.figures;
  }
}

export interface ProbeFigures {
  readonly attempts: number;
  readonly failures: number;
  readonly failureTimes: ReadonlyArray<number>;
  /** When each failed attempt began: one begun before a kill may have been on the killed process. */
  readonly failureStarts: ReadonlyArray<number>;
}

/** Opens a fresh connection and runs one query every `everyMs`, recording which attempts failed. */
export class FreshConnectionProber {
  private running = true;
  private attempts = 0;
  private readonly failureTimes: number[] = [];
  private readonly failureStarts: number[] = [];
  private readonly loop: Promise<void>;

  constructor(endpoint: Endpoint, everyMs = 20) {
    this.loop = (async () => {
      while (this.running) {
        this.attempts++;
        const startedAt = Date.now();
        const client = new Client(clientConfig(endpoint, 3000));
        client.on('error', () => undefined);
        try {
          await client.connect();
          await client.query('SELECT 1');
        } catch {
          this.failureTimes.push(Date.now());
          this.failureStarts.push(startedAt);
        } finally {
          await client.end().catch(() => undefined);
        }
        await new Promise((r) => setTimeout(r, everyMs));
      }
    })();
  }

  async stop(): Promise<ProbeFigures> {
    this.running = false;
    await this.loop;
    return { attempts: this.attempts, failures: this.failureTimes.length, failureTimes: [...this.failureTimes], failureStarts: [...this.failureStarts] };
  }
}
