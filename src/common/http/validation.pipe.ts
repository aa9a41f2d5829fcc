import { ValidationPipe, type ArgumentMetadata } from '@nestjs/common';
import { flattenValidationErrors, RequestValidationException } from '../errors/validation.exception.js';
import { inspectInput } from './text-input.js';

/**
 * Global DTO validation: whitelist, reject unknown fields, transform; failures are 422.
 *
 * Before class-transformer sees a body or query value, `inspectInput` bounds its nesting
 * depth (class-transformer recurses without a limit), applies the text rule to every string, and
 * checks the DTO's declared properties against the value's OWN keys. The last is needed because
 * class-validator's whitelist looks keys up in a plain object, so `constructor`, `toString` or
 * `__proto__` count as "declared" there, and class-transformer silently drops them.
 */
class InputValidationPipe extends ValidationPipe {
  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    // Path parameters are left to their own pipes: a name that matches nothing is simply not found.
    if (metadata.type === 'body' || metadata.type === 'query') {
      const dto = typeof metadata.metatype === 'function' ? metadata.metatype : undefined;
      const root = metadata.data ?? metadata.type;
      const errors = inspectInput(value, dto, root);
      if (errors.length) throw new RequestValidationException(errors);
    }
    return super.transform(value, metadata);
  }
}

export function createValidationPipe(): ValidationPipe {
  return new InputValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    transform: true,
    transformOptions: { enableImplicitConversion: false },
    validationError: { target: false, value: false },
    exceptionFactory: (errors) => new RequestValidationException(flattenValidationErrors(errors)),
  });
}
