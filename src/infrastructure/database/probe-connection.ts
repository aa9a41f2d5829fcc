import pg from 'pg';

/**
 * One connection of its own for periodic measurements, outside the pools: a busy pool never delays
 * a measurement, and a measurement never takes a connection from requests. Every connect and query
 * is bounded by `timeoutMs`; after any failure the connection is dropped and the next query opens
 * a fresh one.
 */
export class ProbeConnection {
  private client: pg.Client | null = null;
  private ended = false;

  constructor(
    private readonly url: string,
    private readonly applicationName: string,
    private readonly timeoutMs: number,
  ) {}

  /** The first row of `text`; a connection is opened when there is none, both within `timeoutMs`. */
  async query<T>(text: string, timeoutMs = this.timeoutMs): Promise<T> {
    try {
      const client = this.client ?? (await this.connect(timeoutMs));
      const result = await client.query({ text, query_timeout: timeoutMs } as pg.QueryConfig);
      return result.rows[0] as T;
    } catch (error) {
      this.close();
      throw error;
    }
  }

  /** Drops the connection; the next query opens a fresh one. */
  close(): void {
    const client = this.client;
    this.client = null;
    if (client) destroySocket(client);
  }

  /** Drops the connection for good (shutdown): a connection still being opened is discarded. */
  end(): void {
    this.ended = true;
    this.close();
  }

  private async connect(timeoutMs: number): Promise<pg.Client> {
    const client = new pg.Client({
      connectionString: this.url,
      connectionTimeoutMillis: timeoutMs,
      application_name: this.applicationName,
    });
    client.on('error', () => {
      if (this.client === client) this.close();
    });
    try {
      await client.connect();
    } catch (error) {
      // A client whose connect failed may still hold a half-open socket.
      destroySocket(client);
      throw error;
    }
    if (this.ended) {
      destroySocket(client);
      throw new Error('probe connection ended');
    }
    this.client = client;
    return client;
  }
}

/** Drops the socket at once: `end()` would wait for a server that may never answer. */
export function destroySocket(client: pg.Client | pg.PoolClient): void {
  (client as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
}
