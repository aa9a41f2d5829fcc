import { Module } from '@nestjs/common';
import { createSecretKey } from 'node:crypto';
import { APP_GUARD } from '@nestjs/core';
import { JwtModule } from '@nestjs/jwt';
import { PassportModule } from '@nestjs/passport';
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

/** Tokens, revocation, login and the global guard; passwords are verified through UsersModule's PasswordService. */
@Module({
  imports: [
    UsersModule,
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
    { provide: APP_GUARD, useClass: AuthGuard },
  ],
  exports: [TokenService, RevocationService, UsersModule, BEARER_STRATEGY],
})
export class AuthModule {}
