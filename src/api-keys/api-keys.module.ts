import { Module } from '@nestjs/common';
import { UsersModule } from '../users/users.module.js';
import { ApiKeyAuth } from './api-key-auth.service.js';
import { ApiKeyThrottle } from './api-key-throttle.js';
import { ApiKeyUsage } from './api-key-usage.js';
import { ApiKeysController } from './api-keys.controller.js';
import { ApiKeysRepository } from './api-keys.repository.js';
import { ApiKeysService } from './api-keys.service.js';

/**
 * API keys of machine clients: their management, and their authentication (ApiKeyAuth), which
 * AuthModule hands to the global guard as its ApiKeyAuthenticator.
 */
@Module({
  imports: [UsersModule],
  controllers: [ApiKeysController],
  providers: [ApiKeysRepository, ApiKeysService, ApiKeyAuth, ApiKeyThrottle, ApiKeyUsage],
  exports: [ApiKeyAuth],
})
export class ApiKeysModule {}
