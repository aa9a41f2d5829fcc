import { UnprocessableEntityException } from '@nestjs/common';
import type { ValidationError } from 'class-validator';
import { validationFailedDetail } from './error-catalogue.js';

export interface FieldError {
  field: string;
  message: string;
}

/** 422 with `{detail: "Validation failed: f: m; ...", errors: [{field, message}]}` (catalogue code VALIDATION_FAILED). */
export class RequestValidationException extends UnprocessableEntityException {
  constructor(readonly errors: FieldError[]) {
    super({
      detail: validationFailedDetail(errors),
      errors,
    });
  }

  static field(field: string, message: string): RequestValidationException {
    return new RequestValidationException([{ field, message }]);
  }
}

/** Flattens class-validator's tree into dotted field paths (`reports.3.latitude`). */
export function flattenValidationErrors(errors: ValidationError[], parent = ''): FieldError[] {
  const out: FieldError[] = [];
  for (const error of errors) {
    const field = parent ? `${parent}.${error.property}` : error.property;
    for (const message of Object.values(error.constraints ?? {})) {
      out.push({ field, message: message.replace(/^property \S+ /, '') });
    }
    if (error.children?.length) out.push(...flattenValidationErrors(error.children, field));
  }
  return out;
}
