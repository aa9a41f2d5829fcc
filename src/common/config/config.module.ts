import { DynamicModule, Global, Module } from '@nestjs/common';
import { ConfigModule } from '@nestjs/config';
import type { AppConfig } from './app-config.js';

/** Injection token for the typed configuration object. */
export const APP_CONFIG = Symbol('APP_CONFIG');

/**
 * Wraps @nestjs/config: the already-validated AppConfig is loaded as the `app` namespace
 * and also provided under APP_CONFIG so services inject one typed object.
 */
@Global()
@Module({})
export class AppConfigModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: AppConfigModule,
      imports: [ConfigModule.forRoot({ ignoreEnvFile: true, load: [() => ({ app: config })] })],
      providers: [{ provide: APP_CONFIG, useValue: config }],
      exports: [APP_CONFIG],
    };
  }
}
