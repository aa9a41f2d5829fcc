import pg from 'pg';

/**
 * One connection of its own for periodic measurements, outside the pools: a busy pool never delays
 * a measurement, and a measurement never takes a connection from requests. Every connect and query
 * is bounded by `timeoutMs`; after any failure the connection is dropped and the next query opens
 * a fresh one.
 */
export class ProbeConnection {
  private client: pg.Client | null = null;

  constructor(
    private readonly url: string,
    private readonly applicationName: string,
    private readonly timeoutMs: number,
  ) {}

  async query<T>(text: string): Promise<T> {
    try {
      const client = this.client ?? (await this.connect());
      const result = await client.query({ text, query_timeout: this.timeoutMs } as pg.QueryConfig);
      return result.rows[0] as T;
    } catch (error) {
      this.close();
      throw error;
    }
  }

  close(): void {
    const client = this.client;
    this.client = null;
    if (client) destroySocket(client);
  }

  private async connect(): Promise<pg.Client> {
    const client = new pg.Client({ connectionString: this.url, connectionTimeoutMillis: this.timeoutMs, application_name: this.applicationName });
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
    this.client = client;
    return client;
  }
}

/** Drops the socket at once: `end()` would wait for a server that may never answer. */
function destroySocket(client: pg.Client): void {
  (client as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
}
