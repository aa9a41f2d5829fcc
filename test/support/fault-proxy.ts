import net from 'node:net';

/**
 * What the proxy does to traffic:
 * - `pass`: forwards both ways;
 * - `delay`: forwards each chunk `ms` later (order kept);
 * - `blackhole`: accepts connections and holds every byte (a hung server or a silent network);
 *   held bytes flow again when the mode changes back, as after a healed partition;
 * - `cut`: destroys every connection and refuses new ones (ECONNREFUSED), as a stopped server.
 */
export type FaultMode = { kind: 'pass' } | { kind: 'delay'; ms: number } | { kind: 'blackhole' } | { kind: 'cut' };

/** One direction of one connection: a queue of chunks released according to the current mode. */
class Lane {
  private readonly queue: { chunk: Buffer; releaseAt: number }[] = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly to: net.Socket,
    private readonly mode: () => FaultMode,
  ) {}

  push(chunk: Buffer): void {
    const mode = this.mode();
    this.queue.push({ chunk, releaseAt: Date.now() + (mode.kind === 'delay' ? mode.ms : 0) });
    this.pump();
  }

  pump(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.mode().kind === 'blackhole' || this.to.destroyed) return;
    const now = Date.now();
    while (this.queue.length > 0 && this.queue[0].releaseAt <= now) this.to.write(this.queue.shift()!.chunk);
    if (this.queue.length > 0) this.timer = setTimeout(() => this.pump(), this.queue[0].releaseAt - now);
  }

  stop(): void {
    clearTimeout(this.timer);
    this.queue.length = 0;
  }
}

interface Link {
  client: net.Socket;
  upstream: net.Socket;
  lanes: Lane[];
}

/**
 * A TCP proxy for fault-injection tests, listening on 127.0.0.1:<random port> and forwarding to
 * a target (PostgreSQL, Redis). Only test apps connect through it; the shared services are never
 * touched. Switch modes with `pass()`, `cut()`, `delay(ms)`, `blackhole()`.
 */
export class FaultProxy {
  private mode: FaultMode = { kind: 'pass' };
  private readonly links = new Set<Link>();
  private server: net.Server;
  private listenPort = 0;
  /** Connections accepted since start (to see that a client reconnected). */
  accepted = 0;

  private constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
  ) {
    this.server = this.createServer();
  }

  static async start(target: { host?: string; port: number }): Promise<FaultProxy> {
    const proxy = new FaultProxy(target.host ?? '127.0.0.1', target.port);
    await proxy.listen(0);
    return proxy;
  }

  /** Proxy for the host:port of a URL (postgres://…, redis://…). */
  static forUrl(url: string): Promise<FaultProxy> {
    const parsed = new URL(url);
    return FaultProxy.start({ host: parsed.hostname, port: Number(parsed.port) });
  }

  get port(): number {
    return this.listenPort;
  }

  /** `url` with its host and port replaced by the proxy's. */
  rewrite(url: string): string {
    const parsed = new URL(url);
    parsed.hostname = '127.0.0.1';
    parsed.port = String(this.listenPort);
    return parsed.toString();
  }

  get openConnections(): number {
    return this.links.size;
  }

  get currentMode(): FaultMode {
    return this.mode;
  }

  async pass(): Promise<void> {
    await this.setMode({ kind: 'pass' });
  }

  async delay(ms: number): Promise<void> {
    await this.setMode({ kind: 'delay', ms });
  }

  async blackhole(): Promise<void> {
    await this.setMode({ kind: 'blackhole' });
  }

  async cut(): Promise<void> {
    await this.setMode({ kind: 'cut' });
  }

  async close(): Promise<void> {
    this.mode = { kind: 'cut' };
    for (const link of this.links) this.drop(link);
    if (this.server.listening) await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async setMode(mode: FaultMode): Promise<void> {
    const wasCut = this.mode.kind === 'cut';
    this.mode = mode;
    if (mode.kind === 'cut') {
      for (const link of this.links) this.drop(link);
      // Closing the listener makes new connections fail with ECONNREFUSED, like a stopped server.
      if (this.server.listening) await new Promise<void>((resolve) => this.server.close(() => resolve()));
      return;
    }
    if (wasCut) {
      this.server = this.createServer();
      await this.listen(this.listenPort);
    }
    for (const link of this.links) for (const lane of link.lanes) lane.pump();
  }

  private createServer(): net.Server {
    return net.createServer((client) => this.accept(client));
  }

  private listen(port: number): Promise<void> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, '127.0.0.1', () => {
        this.server.off('error', reject);
        this.listenPort = (this.server.address() as net.AddressInfo).port;
        resolve();
      });
    });
  }

  private accept(client: net.Socket): void {
    if (this.mode.kind === 'cut') {
      client.destroy();
      return;
    }
    this.accepted += 1;
    const upstream = net.connect(this.targetPort, this.targetHost);
    const mode = () => this.mode;
    const link: Link = { client, upstream, lanes: [new Lane(upstream, mode), new Lane(client, mode)] };
    this.links.add(link);
    client.on('data', (chunk: Buffer) => link.lanes[0].push(chunk));
    upstream.on('data', (chunk: Buffer) => link.lanes[1].push(chunk));
    for (const socket of [client, upstream]) {
      socket.setNoDelay(true);
      socket.on('error', () => this.drop(link));
      socket.on('close', () => this.drop(link));
    }
  }

  private drop(link: Link): void {
    if (!this.links.delete(link)) return;
    for (const lane of link.lanes) lane.stop();
    link.client.destroy();
    link.upstream.destroy();
  }
}
