import {
  createParamDecorator,
  Injectable,
  type ArgumentMetadata,
  type ExecutionContext,
  type PipeTransform,
} from '@nestjs/common';
import { ApiParam } from '@nestjs/swagger';
import type { Request } from 'express';
import { RequestValidationException } from '../errors/validation.exception.js';
import { MAX_INT4 } from '../int4.js';
import { ID_MESSAGE, parseIdText } from './id-field.js';

/**
 * Path ids are positive integers in plain digits (parseIdText); anything else is 422 naming the
 * parameter. Used through IdParam: it only accepts the text as sent, so behind `@Param` (where
 * the global pipe has already turned the text into a number) it refuses every request.
 */
@Injectable()
class ParseIdPipe implements PipeTransform<unknown, number> {
  transform(value: unknown, metadata: ArgumentMetadata): number {
    const id = parseIdText(value);
    if (id === null) throw RequestValidationException.field(metadata.data ?? 'id', ID_MESSAGE);
    return id;
  }
}

/*
 * The path parameter exactly as it arrived. `@Param('id') id: number` would not do: the global
 * ValidationPipe converts a parameter typed `number` with `+value` before any parameter pipe runs,
 * so `0x10`, `1e3`, `1.0` and ` 1` reached ParseIdPipe as valid numbers. A custom parameter
 * decorator is left alone by that pipe.
 */
const RawPathParam = createParamDecorator(
  (name: string, context: ExecutionContext): unknown => context.switchToHttp().getRequest<Request>().params[name],
);

/**
 * `@IdParam() id: number` / `@IdParam('image_id') id: number`: a path id checked by ParseIdPipe
 * on the text that was sent, and documented in OpenAPI as an int4 path parameter.
 */
export function IdParam(name = 'id'): ParameterDecorator {
  return (target, key, index) => {
    RawPathParam(name, ParseIdPipe)(target, key, index);
    if (key === undefined) return;
    const descriptor = Object.getOwnPropertyDescriptor(target, key);
    if (!descriptor) return;
    ApiParam({
      name,
      required: true,
      schema: { type: 'integer', minimum: 1, maximum: MAX_INT4 },
      examples: { id: { summary: 'An id', value: 1 } },
      description:
        'Positive integer in plain digits (no sign, leading zero, fraction or exponent); anything else is 422.',
    })(target, key, descriptor);
  };
}
