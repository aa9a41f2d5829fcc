import { ArgumentsHost, Catch, ExceptionFilter } from '@nestjs/common';
import type { Response } from 'express';
import { LoginThrottledException } from './login-throttle.service.js';

/** Writes the 429 of a throttled login with its `Retry-After` (seconds until the window ends). */
@Catch(LoginThrottledException)
export class LoginThrottledFilter implements ExceptionFilter {
  catch(exception: LoginThrottledException, host: ArgumentsHost): void {
    const response = host.switchToHttp().getResponse<Response>();
    response.setHeader('Retry-After', String(Math.max(1, exception.retryAfterSeconds)));
    response.status(exception.getStatus()).json(exception.getResponse());
  }
}
