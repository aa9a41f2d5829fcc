import type { AddressInfo } from 'node:net';
import { SMTPServer, type SMTPServerSession } from 'smtp-server';

/** What the server does with the next message for a recipient (default: accept). */
export type SmtpBehaviour = 'accept' | 'tempfail' | 'drop' | 'permanent';

export interface ReceivedMail {
  to: string;
  subject: string;
  text: string;
  html: string;
  raw: string;
}

/**
 * A real SMTP server in the test process (the smtp-server package). Behaviour is set per recipient
 * as a queue (`script(address, ['tempfail', 'accept'])`), so mail to other users does not consume
 * it; `hang` makes every new connection wait forever for its greeting.
 */
export class TestSmtpServer {
  readonly received: ReceivedMail[] = [];
  /** Every attempt that reached DATA or was refused, per recipient, with what the server did. */
  readonly attempts: { to: string; behaviour: SmtpBehaviour }[] = [];
  hang = false;
  private readonly scripts = new Map<string, SmtpBehaviour[]>();

  private constructor(
    private readonly server: SMTPServer,
    readonly port: number,
  ) {}

  static async start(): Promise<TestSmtpServer> {
    // The callbacks need the instance, which needs the listening server: filled in below.
    const ref: { self?: TestSmtpServer } = {};
    const server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      logger: false,
      onConnect(_session, callback) {
        if (ref.self?.hang) return; // never greets: the client must time out
        callback();
      },
      onRcptTo(address, _session, callback) {
        const to = address.address.toLowerCase();
        const behaviour = ref.self!.peek(to);
        if (behaviour === 'permanent' || behaviour === 'tempfail') {
          ref.self!.take(to);
          ref.self!.attempts.push({ to, behaviour });
          const code = behaviour === 'permanent' ? 550 : 451;
          return callback(
            Object.assign(new Error(behaviour === 'permanent' ? 'No such mailbox' : 'Try again later'), {
              responseCode: code,
            }),
          );
        }
        callback();
      },
      onData(stream, session, callback) {
        const to = session.envelope.rcptTo[0].address.toLowerCase();
        const behaviour = ref.self!.take(to);
        ref.self!.attempts.push({ to, behaviour });
        const chunks: Buffer[] = [];
        stream.on('data', (chunk: Buffer) => {
          chunks.push(chunk);
          if (behaviour === 'drop') ref.self!.socketOf(session)?.destroy();
        });
        stream.on('end', () => {
          if (behaviour === 'drop') return;
          ref.self!.received.push(parseMail(to, Buffer.concat(chunks).toString('utf8')));
          callback();
        });
      },
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = ((server as unknown as { server: { address(): AddressInfo } }).server.address() as AddressInfo).port;
    ref.self = new TestSmtpServer(server, port);
    return ref.self;
  }

  get url(): string {
    return `smtp://127.0.0.1:${this.port}`;
  }

  script(address: string, behaviours: SmtpBehaviour[]): void {
    this.scripts.set(address.toLowerCase(), [...behaviours]);
  }

  to(address: string): ReceivedMail[] {
    return this.received.filter((m) => m.to === address.toLowerCase());
  }

  /** Waits until `address` has received `count` messages (fails after timeoutMs). */
  async waitFor(address: string, count: number, timeoutMs = 10_000): Promise<ReceivedMail[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.to(address).length < count) {
      if (Date.now() > deadline)
        throw new Error(`${address} received ${this.to(address).length} e-mails, expected ${count}`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    return this.to(address);
  }

  async close(): Promise<void> {
    for (const connection of this.connections()) connection._socket?.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private peek(to: string): SmtpBehaviour {
    return this.scripts.get(to)?.[0] ?? 'accept';
  }

  private take(to: string): SmtpBehaviour {
    return this.scripts.get(to)?.shift() ?? 'accept';
  }

  private connections(): { session: SMTPServerSession; _socket?: { destroy(): void } }[] {
    return [
      ...((
        this.server as unknown as { connections: Set<{ session: SMTPServerSession; _socket?: { destroy(): void } }> }
      ).connections ?? []),
    ];
  }

  private socketOf(session: SMTPServerSession) {
    return this.connections().find((c) => c.session === session || c.session?.id === session.id)?._socket;
  }
}

/** Headers, and the text and HTML parts (quoted-printable or base64) of a message as nodemailer writes it. */
export function parseMail(to: string, raw: string): ReceivedMail {
  const [head, ...rest] = raw.split('\r\n\r\n');
  const headers = unfold(head);
  const body = rest.join('\r\n\r\n');
  const boundary = /boundary="?([^";\r\n]+)"?/i.exec(headers['content-type'] ?? '')?.[1];
  let text = '';
  let html = '';
  const parts = boundary ? body.split(`--${boundary}`).slice(1, -1) : [`${head}\r\n\r\n${body}`];
  for (const part of parts) {
    const [partHead, ...partBody] = part.replace(/^\r\n/, '').split('\r\n\r\n');
    const h = unfold(partHead);
    const decoded = decode(partBody.join('\r\n\r\n'), h['content-transfer-encoding'] ?? '7bit');
    if ((h['content-type'] ?? '').startsWith('text/html')) html = decoded;
    else if ((h['content-type'] ?? '').startsWith('text/plain')) text = decoded;
  }
  return { to, subject: headers.subject ?? '', text, html, raw };
}

function unfold(head: string): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const line of head.replace(/\r\n[ \t]+/g, ' ').split('\r\n')) {
    const i = line.indexOf(':');
    if (i > 0) headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
  }
  return headers;
}

function decode(body: string, encoding: string): string {
  const trimmed = body.replace(/\r\n$/, '');
  if (encoding.toLowerCase() === 'base64') return Buffer.from(trimmed.replace(/\s+/g, ''), 'base64').toString('utf8');
  if (encoding.toLowerCase() === 'quoted-printable') {
    const bytes = trimmed.replace(/=\r\n/g, '').replace(/=([0-9A-F]{2})/gi, (_m, hex: string) => `%${hex}`);
    return decodeURIComponent(bytes.replace(/%(?![0-9A-F]{2})/gi, '%25')).replace(/\r\n/g, '\n');
  }
  return trimmed.replace(/\r\n/g, '\n');
}
