import 'reflect-metadata';
import { isUtf8 } from 'node:buffer';
import { getMetadataStorage } from 'class-validator';
import type { FieldError } from '../errors/validation.exception.js';
import { MAX_INPUT_DEPTH, TOO_DEEP } from '../errors/input-depth.js';

/**
 * The one rule for text arriving from clients, applied to every string of every body and query
 * before any transformation (src/common/http/validation.pipe.ts), and usable on its
 * own for text that does not pass through a DTO (CSV cells).
 *
 * - Single-line text (the default: names, e-mails, filters, ids, …) may not contain any control
 *   character: C0 (U+0000–U+001F, including tab and line breaks), DEL (U+007F) and C1
 *   (U+0080–U+009F).
 * - Multi-line text (`@MultilineText()`: notes, descriptions, addresses) may also contain tab,
 *   line feed and carriage return, in any mix of line endings; every other control character is
 *   refused.
 * - Text must be well-formed UTF-16: a lone surrogate (e.g. the JSON escape "\ud800") would be
 *   stored as U+FFFD, silently changing what the client sent.
 *
 * PostgreSQL cannot store U+0000 in text at all, so this rule is also what keeps NUL from reaching
 * the database as a 500.
 */
type TextKind = 'single-line' | 'multi-line';

// eslint-disable-next-line no-control-regex -- control characters are exactly what this matches
const SINGLE_LINE_FORBIDDEN = /[\u0000-\u001f\u007f-\u009f]/;
// eslint-disable-next-line no-control-regex -- as above, minus tab, line feed and carriage return
const MULTI_LINE_FORBIDDEN = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/;

// eslint-disable-next-line no-control-regex -- any character one of the rules below looks at
const SUSPECT = /[\u0000-\u001f\u007f-\u009f\ud800-\udfff]/;
// With the `u` flag a surrogate pair is one code point, so this matches only unpaired halves.
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

export const MESSAGES = {
  'single-line': 'must not contain control characters',
  'multi-line': 'must not contain control characters other than tab and line breaks',
  malformed: 'must be valid Unicode text (no lone surrogates)',
} as const;

/** Why `value` is not acceptable text of this kind, or null when it is. */
export function textProblem(value: string, kind: TextKind = 'single-line'): string | null {
  if (!SUSPECT.test(value)) return null;
  if (LONE_SURROGATE.test(value)) return MESSAGES.malformed;
  const forbidden = kind === 'multi-line' ? MULTI_LINE_FORBIDDEN : SINGLE_LINE_FORBIDDEN;
  return forbidden.test(value) ? MESSAGES[kind] : null;
}

/** A DTO class, as Nest's ArgumentMetadata.metatype gives it. */
type DtoClass = abstract new (...args: never[]) => unknown;

const MULTILINE_KEY = Symbol('text-input:multiline');
const OPAQUE_KEY = Symbol('text-input:opaque');

function markProperty(key: symbol): PropertyDecorator {
  return (target, property) => {
    const inherited: (string | symbol)[] = Reflect.getMetadata(key, target) ?? [];
    Reflect.defineMetadata(key, [...inherited, property], target);
  };
}

/** The property is multi-line text: tab, line feed and carriage return are allowed. */
export const MultilineText = (): PropertyDecorator => markProperty(MULTILINE_KEY);

/**
 * The property is a credential (password, login name, token) that the handler checks itself and
 * answers with its own documented error; the global text rule leaves its characters alone.
 */
export const OpaqueText = (): PropertyDecorator => markProperty(OPAQUE_KEY);

function marked(key: symbol, dto: DtoClass | undefined, property: string): boolean {
  const list: (string | symbol)[] | undefined = dto ? Reflect.getMetadata(key, dto.prototype) : undefined;
  return list?.includes(property) ?? false;
}

const declaredCache = new WeakMap<DtoClass, Set<string>>();

