import { Module } from '@nestjs/common';
import { LoggerModule, type Params } from 'nestjs-pino';
import { pino } from 'pino';
import type { AppConfig } from '../../common/config/app-config.js';
import { APP_CONFIG } from '../../common/config/config.module.js';
import { loggerParams } from './logger-options.js';

export { requestId } from './request-id.js';
export { requestLogMiddleware } from './request-log.middleware.js';

/** pino logs with request ids (see logger-options.ts: format, redaction, error serializer). */
@Module({
  imports: [
    LoggerModule.forRootAsync({
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => {
        // No per-request middleware of nestjs-pino: request lines come from requestLogMiddleware.
        const params = { ...loggerParams(config, Boolean(process.stdout.isTTY)), forRoutes: [] } as Params;
        if (Array.isArray(params.pinoHttp) || !params.pinoHttp) return params;
        // JSON lines go out in 4 KB writes, not one write per line (a syscall per request); pino
        // flushes what is buffered when the process exits.
        return {
          ...params,
          pinoHttp: [params.pinoHttp, pino.destination({ dest: 1, sync: false, minLength: 4096 })],
        } as Params;
      },
    }),
  ],
})
export class LoggingModule {}
