import { ValidationPipe } from '@nestjs/common';
import { flattenValidationErrors, RequestValidationException } from '../errors/validation.exception.js';

/** Global DTO validation: whitelist, reject unknown fields, transform; failures are 422. */
export function createValidationPipe(): ValidationPipe {
  return new ValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    transform: true,
    transformOptions: { enableImplicitConversion: false },
    validationError: { target: false, value: false },
    exceptionFactory: (errors) => new RequestValidationException(flattenValidationErrors(errors)),
  });
}
