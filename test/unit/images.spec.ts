import { mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { IncomingMessage } from 'node:http';
import { PassThrough, Readable, Writable, type Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { ifNoneMatchHits } from '../../src/images/image-serving.js';
import {
  formatByteSize,
  isStorageFilename,
  newStorageFilename,
  sanitizeOriginalFilename,
} from '../../src/images/image-names.js';
import { acceptedMimeType, INVALID_FILE_TYPE } from '../../src/images/image-types.js';
import { MultipartHeaderSanitizer, pipeThroughHeaderSanitizer } from '../../src/images/multipart-header-sanitizer.js';
import { LocalImageStorage } from '../../src/images/storage/local-image-storage.js';
import { inspectSvg } from '../../src/images/svg-inspector.js';

const SVG_NS = 'xmlns="http://www.w3.org/2000/svg"';
const sizeOf = (source: string) => inspectSvg(Buffer.from(source));

describe('inspectSvg', () => {
  it.each([
    [`<svg ${SVG_NS} width="10" height="20"/>`, { width: 10, height: 20 }],
    [`<svg ${SVG_NS} width="10.4px" height="19.6"/>`, { width: 10, height: 20 }],
    [`<svg ${SVG_NS} width="2.54cm" height="25.4mm"/>`, { width: 96, height: 96 }],
    [`<svg ${SVG_NS} width="1pc" height="2em"/>`, { width: 16, height: 32 }],
    [`<svg ${SVG_NS} viewBox="-5 -5 40 20"/>`, { width: 40, height: 20 }],
    [`<svg ${SVG_NS} height="10" viewBox="0 0 40 20"/>`, { width: 20, height: 10 }],
    [`<svg ${SVG_NS} width="50%" height="auto" viewBox="0 0 7 3"/>`, { width: 7, height: 3 }],
    [`<svg ${SVG_NS} width="0" height="-4" viewBox="0 0 0 0"/>`, { width: 300, height: 150 }],
    [`<svg ${SVG_NS} width="0.2" height="0.2"/>`, { width: 1, height: 1 }],
    [`<svg ${SVG_NS} width="12"/>`, { width: 12, height: 150 }],
    [`<svg width="3" height="4"></svg>`, { width: 3, height: 4 }],
    [`<s:svg xmlns:s="http://www.w3.org/2000/svg" width="3" height="4"><s:g/></s:svg>`, { width: 3, height: 4 }],
    [
      `<?xml version="1.0" encoding="utf-8"?><?xml-stylesheet href="a.css"?><!-- c --><svg ${SVG_NS} width='5' height='6'><g a="&lt;&#x41;&#65;"><![CDATA[ <not a tag> ]]></g></svg><!-- after -->\n`,
      { width: 5, height: 6 },
    ],
  ])('sizes %s', (source, expected) => {
    expect(sizeOf(source)).toEqual(expected);
  });

  it.each([
    ['empty', ''],
    ['plain text', 'hello'],
    ['HTML root', '<html><svg/></html>'],
    ['foreign default namespace', '<svg xmlns="http://www.w3.org/1999/xhtml"/>'],
    ['prefix without namespace', '<s:svg width="1"/>'],
    [
      'DOCTYPE',
      `<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd"><svg ${SVG_NS}/>`,
    ],
    ['ENTITY inside', `<svg ${SVG_NS}><!ENTITY x "y"></svg>`],
    ['undefined entity', `<svg ${SVG_NS}>&x;</svg>`],
    ['bare ampersand', `<svg ${SVG_NS}>a & b</svg>`],
    ['unclosed root', `<svg ${SVG_NS}><g></g>`],
    ['mismatched tags', `<svg ${SVG_NS}><g></a></svg>`],
    ['two roots', `<svg ${SVG_NS}/><svg ${SVG_NS}/>`],
    ['text after root', `<svg ${SVG_NS}/>trailing`],
    ['duplicate attribute', `<svg ${SVG_NS} width="1" width="2"/>`],
    ['unquoted attribute', `<svg ${SVG_NS} width=1/>`],
    ['< inside attribute', `<svg ${SVG_NS} a="<"/>`],
    ['attributes not separated', `<svg ${SVG_NS} a="1"b="2"/>`],
    ['xml declaration not first', ` <?xml version="1.0"?><svg ${SVG_NS}/>`],
    ['non-UTF-8 encoding declared', `<?xml version="1.0" encoding="ISO-8859-1"?><svg ${SVG_NS}/>`],
    ['unterminated comment', `<svg ${SVG_NS}/><!-- x`],
    ['CDATA outside root', `<![CDATA[x]]><svg ${SVG_NS}/>`],
  ])('refuses %s', (_, source) => {
    expect(sizeOf(source)).toBeNull();
  });

  it('refuses invalid UTF-8 and deep nesting', () => {
    expect(
      inspectSvg(Buffer.concat([Buffer.from(`<svg ${SVG_NS}>`), Buffer.from([0xc3, 0x28]), Buffer.from('</svg>')])),
    ).toBeNull();
    expect(sizeOf(`<svg ${SVG_NS}>${'<g>'.repeat(600)}${'</g>'.repeat(600)}</svg>`)).toBeNull();
    expect(sizeOf(`<svg ${SVG_NS}>${'<g>'.repeat(100)}${'</g>'.repeat(100)}</svg>`)).toEqual({
      width: 300,
      height: 150,
    });
  });
});

describe('image names', () => {
  it.each([
    ['photo.png', 'photo.png'],
    ['../../etc/passwd', 'passwd'],
    ['C:\\Users\\me\\pic.jpg', 'pic.jpg'],
    ['a\u0000b\u0007c\u007f\u0085.png', 'abc.png'],
    ['\u202egnp.exe', 'gnp.exe'],
    ['  spaced.png  ', 'spaced.png'],
    ['..', 'upload'],
    ['dir/', 'upload'],
    ['', 'upload'],
    [undefined, 'upload'],
    ['cafe\u0301.png', 'café.png'],
  ])('sanitises %j to %j', (input, expected) => {
    expect(sanitizeOriginalFilename(input)).toBe(expected);
  });

  it('shortens long names to 255 characters keeping the extension and whole characters', () => {
    expect(sanitizeOriginalFilename(`${'a'.repeat(400)}.jpeg`)).toBe(`${'a'.repeat(250)}.jpeg`);
    const emoji = sanitizeOriginalFilename(`${'😀'.repeat(200)}.png`);
    expect(emoji.length).toBeLessThanOrEqual(255);
    expect(emoji.endsWith('😀.png')).toBe(true);
    expect(sanitizeOriginalFilename('b'.repeat(300))).toBe('b'.repeat(255));
  });

  it('generates UUID names with a fitting extension', () => {
    expect(newStorageFilename('x.JPEG', 'image/jpeg')).toMatch(/^[0-9a-f-]{36}\.jpeg$/);
    expect(newStorageFilename('x.png', 'image/jpeg')).toMatch(/\.jpg$/);
    expect(newStorageFilename('noext', 'image/webp')).toMatch(/\.webp$/);
    expect(newStorageFilename('x.svg.php', 'image/svg+xml')).toMatch(/\.svg$/);
    const name = newStorageFilename('a.gif', 'image/gif');
    expect(isStorageFilename(name)).toBe(true);
    expect(newStorageFilename('a.gif', 'image/gif')).not.toBe(name);
  });

  it('recognises only generated names', () => {
    expect(isStorageFilename('0b7c2a9e-5d6f-4e1a-9c3b-2f8d7e6a5b4c.png')).toBe(true);
    for (const bad of [
      '0B7C2A9E-5D6F-4E1A-9C3B-2F8D7E6A5B4C.png',
      '0b7c2a9e-5d6f-4e1a-9c3b-2f8d7e6a5b4c.php',
      '../0b7c2a9e-5d6f-4e1a-9c3b-2f8d7e6a5b4c.png',
      '0b7c2a9e-5d6f-4e1a-9c3b-2f8d7e6a5b4c.png/',
      '.0b7c2a9e-5d6f-4e1a-9c3b-2f8d7e6a5b4c.png.tmp',
      '12',
    ]) {
      expect(isStorageFilename(bad)).toBe(false);
    }
  });

  it('formats size limits as people read them', () => {
    expect(formatByteSize(10 * 1024 * 1024)).toBe('10 MB');
    expect(formatByteSize(1536 * 1024)).toBe('1.5 MB');
    expect(formatByteSize(2000)).toBe('1.95 KB');
    expect(formatByteSize(512)).toBe('512 bytes');
    expect(formatByteSize(2 * 1024 ** 3)).toBe('2 GB');
  });
});

describe('image types', () => {
  it('normalises declared types and refuses aliases', () => {
    expect(acceptedMimeType('IMAGE/SVG+XML; charset=utf-8')).toBe('image/svg+xml');
    expect(acceptedMimeType('image/jpg')).toBeNull();
    expect(acceptedMimeType(undefined)).toBeNull();
    expect(INVALID_FILE_TYPE).toBe(
      'Invalid file type. Allowed types: image/jpeg, image/png, image/gif, image/webp, image/svg+xml',
    );
  });
});

describe('ifNoneMatchHits', () => {
  it('matches listed, weak and wildcard tags only', () => {
    expect(ifNoneMatchHits('"a-1"', '"a-1"')).toBe(true);
    expect(ifNoneMatchHits('W/"a-1"', '"a-1"')).toBe(true);
    expect(ifNoneMatchHits('"x", "a-1"', '"a-1"')).toBe(true);
    expect(ifNoneMatchHits('*', '"a-1"')).toBe(true);
    expect(ifNoneMatchHits('"a-2"', '"a-1"')).toBe(false);
    expect(ifNoneMatchHits('a-1', '"a-1"')).toBe(false);
    expect(ifNoneMatchHits(undefined, '"a-1"')).toBe(false);
  });
});

describe('MultipartHeaderSanitizer', () => {
  const boundary = 'XyZ123';
  const body = Buffer.concat([
    Buffer.from(
      `preamble\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a\u0007b\u0000c.png"\r\nContent-Type: image/png\r\n\r\n`,
      'latin1',
    ),
    Buffer.from([0x00, 0x07, 0x0d, 0x0a, 0x0d, 0x0a, 0x1b, 0xff, 0x00]), // body bytes must survive untouched
    Buffer.from(
      `\r\n--${boundary}\r\nContent-Disposition: form-data; name="note"\r\n\r\n\u0001kept\u0001\r\n--${boundary}--\r\n`,
      'latin1',
    ),
  ]);
  const expected = Buffer.from(body.toString('latin1').replace('a\u0007b\u0000c.png', 'abc.png'), 'latin1');

  async function run(chunks: Buffer[]): Promise<Buffer> {
    const out: Buffer[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, cb) {
        out.push(chunk);
        cb();
      },
    });
    await pipeline(Readable.from(chunks), new MultipartHeaderSanitizer(boundary), sink);
    return Buffer.concat(out);
  }

  it('strips control bytes from part headers only, whatever the chunking', async () => {
    expect(await run([body])).toEqual(expected);
    for (let split = 1; split < body.length; split++) {
      const result = await run([body.subarray(0, split), body.subarray(split)]);
      if (!result.equals(expected)) throw new Error(`differs when split at ${split}`);
    }
    expect(await run([...body].map((byte) => Buffer.from([byte])))).toEqual(expected);
  });

  it('leaves a control byte between the header CRLFs to end the block, as busboy will see it', async () => {
    const tricky = Buffer.from(`--${boundary}\r\nA: b\r\n\u0007\r\n\u0007body\r\n--${boundary}--`, 'latin1');
    expect((await run([tricky])).toString('latin1')).toBe(`--${boundary}\r\nA: b\r\n\r\n\u0007body\r\n--${boundary}--`);
  });
});

