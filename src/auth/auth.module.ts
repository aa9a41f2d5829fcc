import { Module } from '@nestjs/common';
import { createSecretKey } from 'node:crypto';
import { APP_GUARD } from '@nestjs/core';
import { JwtModule } from '@nestjs/jwt';
import { PassportModule } from '@nestjs/passport';
import { ApiKeyAuth } from '../api-keys/api-key-auth.service.js';
import { ApiKeysModule } from '../api-keys/api-keys.module.js';
import { API_KEY_AUTHENTICATOR } from '../common/auth/api-key.js';
import { AuthGuard, BEARER_STRATEGY } from '../common/auth/auth.guard.js';
import type { AppConfig } from '../common/config/app-config.js';
import { APP_CONFIG } from '../common/config/config.module.js';
import { UsersModule } from '../users/users.module.js';
import { AuthController } from './auth.controller.js';
import { AuthService } from './auth.service.js';
import { JwtStrategy } from './jwt.strategy.js';
import { LoginThrottle } from './login-throttle.service.js';
import { RevocationService } from './revocation.service.js';
import { TokenService } from './token.service.js';

/**
 * Tokens, revocation, login and the global guard; passwords are verified through UsersModule's
 * PasswordService, API keys through ApiKeysModule's authenticator.
 */
@Module({
  imports: [
    UsersModule,
    ApiKeysModule,
    PassportModule,
    JwtModule.registerAsync({
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => ({
        // KeyObject: see JwtStrategy (a string secret is re-parsed as a PEM key on every call).
        secret: createSecretKey(Buffer.from(config.jwtSecret as string)) as unknown as string,
        signOptions: { algorithm: 'HS256' },
        verifyOptions: { algorithms: ['HS256'] },
      }),
    }),
  ],
  controllers: [AuthController],
  providers: [
    TokenService,
    RevocationService,
    LoginThrottle,
    AuthService,
    JwtStrategy,
    { provide: BEARER_STRATEGY, useExisting: JwtStrategy },
    { provide: API_KEY_AUTHENTICATOR, useExisting: ApiKeyAuth },
    { provide: APP_GUARD, useClass: AuthGuard },
  ],
  exports: [TokenService, RevocationService, UsersModule, BEARER_STRATEGY, API_KEY_AUTHENTICATOR],
})
export class AuthModule {}