/** Properties a DTO declares (any class-validator decorator), as the whitelist understands them. */
function declaredProperties(dto: DtoClass): Set<string> {
  let declared = declaredCache.get(dto);
  if (!declared) {
    declared = new Set(
      getMetadataStorage()
        .getTargetValidationMetadatas(dto, '', false, false)
        .map((m) => m.propertyName),
    );
    declaredCache.set(dto, declared);
  }
  return declared;
}

function isDto(type: unknown): type is DtoClass {
  return typeof type === 'function' && declaredProperties(type as DtoClass).size > 0;
}

/**
 * Checks a parsed body or query value against the text rule, the depth bound and (when a DTO
 * describes it) the DTO's declared properties, looking only at OWN keys: a key such as
 * `constructor` or `__proto__` is as unknown as any other undeclared key. Returns the field errors
 * (dotted paths); a value nested too deeply yields only the depth error, at `root`.
 */
export function inspectInput(value: unknown, dto: DtoClass | undefined, root: string): FieldError[] {
  const state: WalkState = { errors: [], path: [], root, tooDeep: false };
  walk(value, isDto(dto) ? dto : undefined, 'single-line', 1, state);
  return state.tooDeep ? [{ field: root, message: TOO_DEEP }] : state.errors;
}

interface WalkState {
  errors: FieldError[];
  /** Keys from the root to the value being walked; joined only when an error is reported. */
  path: (string | number)[];
  root: string;
  tooDeep: boolean;
}

function report(state: WalkState, message: string): void {
  state.errors.push({ field: state.path.length ? state.path.join('.') : state.root, message });
}

/** One pass; recursion never goes deeper than MAX_INPUT_DEPTH containers. */
function walk(
  value: unknown,
  dto: DtoClass | undefined,
  kind: TextKind | 'opaque',
  depth: number,
  state: WalkState,
): void {
  if (typeof value === 'string') {
    const problem = kind === 'opaque' ? null : textProblem(value, kind);
    if (problem) report(state, problem);
    return;
  }
  if (value === null || typeof value !== 'object' || state.tooDeep) return;
  if (depth > MAX_INPUT_DEPTH) {
    state.tooDeep = true;
    return;
  }
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length && !state.tooDeep; index++) {
      state.path.push(index);
      walk(value[index], dto, kind, depth + 1, state);
      state.path.pop();
    }
    return;
  }
  const declared = dto ? declaredProperties(dto) : undefined;
  for (const key of Object.keys(value)) {
    const child = (value as Record<string, unknown>)[key];
    // Without a DTO, numbers, booleans and nulls have nothing to check.
    if (!declared && (child === null || (typeof child !== 'string' && typeof child !== 'object'))) continue;
    state.path.push(key);
    if (declared && !declared.has(key)) {
      report(state, 'should not exist');
    } else if (dto) {
      const nested: unknown = Reflect.getMetadata('design:type', dto.prototype, key);
      // A number, boolean or date field's own validator reads its raw text strictly and names the
      // field with its own message (`must be a positive integer`); only text fields need this rule.
      const typed = nested === Number || nested === Boolean || nested === Date;
      const childKind =
        typed || marked(OPAQUE_KEY, dto, key)
          ? 'opaque'
          : marked(MULTILINE_KEY, dto, key)
            ? 'multi-line'
            : 'single-line';
      walk(child, isDto(nested) ? nested : undefined, childKind, depth + 1, state);
    } else {
      walk(child, undefined, 'single-line', depth + 1, state);
    }
    state.path.pop();
    if (state.tooDeep) return;
  }
}

/**
 * body-parser `verify` hook for JSON: a body declared (or defaulting to) UTF-8 whose bytes are not
 * valid UTF-8 is malformed JSON, answered like any other (422 `body: malformed JSON`), instead of
 * being decoded with U+FFFD in place of the bad bytes and stored.
 */
export function verifyUtf8Json(_req: unknown, _res: unknown, body: Buffer, encoding: string | null): void {
  if ((encoding === null || /^utf-?8$/i.test(encoding)) && !isUtf8(body)) {
    throw Object.assign(new Error('request body is not valid UTF-8'), { status: 400, type: 'entity.parse.failed' });
  }
}