describe('pipeThroughHeaderSanitizer', () => {
  it('stops buffering once the parser gives up, while the request keeps being drained', async () => {
    const req = Object.assign(new PassThrough(), { headers: { 'content-type': 'multipart/form-data; boundary=xyz' } });
    let sanitizer: Transform | undefined;
    const pipe = req.pipe.bind(req);
    req.pipe = <T extends NodeJS.WritableStream>(destination: T) => {
      sanitizer = destination as unknown as Transform;
      return pipe(destination);
    };
    // A parser that fails on its first chunk and never consumes again (busboy after a bad header).
    const parser = new Writable({
      write(_chunk, _encoding, _callback) {
        parser.emit('error', new Error('Malformed part header'));
      },
    });
    parser.on('error', () => undefined);
    pipeThroughHeaderSanitizer(req as unknown as IncomingMessage, parser);
    req.on('readable', () => {
      while (req.read() !== null);
    }); // multer's drain
    for (let i = 0; i < 20; i++) req.write(Buffer.alloc(1024 * 1024, 0x41));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(sanitizer!.writableLength + sanitizer!.readableLength).toBeLessThan(1024 * 1024);
  });
});

describe('LocalImageStorage', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'images-unit-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('writes atomically into a directory it creates, reads back, and removes idempotently', async () => {
    const storage = new LocalImageStorage(join(dir, 'nested', 'uploads'));
    await storage.save('abc.png', Buffer.from('bytes'));
    expect(readdirSync(join(dir, 'nested', 'uploads'))).toEqual(['abc.png']);
    const stream = await storage.open('abc.png');
    const chunks: Buffer[] = [];
    for await (const chunk of stream!) chunks.push(chunk as Buffer);
    expect(Buffer.concat(chunks).toString()).toBe('bytes');
    expect(readFileSync(join(dir, 'nested', 'uploads', 'abc.png')).toString()).toBe('bytes');
    await storage.remove('abc.png');
    await storage.remove('abc.png');
    expect(await storage.open('abc.png')).toBeNull();
  });

  it('refuses names that could leave the directory', async () => {
    const storage = new LocalImageStorage(dir);
    for (const name of ['../x.png', 'a/b.png', '.hidden', '', 'a\u0000.png']) {
      await expect(storage.save(name, Buffer.from('x'))).rejects.toThrow('unsafe storage name');
      await expect(storage.open(name)).rejects.toThrow('unsafe storage name');
    }
    expect(readdirSync(dir)).toEqual([]);
  });

  it('adopts a temporary file from its own directory by renaming it, and sweeps only stale temporary files', async () => {
    const storage = new LocalImageStorage(dir);
    writeFileSync(join(dir, '.upload-a.tmp'), 'upload');
    await storage.adopt('kept.png', join(dir, '.upload-a.tmp'));
    expect(readdirSync(dir)).toEqual(['kept.png']);
    expect(readFileSync(join(dir, 'kept.png')).toString()).toBe('upload');
    writeFileSync(join(dir, 'elsewhere.tmp'), 'x');
    await expect(storage.adopt('x.png', join(tmpdir(), 'elsewhere.tmp'))).rejects.toThrow(
      'outside the storage directory',
    );

    writeFileSync(join(dir, '.upload-old.tmp'), 'old');
    writeFileSync(join(dir, '.upload-new.tmp'), 'new');
    const hourAgo = new Date(Date.now() - 2 * 3600_000);
    utimesSync(join(dir, '.upload-old.tmp'), hourAgo, hourAgo);
    expect(await storage.removeStaleTemporaryFiles(3600_000)).toBe(1);
    expect(readdirSync(dir).sort()).toEqual(['.upload-new.tmp', 'elsewhere.tmp', 'kept.png']);
    expect(await new LocalImageStorage(join(dir, 'missing')).removeStaleTemporaryFiles(0)).toBe(0);
  });
});
