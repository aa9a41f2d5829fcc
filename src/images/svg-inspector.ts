/**
 * Decides whether bytes are an SVG document we are willing to store, and its size in pixels.
 *
 * No XML library is used: a small well-formedness scanner is enough to say "this is one XML
 * document whose root is <svg>", and it refuses every construct that makes XML parsers dangerous
 * (DOCTYPE, ENTITY and any other `<!` declaration, so no external or recursive entities exist).
 * The stored bytes are never interpreted by the server; browsers get them under a sandbox CSP.
 */
const SVG_NAMESPACE = 'http://www.w3.org/2000/svg';

interface SvgSize {
  width: number;
  height: number;
}

interface RootElement {
  name: string;
  attributes: Map<string, string>;
}

/** Browsers' size for a replaced element that says nothing about its size (CSS 2 §10.3.2). */
const DEFAULT_SIZE: SvgSize = { width: 300, height: 150 };
const MAX_DEPTH = 512;

const NAME = /[A-Za-z_:\u00c0-\uffff][-A-Za-z0-9_:.\u00b7\u00c0-\uffff]*/y;
const SPACE = /[ \t\r\n]*/y;
const REFERENCE = /&(?:amp|lt|gt|quot|apos|#[0-9]{1,7}|#x[0-9a-fA-F]{1,6});/y;

/** The SVG's size, or null when the bytes are not a well-formed SVG document we accept. */
export function inspectSvg(bytes: Buffer): SvgSize | null {
  let text: string;
  try {
    // Strips a UTF-8 BOM; anything that is not UTF-8 is refused (UTF-16 SVGs are very rare).
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return null;
  }
  const root = scanDocument(text);
  if (!root || !isSvgRoot(root)) return null;
  return svgSize(root.attributes);
}

function isSvgRoot(root: RootElement): boolean {
  const [prefix, local] = root.name.includes(':') ? root.name.split(':', 2) : [null, root.name];
  if (local !== 'svg') return false;
  const namespace = root.attributes.get(prefix === null ? 'xmlns' : `xmlns:${prefix}`);
  // A plain <svg> without xmlns is accepted (hand-written files); a declared namespace must be SVG's.
  return prefix === null ? namespace === undefined || namespace === SVG_NAMESPACE : namespace === SVG_NAMESPACE;
}

/** Walks the whole document; returns its root element when it is well-formed, else null. */
function scanDocument(text: string): RootElement | null {
  let i = 0;
  if (text.startsWith('<?xml')) {
    const end = text.indexOf('?>');
    if (end < 0 || !/^<\?xml[ \t\r\n]/.test(text)) return null;
    const encoding = /encoding[ \t\r\n]*=[ \t\r\n]*["']([^"']*)["']/.exec(text.slice(0, end))?.[1];
    if (encoding !== undefined && !/^utf-?8$/i.test(encoding)) return null;
    i = end + 2;
  }
  const open: string[] = [];
  let root: RootElement | null = null;
  let rootClosed = false;
  while (i < text.length) {
    const lt = text.indexOf('<', i);
    const chunk = text.slice(i, lt < 0 ? text.length : lt);
    if (open.length === 0 ? chunk.trim() !== '' : !isCharacterData(chunk)) return null;
    if (lt < 0) break;
    i = lt;
    if (text.startsWith('<!--', i)) {
      const end = text.indexOf('-->', i + 4);
      if (end < 0) return null;
      i = end + 3;
    } else if (text.startsWith('<![CDATA[', i)) {
      const end = text.indexOf(']]>', i + 9);
      if (open.length === 0 || end < 0) return null;
      i = end + 3;
    } else if (text.startsWith('<!', i)) {
      return null; // DOCTYPE / ENTITY / other declarations: refused outright (XXE, entity bombs)
    } else if (text.startsWith('<?', i)) {
      const end = text.indexOf('?>', i + 2);
      const target = readName(text, i + 2);
      if (end < 0 || target === null || target.toLowerCase() === 'xml') return null;
      i = end + 2;
    } else if (text.startsWith('</', i)) {
      const name = readName(text, i + 2);
      if (name === null || name !== open.pop()) return null;
      i = skipSpace(text, i + 2 + name.length);
      if (text[i] !== '>') return null;
      i += 1;
      if (open.length === 0) rootClosed = true;
    } else {
      if (rootClosed || open.length >= MAX_DEPTH) return null;
      const tag = readStartTag(text, i);
      if (tag === null) return null;
      root ??= { name: tag.name, attributes: tag.attributes };
      if (tag.selfClosing) {
        if (open.length === 0) rootClosed = true;
      } else {
        open.push(tag.name);
      }
      i = tag.end;
    }
  }
  return rootClosed && open.length === 0 ? root : null;
}

function readStartTag(
  text: string,
  start: number,
): { name: string; attributes: Map<string, string>; selfClosing: boolean; end: number } | null {
  const name = readName(text, start + 1);
  if (name === null) return null;
  const attributes = new Map<string, string>();
  let i = start + 1 + name.length;
  for (;;) {
    const afterSpace = skipSpace(text, i);
    if (text.startsWith('/>', afterSpace)) return { name, attributes, selfClosing: true, end: afterSpace + 2 };
    if (text[afterSpace] === '>') return { name, attributes, selfClosing: false, end: afterSpace + 1 };
    if (afterSpace === i) return null; // attributes must be separated by white space
    const attribute = readName(text, afterSpace);
    if (attribute === null || attributes.has(attribute)) return null;
    i = skipSpace(text, afterSpace + attribute.length);
    if (text[i] !== '=') return null;
    i = skipSpace(text, i + 1);
    const quote = text[i];
    if (quote !== '"' && quote !== "'") return null;
    const close = text.indexOf(quote, i + 1);
    if (close < 0) return null;
    const value = text.slice(i + 1, close);
    if (value.includes('<') || !referencesAreValid(value)) return null;
    attributes.set(attribute, decodeReferences(value));
    i = close + 1;
  }
}

function readName(text: string, at: number): string | null {
  NAME.lastIndex = at;
  return NAME.exec(text)?.[0] ?? null;
}

function skipSpace(text: string, at: number): number {
  SPACE.lastIndex = at;
  SPACE.exec(text);
  return SPACE.lastIndex;
}

function isCharacterData(chunk: string): boolean {
  return !chunk.includes(']]>') && referencesAreValid(chunk);
}

/** Without a DTD only the five predefined entities and character references exist. */
function referencesAreValid(value: string): boolean {
  for (let amp = value.indexOf('&'); amp >= 0; amp = value.indexOf('&', amp + 1)) {
    REFERENCE.lastIndex = amp;
    if (!REFERENCE.test(value)) return false;
  }
  return true;
}

function decodeReferences(value: string): string {
  const named: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
  return value.replace(/&(#x[0-9a-fA-F]+|#[0-9]+|[a-z]+);/g, (_, ref: string) => {
    if (ref.startsWith('#x')) return safeCodePoint(parseInt(ref.slice(2), 16));
    if (ref.startsWith('#')) return safeCodePoint(parseInt(ref.slice(1), 10));
    return named[ref] ?? '';
  });
}

function safeCodePoint(code: number): string {
  return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : '';
}

/** CSS px per unit (96 dpi); font-relative units assume the 16 px browser default. */
const PX_PER_UNIT: Record<string, number> = {
  '': 1,
  px: 1,
  in: 96,
  cm: 96 / 2.54,
  mm: 96 / 25.4,
  q: 96 / 101.6,
  pt: 96 / 72,
  pc: 16,
  em: 16,
  ex: 8,
};
const NUMBER = '[+-]?(?:\\d+\\.?\\d*|\\.\\d+)(?:[eE][+-]?\\d+)?';
const LENGTH = new RegExp(`^\\s*(${NUMBER})\\s*(px|in|cm|mm|q|pt|pc|em|ex)?\\s*$`, 'i');
const VIEW_BOX = new RegExp(`^\\s*(${NUMBER})[\\s,]+(${NUMBER})[\\s,]+(${NUMBER})[\\s,]+(${NUMBER})\\s*$`);

/**
 * Size rule (what a browser shows for <img src=svg>): absolute `width`/`height` (px, unitless or
 * physical units at 96 dpi) win; a missing, percentage, `auto` or non-positive one is derived from
 * the other through the viewBox aspect ratio, else taken from the viewBox; with neither, 300×150.
 * Rounded to whole pixels, at least 1.
 */
function svgSize(attributes: Map<string, string>): SvgSize {
  const width = parseLength(attributes.get('width'));
  const height = parseLength(attributes.get('height'));
  const viewBox = parseViewBox(attributes.get('viewBox'));
  let size: SvgSize;
  if (width !== null && height !== null) size = { width, height };
  else if (viewBox && width !== null) size = { width, height: (width * viewBox.height) / viewBox.width };
  else if (viewBox && height !== null) size = { width: (height * viewBox.width) / viewBox.height, height };
  else if (viewBox) size = viewBox;
  else size = { width: width ?? DEFAULT_SIZE.width, height: height ?? DEFAULT_SIZE.height };
  return { width: toPixels(size.width), height: toPixels(size.height) };
}

function parseLength(value: string | undefined): number | null {
  const match = value === undefined ? null : LENGTH.exec(value);
  if (!match) return null;
  const px = Number(match[1]) * PX_PER_UNIT[(match[2] ?? '').toLowerCase()];
  return Number.isFinite(px) && px > 0 ? px : null;
}

function parseViewBox(value: string | undefined): SvgSize | null {
  const match = value === undefined ? null : VIEW_BOX.exec(value);
  if (!match) return null;
  const width = Number(match[3]);
  const height = Number(match[4]);
  return Number.isFinite(width) && Number.isFinite(height) && width > 0 && height > 0 ? { width, height } : null;
}

/** Whole pixels; absurd sizes are kept large (not clamped) so the pixel cap refuses them. */
function toPixels(value: number): number {
  return Math.max(1, Math.min(Math.round(value), Number.MAX_SAFE_INTEGER));
}
