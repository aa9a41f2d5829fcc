import type { IncomingMessage } from 'node:http';
import { Transform, type TransformCallback, type Writable } from 'node:stream';

/** Larger part-header blocks are passed on untouched (busboy refuses them anyway). */
const MAX_HEADER_BLOCK = 64 * 1024;

/**
 * Removes control bytes (except TAB, CR, LF) from the header block of every multipart part,
 * leaving part bodies byte-for-byte intact.
 *
 * Why: browsers send a file name's control characters raw (only CR, LF and `"` are escaped), and
 * busboy rejects the whole request as "Malformed part header". Dropping them here lets such an
 * upload succeed with the name neutralised, as sanitizeOriginalFilename would do anyway.
 * Control bytes never occur inside multi-byte UTF-8 sequences, so names stay valid UTF-8.
 */
export class MultipartHeaderSanitizer extends Transform {
  private readonly delimiter: Buffer;
  /** A virtual CRLF goes in front so the first delimiter (which has none) is found like the rest. */
  private pending = Buffer.from('\r\n');
  private virtualBytes = 2;
  private inHeaders = false;
  private passThrough = false;

  constructor(boundary: string) {
    super();
    this.delimiter = Buffer.from(`\r\n--${boundary}`, 'latin1');
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    if (this.passThrough) {
      this.forward(chunk);
    } else {
      this.pending = Buffer.concat([this.pending, chunk]);
      this.process(false);
    }
    callback();
  }

  override _flush(callback: TransformCallback): void {
    if (!this.passThrough) this.process(true);
    callback();
  }

  private process(final: boolean): void {
    for (;;) {
      if (!this.inHeaders) {
        const at = this.pending.indexOf(this.delimiter);
        if (at < 0) {
          // Keep a possible delimiter prefix for the next chunk.
          this.forwardPendingExcept(final ? 0 : this.delimiter.length - 1);
          return;
        }
        this.forwardPending(at + this.delimiter.length);
        this.inHeaders = true;
        continue;
      }
      const block = scanHeaderBlock(this.pending);
      if (block === null) {
        // Incomplete: wait for more bytes, unless there will be none or the block is absurdly long.
        if (final || this.pending.length > MAX_HEADER_BLOCK) {
          this.passThrough = !final;
          this.forwardPending(this.pending.length);
        }
        return;
      }
      this.forward(block.cleaned);
      this.pending = this.pending.subarray(block.consumed);
      this.inHeaders = false;
    }
  }

  private forwardPendingExcept(keep: number): void {
    this.forwardPending(Math.max(0, this.pending.length - keep));
  }

  private forwardPending(length: number): void {
    this.forward(this.pending.subarray(0, length));
    this.pending = this.pending.subarray(length);
  }

  private forward(bytes: Buffer): void {
    const skip = Math.min(this.virtualBytes, bytes.length);
    this.virtualBytes -= skip;
    if (bytes.length > skip) this.push(bytes.subarray(skip));
  }
}

/**
 * The part's header block (up to and including the blank line) without control bytes, and how many
 * raw bytes it spans; null while the blank line has not arrived. The blank line is looked for
 * after removal, exactly as busboy will see the bytes, and nothing after it is touched.
 */
function scanHeaderBlock(raw: Buffer): { cleaned: Buffer; consumed: number } | null {
  const kept: number[] = [];
  const limit = Math.min(raw.length, MAX_HEADER_BLOCK + 1);
  for (let i = 0; i < limit; i++) {
    const byte = raw[i];
    if (isControlByte(byte)) continue;
    kept.push(byte);
    const n = kept.length;
    if (n >= 4 && kept[n - 4] === 13 && kept[n - 3] === 10 && kept[n - 2] === 13 && kept[n - 1] === 10) {
      return { cleaned: Buffer.from(kept), consumed: i + 1 };
    }
  }
  return null;
}

function isControlByte(byte: number): boolean {
  return (byte < 0x20 && byte !== 0x09 && byte !== 0x0a && byte !== 0x0d) || byte === 0x7f;
}

/** multer `streamHandler`: feeds the request to busboy through the sanitizer when it has a boundary. */
export function pipeThroughHeaderSanitizer(req: IncomingMessage, busboy: Writable): void {
  const boundary = /boundary=(?:"([^"]{1,70})"|([^\s;]{1,70}))/i.exec(req.headers['content-type'] ?? '');
  if (!boundary) {
    req.pipe(busboy);
    return;
  }
  const sanitizer = new MultipartHeaderSanitizer(boundary[1] ?? boundary[2]);
  sanitizer.on('error', (error) => busboy.destroy(error));
  // Once busboy gives up, keep draining (multer drains the request before answering) without
  // buffering the rest of the body in the sanitizer.
  const release = () => {
    sanitizer.unpipe(busboy);
    sanitizer.resume();
  };
  busboy.once('error', release);
  busboy.once('close', release);
  req.pipe(sanitizer).pipe(busboy);
}
