import type { Server } from 'node:http';
import type { Socket } from 'node:net';

/**
 * Bounds how long a connection may hold a file descriptor without asking anything. Node times out
 * idle keep-alive connections between requests (keepAliveTimeout) and slow requests once they have
 * begun (headersTimeout, requestTimeout), but a connection that never sends a byte stays open
 * indefinitely. Each new connection therefore gets an inactivity timeout of `firstByteTimeoutMs`
 * until its first request's headers are complete — the same bound between bytes of headers sent
 * slowly — after which Node's own timeouts apply as before; a socket that times out with no
 * request is destroyed by Node.
 */
export function boundIdleConnections(server: Server, firstByteTimeoutMs: number): void {
  server.on('connection', (socket: Socket) => socket.setTimeout(firstByteTimeoutMs));
  // Back to the server's own socket timeout (0 unless set): a request is being served, and a slow
  // handler is bounded by the route's own limits, not by this one.
  server.on('request', (req: { socket: Socket }) => req.socket.setTimeout(server.timeout));
}
