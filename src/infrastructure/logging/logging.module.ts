import { Module } from '@nestjs/common';
import { LoggerModule } from 'nestjs-pino';
import type { AppConfig } from '../../common/config/app-config.js';
import { APP_CONFIG } from '../../common/config/config.module.js';
import { loggerParams } from './logger-options.js';

export { requestId } from './request-id.js';

/** pino logs with request ids (see logger-options.ts: format, redaction, error serializer). */
@Module({
  imports: [
    LoggerModule.forRootAsync({
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => loggerParams(config, Boolean(process.stdout.isTTY)),
    }),
  ],
})
export class LoggingModule {}
